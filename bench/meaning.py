"""The meaning suite (§16): recall@1/@5 of the local e5 embedder vs the hashed baseline.

Every card of ``tests/data/meaning/cases.jsonl`` (each case's card plus its
near-miss distractors, ~150 cards in EN/RU/DE/ES/FR/UK) goes into ONE chat
through the real run write (``CardStore.apply_run``, int8 rows, the chat's
model recorded); each case's query is then embedded the way production does
— a new chat message (paraphrases, value updates: what a run's related-card
lookup must surface) like a card, as a passage; a bot question as a query
(``recall()``: e5's ``query:`` prefix) — and looked up with
``CardStore.similar_cards``. A case is a hit @k when its card is among the
``k`` best. Both embedders run in the same process on the same store:

- ``e5``: multilingual-e5-small through the local transport (``query:`` /
  ``passage:`` prefixes), 384-d;
- ``hashed``: the farm simulator's bag-of-words embedder, 512-d.

It also times the local embedder (one sentence, a batch of 16) and
``MemoryQueue.recall`` (embedding included) on a chat of N cards.

    python bench/meaning.py [--recall-cards 1000 10000] [--queries 50]

The test suite imports :func:`load_cases` / :func:`evaluate` (tests/cards/test_meaning.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Protocol

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from llm_client import QUERY_TASK, ClientConfig, LocalEmbedClient  # noqa: E402
from memory_worker.cards import Card, CardStore, NewCard, RunWrites, Scope  # noqa: E402
from memory_worker.cards.recall import ConnectParams, FusionParams  # noqa: E402
from memory_worker.cards.search import Favour  # noqa: E402
from memory_worker.consolidation.context import rank_related  # noqa: E402
from memory_worker.farmsim.embedder import embed_text  # noqa: E402
from memory_worker.settings import Settings  # noqa: E402
from tests.support.cards import new  # noqa: E402

BENCH_DIR = str(ROOT / "bench")
CASES = ROOT / "tests" / "data" / "meaning" / "cases.jsonl"
T0 = datetime(2026, 3, 1, tzinfo=UTC)
E5 = "multilingual-e5-small"


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    lang: str
    category: str
    source: str
    card: str
    distractors: tuple[str, ...]
    query: str
    outcome: str | None
    seed: str | None = None

    @property
    def speaker(self) -> str:
        """Who says a message query ("Name: text" → "Name")."""
        return self.query.split(":", 1)[0].strip()

    @property
    def said(self) -> str:
        """What a message query says (the text after the speaker)."""
        return self.query.split(":", 1)[1].strip() if ":" in self.query else self.query


def load_cases(path: Path = CASES) -> list[Case]:
    cases = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            raw = json.loads(line)
            raw["distractors"] = tuple(raw["distractors"])
            cases.append(Case(**raw))
    return cases


# --- store outcomes with the simulator's model ----------------------------------------------

#: Words that give a Latin-script sentence away (card sentences and chat messages).
_STOPWORDS: dict[str, frozenset[str]] = {
    "en": frozenset(
        [
            "the",
            "is",
            "and",
            "i",
            "to",
            "my",
            "a",
            "of",
            "at",
            "in",
            "no",
            "longer",
            "likes",
            "lives",
            "works",
            "dislikes",
            "prefers",
            "moved",
            "allergic",
            "name's",
        ]
    ),
    "de": frozenset(
        [
            "ich",
            "und",
            "der",
            "die",
            "das",
            "ist",
            "nicht",
            "mag",
            "wohnt",
            "arbeitet",
            "bei",
            "nach",
            "mehr",
            "gegen",
            "heißt",
            "bin",
            "bevorzugt",
            "gezogen",
            "allergisch",
            "als",
        ]
    ),
    "es": frozenset(
        [
            "el",
            "la",
            "los",
            "las",
            "de",
            "y",
            "en",
            "que",
            "me",
            "no",
            "le",
            "gusta",
            "gustan",
            "vive",
            "trabaja",
            "ya",
            "se",
            "mudó",
            "como",
            "tiene",
            "alergia",
            "prefiere",
            "vivo",
            "trabajo",
        ]
    ),
    "fr": frozenset(
        [
            "le",
            "la",
            "les",
            "de",
            "et",
            "je",
            "est",
            "une",
            "un",
            "aime",
            "habite",
            "à",
            "ne",
            "plus",
            "travaille",
        ]
    ),
}
_LATIN_MARKS = {"es": "ñ¿¡", "de": "äöüß", "fr": "çàâèêëîïôûœ"}
_WORD = re.compile(r"[^\W\d_]+")


def guess_language(text: str) -> str | None:
    """A rough language guess among the suite's six (None when nothing gives it away).

    Mostly Cyrillic letters: Ukrainian by і/ї/є/ґ, Russian by ы/э/ъ/ё, else
    "cyrillic" (a name in another script does not decide). Otherwise Latin:
    the language with the most stop words, accented letters breaking ties.
    """
    low = text.casefold()
    cyrillic = len(re.findall(r"[а-яёіїєґ]", low))
    if cyrillic * 2 > len(re.findall(r"[^\W\d_]", low)):  # most letters are Cyrillic
        if re.search(r"[іїєґ]", low):
            return "uk"
        if re.search(r"[ыэъё]", low):
            return "ru"
        return "cyrillic"
    words = _WORD.findall(low)
    scores = {
        lang: sum(w in stop for w in words)
        + 0.5 * sum(ch in _LATIN_MARKS.get(lang, "") for ch in low)
        for lang, stop in _STOPWORDS.items()
    }
    best = max(scores, key=lambda lang: scores[lang])
    if scores[best] == 0 or list(scores.values()).count(scores[best]) > 1:
        return None
    return best


def same_language(a: str | None, b: str | None) -> bool:
    """Whether two guesses can be the same language (unknown and "cyrillic" are lenient)."""
    if a is None or b is None or a == b:
        return True
    if "cyrillic" in (a, b):
        return {a, b} <= {"cyrillic", "ru", "uk"}
    return False


@dataclass(frozen=True, slots=True)
class StoreOutcome:
    """What the simulator's model did with one case."""

    case_id: str
    category: str
    expected: str | None
    got: str  # one_card / supersede / competing / separate / nothing / unseeded
    merged_as_duplicate: bool  # a value update the merge pass (or a reinforce) swallowed
    language_changes: int  # cards whose language differs from their source message's
    unseen: str = "nothing"  # the outcome when the card is not shown: separate or nothing
    cards_checked: int = 0  # cards whose language was compared with their message's

    def shown(self, retrieved: bool) -> str:
        """The outcome when the related lookup did (or did not) show the model the card."""
        return self.got if retrieved or self.got == "unseeded" else self.unseen

    @property
    def measured(self) -> bool:
        return self.expected is not None and self.got != "unseeded"

    @property
    def correct(self) -> bool:
        return self.measured and self.got == self.expected


