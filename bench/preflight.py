"""What the ACL preflight costs a script call (§7 "Store faults").

Every script that writes more than once asks ``redis.acl_check_cmd`` for each (command, key)
pair it may write before its first write (``llm_client/lua/preflight.lua``), then checks each
declared key's type and each ``INCR`` counter's value (``preflight_shapes.lua``). Here the same
scripts run three ways on a private Valkey: as they ship (``full``), with the shape check taken
out (``acl``: the ACL check only) and with the whole preflight taken out (``none``: the script
as it was before). Each variant runs in batches on fresh state of the same shape, in rotating
order, and the figures are:

- **server µs/call**: the script's own time in the server, from ``SLOWLOG`` (every command
  logged, filtered by the script's SHA, so the set-up between batches does not count);
- **wall µs/call**: the client's round trip for the call.

Each as ratios full/none, acl/none and full/acl (what the shape check adds), for the default user (every command and key: the common
deployment) and for an ACL user (key patterns and a denied command, as an operator who uses
ACLs writes them). Run from the repository root:

    PYTHONPATH=. python bench/preflight.py [--calls 300] [--rounds 4]
"""

from __future__ import annotations

import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from common import Bench, fill, fresh_bench, run_bench

from llm_client._lua import PREFLIGHT, PREFLIGHT_SHAPES
from memory_worker.cards import CardStore, RunWrites
from memory_worker.cards.store import _script
from memory_worker.keys import Keys
from memory_worker.runs import ClaimedRun, RunStore
from memory_worker.runs.store import _CLAIM, _COMPLETE, _RELEASE, _RENEW
from memory_worker.storage.connections import client_from_url
from tests.support.cards import CHAT, T0, new

NO_PREFLIGHT = "local function preflight(writes) end\n"
NO_SHAPES = "local function preflight_shapes(writes, legacy) end\n"
VARIANTS = ("full", "acl", "none")


def variant(text: str, which: str) -> str:
    """``text`` as shipped (``full``), without the shape check, or without any preflight."""
    if which == "none":
        return text.replace(PREFLIGHT, NO_PREFLIGHT, 1)
    if which == "acl":
        return text.replace(PREFLIGHT_SHAPES, NO_SHAPES, 1)
    return text


def _empty() -> dict[str, list[float]]:
    return {v: [] for v in VARIANTS}


@dataclass
class Figures:
    server: dict[str, list[float]] = field(default_factory=_empty)
    wall: dict[str, list[float]] = field(default_factory=_empty)

    def median(self, kind: str, which: str) -> float:
        got: dict[str, list[float]] = self.server if kind == "server" else self.wall
        return statistics.median(got[which])


#: A case: (set-up of one batch → the calls to time, each an awaitable factory); the script.
Setup = Callable[[Any, bool, int], Awaitable[list[Callable[[], Awaitable[Any]]]]]


async def _claims(store: RunStore, n: int, start: int) -> list[ClaimedRun]:
    await fill(store, n, start=start)
    claims = []
    for _ in range(n):
        claim = await store.claim("bench-owner")
        assert claim is not None
        claims.append(claim)
    return claims


class Cases:
    """Each case registers its script in both variants on the bench's client."""

    def __init__(self, bench: Bench, redis: Any) -> None:
        self.bench, self.redis, self.next = bench, redis, 0

    def _store(self, text: str, attribute: str, which: str) -> RunStore:
        """A run store on a deployment of its own (a key prefix under the bench's)."""
        prefix = f"{self.bench.settings.key_prefix}{uuid.uuid4().hex[:6]}:"
        store = RunStore(self.redis, self.bench.settings.model_copy(update={"key_prefix": prefix}))
        if which != "full":
            setattr(store, attribute, self.redis.register_script(variant(text, which)))
        return store

    def _start(self, n: int) -> int:
        self.next += n
        return self.next - n

    async def renew(self, which: str, n: int) -> tuple[str, list[Callable[[], Any]]]:
        store = self._store(_RENEW, "_renew", which)
        (claim,) = await _claims(store, 1, self._start(1))
        return store._renew.sha, [lambda: store.renew(claim) for _ in range(n)]

    async def complete(self, which: str, n: int) -> tuple[str, list[Callable[[], Any]]]:
        store = self._store(_COMPLETE, "_complete", which)
        claims = await _claims(store, n, self._start(n))
        return store._complete.sha, [partial(store.complete, c, {"cards": 1}) for c in claims]

    async def release(self, which: str, n: int) -> tuple[str, list[Callable[[], Any]]]:
        store = self._store(_RELEASE, "_release", which)
        claims = await _claims(store, n, self._start(n))
        return store._release.sha, [partial(store.release, c, reason="shutdown") for c in claims]

    async def claim(self, which: str, n: int) -> tuple[str, list[Callable[[], Any]]]:
        store = self._store(_CLAIM, "_claim", which)
        await fill(store, n, start=self._start(n))
        return store._claim.sha, [lambda: store.claim("bench-owner") for _ in range(n)]

    async def apply(self, which: str, n: int) -> tuple[str, list[Callable[[], Any]]]:
        keys = Keys(f"{self.bench.settings.key_prefix}c{uuid.uuid4().hex[:6]}:")
        store = CardStore(self.redis, keys)
        if which != "full":
            store._apply = self.redis.register_script(variant(_script("apply"), which))
        await store.apply_run(CHAT, "seed", _writes(0), now=T0)  # a chat with a card

        def one(i: int) -> Callable[[], Any]:
            return lambda: store.apply_run(CHAT, f"r{i}", _writes(i + 1), now=T0)

        return store._apply.sha, [one(i) for i in range(n)]


