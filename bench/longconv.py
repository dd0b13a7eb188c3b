"""The long-conversation suite's figures (§16): dense-only, lexical-only, hybrid and
connected recall@k.

Every message of every chat of ``tests/data/longconv`` becomes one card
(``"<sender>: <text>"``, observed when it was sent; :mod:`tests.support.longconv`)
written through the real run write with its e5 passage vector, one run a busy hour (as a
bot that enqueues each busy hour would: the card's subject is its sender, its episode
that hour's run); each question is embedded as an e5 query and looked up four ways on
the same store:

- ``dense``: :meth:`CardStore.similar_cards` (the cosine alone: ``recall()`` before);
- ``lexical``: :meth:`CardStore.search` without a vector (BM25 alone);
- ``hybrid``: :meth:`CardStore.search` with both (``recall()`` before its hits connected);
- ``connected``: the same with the best hits connected (:mod:`memory_worker.cards.recall.connect`,
  what ``recall()`` does now), asked for each k.

A question's recall@k is the share of its evidence messages whose card is among the k
best (a card that merged repeats covers each message it came from). ``--tune`` sweeps
the fusion's parameters, then the connection's, on the ``dev`` split and reports the
``test`` split; the hand-written ``fresh`` split (over the ``test`` chats) is reported
beside them.

Vectors are cached in ``bench/.cache/`` by text (the suite embeds ~6,000 texts; e5 runs
single-threaded): delete it to measure embedding from scratch.
"""

from __future__ import annotations

import hashlib
import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from memory_worker.cards import CardStore, NewCard, RunWrites, Scope
from memory_worker.cards.recall import ConnectParams, FusionParams
from memory_worker.settings import Settings
from tests.support.longconv import Chat, Message, Question

CACHE = Path(__file__).resolve().parent / ".cache"
CATEGORIES = ("single-hop", "multi-hop", "temporal", "open-domain")
DEPTHS = (1, 5, 10)
MODES = ("dense", "lexical", "hybrid", "connected")


class Embedder(Protocol):
    model: str

    async def passages(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def queries(self, texts: Sequence[str]) -> list[list[float]]: ...


class CachedEmbedder:
    """An embedder whose vectors are kept on disk by (kind, text)."""

    def __init__(self, inner: Embedder, path: Path = CACHE) -> None:
        self.inner, self.model = inner, inner.model
        digest = hashlib.sha1(inner.model.encode()).hexdigest()[:8]
        self.file = path / f"longconv-{digest}.npz"
        self.vectors: dict[str, np.ndarray[Any, Any]] = {}
        if self.file.exists():
            with np.load(self.file) as data:
                self.vectors = dict(zip(data["keys"].tolist(), data["vectors"], strict=True))

    async def _get(self, kind: str, texts: Sequence[str]) -> list[list[float]]:
        keys = [f"{kind}\x00{t}" for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self.vectors))
        if missing:
            fresh_texts = [k.split("\x00", 1)[1] for k in missing]
            embed = self.inner.passages if kind == "p" else self.inner.queries
            for key, vector in zip(missing, await embed(fresh_texts), strict=True):
                self.vectors[key] = np.asarray(vector, dtype=np.float32)
            self.save()
        return [self.vectors[k].tolist() for k in keys]

    def save(self) -> None:
        self.file.parent.mkdir(parents=True, exist_ok=True)
        keys = list(self.vectors)
        np.savez(self.file, keys=np.array(keys), vectors=np.stack([self.vectors[k] for k in keys]))

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._get("p", texts)

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._get("q", texts)


def hourly_runs(messages: Sequence[Message]) -> list[list[int]]:
    """Indexes of ``messages`` (in time order) by the UTC hour they were sent in: the runs a
    bot that enqueues each busy hour of a chat makes (one run, one episode, each)."""
    runs: dict[str, list[int]] = {}
    for index, message in enumerate(messages):
        runs.setdefault(message.sent_at[:13], []).append(index)
    return list(runs.values())


#: The e5 vectors of the ``test`` split (its chats' card texts, int8 as the store keeps
#: them; its questions, float16), so a test can measure the split without embedding it.
PINNED = Path(__file__).resolve().parents[1] / "tests" / "data" / "longconv" / "e5-test.npz"


class PinnedEmbedder:
    """Vectors from :data:`PINNED` (written by :func:`pin_vectors`); a text it does not hold
    raises ``KeyError``."""

    def __init__(self, model: str, path: Path = PINNED) -> None:
        self.model = model
        with np.load(path) as data:
            self._passages = dict(
                zip(data["passage_texts"].tolist(), data["passages"], strict=True)
            )
            self._queries = dict(zip(data["query_texts"].tolist(), data["queries"], strict=True))

    async def passages(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._passages[t].astype(np.float32).tolist() for t in texts]

    async def queries(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._queries[t].astype(np.float32).tolist() for t in texts]


