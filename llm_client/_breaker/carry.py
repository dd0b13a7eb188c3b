"""Closed breakers' successes carried to the next walk's first round trip.

A success on a closed breaker never changes its state (``breaker.record`` answers no
transition for it), so its record need not travel alone. Inside a :class:`RecordCarry` (the
worker opens one around each run), :meth:`~llm_client.BreakerStore.record` keeps such a
record back and the next :meth:`~llm_client.BreakerStore.begin` of the same store sends it
first, in the same script (``lua/breaker_carry.lua``): a run's second walk opens with its
first walk's record, one round trip instead of two. :meth:`RecordCarry.flush` sends what is
left alone; :meth:`RecordCarry.riders` hands it over as script calls instead, for a caller
that sends them first in its own round trip on the same client (the worker does, in its
run's completion) — either way a settled run's records have landed.

Only plain successes are carried: a probe's record (it closes the breaker), a failure's, a
capped target's (it frees a slot) and one asking for cooling go at once. Like a record sent
alone, a carried one is tried once: when its round trip fails it is dropped and its walker
counts a failed record (a script that failed half-way may have applied the records before the
failing one, so a retry could count a success twice). A lost record costs the breaker a
success and the metrics one count, never a charge.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar, Token
from dataclasses import dataclass
from typing import Any, Protocol

from llm_client._log import get_logger

log = get_logger(__name__)


class CarryingStore(Protocol):
    async def send_carried(self, records: list[Carried]) -> None: ...

    def rider(self, records: list[Carried]) -> Rider: ...


@dataclass(frozen=True, slots=True)
class Carried:
    """One held-back ``breaker.record`` call: its store, keys and arguments, and who is told
    when it could not land (the walker counts it as a failed record, as if sent alone)."""

    store: CarryingStore
    keys: list[str]
    args: list[Any]
    failed: Callable[[BaseException], None] | None = None


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
    """Where plain successes' records wait for the next walk (see the module docstring).

    ``with carry:`` makes it current for the code (and the tasks started) inside."""

    def __init__(self) -> None:
        self.pending: list[Carried] = []
        self._tokens: list[Token[RecordCarry | None]] = []

    def __enter__(self) -> RecordCarry:
        self._tokens.append(_CARRY.set(self))
        return self

    def __exit__(self, *exc: object) -> None:
        _CARRY.reset(self._tokens.pop())

    def take(self, store: CarryingStore) -> list[Carried]:
        """``store``'s records, taken out before they are sent (concurrent walks of one
        run never send one twice)."""
        mine = [c for c in self.pending if c.store is store]
        if mine:
            self.pending = [c for c in self.pending if c.store is not store]
        return mine

    async def flush(self) -> None:
        """Send every carried record (one round trip per store); a store's error is raised
        after its records were dropped (:func:`lost`)."""
        while self.pending:
            records = self.take(self.pending[0].store)
            try:
                await records[0].store.send_carried(records)
            except BaseException as exc:
                lost(records, exc)
                raise

    def riders(self) -> list[Rider]:
        """Every carried record, taken out as one :class:`Rider` per store: the caller now
        owns sending them and calling :meth:`Rider.landed`."""
        riders = []
        while self.pending:
            store = self.pending[0].store
            riders.append(store.rider(self.take(store)))
        return riders

    async def land(self) -> bool:
        """:meth:`flush`, best effort (like every record: a store fault leaves a breaker a
        success short, never a call's result changed): False when a store failed."""
        try:
            await self.flush()
        except Exception as exc:
            log.warning("breaker_records_store_error", error=type(exc).__name__)
            return False
        return True


def lost(records: list[Carried], exc: BaseException) -> None:
    """Records whose round trip failed: each one's walker is told (they are not retried)."""
    for record in records:
        if record.failed is not None:
            record.failed(exc)


def current_carry() -> RecordCarry | None:
    """The carry of the running context, if any."""
    return _CARRY.get()