def _extract(sender: str, text: str, message_id: int, existing: list[dict[str, Any]]) -> Any:
    from memory_worker.farmsim import extractor

    return extractor.extract(
        {
            "task": extractor.EXTRACTION_TASK,
            "run": {"chat_id": 1},
            "messages": [
                {"message_id": message_id, "user_id": 7, "sender_name": sender, "text": text}
            ],
            "existing_cards": existing,
        }
    )


def _changed_language(cards: Sequence[dict[str, Any]], source: str) -> tuple[int, int]:
    """(cards whose guessed language differs from ``source``'s, cards compared)."""
    lang = guess_language(source)
    changed = sum(not same_language(guess_language(c["fact_text"]), lang) for c in cards)
    return changed, len(cards)


def store_outcome(case: Case) -> StoreOutcome:
    """Consolidate the case's seed then its message with the simulator's rule-based model.

    The seed (a first-person statement of the card's fact by the same person)
    becomes the existing card; the query message is then extracted against it
    and its resolution classified. Value updates and negations are also put
    through the model's merge pass with the card they replace: clustering
    them would swallow the update as a duplicate. Cases without a seed (the
    rules only speak EN/RU/DE/ES first-person patterns) are "unseeded" but
    still checked for language changes.
    """
    from memory_worker.farmsim import extractor

    if case.source != "message":
        return StoreOutcome(case.id, case.category, None, "unseeded", False, 0)
    changes = checked = 0
    existing: list[dict[str, Any]] = []
    if case.seed is not None:
        seeded = _extract(case.speaker, case.seed, 1, [])["candidate_cards"]
        changed, compared = _changed_language(seeded, case.seed)
        changes, checked = changes + changed, checked + compared
        existing = [
            {**card, "id": f"c{i}", "fact": card["fact_text"]} for i, card in enumerate(seeded)
        ]
    answer = _extract(case.speaker, case.said, 2, existing)
    changed, compared = _changed_language(answer["candidate_cards"], case.said)
    changes, checked = changes + changed, checked + compared
    if not existing:
        return StoreOutcome(
            case.id, case.category, case.outcome, "unseeded", False, changes, "nothing", checked
        )
    alone = _extract(case.speaker, case.said, 2, [])["candidate_cards"]
    unseen = "separate" if alone else "nothing"
    decisions = {r["decision"] for r in answer["resolutions"]}
    new_cards = answer["candidate_cards"]
    if "supersede" in decisions:
        got = "supersede"
    elif "competing" in decisions:
        got = "competing"
    elif "reinforce" in decisions and not new_cards:
        got = "one_card"
    elif new_cards:
        got = "separate"
    else:
        got = "nothing"
    merged = False
    if case.outcome == "supersede":
        merged = got == "one_card"
        pool = [{"id": c["id"], "fact": c["fact"], "salience": 0.5} for c in existing]
        pool += [
            {"id": f"n{i}", "fact": c["fact_text"], "salience": 0.5}
            for i, c in enumerate(new_cards)
        ]
        clusters = extractor.merge({"task": extractor.MERGE_TASK, "cards": pool})["clusters"]
        old_ids = {c["id"] for c in existing}
        for cluster in clusters:
            members = {cluster["survivor_id"], *cluster["absorbed_ids"]}
            merged = merged or bool(members & old_ids and members - old_ids)
    return StoreOutcome(case.id, case.category, case.outcome, got, merged, changes, unseen, checked)


