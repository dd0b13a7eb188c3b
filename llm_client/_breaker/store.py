"""Fleet-shared circuit breakers in Redis (§5): one Lua script per transition.

The policy lives in ``llm_client._breaker.model`` (pure, tested without Redis); each
script (``lua/breaker_*.lua``) is a line-by-line translation of one of its functions, so every
worker process of the fleet sees and changes the same breaker atomically, and
the state survives worker restarts. A test drives random outcome sequences
through both and asserts identical states.

The same scripts keep the target's gate (``llm_client._gateway.model``: Retry-After
cooling, ``max_in_flight`` / ``requests_per_minute`` / ``tokens_per_day`` caps, success
latency) in the breaker hash, so a call's admission and its outcome stay one round trip
each; their pure twins are the compositions in ``llm_client._gateway.target``, and the
gate's fields are listed in ``llm_client._gateway.codec``.

Layout per target ``provider/model``:

- ``breaker(target)`` — HASH ``opened, gen, consec, trips, opened_at,
  open_until, probe_until, seq, ttl_at`` (milliseconds; idle hashes expire after a week);
- ``inflight(target)`` — ZSET of the in-flight slots of a target with ``max_in_flight``
  (member = slot token, score = lease expiry in ms; a week's TTL, pruned by time);
- ``breaker_window(target)`` — ZSET of recent calls for the failure-rate rule,
  member ``<seq>:<1|0>`` (1 = charged failure), score = time in ms; entries older than
  the window may linger (successes prune lazily): readers prune by time.

TTLs without a command per call: ``ttl_at`` is when ``breaker.record`` last set both
keys' TTLs (caller's clock; absent or 0 = not yet, e.g. a new hash or a window deleted by
a close). A closed breaker's success refreshes them only when ``ttl_at`` is absent or at
least one window away from its ``now`` (either way: a worker's clock may be off), so the
TTLs are long enough to outlast that gap: the hash's is a week plus one window (an idle
hash still lives a week after its last call), the window's two windows plus
``WINDOW_TTL_MARGIN_MS`` (every entry outlives its own window, with room for clock
skew). Every 16th call also re-sets the window's TTL (with the lazy prune), so a window
that lost its key meanwhile (an operator's DEL) has a TTL again within 16 calls.
Failures and transitions refresh every time.

Times come from the caller's clock (``now_ms``), like the pure policy; the
fleet's clocks are assumed NTP-synced (a skew of seconds only shifts
cooldowns by that much).
"""

from __future__ import annotations

import itertools
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from redis.asyncio import Redis

from llm_client._breaker.carry import (
    Carried,
    Rider,
    current_carry,
    holdable,
    lost,
    script_args,
)
from llm_client._breaker.codec import fields_of, refusal_of, state_from
from llm_client._breaker.model import (
    Admitted,
    Begun,
    BreakerConfig,
    BreakerState,
    BreakerView,
    Outcome,
    Permit,
    Transition,
    view,
)
from llm_client._gateway.codec import BUCKET_FIELDS, gate_from, latency_from, limit_args
from llm_client._gateway.model import (
    Gate,
    GatewayConfig,
    TargetLimits,
    latency_bucket,
)
from llm_client._gateway.target import Report, TargetState
from llm_client._lua import lua_text
from llm_client._redis_text import as_text

#: ``target -> (hash key, field)`` where a recorded success is counted (metrics).
SuccessCounter = Callable[[str], tuple[str, str]]

#: Idle breaker state is forgotten after a week (far beyond any cooldown).
STATE_TTL_MS = 7 * 24 * 3600 * 1000

#: A window's TTL is two windows plus this margin (clock skew between workers and the
#: server; tests pass 0 to watch a window expire).
WINDOW_TTL_MARGIN_MS = 10_000


class BreakerKeys(Protocol):
    """The key names the store needs (``memory_worker.keys.Keys`` satisfies it)."""

    def breaker(self, target: str) -> str: ...

    def breaker_window(self, target: str) -> str: ...

    def inflight(self, target: str) -> str: ...

    def failopen_permit(self, workflow: str) -> str: ...

    @property
    def breaker_prefix(self) -> str: ...


_LIB = """
local function num(v) if v then return tonumber(v) end return 0 end
local function s(x) return string.format('%d', x) end
"""


