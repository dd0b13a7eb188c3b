"""Closed breakers' successes held back and folded, to ride on a later round trip.

A success on a closed breaker never changes its state (``breaker.record`` answers no
transition for it), so its record need not travel alone, nor at once. Inside a
:class:`RecordCarry` (the worker keeps one a process, current around each run's work),
:meth:`~llm_client.BreakerStore.record` holds such a record back. The carry hands its held
records out once the oldest has waited ``hold_seconds`` (0: at once, the next time): the
next :meth:`~llm_client.BreakerStore.begin` of the same store sends them first, in the
same script (``lua/breaker_carry.lua``); :meth:`RecordCarry.riders` hands them over as
script calls for a caller's own round trip (the worker's run completion); and when nothing
takes them (an idle process) a timer lands them alone ``2 × hold_seconds`` after the
oldest was held. :meth:`RecordCarry.land` with ``force`` sends everything (shutdown).

Held records :func:`fold`: the successes of one breaker, one generation and one latency
bucket become one record of that many calls (latency and tokens summed), which the script
applies as it would apply them one by one. A process at 8 runs/s, two calls a run on one
target, sends one record a second instead of sixteen (``bench/scale_out.py``).

Only plain successes are held: a probe's record (it closes the breaker), a failure's, a
capped target's (it frees a slot) and one asking for cooling go at once, and the store's
held records go first, in the same script, so a failure never overtakes an earlier success
of the same process (the consecutive-failure count sees them in order). Like a record sent
alone, a held one is tried once: when its round trip fails it is dropped and its walker
counts a failed record (a script that failed half-way may have applied the records before the
failing one, so a retry could count a success twice). A lost record (that, or a process
killed while holding it) costs the breaker at most ``hold_seconds`` of one process's
successes and the metrics as many counts, never a charge.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Hashable
from contextvars import ContextVar, Token
from dataclasses import dataclass, replace
from typing import Any, Protocol

from llm_client._breaker.model import Outcome, Permit
from llm_client._gateway.target import Report
from llm_client._log import get_logger

log = get_logger(__name__)


class CarryingStore(Protocol):
    async def send_carried(self, records: list[Carried]) -> None: ...

    def rider(self, records: list[Carried]) -> Rider: ...


@dataclass(frozen=True, slots=True)
class Carried:
    """One held-back ``breaker.record`` call: its store, keys and arguments (``ARGS``
    names the ones :func:`fold` reads), who is told when it could not land (the walker
    counts it as a failed record, as if sent alone), and when it was held
    (``time.monotonic()``)."""

    store: CarryingStore
    keys: list[str]
    args: list[Any]
    failed: Callable[[BaseException], None] | None = None
    held_at: float = 0.0


class ARGS:
    """Where ``breaker.record``'s arguments sit in :attr:`Carried.args` (0-based ARGV)."""

    NOW = 2
    ELAPSED = 13
    TOKENS = 16
    CALLS = 18
    #: Summed or maxed by :func:`fold`; every other argument must match to fold.
    MERGED = (NOW, ELAPSED, TOKENS, CALLS)


def fold(records: list[Carried]) -> list[Carried]:
    """``records`` with each group of the same keys and the same other arguments (one
    breaker, generation, latency bucket and counter field; latency noted or not) as one
    record of that many calls: latency and tokens summed, the latest time. Groups keep the
    order of their first record; every folded record's walkers are told of a loss."""
    groups: dict[Hashable, list[Carried]] = {}
    for record in records:
        same = tuple(a for i, a in enumerate(record.args) if i not in ARGS.MERGED)
        groups.setdefault(
            (tuple(record.keys), same, int(record.args[ARGS.ELAPSED]) < 0), []
        ).append(record)
    return [_merged(group) for group in groups.values()]


def _merged(group: list[Carried]) -> Carried:
    if len(group) == 1:
        return group[0]
    args = list(group[0].args)
    args[ARGS.NOW] = max(int(r.args[ARGS.NOW]) for r in group)
    if int(args[ARGS.ELAPSED]) >= 0:
        args[ARGS.ELAPSED] = sum(int(r.args[ARGS.ELAPSED]) for r in group)
    args[ARGS.TOKENS] = sum(int(r.args[ARGS.TOKENS]) for r in group)
    args[ARGS.CALLS] = sum(int(r.args[ARGS.CALLS]) for r in group)
    told = [r.failed for r in group if r.failed is not None]

    def failed(exc: BaseException) -> None:
        for tell in told:
            tell(exc)

    return replace(group[0], args=args, failed=failed if told else None)