def store_outcomes(cases: Sequence[Case]) -> list[StoreOutcome]:
    """:func:`store_outcome` of every case."""
    return [store_outcome(case) for case in cases]


class SuiteEmbedder(Protocol):
    name: str
    model: str
    dimension: int

    async def passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def queries(self, texts: Sequence[str]) -> list[list[float]]: ...


class E5Embedder:
    """The local transport, exactly as a ``transport = "local"`` route target runs it."""

    name = "e5"
    model = E5
    dimension = 384

    def __init__(self) -> None:
        self.client = LocalEmbedClient(
            E5, ClientConfig(base_url="", task_timeout=120.0), threads=EMBED_THREADS[0]
        )

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for start in range(0, len(texts), 64):  # the consolidation's chunk size
            chunk = texts[start : start + 64]
            out += (await self.client.embed(chunk, dimension=self.dimension)).embeddings
        return out

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        out: list[list[float]] = []
        for text in texts:  # one query at a time, as recall() and a run's lookup do
            result = await self.client.embed(
                [text], dimension=self.dimension, task_description=QUERY_TASK
            )
            out += result.embeddings
        return out


class HashedEmbedder:
    """The farm simulator's bag-of-words baseline."""

    name = "hashed"
    model = "farmsim-hashed"
    dimension = 512

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [embed_text(t, self.dimension) for t in texts]

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [embed_text(t, self.dimension) for t in texts]


@dataclass
class Report:
    """Hits per case at 1 and 5, and breakdowns."""

    embedder: str
    ranks: dict[str, int | None] = field(default_factory=dict)  # case id → 1-based rank (≤ k)
    cases: dict[str, Case] = field(default_factory=dict)

    def recall(self, k: int, ids: Sequence[str] | None = None) -> float:
        chosen = list(self.ranks) if ids is None else list(ids)
        if not chosen:
            return float("nan")
        hits = sum(1 for i in chosen if (r := self.ranks[i]) is not None and r <= k)
        return hits / len(chosen)

    def by(self, attribute: str) -> dict[str, list[str]]:
        groups: dict[str, list[str]] = defaultdict(list)
        for case_id, case in self.cases.items():
            groups[getattr(case, attribute)].append(case_id)
        return dict(sorted(groups.items()))

    def misses(self, k: int) -> list[str]:
        return [i for i, r in self.ranks.items() if r is None or r > k]


