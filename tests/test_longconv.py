"""The long-conversation suite (§16): its files are the generator's, its shape is the issue's,
and on a slice of it hybrid recall beats the cosine alone (real e5, real Valkey).

The whole suite runs in ``python bench/meaning.py`` (dense, lexical and hybrid
recall@1/5/10 per category, both splits); here one Russian test chat keeps CI short: its
~400 messages are embedded with the local e5 model, written as cards through the run write,
and its questions looked up dense-only and hybrid with the production defaults.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from bench.longconv import CATEGORIES, lookups, run_mode, store_chats
from bench.meaning import E5, E5Embedder
from memory_worker.cards import CardStore
from memory_worker.cards.recall import FusionParams
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from tests.support.longconv import DATA, dump, generate, load
from tests.support.longconv_lang import BOOKS

SLICE_CHAT = 201  # Russian, test split: Cyrillic stems, names asked in Latin too


def test_the_committed_suite_is_what_the_seeded_generator_makes() -> None:
    made = dump(*generate())
    for name, text in made.items():
        assert (DATA / name).read_text(encoding="utf-8") == text, name


def test_the_suite_has_the_shape_the_issue_asks_for() -> None:
    chats, questions = load()
    assert len(questions) >= 1000
    assert len({c.lang for c in chats}) >= 4
    assert min(len(c.messages) for c in chats) >= 300
    assert set(Counter(q.category for q in questions)) == set(CATEGORIES)
    assert {q.split for q in questions} == {"dev", "test"}
    assert sum(q.split == "test" for q in questions) >= 1000 * 0.7
    by_id = {c.id: c for c in chats}
    for question in questions:
        chat = by_id[question.chat]
        assert question.lang == chat.lang
        assert question.split == chat.split
        assert question.evidence, question.id
        assert all(1 <= e <= len(chat.messages) for e in question.evidence), question.id
        if question.category == "multi-hop":
            assert len(question.evidence) == 2, question.id
    others = {p.other for book in BOOKS.values() for p in book.people}
    assert sum(any(name in q.text for name in others) for q in questions) >= 100  # two scripts
    times = [m.sent_at for c in chats for m in c.messages]
    assert len(set(times)) > 0.9 * len(times)


async def test_hybrid_recall_beats_the_cosine_on_a_slice(redis: Any, key_prefix: str) -> None:
    chats, questions = load()
    chat = [c for c in chats if c.id == SLICE_CHAT]
    asked = [q for q in questions if q.chat == SLICE_CHAT]
    store = CardStore(redis, Keys(key_prefix))
    embedder = E5Embedder()
    await store_chats(store, chat, embedder)
    items = await lookups(chat, asked, embedder)
    params = FusionParams.from_settings(Settings())
    dense = await run_mode(store, items, "dense", params, E5)
    hybrid = await run_mode(store, items, "hybrid", params, E5)
    print(
        f"\nlong-conversation slice (chat {SLICE_CHAT}, {len(asked)} questions) recall@5: "
        f"dense {dense.mean(asked, 5):.3f}, hybrid {hybrid.mean(asked, 5):.3f}"
    )
    assert hybrid.mean(asked, 5) >= dense.mean(asked, 5) + 0.04
    for category in CATEGORIES:
        group = [q for q in asked if q.category == category]
        assert hybrid.mean(group, 5) >= dense.mean(group, 5) - 0.05, category