@dataclass(frozen=True, slots=True)
class Rider:
    """One store's carried records as one script call, for a caller to send in its own round
    trip: ``script`` (a redis-py ``AsyncScript``: ``.sha`` for ``EVALSHA``, callable alone on
    ``NOSCRIPT``) with ``keys`` and ``args`` on ``client``. The caller reports how it went
    with :meth:`landed`; like every record it is tried once (a ``NOSCRIPT`` answer ran nothing,
    so sending it again is not a retry)."""

    client: Any
    script: Any
    keys: list[str]
    args: list[Any]
    records: list[Carried]

    def landed(self, error: BaseException | None = None) -> None:
        """The rider's round trip answered (``error`` None) or failed: its walkers are told."""
        if error is not None:
            log.warning("breaker_records_store_error", error=type(error).__name__)
            lost(self.records, error)


_CARRY: ContextVar[RecordCarry | None] = ContextVar("llm_client_record_carry", default=None)


class RecordCarry:
    """Where plain successes' records wait (see the module docstring).

    ``with carry:`` makes it current for the code (and the tasks started) inside; one carry
    may be current in many tasks at once (the worker's ticks share their process's)."""

    def __init__(self, hold_seconds: float = 0.0) -> None:
        self.pending: list[Carried] = []
        self.hold_seconds = max(hold_seconds, 0.0)
        self._tokens: list[Token[RecordCarry | None]] = []
        self._timer: asyncio.TimerHandle | None = None
        self._landing: set[asyncio.Task[bool]] = set()

    def __enter__(self) -> RecordCarry:
        self._tokens.append(_CARRY.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        _CARRY.reset(self._tokens.pop())

    def hold(self, record: Carried) -> None:
        """Hold ``record`` back (``held_at`` set now); with a hold, make sure a timer will
        land it should nothing else take it."""
        self.pending.append(replace(record, held_at=time.monotonic()))
        if self.hold_seconds > 0 and self._timer is None:
            self._arm(2 * self.hold_seconds)

    def due(self) -> bool:
        """Whether the held records may go: the oldest has waited the hold."""
        return bool(self.pending) and (
            time.monotonic() - self.pending[0].held_at >= self.hold_seconds
        )

    def take(self, store: CarryingStore, *, force: bool = False) -> list[Carried]:
        """``store``'s records, folded, taken out before they are sent (two walks never
        send one twice) — once they are :meth:`due`, or now with ``force``."""
        if not (force or self.due()):
            return []
        mine = [c for c in self.pending if c.store is store]
        if mine:
            self.pending = [c for c in self.pending if c.store is not store]
        return fold(mine)

    async def flush(self, *, force: bool = False) -> None:
        """Send the held records (one round trip per store) once due, or now with
        ``force``; a store's error is raised after its records were dropped (:func:`lost`)."""
        if not (force or self.due()):
            return
        while self.pending:
            records = self.take(self.pending[0].store, force=True)
            try:
                await records[0].store.send_carried(records)
            except BaseException as exc:
                lost(records, exc)
                raise

    def riders(self) -> list[Rider]:
        """The held records once due, taken out as one :class:`Rider` per store: the
        caller now owns sending them and calling :meth:`Rider.landed`."""
        riders = []
        if self.due():
            while self.pending:
                store = self.pending[0].store
                riders.append(store.rider(self.take(store, force=True)))
        return riders

    async def land(self, *, force: bool = False) -> bool:
        """:meth:`flush`, best effort (like every record: a store fault leaves a breaker a
        success short, never a call's result changed): False when a store failed."""
        try:
            await self.flush(force=force)
        except Exception as exc:
            log.warning("breaker_records_store_error", error=type(exc).__name__)
            return False
        return True

    async def close(self) -> None:
        """Land everything now, best effort, and stop the timer (a process stopping)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        await self.land(force=True)

    def _arm(self, delay: float) -> None:
        self._timer = asyncio.get_running_loop().call_later(delay, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if not self.pending:
            return
        waited = time.monotonic() - self.pending[0].held_at
        if waited < 2 * self.hold_seconds:  # a walk took the older ones: wait for these
            self._arm(2 * self.hold_seconds - waited)
            return
        # the land takes every held record; one held after that arms a timer of its own
        # (hold() does, the timer being gone)
        task = asyncio.get_running_loop().create_task(self.land())
        self._landing.add(task)
        task.add_done_callback(self._landing.discard)


def holdable(outcome: Outcome, permit: Permit, report: Report) -> bool:
    """A success on a closed breaker, holding no slot, asking for no cooling: its record
    changes no state anyone decides on at once, so it may be held."""
    plain = outcome is Outcome.SUCCESS and not permit.probe and permit.slot is None
    return plain and report.cool_ms <= 0


def script_args(records: list[Carried]) -> list[Any]:
    """``breaker.carry``'s ARGV for ``records``: per record its key count, arg count, args."""
    return [a for r in records for a in (len(r.keys), len(r.args), *r.args)]


def lost(records: list[Carried], exc: BaseException) -> None:
    """Records whose round trip failed: each one's walker is told (they are not retried)."""
    for record in records:
        if record.failed is not None:
            record.failed(exc)


def current_carry() -> RecordCarry | None:
    """The carry of the running context, if any."""
    return _CARRY.get()