def _new_card(index: int, text: str, vector: list[float], subject: str = "") -> NewCard:
    return new(
        text,
        subject=subject or f"s{index}",
        predicate="fact",
        scope=Scope.CHAT,
        at=T0,
        conf=0.8,
        sources=(index + 1,),
        card_type="fact",
        embedding=vector,
    )


#: The deepest rank a report records: the production related-card count (``related_cards``).
DEEPEST_K = 24


#: The production author boost of the related lookup (``related_author_boost``); --author-boost.
AUTHOR_BOOST = [float(Settings.model_fields["related_author_boost"].default)]
#: The engine's OpenMP threads (``local_embed_threads``; process-wide: --embed-threads).
EMBED_THREADS = [int(Settings.model_fields["local_embed_threads"].default)]


async def evaluate(
    cases: Sequence[Case],
    embedder: SuiteEmbedder,
    store: CardStore,
    chat_id: int,
    *,
    hybrid: bool = False,
) -> Report:
    """Store every card of the suite in ``chat_id`` and look each case's query up (top 24).

    ``hybrid``: as production does (:meth:`CardStore.search`, the cosine fused with BM25,
    the speaker favoured for a message); else the cosine alone (:meth:`similar_cards`,
    then :func:`rank_related` for a message).
    """
    texts = list(dict.fromkeys([c.card for c in cases] + [d for c in cases for d in c.distractors]))
    vectors = await embedder.passages(texts)
    cards = [_new_card(i, t, v) for i, (t, v) in enumerate(zip(texts, vectors, strict=True))]
    writes = RunWrites(observed_at=T0, cards=cards, embedding_model=embedder.model)
    applied = await store.apply_run(chat_id, f"meaning-{embedder.name}", writes, now=T0)
    if applied.inserted != len(texts) or applied.vectors_refused:
        raise RuntimeError(f"the suite's cards were not all stored with vectors: {applied}")
    name = f"{embedder.name}+bm25" if hybrid else embedder.name
    report = Report(name, cases={c.id: c for c in cases})
    # as production embeds them: a run's messages like cards (passages), bot questions as queries
    messages = [c for c in cases if c.source == "message"]
    questions = [c for c in cases if c.source != "message"]
    vectors_by_case = dict(
        zip(
            [c.id for c in messages] + [c.id for c in questions],
            await embedder.passages([c.query for c in messages])
            + await embedder.queries([c.query for c in questions]),
            strict=True,
        )
    )
    for case in cases:
        if hybrid:
            ranked = await _hybrid_lookup(store, chat_id, case, vectors_by_case[case.id], embedder)
        else:
            ranked = await _dense_lookup(store, chat_id, case, vectors_by_case[case.id], embedder)
        order = [card.fact_text for card in ranked]
        report.ranks[case.id] = order.index(case.card) + 1 if case.card in order else None
    return report


async def _dense_lookup(
    store: CardStore, chat_id: int, case: Case, query: list[float], embedder: SuiteEmbedder
) -> list[Card]:
    if case.source == "message":  # a run's lookup: the speaker's cards are favoured
        found = await store.similar_cards(
            chat_id, query, 2 * DEEPEST_K, model=embedder.model, now=T0
        )
        return rank_related(
            found, author_ids=(), author_names=[case.speaker], boost=AUTHOR_BOOST[0], k=DEEPEST_K
        )
    found = await store.similar_cards(chat_id, query, DEEPEST_K, model=embedder.model, now=T0)
    return [card for card, _ in found]


async def _hybrid_lookup(
    store: CardStore, chat_id: int, case: Case, query: list[float], embedder: SuiteEmbedder
) -> list[Card]:
    """As production looks up: a message as the related lookup does (its text after the
    speaker's name, the speaker favoured), a question as ``recall()``."""
    params = FusionParams.from_settings(Settings())
    if case.source == "message":
        hits = await store.search(
            chat_id,
            f"{case.speaker}\n{case.said}",
            query,
            DEEPEST_K,
            now=T0,
            model=embedder.model,
            params=params,
            favour=Favour(frozenset(), (case.speaker,), AUTHOR_BOOST[0]),
        )
    else:
        hits = await store.search(
            chat_id, case.query, query, DEEPEST_K, now=T0, model=embedder.model, params=params
        )
    return [hit.card for hit in hits]