def _writes(i: int) -> RunWrites:
    card = new(f"Alice keeps note number {i}.", obj=f"note {i}", seed=i + 1)
    return RunWrites(observed_at=T0, cards=[card], embedding_model="m16")


async def _batch(redis: Any, cases: Cases, name: str, which: str, n: int, f: Figures) -> None:
    sha, calls = await getattr(cases, name)(which, n)
    await redis.slowlog_reset()
    walls = []
    for call in calls:
        started = time.perf_counter()
        await call()
        walls.append((time.perf_counter() - started) * 1e6)
    entries = await redis.slowlog_get(100_000)
    took = [
        float(e["duration"])
        for e in entries
        if len(e["command"].split()) > 1 and e["command"].split()[1] == sha.encode()
    ]
    assert len(took) >= n, (name, len(took), n)
    f.server[which].append(statistics.median(took))
    f.wall[which].append(statistics.median(walls))


async def _measure(bench: Bench, redis: Any, calls: int, rounds: int) -> dict[str, Figures]:
    cases = Cases(bench, redis)
    out: dict[str, Figures] = {}
    for name in ("renew", "complete", "release", "claim", "apply"):
        figures = out[name] = Figures()
        n = calls if name != "apply" else max(20, calls // 5)
        for r in range(rounds):
            for i in range(len(VARIANTS)):  # each variant first, middle and last in turn
                await _batch(redis, cases, name, VARIANTS[(r + i) % len(VARIANTS)], n, figures)
    return out


def _print(title: str, results: dict[str, Figures]) -> None:
    print(f"\n{title}")
    print(
        f"{'script':<10} {'server µs full/acl/none':>26} {'full/none':>9} {'acl/none':>8}"
        f" {'full/acl':>8} {'wall µs full/acl/none':>24} {'full/acl':>8}"
    )
    for name, f in results.items():
        s = [f.median("server", v) for v in VARIANTS]
        w = [f.median("wall", v) for v in VARIANTS]
        print(
            f"{name:<10} {s[0]:>8.1f} /{s[1]:>7.1f} /{s[2]:>7.1f} {s[0] / s[2]:>9.2f}"
            f" {s[1] / s[2]:>8.2f} {s[0] / s[1]:>8.2f} {w[0]:>7.0f} /{w[1]:>6.0f} /{w[2]:>6.0f}"
            f" {w[0] / w[1]:>8.2f}"
        )


async def main(calls: int, rounds: int) -> None:
    async with fresh_bench() as bench:
        admin = bench.redis
        await admin.config_set("slowlog-log-slower-than", 0)
        await admin.config_set("slowlog-max-len", 100_000)
        _print(
            "default user (every command, every key)", await _measure(bench, admin, calls, rounds)
        )

        name, password = "bench-acl", uuid.uuid4().hex
        prefix = bench.settings.key_prefix
        await admin.execute_command(
            "ACL", "SETUSER", name, "on", f">{password}", f"~{{{prefix}*", f"~{prefix}*", "~arq:*", "&*",
            "+@all", "-flushall", "-debug",
        )  # fmt: skip
        socket_path = bench.server.url.rpartition("@")[2]
        user = client_from_url(f"unix://{name}:{password}@{socket_path}")
        try:
            results = await _measure(bench, user, calls, rounds)
        finally:
            await user.aclose()
        _print(f"ACL user (~{{{prefix}* ~{prefix}* ~arq:* +@all -flushall -debug)", results)


if __name__ == "__main__":
    run_bench(main, __doc__, calls=300, rounds=4)