def _lua(name: str, *fragments: str) -> str:
    """One transition's script (``lua/breaker_<name>.lua``, documented at its top), after
    the shared ``fragments`` it calls."""
    return _LIB + lua_text(__package__, *fragments, f"breaker_{name}")


_ACQUIRE = _lua("acquire", "gate_lib")  # breaker.acquire (and the gate's check + take)
_RECORD = _lua("record")  # breaker.record
_RENEW = _lua("renew")  # breaker.renew
_RESET = _lua("reset")  # breaker.reset
_BEGIN = _lua("begin", "gate_lib")  # walk.begin: snapshot + the first permit
_ROUTES_OPEN = _lua("routes_open")  # the pre-claim gate of several workflows
_READ = _lua("read")  # one breaker, read consistently


def _as_function(name: str) -> str:
    """``lua/breaker_<name>.lua`` as a local function of its own KEYS and ARGV."""
    return f"local function {name}(KEYS, ARGV)\n{lua_text(__package__, f'breaker_{name}')}\nend\n"


# carried records, then walk.begin (llm_client._breaker.carry)
_CARRY = (
    _LIB
    + lua_text(__package__, "gate_lib")
    + _as_function("record")
    + _as_function("begin")
    + lua_text(__package__, "breaker_carry")
)


#: A target without caps (the default of every route target).
NO_LIMITS = TargetLimits()


def _glob_escape(text: str) -> str:
    return "".join("\\" + ch if ch in "*?[]\\" else ch for ch in text)


def _ms(seconds: float) -> int:
    return max(round(seconds * 1000), 1)