async def evaluate_by_language(
    cases: Sequence[Case],
    embedder: SuiteEmbedder,
    store: CardStore,
    first_chat_id: int,
    *,
    hybrid: bool = False,
) -> Report:
    """:func:`evaluate` with one chat per language group (about 80 cards of 50 people each).

    Closer to a run's real extraction context than the one-chat worst case: a
    chat is one group of people, and the production lookup never sees other
    chats' cards (it also keeps only chat-scoped and the authors' own cards,
    which this does not model — every suite card is chat-scoped here).
    """
    name = f"{embedder.name}+bm25" if hybrid else embedder.name
    merged = Report(name, cases={c.id: c for c in cases})
    for offset, lang in enumerate(sorted({c.lang for c in cases})):
        group = [c for c in cases if c.lang == lang]
        report = await evaluate(group, embedder, store, first_chat_id + offset, hybrid=hybrid)
        merged.ranks.update(report.ranks)
    return merged


# --- the benchmark script -------------------------------------------------------------------


#: The related-card depth the extraction-context figure is read at (the acceptance bar), and
#: the production depth (``related_cards``).
RELATED_K = 5


def outcome_table(reports: Sequence[Report], outcomes: Sequence[StoreOutcome]) -> str:
    """Store-outcome accuracy per category with the simulator's model, per embedder.

    A case's card reaches the model only when the related lookup ranked it
    within :data:`RELATED_K`; otherwise the model resolves without it.
    """
    measured = [o for o in outcomes if o.measured]
    by_category: dict[str, list[StoreOutcome]] = defaultdict(list)
    for outcome in measured:
        by_category[outcome.category].append(outcome)
    head = f"{'store outcome (sim model)':<28}{'n':>4}  " + "".join(
        f"{r.embedder:>9}" for r in reports
    )
    lines = [head]
    for category, group in sorted(by_category.items()):
        cells = ""
        for report in reports:
            right = sum(o.shown(_retrieved(report, o.case_id)) == o.expected for o in group)
            cells += f"{right / len(group):>9.2f}"
        lines.append(f"{'category ' + category:<28}{len(group):>4}  {cells}")
    updates = [o for o in measured if o.expected == "supersede"]
    merged = sum(o.merged_as_duplicate for o in updates)
    changes = sum(o.language_changes for o in outcomes)
    checked = sum(o.cards_checked for o in outcomes)
    lines.append(f"value updates merged as duplicates: {merged} of {len(updates)}")
    lines.append(
        f"cards in another language than their source message: {changes} "
        f"of {checked} cards extracted"
    )
    return "\n".join(lines)


def _retrieved(report: Report, case_id: str, k: int = RELATED_K) -> bool:
    rank = report.ranks.get(case_id)
    return rank is not None and rank <= k


def figures_table(reports: Sequence[Report], worst: Sequence[Report]) -> str:
    """The headline figures side by side: related recall (extraction context), recall()."""
    first = reports[0]
    messages = first.by("source").get("message", [])
    questions = first.by("source").get("question", [])
    lines = [f"{'figure':<58}{'n':>4}  " + "".join(f"{r.embedder:>9}" for r in reports)]

    def row(label: str, values: Sequence[float], n: int) -> None:
        lines.append(f"{label:<58}{n:>4}  " + "".join(f"{v:>9.3f}" for v in values))

    for k in (1, RELATED_K, DEEPEST_K):
        row(
            f"related recall@{k} (chat per language)",
            [r.recall(k, messages) for r in reports],
            len(messages),
        )
    for k in (RELATED_K, DEEPEST_K):
        row(
            f"related recall@{k} (worst case: all ~500 cards, one chat)",
            [r.recall(k, messages) for r in worst],
            len(messages),
        )
    for k in (1, 5):
        row(
            f"recall() recall@{k} (bot questions)",
            [r.recall(k, questions) for r in reports],
            len(questions),
        )
    return "\n".join(lines)


