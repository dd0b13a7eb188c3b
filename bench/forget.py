"""Forget on a 10,000-card chat (§14): total time and the longest single Redis call.

A private Valkey holds one chat of ``--cards`` cards (512-byte int8 vector rows,
half of them Alice's, half Bob's, written by ``--runs`` runs through the real
card write), plus queued runs holding both users' messages. Figures:

- forgetting Alice in one chat (half its cards: the vector matrix compacted), and
  forgetting the other chat whole;
- the longest single command the server ran meanwhile (SLOWLOG, threshold 0): how
  long one forget call blocks Redis — the budget is 50 ms;
- baseline, measured in the same run: writing the same memory through the card
  write (``apply_run``), so the ratio says what erasure costs against creation.

    python bench/forget.py [--cards 10000]
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from datetime import timedelta

import numpy as np
from common import BASE, fresh_bench, run_bench

from memory_worker.cards import CardStore
from memory_worker.cards.model import Scope
from memory_worker.cards.writes import NewCard, RunWrites
from memory_worker.keys import Keys
from memory_worker.models import RunRequest
from memory_worker.privacy.forget import ForgetScope
from memory_worker.runs import RunStore
from memory_worker.upkeep.forgetter import Forgetter

CHAT, OTHER, ALICE, BOB = -1001, -1002, 1, 2


def card(i: int, user: int, rng: np.random.Generator) -> NewCard:
    at = BASE + timedelta(minutes=i)
    return NewCard(
        scope=Scope.CHAT if i % 3 else Scope.USER,
        thread_id=0,
        user_id=user,
        card_type="preference",
        subject=f"user{user}",
        predicate="likes",
        object=f"thing {i}",
        fact_text=f"User {user} likes thing number {i} a lot.",
        confidence=0.8,
        salience=0.5,
        durability=None,
        source_message_ids=(i,),
        valid_from=at,
        observed_at=at,
        expires_at=None,
        embedding=rng.standard_normal(512).astype(np.float32).tolist(),
    )


async def write_memory(cards: CardStore, n: int, runs: int, chat: int = CHAT) -> float:
    rng = np.random.default_rng(7)
    per_run = max(1, n // runs)
    spent = 0.0
    for r in range(0, n, per_run):
        batch = [card(i, ALICE if i % 2 else BOB, rng) for i in range(r, min(n, r + per_run))]
        writes = RunWrites(
            observed_at=BASE,
            cards=batch,
            embedding_model="bench",
            authors=[(c.source_message_ids[0], c.user_id or 0) for c in batch],
        )
        t0 = time.perf_counter()
        await cards.apply_run(chat, f"run{r}", writes, now=BASE)
        spent += time.perf_counter() - t0
    return spent


async def queue_runs(store: RunStore, n: int, chat: int = CHAT) -> None:
    for i in range(n):
        start = BASE + timedelta(hours=i)
        await store.enqueue(
            RunRequest.model_validate(
                {
                    "chat_id": chat,
                    "range_start": start.isoformat(),
                    "range_end": (start + timedelta(hours=1)).isoformat(),
                    "messages": [
                        {
                            "message_id": 10**6 + 10 * i + j,
                            "user_id": ALICE if j % 2 else BOB,
                            "sender_name": "x",
                            "text": f"message {j} of run {i}",
                            "sent_at": (start + timedelta(minutes=j + 1)).isoformat(),
                        }
                        for j in range(10)
                    ],
                }
            )
        )


async def call_times(redis: object) -> list[tuple[float, str]]:
    """Durations (ms, longest first) of the commands in the slow log (threshold 0), the
    bench's own SLOWLOG/CONFIG/PING left out. They are wall times: on a loaded machine a
    descheduled server shows up as a slow command, whatever the command."""
    entries = await redis.slowlog_get(100_000)  # type: ignore[attr-defined]
    named = []
    for entry in entries:
        command = entry["command"]
        text = command if isinstance(command, str) else bytes(command).decode(errors="replace")
        name = text.split()[0].upper() if text else "?"
        if name not in {"SLOWLOG", "CONFIG", "PING"}:
            named.append((entry["duration"] / 1000, name))
    return sorted(named, reverse=True)


async def main(n: int, runs: int, queued: int) -> None:
    async with fresh_bench(forget_rewrite_aof=False) as bench:
        redis, settings = bench.redis, bench.settings
        cards = CardStore(redis, Keys(settings.key_prefix))
        write_s = await write_memory(cards, n, runs)
        await write_memory(cards, n, runs, OTHER)
        await queue_runs(RunStore(redis, settings), queued)
        await queue_runs(RunStore(redis, settings), queued, OTHER)
        forgetter = Forgetter(redis, settings)
        # no automatic AOF rewrite (a fork) in the middle of the measured calls
        await redis.config_set("auto-aof-rewrite-percentage", 0)
        await redis.config_set("slowlog-log-slower-than", 0)
        await redis.config_set("slowlog-max-len", 100_000)
        rows = []
        for scope in (ForgetScope(CHAT, ALICE), ForgetScope(OTHER)):
            await redis.slowlog_reset()
            await redis.ping()
            await redis.zrange(
                Keys(settings.key_prefix).all_runs, 0, 999
            )  # absorbs the reset's stall
            await asyncio.sleep(
                1
            )  # freeing the last phase's slow log (100k entries) stalls a moment
            await redis.slowlog_reset()  # the absorber's own entry (the stall) is not forget's
            t0 = time.perf_counter()
            result = await forgetter.forget(scope, actor="bench")
            took = time.perf_counter() - t0
            rows.append((scope.kind, result, took, await call_times(redis)))
        print(
            f"two chats of {n} cards ({runs} runs) + {queued} queued runs each; writing one "
            f"chat's cards took {write_s:.2f} s (baseline); load average {os.getloadavg()[0]:.1f} "
            f"on {os.cpu_count()} cores"
        )
        for kind, result, took, calls in rows:
            ms = [d for d, name in calls if name == "EVALSHA"]  # the forget scripts
            p99 = ms[len(ms) // 100] if ms else 0.0
            print(
                f"forget {kind:4}: {result.cards:6} cards {result.vectors:6} vectors "
                f"{result.messages:5} messages in {took:6.3f} s "
                f"({took / write_s:5.2f}x the write) | {len(ms)} script calls: median "
                f"{statistics.median(ms):.2f} ms, p99 {p99:.2f} ms; longest command of all "
                f"{calls[0][0]:.2f} ms ({calls[0][1]})"
            )


if __name__ == "__main__":
    run_bench(main, __doc__, cards=10_000, runs=50, queued=200)