class BreakerStore:
    """The fleet's breakers (and gates), one per route target, in Redis."""

    def __init__(
        self,
        redis: Redis,
        keys: BreakerKeys,
        config: BreakerConfig,
        *,
        clock: Callable[[], float] = time.time,
        success_counter: SuccessCounter | None = None,
        window_ttl_margin_ms: int = WINDOW_TTL_MARGIN_MS,
        gateway: GatewayConfig = GatewayConfig(),
    ) -> None:
        self._redis = redis
        self._keys = keys
        self.config = config
        self.gateway = gateway
        self._clock = clock
        #: Where a recorded success counts itself (the attempt metrics), if anywhere.
        self.success_counter = success_counter
        self._window_ttl_margin_ms = window_ttl_margin_ms
        self._begin = redis.register_script(_BEGIN)
        self._routes_open = redis.register_script(_ROUTES_OPEN)
        self._acquire = redis.register_script(_ACQUIRE)
        self._record = redis.register_script(_RECORD)
        self._reset = redis.register_script(_RESET)
        self._renew = redis.register_script(_RENEW)
        self._read = redis.register_script(_READ)
        self._carry = redis.register_script(_CARRY)
        #: In-flight slot tokens: unique per store (a prefix drawn once) and per attempt (a
        #: count) — the prefix sat inside the generator, so every token drew a uuid4.
        prefix = uuid.uuid4().hex[:10]
        self._slots = (f"{prefix}:{n}" for n in itertools.count(1))

    def now_ms(self) -> int:
        return int(self._clock() * 1000)

    def _slot(self) -> str:
        return next(self._slots)

    async def acquire(
        self,
        target: str,
        *,
        lease_seconds: float,
        workflow: str | None = None,
        interval_seconds: float = 0.0,
        now_ms: int | None = None,
        limits: TargetLimits = NO_LIMITS,
    ) -> Permit | None:
        """Leave for one attempt on ``target`` (``breaker.acquire``), or None if refused.

        With ``workflow``, a probe permit also holds that workflow's fail-open permit
        for ``interval_seconds``, so a fully open route gets no extra fail-open probe
        right after a half-open one."""
        admitted = await self.admit(
            target,
            lease_seconds=lease_seconds,
            workflow=workflow,
            interval_seconds=interval_seconds,
            now_ms=now_ms,
            limits=limits,
        )
        return admitted.permit

    async def admit(
        self,
        target: str,
        *,
        lease_seconds: float,
        workflow: str | None = None,
        interval_seconds: float = 0.0,
        now_ms: int | None = None,
        limits: TargetLimits = NO_LIMITS,
    ) -> Admitted:
        """Like :meth:`acquire`, with the refusal's reason: the breaker (``open``) or the
        gate (cooling, a cap). A slot of a capped target is leased for ``lease_seconds``."""
        failopen = self._keys.failopen_permit(workflow) if workflow else ""
        interval = interval_seconds if workflow else 0.0
        return await self._run_acquire(
            target, failopen, lease_seconds, "normal", interval, now_ms, limits
        )

    async def acquire_failopen(
        self,
        target: str,
        workflow: str,
        *,
        lease_seconds: float,
        interval_seconds: float,
        now_ms: int | None = None,
        limits: TargetLimits = NO_LIMITS,
    ) -> tuple[Permit | None, bool]:
        """Like :meth:`acquire`, but an open target may be probed during its cooldown
        when ``workflow``'s fleet-wide fail-open permit (one per ``interval_seconds``)
        is free. Returns the permit and whether the fail-open permit was taken."""
        admitted = await self._run_acquire(
            target,
            self._keys.failopen_permit(workflow),
            lease_seconds,
            "failopen",
            interval_seconds,
            now_ms,
            limits,
        )
        return admitted.permit, admitted.failopen_taken

    async def _run_acquire(
        self,
        target: str,
        failopen_key: str,
        lease_seconds: float,
        mode: str,
        interval_seconds: float,
        now_ms: int | None,
        limits: TargetLimits,
    ) -> Admitted:
        now = self.now_ms() if now_ms is None else now_ms
        failopen = failopen_key or self._keys.failopen_permit("-")
        slot = self._slot()
        granted, generation, probe, taken, refusal, ready, slotted = await self._acquire(
            keys=[self._keys.breaker(target), failopen, self._keys.inflight(target)],
            args=[
                now,
                _ms(lease_seconds),
                mode,
                max(round(interval_seconds * 1000), 0 if mode == "normal" else 1),
                STATE_TTL_MS,
                slot,
                STATE_TTL_MS,
                *limit_args(limits, self.gateway),
            ],
        )
        if not int(granted):
            return Admitted(None, refusal_of(refusal), int(ready))
        permit = Permit(
            int(generation), probe=bool(int(probe)), slot=slot if int(slotted) else None
        )
        return Admitted(permit, None, 0, bool(int(taken)))

    async def record(
        self,
        target: str,
        permit: Permit,
        outcome: Outcome,
        *,
        now_ms: int | None = None,
        count: bool = False,
        report: Report = Report(),
        carried_failed: Callable[[BaseException], None] | None = None,
        hold: bool = True,
    ) -> Transition | None:
        """Apply one attempt's outcome (``breaker.record``); returns the transition, if any.

        ``count``: a success also counts itself in :attr:`success_counter` (same round trip).
        ``report``: the cooling the answer asked for and a success's latency and tokens
        (its ``window_ms`` is taken from the gateway config). The permit's slot is freed.
        ``hold=False`` sends a plain success at once (a target with failures in its window:
        its breaker must see its successes in order with its failures, or failures recorded
        while successes wait would look consecutive and trip it).
        Inside a :class:`~llm_client.RecordCarry` a plain success is held instead
        (``carried_failed`` is told if it never lands), and any other record goes behind
        the store's held ones, in one script (they never overtake it)."""
        now = self.now_ms() if now_ms is None else now_ms
        keys, args = self._record_call(target, permit, outcome, now, count=count, report=report)
        carry = current_carry()
        if carry is not None and hold and holdable(outcome, permit, report):
            carry.hold(Carried(self, keys, args, carried_failed))
            return None
        held = carry.take(self, force=True) if carry is not None else []
        try:  # held successes first, in the same script: a failure never overtakes them
            reply = await (
                self._carry_call([*held, Carried(self, keys, args)], follows=2)
                if held
                else self._record(keys=keys, args=args)
            )
        except BaseException as exc:
            lost(held, exc)
            raise
        text = as_text(reply)
        return Transition(text) if text else None

    def _record_call(
        self,
        target: str,
        permit: Permit,
        outcome: Outcome,
        now: int,
        *,
        count: bool,
        report: Report,
    ) -> tuple[list[str], list[Any]]:
        """``breaker.record``'s keys and arguments (``lua/breaker_record.lua``)."""
        cfg = self.config
        keys = [
            self._keys.breaker(target),
            self._keys.breaker_window(target),
            self._keys.inflight(target),
        ]
        counter_field = ""
        if count and self.success_counter is not None and outcome is Outcome.SUCCESS:
            counter_key, counter_field = self.success_counter(target)
            keys.append(counter_key)
        elapsed = -1 if report.elapsed_ms is None else max(report.elapsed_ms, 0)
        args = [
            permit.generation,
            outcome.value,
            now,
            cfg.failure_threshold,
            cfg.rate_min_calls,
            cfg.rate_window_ms,
            repr(float(cfg.rate_threshold)),
            cfg.cooldown_ms,
            cfg.cooldown_max_ms,
            STATE_TTL_MS + cfg.rate_window_ms,
            2 * cfg.rate_window_ms + self._window_ttl_margin_ms,
            permit.slot or "",
            max(report.cool_ms, 0),
            elapsed,
            self.gateway.latency_window_ms,
            BUCKET_FIELDS[latency_bucket(max(elapsed, 0))],
            max(report.tokens, 0),
            counter_field,
            1,  # calls (llm_client._breaker.carry.fold)
        ]
        return keys, args

    async def _carry_call(
        self,
        records: list[Carried],
        follows: int,
        keys: Sequence[str] = (),
        args: Sequence[Any] = (),
    ) -> Any:
        """One ``breaker.carry`` call: ``records``, then (``follows``) nothing (0), a begin
        of ``keys`` and ``args`` (1), or the last record's answer (2)."""
        return await self._carry(
            keys=[*(k for r in records for k in r.keys), *keys],
            args=[len(records), follows, *script_args(records), *args],
        )

    async def send_carried(self, records: list[Carried]) -> None:
        """Apply carried records (:mod:`llm_client._breaker.carry`) in one round trip."""
        await self._carry_call(records, follows=0)

    def rider(self, records: list[Carried]) -> Rider:
        """Carried records as one call of the carry script, for another caller's round trip."""
        return Rider(
            self._redis,
            self._carry,
            [k for r in records for k in r.keys],
            [len(records), 0, *script_args(records)],
            records,
        )

    async def renew(
        self, target: str, permit: Permit, *, lease_seconds: float, now_ms: int | None = None
    ) -> bool:
        """Extend ``permit``'s probe lease and its slot's (``breaker.renew``); False once
        neither is the attempt's any more."""
        if not permit.probe and permit.slot is None:
            return False  # closed-state permits are shared and never expire
        now = self.now_ms() if now_ms is None else now_ms
        renewed = await self._renew(
            keys=[self._keys.breaker(target), self._keys.inflight(target)],
            args=[
                permit.generation,
                now,
                _ms(lease_seconds),
                STATE_TTL_MS,
                int(permit.probe),
                permit.slot or "",
                STATE_TTL_MS,
            ],
        )
        return bool(int(renewed))

    async def begin(
        self,
        targets: Sequence[str],
        workflow: str,
        *,
        lease_seconds: float,
        interval_seconds: float,
        probes: bool = True,
        now_ms: int | None = None,
        limits: Sequence[TargetLimits] | None = None,
    ) -> Begun:
        """A walk's first round trip (``walk.begin``): which targets are closed (and which
        open ones' probe is due), and the first permit :meth:`admit` would grant in the
        walker's order (with ``probes``, due probes first; closed targets in the given
        order; then the other open ones as probes)."""
        now = self.now_ms() if now_ms is None else now_ms
        caps = list(limits) if limits is not None else [NO_LIMITS] * len(targets)
        slot = self._slot()
        keys = [
            *(self._keys.breaker(t) for t in targets),
            self._keys.failopen_permit(workflow),
            *(self._keys.inflight(t) for t in targets),
        ]
        args: list[Any] = [
            now,
            _ms(lease_seconds),
            max(round(interval_seconds * 1000), 0),
            STATE_TTL_MS,
            int(probes),
            slot,
            STATE_TTL_MS,
            *(arg for cap in caps for arg in limit_args(cap, self.gateway)),
        ]
        carry = current_carry()
        carried = carry.take(self) if carry is not None else []
        try:
            if carried:  # the run's earlier successes ride along (llm_client._breaker.carry)
                reply = await self._carry_call(carried, 1, keys, args)
            else:
                reply = await self._begin(keys=keys, args=args)
        except BaseException as exc:
            lost(carried, exc)  # tried once, like a record sent alone
            raise
        index, generation, probe, slotted, flags, refusals, stats = reply
        closed = tuple(int(flag) == 1 for flag in flags)
        due = tuple(int(flag) == 2 for flag in flags)
        numbers = [int(x) for x in stats]
        latency = tuple(latency_from(numbers[i : i + 5]) for i in range(0, len(numbers), 6))
        cooling = tuple(numbers[i + 5] for i in range(0, len(numbers), 6))
        refused = tuple(refusal_of(r) for r in refusals)
        if not int(index):
            return Begun(closed, None, None, refused, latency, cooling, due)
        permit = Permit(
            int(generation), probe=bool(int(probe)), slot=slot if int(slotted) else None
        )
        return Begun(closed, int(index) - 1, permit, refused, latency, cooling, due)

    async def routes_open(
        self, routes: Sequence[tuple[str, Sequence[str]]], *, now_ms: int | None = None
    ) -> list[bool]:
        """For each ``(workflow, target ids)``: would a call be refused right now? Takes
        nothing; one round trip for all of them, reading no window."""
        if not routes:
            return []
        now = self.now_ms() if now_ms is None else now_ms
        keys = [self._keys.breaker(t) for _, targets in routes for t in targets]
        keys += [self._keys.failopen_permit(workflow) for workflow, _ in routes]
        flags = await self._routes_open(
            keys=keys, args=[now, *(len(targets) for _, targets in routes)]
        )
        return [bool(int(flag)) for flag in flags]

    def _read_keys(self, target: str) -> list[str]:
        k = self._keys
        return [k.breaker(target), k.breaker_window(target), k.inflight(target)]

    async def target_state(self, target: str) -> TargetState:
        """The stored breaker and gate of ``target`` (never seen: fresh and closed)."""
        raw_hash, raw_window, raw_slots = await self._read(keys=self._read_keys(target))
        return TargetState(
            state_from(raw_hash, raw_window), gate_from(fields_of(raw_hash), raw_slots)
        )

    async def state(self, target: str) -> BreakerState:
        """The stored state of ``target`` (a never-seen target is a fresh closed breaker)."""
        return (await self.target_state(target)).breaker

    async def view(self, target: str, *, now_ms: int | None = None) -> BreakerView:
        now = self.now_ms() if now_ms is None else now_ms
        return view(target, await self.state(target), now, self.config)

    async def read(self, targets: Iterable[str]) -> list[TargetState]:
        """Several targets' breakers and gates, read in one round trip, in the given order."""
        names = list(targets)
        async with self._redis.pipeline(transaction=False) as pipe:
            for target in names:
                await self._read(keys=self._read_keys(target), client=pipe)
            results = await pipe.execute()
        return [
            TargetState(state_from(raw_hash, raw_window), gate_from(fields_of(raw_hash), slots))
            for raw_hash, raw_window, slots in results
        ]

    async def views(
        self, targets: Iterable[str], *, now_ms: int | None = None
    ) -> list[BreakerView]:
        """Views of several targets, read in one round trip, in the given order."""
        names = list(targets)
        now = self.now_ms() if now_ms is None else now_ms
        states = await self.read(names)
        return [
            view(target, state.breaker, now, self.config)
            for target, state in zip(names, states, strict=True)
        ]

    async def gates(self, targets: Iterable[str]) -> list[Gate]:
        """Several targets' gates (cooling, caps' state, latency), one round trip."""
        return [state.gate for state in await self.read(targets)]

    async def known_targets(self) -> list[str]:
        """Every target with stored breaker state, sorted."""
        prefix = self._keys.breaker_prefix
        found = {
            as_text(key)[len(prefix) :]
            async for key in self._redis.scan_iter(match=_glob_escape(prefix) + "*", count=500)
        }
        return sorted(found)

    async def list(self, targets: Iterable[str] = ()) -> list[BreakerView]:
        """Views of ``targets`` plus every stored breaker (the CLI's ``breakers list``)."""
        names = list(dict.fromkeys([*targets, *await self.known_targets()]))
        return await self.views(names)

    async def reset(self, target: str) -> BreakerView:
        """Operator reset: closed, counters cleared, outstanding permits made stale."""
        await self._reset(
            keys=[self._keys.breaker(target), self._keys.breaker_window(target)],
            args=[STATE_TTL_MS],
        )
        return await self.view(target)

    async def failopen_free(self, workflow: str) -> bool:
        """Is ``workflow``'s fail-open permit free right now? (Does not take it.)"""
        return not await self._redis.exists(self._keys.failopen_permit(workflow))
