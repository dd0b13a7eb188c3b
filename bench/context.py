"""MemoryQueue.context at 10 000 cards, embedding included, vs recall in the same run
(target: context p50 ≤ 80 ms with single-threaded e5).

Fills one chat through the real run-write script (``apply_run``, 200 cards a run, 384-d
random unit vectors recorded as e5's: the query is embedded by the real multilingual
e5-small on one thread, ``MEMORY_LOCAL_EMBED_THREADS=1``), then measures, alternating so
load on the machine hits both alike:

- baseline: ``recall(chat, query, k=40, user_id)`` — the query's embedding, the chat's
  vector scan, the winners' read;
- ``context(chat, user_id, query, max_tokens=800)`` — that recall plus the most recently
  observed cards of the user's and the chat's scopes, ranked, deduplicated, budgeted and
  rendered;
- ``context`` without a query (no embedding).

The cards belong to 50 users and the chat (a third of them chat cards). Queries rotate
through a few bot questions so the embedder's cache (if any) does not flatter it.

    python bench/context.py [--cards 10000] [--queries 60]
"""

from __future__ import annotations

import random
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
from common import fresh_bench, median, pct, run_bench

from memory_worker.api import MemoryQueue
from memory_worker.cards import Durability, NewCard, RunWrites, Scope
from memory_worker.settings.types import reveal
from memory_worker.storage.connections import RedisHandle

CHAT = -1001234567890
T0 = datetime(2026, 3, 1, tzinfo=UTC)
USERS = 50
DIM = 384
E5 = "multilingual-e5-small"
QUESTIONS = [
    "What does Alice drink in the morning?",
    "Где живёт Мария?",
    "Was macht Jonas beruflich?",
    "¿Qué deporte practica Lucía?",
    "Which city did Finn move to last year?",
]


def make_cards(start: int, count: int, vectors: np.ndarray, rng: random.Random) -> list[NewCard]:
    cards = []
    for i in range(start, start + count):
        user = i % USERS
        scope = Scope.USER if i % 3 else Scope.CHAT
        seen = T0 + timedelta(minutes=i)
        cards.append(
            NewCard(
                scope=scope,
                thread_id=0,
                user_id=1000 + user if scope == Scope.USER else None,
                card_type="fact",
                subject=f"person {user}",
                predicate=f"fact_{i % 40}",
                object=f"object {i}",
                fact_text=f"Person {user} said something memorable, number {i}, about {i % 97}.",
                confidence=rng.uniform(0.5, 1),
                salience=rng.uniform(0, 1),
                durability=Durability.LONG,
                source_message_ids=(i,),
                valid_from=seen,
                observed_at=seen,
                expires_at=None,
                embedding=vectors[i].tolist(),
            )
        )
    return cards


async def main(n_cards: int, queries: int) -> None:
    rng = random.Random(7)
    vectors = np.random.default_rng(7).normal(size=(n_cards, DIM)).astype(np.float32)
    with_routes = {"embedding_dimension": DIM, "local_embed_threads": 1}
    async with fresh_bench(**with_routes) as bench:
        routes = Path(bench.tmp) / "routes.toml"
        routes.write_text(
            '[routes.embedding]\n[[routes.embedding.targets]]\ntransport = "local"\n'
            f'model = "{E5}"\n'
        )
        settings = bench.settings.model_copy(update={"routes_file": routes})
        queue = MemoryQueue(RedisHandle(bench.redis, reveal(settings.redis_url) or ""), settings)
        t0 = time.perf_counter()
        for run, start in enumerate(range(0, n_cards, 200)):
            count = min(200, n_cards - start)
            batch = make_cards(start, count, vectors, rng)
            writes = RunWrites(observed_at=T0, cards=batch, embedding_model=E5)
            await queue.cards.apply_run(CHAT, f"fill-{run}", writes, now=T0)
        fill_s = time.perf_counter() - t0

        user = 1000 + 7
        await queue.recall(CHAT, QUESTIONS[0], k=40, user_id=user)  # load e5, warm the cache
        await queue.context(CHAT, user_id=user, query=QUESTIONS[0])
        base, ctx, plain = [], [], []
        tokens = cards = 0
        for i in range(queries):
            question = QUESTIONS[i % len(QUESTIONS)]
            q0 = time.perf_counter()
            await queue.recall(CHAT, question, k=40, user_id=user)
            base.append(time.perf_counter() - q0)
            q0 = time.perf_counter()
            memory = await queue.context(CHAT, user_id=user, query=question, max_tokens=800)
            ctx.append(time.perf_counter() - q0)
            q0 = time.perf_counter()
            await queue.context(CHAT, user_id=user, max_tokens=800)
            plain.append(time.perf_counter() - q0)
            tokens, cards = memory.tokens, len(memory.cards)
        await queue._close_recall()

    b50 = median(base)
    print(f"cards in one chat           : {n_cards} (dim {DIM}), filled in {fill_s:.1f} s")
    print(
        f"baseline recall k=40        : p50 {b50 * 1e3:.1f} ms  p95 {pct(base, 0.95) * 1e3:.1f} ms"
    )
    for label, values in (("context with a query", ctx), ("context, no query   ", plain)):
        print(
            f"{label}        : p50 {median(values) * 1e3:.1f} ms  "
            f"p95 {pct(values, 0.95) * 1e3:.1f} ms  ratio p50 {median(values) / b50:.2f}x recall"
        )
    print(f"a context                   : {cards} cards, {tokens} tokens (max 800)")
    verdict = "OK" if median(ctx) <= 0.080 else "OVER"
    print(f"target context p50 <= 80 ms : {verdict}")


if __name__ == "__main__":
    run_bench(main, __doc__, cards=10_000, queries=60)