async def pin_vectors(
    chats: Sequence[Chat], questions: Sequence[Question], embedder: Embedder, path: Path = PINNED
) -> None:
    """Write :data:`PINNED`: ``chats``' card texts and ``questions``' texts, embedded."""
    from memory_worker.cards.vectors import quantize

    texts = sorted({m.card_text for chat in chats for m in chat.messages})
    asked = sorted({q.text for q in questions})
    passages = [quantize(v) for v in await embedder.passages(texts)]
    np.savez_compressed(
        path,
        passage_texts=np.array(texts),
        passages=np.stack([np.frombuffer(p, dtype=np.int8) for p in passages]),
        query_texts=np.array(asked),
        queries=np.asarray(await embedder.queries(asked), dtype=np.float16),
    )


async def store_chats(store: CardStore, chats: Sequence[Chat], embedder: Embedder) -> None:
    """Every message of ``chats`` as a card of its chat, with its passage vector, written
    as the pipeline writes them: one run a busy hour (:func:`hourly_runs`), so a card
    carries its subject (the sender), its first run (its episode) and its times, and no
    link (the stand-in model states none)."""
    for chat in chats:
        texts = [m.card_text for m in chat.messages]
        vectors = await embedder.passages(texts)
        cards = []
        for message, vector in zip(chat.messages, vectors, strict=True):
            sent = datetime.fromisoformat(message.sent_at)
            cards.append(
                NewCard(
                    scope=Scope.CHAT,
                    thread_id=0,
                    user_id=None,
                    card_type="message",
                    subject=message.sender,
                    predicate="said",
                    object="",
                    fact_text=message.card_text,
                    confidence=0.8,
                    salience=0.5,
                    durability=None,
                    source_message_ids=(message.id,),
                    valid_from=sent,
                    observed_at=sent,
                    expires_at=None,
                    embedding=vector,
                )
            )
        for number, run in enumerate(hourly_runs(chat.messages)):
            batch = [cards[i] for i in run]
            writes = RunWrites(
                observed_at=max(card.observed_at for card in batch),
                cards=batch,
                embedding_model=embedder.model,
            )
            await store.apply_run(chat.id, f"longconv-{chat.id}-{number}", writes, now=chat.now)


@dataclass
class Found:
    """The message ids each question's lookup found, best first: one list up to the
    deepest k, or one list per depth (a ranking whose top k depends on k)."""

    mode: str
    found: dict[str, list[list[list[int]]]] = field(default_factory=dict)
    #: The k of each list (empty: one list, up to the deepest k).
    depths: tuple[int, ...] = ()

    def recall(self, question: Question, k: int) -> float:
        lists = self.found[question.id]
        cards = lists[self.depths.index(k)] if self.depths else lists[0]
        got = {m for ids in cards[:k] for m in ids}
        return sum(e in got for e in question.evidence) / len(question.evidence)

    def mean(self, questions: Iterable[Question], k: int) -> float:
        values = [self.recall(q, k) for q in questions]
        return statistics.fmean(values) if values else float("nan")


@dataclass
class Lookup:
    """One question, ready to be looked up: its chat, text, vector and when it is asked."""

    question: Question
    chat: Chat
    vector: list[float]


async def lookups(
    chats: Sequence[Chat], questions: Sequence[Question], embedder: Embedder
) -> list[Lookup]:
    by_id = {c.id: c for c in chats}
    vectors = await embedder.queries([q.text for q in questions])
    return [Lookup(q, by_id[q.chat], v) for q, v in zip(questions, vectors, strict=True)]


async def run_mode(
    store: CardStore,
    items: Sequence[Lookup],
    mode: str,
    params: FusionParams,
    model: str,
    connect: ConnectParams | None = None,
    depths: tuple[int, ...] = DEPTHS,
) -> Found:
    """Each question looked up one way (see the module); ``connected`` with ``connect``
    (default: the production settings), looked up at each of ``depths``, as a bot asks
    for k."""
    out = Found(mode)
    if mode == "connected":
        connect = connect or ConnectParams.from_settings(Settings())
        out.depths = depths
    for item in items:
        chat, question = item.chat, item.question
        if mode == "dense":
            pairs = await store.similar_cards(
                chat.id, item.vector, max(DEPTHS), model=model, now=chat.now
            )
            found = [[card for card, _ in pairs]]
        else:
            vector = None if mode == "lexical" else item.vector
            found = []
            for depth in depths if mode == "connected" else (max(DEPTHS),):
                hits = await store.search(
                    chat.id,
                    question.text,
                    vector,
                    depth,
                    now=chat.now,
                    model=model,
                    params=params,
                    connect=connect if mode == "connected" else None,
                )
                found.append([hit.card for hit in hits])
        out.found[question.id] = [[list(c.source_message_ids) for c in cards] for cards in found]
    return out


