"""The long-conversation suite (§16): a seeded generator of group chats and recall questions.

``python -m tests.support.longconv`` writes ``tests/data/longconv/chats.jsonl`` and
``questions.jsonl``; ``tests/cards/test_longconv.py`` checks the committed files are exactly what
the generator makes. Each chat is one language's group of six people talking over about
seven months: several hundred messages, most of them chit-chat; the rest are facts — where
one lives and where one moves (a value change), one's job and a new job, a pet, a hobby,
an allergy, a sibling, trips and events at known times, a car, a course — and other
people's reactions that name them (distractors). Phrases come from
:mod:`tests.support.longconv_lang` (EN/RU/DE/ES).

Every question names its **evidence** (message ids) and a category:

- ``single-hop``: one fact ("What is Maria's job?"; the latest value after a change);
- ``multi-hop``: two facts of one person joined by another ("Where does the person who
  works as a nurse live?");
- ``temporal``: a fact at a time ("Where did Maria travel in May?", "Where did Maria live
  before moving?", "When did Maria run a half marathon?");
- ``open-domain``: an inference from a hobby ("Would Maria enjoy a day at an indoor wall?").

One question in five writes the person's name in the other script ("Mariya" in a Russian
chat, "Мария" in an English one). The first chat of each language is the ``dev`` split
(fusion parameters are chosen on it), the others ``test``. A third split, ``fresh``, is not
generated: 200 questions written by hand over the ``test`` chats in ``fresh.jsonl``
(``load(split="fresh")``), held out from every tuning.

The stand-in memory: every message becomes one card, ``"<sender>: <text>"``, observed when
it was sent — so a question is a hit @k when its evidence message's card is among the k
recalled, and only the project's own retrieval path is measured.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.support.longconv_lang import BOOKS, Book, Person

SEED = 23
CHATS_PER_LANGUAGE = 4
PEOPLE_PER_CHAT = 6
START = datetime(2025, 1, 6, 8, tzinfo=UTC)
DAYS = 200
DATA = Path(__file__).resolve().parents[1] / "data" / "longconv"


@dataclass
class Message:
    id: int
    user_id: int
    sender: str
    text: str
    sent_at: str

    @property
    def card_text(self) -> str:
        """The stand-in card: the message as a model that keeps every message would write it."""
        return f"{self.sender}: {self.text}"


@dataclass
class Chat:
    id: int
    lang: str
    split: str
    messages: list[Message] = field(default_factory=list)

    @property
    def now(self) -> datetime:
        """When the chat's questions are asked: a day after its last message."""
        return datetime.fromisoformat(self.messages[-1].sent_at) + timedelta(days=1)


@dataclass
class Question:
    id: str
    chat: int
    lang: str
    split: str
    category: str
    text: str
    evidence: list[int]


@dataclass
class _Fact:
    kind: str
    person: int
    text: str
    at: float  # fraction of the timeline
    value: str = ""
    extra: dict[str, str] = field(default_factory=dict)
    message_id: int = 0


@dataclass
class _Member:
    person: Person
    user_id: int
    facts: dict[str, list[_Fact]] = field(default_factory=dict)

    def add(self, fact: _Fact) -> _Fact:
        self.facts.setdefault(fact.kind, []).append(fact)
        return fact


def _fill(template: str, **values: str) -> str:
    return template.format_map({"v": "", "s": "", "j": "", "m": "", **values})