def _table(reports: Sequence[Report]) -> str:
    first = reports[0]
    lines = [
        f"{'slice':<22}{'n':>4}  " + "  ".join(f"{r.embedder + ' @1':>9}{'@5':>6}" for r in reports)
    ]

    def row(label: str, ids: Sequence[str] | None) -> None:
        n = len(ids) if ids is not None else len(first.ranks)
        cells = "  ".join(f"{r.recall(1, ids):>9.2f}{r.recall(5, ids):>6.2f}" for r in reports)
        lines.append(f"{label:<22}{n:>4}  {cells}")

    row("all", None)
    for name, ids in first.by("category").items():
        row(f"category {name}", ids)
    for name, ids in first.by("lang").items():
        row(f"lang {name}", ids)
    for name, ids in first.by("source").items():
        row(f"source {name}", ids)
    return "\n".join(lines)


def _p50_ms(samples: Sequence[float]) -> float:
    return statistics.median(samples) * 1000


async def _embed_latency(rounds: int) -> tuple[float, float]:
    client = LocalEmbedClient(
        E5, ClientConfig(base_url="", task_timeout=120.0), threads=EMBED_THREADS[0]
    )
    await client.embed(["warm up"], dimension=384)
    single, batch = [], []
    sentences = [f"Person {i} said they like green tea and live in Porto." for i in range(16)]
    for i in range(rounds):
        started = time.perf_counter()
        await client.embed([sentences[i % 16]], dimension=384, task_description=QUERY_TASK)
        single.append(time.perf_counter() - started)
    for _ in range(max(3, rounds // 8)):
        started = time.perf_counter()
        await client.embed(sentences, dimension=384)
        batch.append(time.perf_counter() - started)
    await client.aclose()
    return _p50_ms(single), _p50_ms(batch)


@dataclass(frozen=True, slots=True)
class RecallLatency:
    """p50s in ms of one ``_recall_latency`` run (see there)."""

    recall: float  # recall() as it is: the best hits connected
    plain: float  # recall() with the connection off (MEMORY_RECALL_SEEDS=0): before it
    scan: float
    hybrid: float
    connected: float


async def _recall_latency(bench: Any, cards: int, queries: int, tmp: Path) -> RecallLatency:
    """p50 of MemoryQueue.recall (embedding included) with its hits connected and with the
    connection off (``MEMORY_RECALL_SEEDS=0``, no restatement step: recall before it),
    queried in turns on the same chat; of the bare similar_cards, and of the bare hybrid
    search (no embedding) without and with the connection, in ms. The chat's cards are
    about 50 people (their subjects) written in runs of 500 (their episodes)."""
    import numpy as np

    from memory_worker.api import MemoryQueue

    routes = tmp / "routes.toml"
    routes.write_text(
        f'[routes.embedding]\n[[routes.embedding.targets]]\ntransport = "local"\nmodel = "{E5}"\n'
    )
    settings = bench.settings.model_copy(
        update={
            "routes_file": routes,
            "embedding_dimension": 384,
            "local_embed_threads": EMBED_THREADS[0],
        }
    )
    q = await MemoryQueue.connect(settings=settings)
    before = await MemoryQueue.connect(
        settings=settings.model_copy(update={"recall_seeds": 0, "recall_restatement_cosine": 2.0})
    )
    chat = 5_000 + cards
    rng = np.random.default_rng(cards)
    # real e5 vectors for a few hundred cards, then noisy copies: the cost is the scan, not text
    base_texts = [
        f"Person {i % 50} likes topic {i} and lives in city {i % 37}." for i in range(256)
    ]
    base = np.asarray(await E5Embedder().passages(base_texts), dtype=np.float32)
    for start in range(0, cards, 500):
        count = min(500, cards - start)
        picks = rng.integers(0, len(base), count)
        rows = base[picks] + rng.normal(0, 0.02, (count, 384))
        batch = [
            _new_card(
                start + i,
                f"card {start + i}: {base_texts[pick]}",
                list(row),
                subject=f"Person {pick % 50}",
            )
            for i, (pick, row) in enumerate(
                zip(picks, rows.astype(np.float32).tolist(), strict=True)
            )
        ]
        writes = RunWrites(observed_at=T0, cards=batch, embedding_model=E5)
        await q.cards.apply_run(chat, f"fill-{start}", writes, now=T0)
    questions = [f"What does person {i % 50} like?" for i in range(queries)]
    vector = (await E5Embedder().queries(["warm up"]))[0]
    for label in ("cold", "rebuilt, the texts' terms memoised"):
        fresh = CardStore(q.cards.redis, q.keys)  # nothing cached: reads and indexes the chat
        started = time.perf_counter()
        await fresh.search(chat, "warm up", vector, 5, model=E5)
        print(f"first search of a {cards}-card chat ({label}): "
              f"{(time.perf_counter() - started) * 1000:.0f} ms")  # fmt: skip
    await q.recall(chat, "warm up", k=5)
    await before.recall(chat, "warm up", k=5)
    connect = ConnectParams.from_settings(settings)
    full: list[float] = []
    plain: list[float] = []
    scan: list[float] = []
    hybrid: list[float] = []
    connected: list[float] = []
    for text in questions:
        for queue, samples in ((q, full), (before, plain)):
            started = time.perf_counter()
            hits = await queue.recall(chat, text, k=5)
            samples.append(time.perf_counter() - started)
            assert len(hits) == 5
        started = time.perf_counter()
        await q.cards.similar_cards(chat, vector, 5, model=E5)
        scan.append(time.perf_counter() - started)
        started = time.perf_counter()
        await q.cards.search(chat, text, vector, 5, model=E5)
        hybrid.append(time.perf_counter() - started)
        started = time.perf_counter()
        await q.cards.search(chat, text, vector, 5, model=E5, connect=connect)
        connected.append(time.perf_counter() - started)
    await q.close()
    await before.close()
    return RecallLatency(
        _p50_ms(full), _p50_ms(plain), _p50_ms(scan), _p50_ms(hybrid), _p50_ms(connected)
    )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recall-cards", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument(
        "--author-boost",
        type=float,
        default=AUTHOR_BOOST[0],
        help="related lookup's boost of the speaker's cards (0 = plain cosine)",
    )
    parser.add_argument(
        "--embed-threads",
        type=int,
        default=EMBED_THREADS[0],
        help="OpenMP threads of the e5 engine (0 = one per core)",
    )
    parser.add_argument("--skip-suite", action="store_true", help="no meaning suite")
    parser.add_argument("--skip-longconv", action="store_true", help="no long-conversation suite")
    parser.add_argument(
        "--tune", action="store_true", help="sweep the fusion's parameters on the dev split"
    )
    parser.add_argument(
        "--merged", action="store_true", help="also: each language's chats as one chat"
    )
    parser.add_argument(
        "--pin-vectors",
        action="store_true",
        help="write tests/data/longconv/e5-test.npz (the test split's e5 vectors) again",
    )
    args = parser.parse_args()
    AUTHOR_BOOST[0] = args.author_boost
    EMBED_THREADS[0] = args.embed_threads
    sys.path.insert(0, BENCH_DIR)
    from common import fresh_bench

    from memory_worker.keys import Keys

    cases = load_cases()
    async with fresh_bench() as bench:
        store = CardStore(bench.redis, Keys(bench.settings.key_prefix))
        if not args.skip_suite:
            await _suite(store, cases)
        if not args.skip_longconv:
            await _longconv(store, tune=args.tune, merge=args.merged, pin=args.pin_vectors)
        single, batch = await _embed_latency(rounds=40)
        print(
            f"e5 embed p50 ({EMBED_THREADS[0] or 'all'} engine threads): one sentence "
            f"{single:.1f} ms, batch of 16 {batch:.1f} ms"
        )
        for count in args.recall_cards:
            took = await _recall_latency(bench, count, args.queries, bench.tmp)
            print(
                f"recall() p50 with {count} cards: {took.recall:.1f} ms connected, "
                f"{took.plain:.1f} ms with the connection off (before it): "
                f"{took.recall / took.plain:.2f}x (similar_cards alone {took.scan:.1f} ms, "
                f"the hybrid search without embedding {took.hybrid:.1f} ms, connected "
                f"{took.connected:.1f} ms: {took.connected / took.hybrid:.2f}x)"
            )


async def _suite(store: CardStore, cases: Sequence[Case]) -> None:
    """The meaning suite's figures, e5 and the hashed baseline side by side."""
    e5, hashed = E5Embedder(), HashedEmbedder()
    reports = [
        await evaluate_by_language(cases, e5, store, first_chat_id=10, hybrid=True),
        await evaluate_by_language(cases, e5, store, first_chat_id=30),
        await evaluate_by_language(cases, hashed, store, first_chat_id=20),
    ]
    worst = [
        await evaluate(cases, e5, store, chat_id=1, hybrid=True),
        await evaluate(cases, e5, store, chat_id=3),
        await evaluate(cases, hashed, store, chat_id=2),
    ]
    print(f"meaning suite: {len(cases)} cases, {len({c.card for c in cases})} target cards")
    print(f"related lookup author boost: {AUTHOR_BOOST[0]}")
    print(figures_table(reports, worst))
    print(outcome_table(reports, store_outcomes(cases)))
    print(_table(reports))
    for report in reports:
        print(f"{report.embedder} misses @5: {', '.join(report.misses(5)) or '-'}")


async def _longconv(store: CardStore, *, tune: bool, merge: bool, pin: bool = False) -> None:
    """The long-conversation suite: dense, lexical, hybrid and connected recall@1/5/10 per
    category (connected: hybrid with the best hits connected, what ``recall()`` does)."""
    from bench.longconv import (
        CachedEmbedder,
        by_language,
        candidates,
        connections,
        lookups,
        margins,
        merged,
        pin_vectors,
        run_mode,
        score,
        store_chats,
        table,
    )
    from tests.support.longconv import load

    chats, questions = load()
    _, fresh = load(split="fresh")  # hand-written, held out: reported, never tuned on
    embedder = CachedEmbedder(E5Embedder())
    if pin:
        tested = [q for q in questions if q.split == "test"]
        await pin_vectors([c for c in chats if c.split == "test"], tested, embedder)
    await store_chats(store, chats, embedder)
    items = await lookups(chats, [*questions, *fresh], embedder)
    chosen = FusionParams.from_settings(Settings())
    print(
        f"long-conversation suite: {len(chats)} chats, "
        f"{sum(len(c.messages) for c in chats)} messages (one card each), "
        f"{len(questions)} questions and {len(fresh)} fresh; fusion {chosen}"
    )
    dev = [i for i in items if i.question.split == "dev"]
    dev_questions = [i.question for i in dev]
    if tune:
        dense = await run_mode(store, dev, "dense", chosen, E5)
        rows = []
        for params in candidates(chosen):
            found = await run_mode(store, dev, "hybrid", params, E5)
            rows.append((score(found, dense, dev_questions), params))
            print(f"dev @5 {rows[-1][0][0]:.3f} worst category {rows[-1][0][1]:+.3f}  {params}")
        fair = [row for row in rows if row[0][1] >= -0.01] or rows
        chosen = max(fair, key=lambda row: row[0][0])[1]
        for boost in (0.0, 0.1, 0.25, 0.5, 1.0):
            params = replace(chosen, time_boost=boost)
            found = await run_mode(store, dev, "hybrid", params, E5)
            print(f"dev time boost {boost}: {margins(found, dense, dev_questions)}")
        print(f"chosen on dev: {chosen}")
        for connect in connections(ConnectParams.from_settings(Settings())):
            found = await run_mode(store, dev, "connected", chosen, E5, connect)
            print(f"dev {margins(found, dense, dev_questions)}  {connect}")
    for split in ("test", "dev", "fresh"):
        chosen_items = [i for i in items if i.question.split == split]
        split_questions = [i.question for i in chosen_items]
        results = [
            await run_mode(store, chosen_items, mode, chosen, E5)
            for mode in ("dense", "lexical", "hybrid", "connected")
        ]
        print(table(results, split_questions, f"split {split}"))
        print(margins(results[2], results[0], split_questions))
        print(margins(results[3], results[0], split_questions))
        print(margins(results[3], results[2], split_questions))
        print(by_language(results, split_questions))
    if merge:
        big_chats, big_questions = merged(chats, questions)
        await store_chats(store, big_chats, embedder)
        big_items = await lookups(big_chats, big_questions, embedder)
        for split in ("test", "dev"):
            chosen_items = [i for i in big_items if i.question.split == split]
            split_questions = [i.question for i in chosen_items]
            results = [
                await run_mode(store, chosen_items, mode, chosen, E5)
                for mode in ("dense", "lexical", "hybrid")
            ]
            print(table(results, split_questions, f"merged {split}"))
            print(margins(results[2], results[0], split_questions))


if __name__ == "__main__":
    asyncio.run(main())