def table(results: Sequence[Found], questions: Sequence[Question], title: str) -> str:
    """recall@1/5/10 per category, the modes side by side."""
    groups: dict[str, list[Question]] = defaultdict(list)
    for q in questions:
        groups[q.category].append(q)
    head = f"{title:<14}{'n':>5}  " + "  ".join(
        f"{r.mode + ' @1':>11}{'@5':>6}{'@10':>6}" for r in results
    )
    lines = [head]
    for name, group in [("all", list(questions))] + [(c, groups[c]) for c in CATEGORIES]:
        cells = "  ".join(
            f"{r.mean(group, 1):>11.3f}{r.mean(group, 5):>6.3f}{r.mean(group, 10):>6.3f}"
            for r in results
        )
        lines.append(f"{name:<14}{len(group):>5}  {cells}")
    return "\n".join(lines)


def by_language(results: Sequence[Found], questions: Sequence[Question], k: int = 5) -> str:
    """recall@k of each mode per language, on one line."""
    parts = []
    for lang in dict.fromkeys(q.lang for q in questions):
        group = [q for q in questions if q.lang == lang]
        cells = "/".join(f"{r.mean(group, k):.3f}" for r in results)
        parts.append(f"{lang} {cells}")
    modes = "/".join(r.mode for r in results)
    return f"{modes} @{k} by language: " + ", ".join(parts)


def margins(hybrid: Found, dense: Found, questions: Sequence[Question], k: int = 5) -> str:
    """The acceptance check: one mode minus another's recall@k overall and per category."""
    parts = [f"all {hybrid.mean(questions, k) - dense.mean(questions, k):+.3f}"]
    for category in CATEGORIES:
        group = [q for q in questions if q.category == category]
        parts.append(f"{category} {hybrid.mean(group, k) - dense.mean(group, k):+.3f}")
    return f"{hybrid.mode} - {dense.mode} @{k}: " + ", ".join(parts)


def merged(
    chats: Sequence[Chat], questions: Sequence[Question]
) -> tuple[list[Chat], list[Question]]:
    """Every chat of a language as one chat (~1,500 cards: the fusion at 4x the size;
    people of one name in two chats make some questions ambiguous, so recall is lower)."""
    out: list[Chat] = []
    asked: list[Question] = []
    for lang in dict.fromkeys(c.lang for c in chats):
        big = Chat(900 + len(out), lang, "all")
        for chat in (c for c in chats if c.lang == lang):
            big.messages += [
                Message(
                    chat.id * 1000 + m.id, m.user_id + chat.id * 10, m.sender, m.text, m.sent_at
                )
                for m in chat.messages
            ]
        big.messages.sort(key=lambda m: m.sent_at)
        out.append(big)
        asked += [
            replace(q, chat=big.id, evidence=[q.chat * 1000 + e for e in q.evidence])
            for q in questions
            if q.lang == lang
        ]
    return out, asked


def candidates(base: FusionParams) -> list[FusionParams]:
    """The fusions ``--tune`` compares on the dev split."""
    out = [replace(base, method="rrf", rrf_k=k, lexical_weight=w, bm25_b=b)
           for k in (10, 60) for w in (0.25, 0.5) for b in (0.3, 0.75)]  # fmt: skip
    out += [replace(base, method="convex", lexical_weight=w, bm25_b=b)
            for w in (0.1, 0.2, 0.3) for b in (0.3, 0.75)]  # fmt: skip
    out += [replace(base, method="relative", lexical_weight=w, bm25_b=b)
            for w in (0.2, 0.3, 0.4, 0.5) for b in (0.0, 0.3, 0.5, 0.75)]  # fmt: skip
    return out


def connections(base: ConnectParams) -> list[ConnectParams]:
    """The connections ``--tune`` compares on the dev split (the fusion chosen first)."""
    out = [replace(base, seeds=0, restatement=2.0), replace(base, restatement=2.0)]
    out += [replace(base, seeds=m, subject=w) for m in (3, 5, 8) for w in (0.1, 0.2, 0.3)]
    out += [replace(base, episode=w) for w in (0.0, 0.2)]
    out += [replace(base, restatement=c) for c in (0.92, 0.97, 2.0)]
    return out


def score(hybrid: Found, dense: Found, questions: Sequence[Question]) -> tuple[float, float]:
    """(recall@5, the worst category's margin over dense) — what tuning maximises."""
    worst = min(
        hybrid.mean(group, 5) - dense.mean(group, 5)
        for category in CATEGORIES
        if (group := [q for q in questions if q.category == category])
    )
    return hybrid.mean(questions, 5), worst