class _ChatMaker:
    """One chat's people, facts, messages and questions (see the module)."""

    def __init__(self, book: Book, chat_id: int, split: str, rng: random.Random) -> None:
        self.book, self.rng = book, rng
        self.chat = Chat(chat_id, book.lang, split)
        people = rng.sample(book.people, PEOPLE_PER_CHAT)
        self.others = [p for p in book.people if p not in people]
        self.members = [_Member(p, 1000 + i) for i, p in enumerate(people)]
        self.facts: list[_Fact] = []

    def _say(self, member: int, kind: str, at: float, value: str, **extra: str) -> _Fact:
        template = self.rng.choice(self.book.says[kind])
        text = _fill(template, v=value, **extra)
        fact = _Fact(kind, member, text, at, value, dict(extra))
        self.facts.append(self.members[member].add(fact))
        return fact

    def plan_facts(self) -> None:
        book, rng = self.book, self.rng
        count = len(self.members)
        homes = rng.sample(book.cities, count)
        moves = rng.sample([c for c in book.cities if c not in homes] + homes[:2], count)
        jobs = rng.sample(book.jobs, count + 2)
        pet_names = rng.sample(book.pet_names, count)
        hobbies = rng.sample(book.hobbies, count)
        siblings = [rng.choice(self.others) for _ in range(count)]
        for i in range(count):
            self._say(i, "home", rng.uniform(0.0, 0.25), homes[i][0])
            if moves[i][0] != homes[i][0]:
                self._say(i, "move", rng.uniform(0.45, 0.9), moves[i][1], c=moves[i][0])
            self._say(i, "job", rng.uniform(0.0, 0.4), jobs[i])
            if i < 2:
                self._say(i, "job2", rng.uniform(0.6, 0.95), jobs[count + i])
            species = rng.choice(book.pets)
            self._say(i, "pet", rng.uniform(0.05, 0.95), pet_names[i], s=species[0], a=species[1])
            for at, phrase in zip((0.2, 0.7), hobbies[i].says, strict=True):
                self._say(i, "hobby", rng.uniform(at - 0.15, at + 0.2), phrase)
            if rng.random() < 0.7:
                self._say(i, "allergy", rng.uniform(0.05, 0.95), rng.choice(book.allergies))
            sibling = siblings[i]
            self._say(i, "sibling", rng.uniform(0.05, 0.95), sibling.name, j=rng.choice(book.jobs))
            for place, at in zip(rng.sample(book.trips, 2), (0.25, 0.75), strict=True):
                self._say(i, "trip", rng.uniform(at - 0.2, at + 0.2), place)
            if rng.random() < 0.8:
                said, asked = rng.choice(book.events)
                self._say(i, "event", rng.uniform(0.05, 0.95), said, asked=asked)
            for kind, pool in (("car", book.cars), ("study", book.studies)):
                if rng.random() < 0.5:
                    self._say(i, kind, rng.uniform(0.05, 0.95), rng.choice(pool))

    def write_messages(self, total: int) -> None:
        """Facts at their times, reactions after some, chit-chat everywhere else."""
        rng, book = self.rng, self.book
        lines: list[tuple[float, int, str, _Fact | None]] = []
        for fact in self.facts:
            lines.append((fact.at, fact.person, fact.text, fact))
            if fact.kind in ("trip", "event", "move", "pet", "job2") and rng.random() < 0.45:
                other = rng.choice([i for i in range(len(self.members)) if i != fact.person])
                name = self.members[fact.person].person.name
                reaction = rng.choice(book.reactions).format(n=name)
                lines.append((fact.at + rng.uniform(0.0005, 0.004), other, reaction, None))
        while len(lines) < total:
            at = rng.random()
            month = book.months[(START + timedelta(days=at * DAYS)).month - 1]
            text = rng.choice(book.chatter).replace("{m}", month)
            if rng.random() < 0.5:
                text = f"{rng.choice(book.openers)} {text}"
            if rng.random() < 0.4:
                text = f"{text} {rng.choice(book.closers)}"
            lines.append((at, rng.randrange(len(self.members)), text, None))
        lines.sort(key=lambda line: line[0])
        for number, (at, member, text, said) in enumerate(lines, start=1):
            moment = START + timedelta(days=at * DAYS)
            who = self.members[member]
            sent = moment.replace(microsecond=0).isoformat().replace("+00:00", "Z")
            self.chat.messages.append(Message(number, who.user_id, who.person.name, text, sent))
            if said is not None:
                said.message_id = number

    # --- questions ------------------------------------------------------------------------

    def _name(self, member: _Member, genitive: bool = False) -> str:
        if self.rng.random() < 0.2:
            return member.person.other
        return member.person.genitive if genitive else member.person.name

    def _ask(self, kind: str, member: _Member | None, **values: str) -> str:
        template = self.rng.choice(self.book.asks[kind])
        if member is not None:
            name = self._name(member, genitive="{g}" in template)
            values = {"n": name, "g": name, **values}
        return template.format_map({"n": "", "g": "", **values})

    def questions(self) -> list[Question]:
        out: list[Question] = []

        def add(category: str, text: str, *facts: _Fact) -> None:
            qid = f"{self.chat.lang}-{self.chat.id}-{len(out) + 1}"
            evidence = sorted({f.message_id for f in facts})
            out.append(
                Question(
                    qid, self.chat.id, self.chat.lang, self.chat.split, category, text, evidence
                )
            )

        for index, member in enumerate(self.members):
            self._single_hop(member, add)
            self._temporal(member, add)
            self._multi_hop(index, member, add)
            hobby = member.facts["hobby"]
            book_hobby = next(h for h in self.book.hobbies if hobby[0].value in h.says)
            for template in book_hobby.infer:
                text = template.format(n=self._name(member)) if "{n}" in template else template
                add("open-domain", text, *hobby)
        return out

    def _single_hop(self, member: _Member, add: Any) -> None:
        facts = member.facts
        if "move" in facts:
            add("single-hop", self._ask("move", member), facts["move"][0])
        latest_job = facts.get("job2", facts["job"])[0]
        add("single-hop", self._ask("job", member), latest_job)
        if "job2" in facts:
            add("single-hop", self._ask("job2", member), facts["job2"][0])
        pet = facts["pet"][0]
        add("single-hop", self._ask("pet", member, s=pet.extra["a"]), pet)
        for kind in ("allergy", "sibling", "car", "study"):
            if kind in facts:
                add("single-hop", self._ask(kind, member), facts[kind][0])

    def _temporal(self, member: _Member, add: Any) -> None:
        facts = member.facts
        for trip in facts["trip"]:
            moment = START + timedelta(days=trip.at * DAYS)
            month = self.book.months[moment.month - 1]
            add("temporal", self._ask("trip", member, m=month), trip)
        if "move" in facts:
            add("temporal", self._ask("home", member), facts["home"][0])
        if "event" in facts:
            event = facts["event"][0]
            add("temporal", self._ask("event", member, v=event.extra["asked"]), event)

    def _multi_hop(self, index: int, member: _Member, add: Any) -> None:
        facts = member.facts
        home = facts.get("move", facts["home"])[0]
        city = home.extra.get("c", home.value)
        if sum(_city(m) == city for m in self.members) == 1:
            add("multi-hop", self._ask("multi_pet", None, c=city), home, facts["pet"][0])
        job = facts["job"][0]
        if "job2" not in facts:
            add("multi-hop", self._ask("multi_city", None, j=job.value), job, home)
        pet = facts["pet"][0]
        add(
            "multi-hop",
            self._ask("multi_sibling", None, v=pet.value, s=pet.extra["s"]),
            pet,
            facts["sibling"][0],
        )


def _city(member: _Member) -> str:
    home = member.facts.get("move", member.facts["home"])[0]
    return home.extra.get("c", home.value)


def generate(seed: int = SEED) -> tuple[list[Chat], list[Question]]:
    """Every chat and question of the suite (deterministic for a seed)."""
    chats: list[Chat] = []
    questions: list[Question] = []
    for lang, book in BOOKS.items():
        for index in range(CHATS_PER_LANGUAGE):
            rng = random.Random(f"{seed}:{lang}:{index}")
            chat_id = 100 * (list(BOOKS).index(lang) + 1) + index
            maker = _ChatMaker(book, chat_id, "dev" if index == 0 else "test", rng)
            maker.plan_facts()
            maker.write_messages(rng.randint(330, 430))
            chats.append(maker.chat)
            questions.extend(maker.questions())
    return chats, questions


def dump(chats: list[Chat], questions: list[Question]) -> dict[str, str]:
    """The suite's files, by name, as text."""
    chat_lines = [json.dumps(asdict(c), ensure_ascii=False) for c in chats]
    question_lines = [json.dumps(asdict(q), ensure_ascii=False) for q in questions]
    return {
        "chats.jsonl": "\n".join(chat_lines) + "\n",
        "questions.jsonl": "\n".join(question_lines) + "\n",
    }


#: The splits :func:`load` knows: the generator's two and the hand-written held-out one.
SPLITS = ("dev", "test", "fresh")


def load(directory: Path = DATA, split: str | None = None) -> tuple[list[Chat], list[Question]]:
    """The committed suite: every chat, and the questions of ``split``.

    ``None`` (the default) is the generator's questions, ``dev`` and ``test``; ``dev`` or
    ``test`` alone keeps that split; ``fresh`` is ``fresh.jsonl``, questions written by hand
    over the ``test`` chats and kept out of any tuning (see the data's ``README.md``).
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"unknown long-conversation split {split!r}: one of {SPLITS}")
    chats = []
    for line in (directory / "chats.jsonl").read_text(encoding="utf-8").splitlines():
        raw = json.loads(line)
        raw["messages"] = [Message(**m) for m in raw["messages"]]
        chats.append(Chat(**raw))
    name = "fresh.jsonl" if split == "fresh" else "questions.jsonl"
    questions = [
        Question(**json.loads(line))
        for line in (directory / name).read_text(encoding="utf-8").splitlines()
    ]
    if split is not None:
        questions = [q for q in questions if q.split == split]
    return chats, questions


if __name__ == "__main__":
    DATA.mkdir(parents=True, exist_ok=True)
    for name, text in dump(*generate()).items():
        (DATA / name).write_text(text, encoding="utf-8")
