"""The routed walker (§6): try a workflow's targets in order, with breakers and budgets.

One routed call (:meth:`Walker.call`):

1. Resolve the route (none → ``route_unavailable`` event, :class:`RouteUnavailable`);
   no enabled target → ``no_candidates``, :class:`NoCandidates`.
2. Order the targets (:mod:`llm_client._gateway.balance`): tier by tier (a file
   without tiers: route order); within a tier, shared by weight (least in flight in
   this process, or weighted random, each weight times the target's success ratio) with
   slow outliers last; a target on probation first for its share of the calls, ejected
   ones after every tier (:mod:`llm_client._outlier`, synced at most once per
   ``refresh_seconds``: the walker's outcomes flushed, the fleet's windows read, and what
   :func:`~llm_client._outlier.model.decide` finds ejected, ``target_ejected``). Then
   breaker-open targets whose half-open probe is due first (sent whether or not a peer
   could serve), closed breakers in that order, the other breaker-open ones at the end,
   where they are tried as probes (their breaker hands out one probe permit per cooldown,
   fleet-wide). When
   *every* target is open the walker emits ``circuit_open_exhaustion``. A target
   cooling after a ``Retry-After`` or over a cap is skipped as capacity: no hop, no
   charge (:mod:`llm_client._routing.step`).
3. Walk. Before each attempt: stop at ``max_hops`` (a safety ceiling, 64 by default: a
   walk may try every candidate), at the route's wall budget
   or at the caller's deadline. Each attempt gets ``timeout = min(deadline,
   wall) remaining``. After it, the breaker is charged per §5
   (:func:`llm_client._breaker.model.classify`) and:

   - success → return it;
   - a non-retryable error → raised at once: no charge, no fallback;
   - a capacity/overload answer ("no slots", 429) → neutral for the breaker,
     **no hop spent**; the next target is tried (one that named a ``Retry-After``
     is cooled for that long, fleet-wide, and not retried). If a pass ends with targets
     that were only busy, the walker pauses ``slot_poll_seconds`` and tries
     those again until ``slot_wait_seconds`` have passed since the first busy
     answer; a walk whose last attempt was busy then ends with
     :class:`CapacityWaitTimeout` (``capacity_wait_timeout``; informational, no page,
     when the caller's deadline or the time left cut the wait short) whatever came before
     and however much budget
     was left — a busy farm never fails a run;
   - any other retryable error → a hop spent, the target is not retried in
     this call, the next one is tried;
   - a timeout that the caller's deadline cut → :class:`DeadlineExceeded`
     (chained to the attempt's error), no charge; the walk ends.

4. Fail-open: when no target granted a permit (all open and no probe slot),
   the fleet gets **one** probe per ``probe_interval_seconds`` per workflow
   (a Redis ``SET NX PX`` permit), sent to the route's primary; every
   other caller gets :class:`AllCircuitsOpen` at once, without farm traffic.
   A breaker's own half-open probe holds the same permit for the interval,
   so a fully open route never gets a fail-open probe on top of it.
5. At the end, after failed attempts (the last one not busy): ``all_attempts_exhausted``
   (with ``failed_attempts``) and the **last attempt's error** is raised; the
   routing errors (``Exhausted``, ``DeadlineExceeded``, …) are raised only
   when no attempt produced an error to return — and when a walk ends on
   ``provider_error`` without every target of the route having crashed on it
   (it began with every target open, or some target was skipped as open, busy
   or out of hops): that is :class:`NoCandidates` (§4: only a call that
   crashes every backend fails the run; a quarantined route is an outage).

Probe permits are short leases (§5): a half-open or fail-open probe holds
its target's probe slot for ``permit_lease_seconds`` (30 s), renewed every third
of that while the call runs, so a prober killed mid-call frees the slot within
one lease instead of the whole call budget.

Routing bookkeeping is best effort (§7 "Store faults"): a store error
while reading breaker states, taking or renewing a permit, recording an
outcome or emitting an event is logged (``routing.bookkeeping_failed``) and
counted in :attr:`Walker.bookkeeping_failures`, and never changes the call's
result. Before the call the walker **fails open**: a target whose breaker
cannot be read or acquired is treated as closed and called without a permit
(its outcome is not recorded). Only runs already in flight can walk while the
store is unreachable (claiming needs it), so this cannot flood the farm, and
it keeps a store blip from turning into a failed run.

A call made with ``probes=False`` (an optional call, e.g. the related-card
lookup) is served by closed targets only: it never spends a half-open or
fail-open probe (it still emits ``circuit_open_exhaustion``) and raises
:class:`AllCircuitsOpen` at once when no target is closed. Probes are left to
the calls a run cannot do without, so a farm-wide outage is probed (and paged)
on the route that matters (§6).

Each walker keeps, for its process only, the calls it has in flight per target (the
``least_in_flight`` share) and the latency windows its last walks read (the slow-node order);
an optional :class:`~llm_client._routing.plan.WalkObserver` receives every attempt's duration
and every capacity wait (memory-worker's histograms), never failing a call.

:meth:`Walker.route_is_open` answers the run pipeline's pre-claim gate
("would a call be refused right now?") without taking any permit; the gate may reuse a
"passable" answer briefly, and :attr:`Walker.breaker_news` (transitions, all-open walks and
fail-open probes this process announced) tells it when to stop.

The walker depends only on the transport protocols of ``llm_client._transport.base``:
a :class:`~llm_client._transport.clients.TransportFactory` maps a target to a client
(:class:`~llm_client._transport.clients.ClientFactory` builds the real ones). One call's walk
(its state, attempts, budgets and ending) is :class:`Walk`, below.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from functools import partial
from typing import Any, Generic, TypeVar, cast

from llm_client._breaker.model import Circuit, Outcome, Permit, Transition
from llm_client._breaker.store import BreakerStore
from llm_client._errors import LLMError, RouteUnavailable, TaskTimeout
from llm_client._gateway.balance import prefer, tiers
from llm_client._gateway.model import Latency, Refusal, estimate_tokens
from llm_client._gateway.target import Report
from llm_client._log import get_logger
from llm_client._outlier.model import Standing, Tally, decide
from llm_client._outlier.store import OutlierStore
from llm_client._routing.events import EventSink, EventType, RoutingEvent, with_context
from llm_client._routing.judge import (
    Failed,
    Served,
    attempt_note,
    cooling_note,
    judge_attempt,
    transition_note,
)
from llm_client._routing.plan import (
    UNTRACKED,
    Note,
    Routed,
    WalkerConfig,
    WalkObserver,
    WalkPlan,
    lease,
)
from llm_client._routing.routes import Route, RoutesConfig, RouteTarget, tier_of
from llm_client._routing.step import (
    Acquire,
    AcquireFailOpen,
    Announce,
    Attempt,
    Begin,
    Done,
    Pause,
    ReadViews,
    Release,
    Step,
    Stop,
    WalkState,
    after_acquire,
    after_attempt,
    after_begin,
    after_failopen,
    after_order,
    after_pause,
    after_release,
    announced,
    next_step,
)
from llm_client._transport.base import (
    ChatResult,
    EmbedResult,
)
from llm_client._transport.clients import TransportFactory

log = get_logger(__name__)

T = TypeVar("T")

#: An attempt on one target: ``(target, timeout_seconds, idempotency_key) -> result``.
AttemptFn = Callable[[RouteTarget, float, str | None], Awaitable[T]]

#: The tokens a result used (``tokens_per_day``): reported usage, or an estimate.
UsageFn = Callable[[T], int]

#: Events that say a route's breakers changed or were found open (:attr:`Walker.breaker_news`).
BREAKER_NEWS = frozenset(
    {
        EventType.CIRCUIT_OPENED,
        EventType.CIRCUIT_CLOSED,
        EventType.CIRCUIT_OPEN_EXHAUSTION,
        EventType.FAILOPEN_PROBE,
        EventType.TARGET_EJECTED,
    }
)


class Walker:
    """Routes calls over the configured targets; one per process, shared by its tasks."""

    def __init__(
        self,
        routes: RoutesConfig,
        breakers: BreakerStore,
        events: EventSink,
        transports: TransportFactory | None = None,
        config: WalkerConfig = WalkerConfig(),
        *,
        monotonic: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
        rng: random.Random | None = None,
        observer: WalkObserver | None = None,
        outliers: OutlierStore | None = None,
    ) -> None:
        self.routes = routes
        self.breakers = breakers
        self.events = events
        self.transports = transports
        self.config = config
        self._monotonic = monotonic
        self._sleep = sleep
        self._rng = rng or random.Random()
        self.observer = observer
        #: Attempts this process has in flight, per target (least-in-flight sharing).
        self.in_flight: Counter[str] = Counter()
        #: Each target's latency windows as the last walk's begin read them (slow nodes).
        self.latency: dict[str, Latency] = {}
        #: Store faults swallowed by the walker, per operation (process-local).
        self.bookkeeping_failures: Counter[str] = Counter()
        #: Breaker news this process's walks announced (process-local): transitions, walks
        #: that found every target open, fail-open probes. A reader that cached a route's
        #: state (the pre-claim gate) drops it when this moves.
        self.breaker_news = 0
        #: The fleet's outlier counts and ejections (None: no ejection by error rate).
        self.outliers = outliers
        #: Each target's window and standing as the last sync read them (the order).
        self.health: dict[str, Tally] = {}
        #: Outcomes counted since the last sync, per target: [successes, failures].
        self._counted: dict[str, list[int]] = {}
        #: When each workflow's targets were last synced (monotonic).
        self._synced: dict[str, float] = {}

    # --- public calls ---------------------------------------------------------------------

    async def call(
        self,
        workflow: str,
        attempt: AttemptFn[T],
        *,
        deadline: float | None = None,
        idempotency_key: str | None = None,
        context: Mapping[str, str] | None = None,
        probes: bool = True,
        model: str | None = None,
        usage: UsageFn[T] | None = None,
    ) -> Routed[T]:
        """Run ``attempt`` on the workflow's targets until one succeeds (see the module doc).

        ``deadline`` is a ``time.monotonic()`` instant; ``idempotency_key`` is the
        caller's key for this walk (each target gets ``"{key}:{target id}"``), so
        it must be unique per walk; ``context`` holds identifiers for events.
        ``probes=False`` keeps an optional call off breaker-open targets entirely.
        ``model`` keeps the walk to the targets of that model (a chat's vector space).
        ``usage`` counts a result's tokens (``tokens_per_day``).
        """
        route = self.routes.get(workflow)
        if route is not None and model is not None:
            kept = tuple(t for t in route.targets if t.model == model)
            route = route.model_copy(update={"targets": kept}) if kept else None
        if route is None:
            await self.emit(RoutingEvent(EventType.ROUTE_UNAVAILABLE, workflow), context)
            raise RouteUnavailable(
                f"no route is configured for workflow {workflow}"
                + (f" with model {model}" if model is not None else ""),
                workflow=workflow,
            )
        await self.sync_outliers(route, context)
        walk = Walk(self, route, attempt, deadline, idempotency_key, context or {}, probes, usage)
        return await walk.run()

    async def chat(
        self,
        workflow: str,
        request: Mapping[str, Any],
        *,
        deadline: float | None = None,
        idempotency_key: str | None = None,
        context: Mapping[str, str] | None = None,
    ) -> Routed[ChatResult]:
        """A routed chat completion; each target's ``model`` replaces the request's."""
        factory = self._factory()

        async def attempt(target: RouteTarget, timeout: float, key: str | None) -> ChatResult:
            body = {**request, "model": target.model}
            return await factory.chat(target).chat(body, idempotency_key=key, timeout=timeout)

        prompt_chars = sum(
            len(str(m.get("content", ""))) for m in request.get("messages", ()) if hasattr(m, "get")
        )

        def usage(result: ChatResult) -> int:
            if result.prompt_tokens is not None and result.completion_tokens is not None:
                return result.prompt_tokens + result.completion_tokens
            return estimate_tokens(prompt_chars + len(result.content), self.config.gateway)

        return await self.call(
            workflow,
            attempt,
            deadline=deadline,
            idempotency_key=idempotency_key,
            context=context,
            usage=usage,
        )

    async def embed(
        self,
        workflow: str,
        texts: Sequence[str],
        *,
        dimension: int,
        task_description: str | None = None,
        deadline: float | None = None,
        idempotency_key: str | None = None,
        context: Mapping[str, str] | None = None,
        probes: bool = True,
        model: str | None = None,
    ) -> Routed[EmbedResult]:
        """Routed embeddings (``probes=False``: closed targets only; ``model``: only its
        targets — see :meth:`call`)."""
        factory = self._factory()

        async def attempt(target: RouteTarget, timeout: float, key: str | None) -> EmbedResult:
            return await factory.embed(target).embed(
                texts,
                dimension=dimension,
                task_description=task_description,
                idempotency_key=key,
                timeout=timeout,
            )

        tokens = estimate_tokens(sum(len(text) for text in texts), self.config.gateway)
        return await self.call(
            workflow,
            attempt,
            deadline=deadline,
            idempotency_key=idempotency_key,
            context=context,
            probes=probes,
            model=model,
            usage=lambda _: tokens,
        )

    async def route_is_open(self, workflow: str) -> bool:
        """Would a call on ``workflow`` be refused right now? (The pre-claim gate.)

        True only when no enabled target is admissible — each is cooling after a
        ``Retry-After`` or breaker-open without a free probe slot — and either one is
        cooling (the walk would release the run at once) or the workflow's fail-open
        permit is taken (or the primary's probe is in flight). Takes no permit; caps are
        not read (they free up within a call's capacity wait). A missing or empty route
        is not "open": calling it reports the configuration problem instead.
        """
        return (await self.routes_open([workflow]))[workflow]

    async def routes_open(self, workflows: Sequence[str]) -> dict[str, bool]:
        """:meth:`route_is_open` of several workflows, in one round trip."""
        routes = []
        for workflow in workflows:
            route = self.routes.get(workflow)
            routes.append((workflow, [t.id for t in (route.ordered if route else ())]))
        flags = await self.breakers.routes_open(routes)
        return {workflow: flag for (workflow, _), flag in zip(routes, flags, strict=True)}

    # --- helpers for the walk -------------------------------------------------------------

    def prefer(self, route: Route) -> tuple[RouteTarget, ...]:
        """The order a call on ``route`` tries its targets (tiers, load sharing, slow
        nodes last: :func:`llm_client._gateway.balance.prefer`)."""
        return tuple(
            prefer(
                route.ordered,
                tier_of,
                latency=self.latency,
                in_flight=self.in_flight,
                draw=self._rng.random,
                now_ms=self.breakers.now_ms(),
                config=self.config.gateway,
                health=self.health,
                probation_share=self.outliers.config.probation_share if self.outliers else 0.0,
            )
        )

    # --- outlier ejection (llm_client._outlier; best effort, like the breakers) -----------

    def steady(self, target: RouteTarget) -> bool:
        """No failure in its window as last read, in rotation: its successes may be held
        back and folded (:class:`~llm_client.RecordCarry`). A flaky target's are recorded at
        once, in order with its failures (held ones would let its failures look consecutive
        to its breaker, across workers)."""
        found = self.health.get(target.id)
        return found is None or (found.failures == 0 and found.standing is Standing.IN)

    def count(self, target: RouteTarget, success: bool) -> None:
        """An attempt the breaker counted as a success or a failure (never a busy answer),
        for the next sync."""
        if self.outliers is not None:
            self._counted.setdefault(target.id, [0, 0])[0 if success else 1] += 1

    async def sync_outliers(
        self, route: Route, context: Mapping[str, str] | None = None, *, force: bool = False
    ) -> None:
        """At most once per ``refresh_seconds`` per workflow: flush the outcomes counted,
        read the route's windows and standings, and eject what :func:`decide` finds, tier
        by tier (each ejection announced as ``target_ejected``)."""
        store = self.outliers
        if store is None or not store.config.enabled:
            return
        now = self.now()
        last = self._synced.get(route.workflow)
        if not force and last is not None and now - last < store.config.refresh_seconds:
            return
        self._synced[route.workflow] = now
        targets = list(dict.fromkeys([*(t.id for t in route.ordered), *self._counted]))
        counted, self._counted = self._counted, {}
        try:
            tallies = await store.sync(targets, {t: (c[0], c[1]) for t, c in counted.items()})
        except Exception as exc:  # the counts are lost; the walk goes on as it was
            self.bookkeeping_failed("outlier_sync", exc, workflow=route.workflow)
            return
        self.health.update({t.target: t for t in tallies})
        for tier in tiers(route.ordered, tier_of):
            await self._eject(store, route.workflow, [t.id for t in tier], context)

    async def _eject(
        self,
        store: OutlierStore,
        workflow: str,
        tier: list[str],
        context: Mapping[str, str] | None,
    ) -> None:
        """Eject what :func:`decide` finds in one tier (the store rechecks the panic floor
        atomically) and announce each ejection."""
        verdicts = decide([self.health[i] for i in tier], store.config)
        if not verdicts:
            return
        try:
            ejected = await store.eject(tier, verdicts)
        except Exception as exc:
            self.bookkeeping_failed("outlier_eject", exc, workflow=workflow)
            return
        judged = {v.target: v for v in verdicts}
        for out in ejected:
            verdict = judged[out.target]
            self.health[out.target] = Tally(
                out.target,
                standing=Standing.EJECTED,
                ejected_until_ms=out.until_ms,
                times=out.times,
            )
            event = RoutingEvent(
                EventType.TARGET_EJECTED,
                workflow,
                target=out.target,
                reason=verdict.mode.value,
                counters={
                    "times": out.times,
                    "ejected_ms": max(out.until_ms - store.now_ms(), 0),
                    "successes": verdict.successes,
                    "failures": verdict.failures,
                },
            )
            await self.emit(event, context)

    def note_latency(self, targets: Sequence[RouteTarget], latency: Sequence[Latency]) -> None:
        """Keep the latency windows a begin read, for the next walk's order."""
        for target, seen in zip(targets, latency, strict=False):
            self.latency[target.id] = seen

    def attempt_started(self, target: RouteTarget) -> None:
        self.in_flight[target.id] += 1

    def attempt_ended(
        self, workflow: str, target: RouteTarget, outcome: str, seconds: float
    ) -> None:
        """An attempt is over: one fewer in flight; its duration to the observer."""
        self.in_flight[target.id] -= 1
        if self.in_flight[target.id] <= 0:
            del self.in_flight[target.id]
        self._observe("attempt_finished", workflow, target.id, outcome, seconds)

    def capacity_waited(self, workflow: str, seconds: float) -> None:
        self._observe("capacity_waited", workflow, seconds)

    def _observe(self, method: str, *args: Any) -> None:
        """Tell the observer, never failing the call (durations are bookkeeping)."""
        if self.observer is None:
            return
        try:
            getattr(self.observer, method)(*args)
        except Exception as exc:
            self.bookkeeping_failed("observer", exc, method=method)

    def _factory(self) -> TransportFactory:
        if self.transports is None:
            raise RuntimeError("Walker.chat/embed need a TransportFactory")
        return self.transports

    def now(self) -> float:
        return self._monotonic()

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def emit(self, event: RoutingEvent, context: Mapping[str, str] | None = None) -> None:
        """Emit without ever failing the routed call (breaker news is counted first)."""
        if event.type in BREAKER_NEWS:
            self.breaker_news += 1
        try:
            await self.events.emit(with_context(event, context or {}))
        except Exception as exc:
            self.bookkeeping_failed("emit", exc, event_type=event.type)

    def bookkeeping_failed(self, operation: str, error: BaseException, **fields: Any) -> None:
        """Log and count a swallowed store fault (never the error's text)."""
        self.bookkeeping_failures[operation] += 1
        log.warning(
            "routing.bookkeeping_failed",
            operation=operation,
            error=type(error).__name__,
            **fields,
        )


# --- one call's walk ------------------------------------------------------------------------


class Walk(Generic[T]):
    """One routed call: performs what :func:`~llm_client._routing.step.next_step` decides.

    The walk's decisions — order, budgets, passes, fail-open, the ending — are pure
    functions in :mod:`llm_client._routing.step`; a walk only performs the steps they name
    (breaker begin/acquire/record/renew through the store, events, the call, pauses) on
    its :class:`Walker` (clock, sleep, events, breakers, the preferred order, in-flight
    counts, durations) and feeds the results back. Each admission carries the target's
    caps, each record what the answer left behind: the cooling a ``Retry-After`` asked
    for, a success's duration and tokens (``usage``).
    """

    def __init__(
        self,
        walker: Walker,
        route: Route,
        attempt: AttemptFn[T],
        deadline: float | None,
        key: str | None,
        context: Mapping[str, str],
        probes: bool = True,
        usage: UsageFn[T] | None = None,
    ) -> None:
        self.w = walker
        self.workflow = route.workflow
        self.attempt_fn = attempt
        self.key = key
        self.context = context
        self.usage = usage
        ordered = route.ordered
        self.plan = WalkPlan(
            workflow=route.workflow,
            targets=walker.prefer(route),
            max_hops=route.max_hops,
            wall_seconds=route.wall_seconds,
            slot_wait_seconds=route.slot_wait_seconds,
            slot_poll_seconds=route.slot_poll_seconds,
            started=walker.now(),
            deadline=deadline,
            probes=probes,
            config=walker.config,
            primary=ordered[0] if ordered else None,
        )

    async def run(self) -> Routed[T]:
        """Step until the walk ends: the routed value, or its error raised."""
        state = WalkState()
        while True:
            state, step = next_step(state, self.plan, self.w.now())
            if isinstance(step, Done | Stop) and state.first_busy is not None:
                self.w.capacity_waited(self.workflow, self.w.now() - state.first_busy)
            if isinstance(step, Done):
                return cast(Routed[T], step.routed)
            if isinstance(step, Stop):
                await self._announce(step.notes)
                raise step.error
            state = await self._perform(state, step)

    async def _perform(self, state: WalkState, step: Step) -> WalkState:
        """Perform one effect and fold its result into ``state``."""
        plan = self.plan
        if isinstance(step, Announce):
            await self._announce(step.notes)
            return announced(state)
        if isinstance(step, Begin):
            return await self._begin(state, step)
        if isinstance(step, ReadViews):
            closed, due = await self._closed(step.targets)
            return after_order(state, plan, closed, None, due=due)
        if isinstance(step, Acquire):
            permit, refusal = await self._acquire(step.target, step.lease_seconds)
            return after_acquire(state, permit, refusal)
        if isinstance(step, AcquireFailOpen):
            permit, taken = await self._fail_open(step)
            return after_failopen(state, plan, permit, taken)
        if isinstance(step, Attempt):
            result = await self._attempt(step)
            return after_attempt(state, plan, result, self.w.now())
        if isinstance(step, Release):
            await self._release(step.target, step.permit)
            return after_release(state)
        assert isinstance(step, Pause)
        await self.w.sleep(step.seconds)
        return after_pause(state)

    async def _announce(self, notes: Sequence[Note]) -> None:
        for note in notes:
            await self.w.emit(RoutingEvent(note.type, self.workflow, **note.fields), self.context)

    # --- the breakers (best effort: a store fault fails open) -----------------------------

    async def _begin(self, state: WalkState, step: Begin) -> WalkState:
        """Snapshot + first permit in one round trip; on a store fault, the slow way."""
        try:
            begun = await self.w.breakers.begin(
                [t.id for t in step.targets],
                self.workflow,
                lease_seconds=step.lease_seconds,
                interval_seconds=self.w.config.probe_interval_seconds,
                probes=self.plan.probes,
                limits=[t.limits for t in step.targets],
            )
        except Exception as exc:  # the slow path reads and acquires (each failing open)
            self.w.bookkeeping_failed("breaker_begin", exc, workflow=self.workflow)
            return after_begin(state, self.plan, None, None, None)
        self.w.note_latency(step.targets, begun.latency)
        return after_begin(
            state,
            self.plan,
            begun.closed,
            begun.index,
            begun.permit,
            begun.refusals,
            begun.due,
        )

    async def _closed(self, targets: Sequence[RouteTarget]) -> tuple[list[bool], list[bool]]:
        """Which targets are closed, and which open ones' half-open probe is due."""
        try:
            views = await self.w.breakers.views(t.id for t in targets)
        except Exception as exc:  # fail open: an unreadable breaker counts as closed
            self.w.bookkeeping_failed("breaker_views", exc, workflow=self.workflow)
            return [True] * len(targets), [False] * len(targets)
        closed = [v.circuit is Circuit.CLOSED for v in views]
        return closed, [v.circuit is Circuit.HALF_OPEN and not v.probe_in_flight for v in views]

    async def _acquire(
        self, target: RouteTarget, lease_seconds: float
    ) -> tuple[Permit | None, Refusal | None]:
        try:
            admitted = await self.w.breakers.admit(
                target.id,
                lease_seconds=lease_seconds,
                workflow=self.workflow,
                interval_seconds=self.w.config.probe_interval_seconds,
                limits=target.limits,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=target.id)
            return UNTRACKED, None
        return admitted.permit, admitted.refusal

    async def _fail_open(self, step: AcquireFailOpen) -> tuple[Permit | None, bool]:
        """The workflow's one fleet-wide probe per interval (to the first target)."""
        try:
            return await self.w.breakers.acquire_failopen(
                step.target.id,
                self.workflow,
                lease_seconds=step.lease_seconds,
                interval_seconds=self.w.config.probe_interval_seconds,
                limits=step.target.limits,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=step.target.id)
            return UNTRACKED, False

    async def _record_success(
        self, target: RouteTarget, permit: Permit, report: Report
    ) -> tuple[Transition | None, bool]:
        """Record a success (its duration and tokens) and count it in the attempt metrics,
        one round trip, best effort; returns the transition and whether the metrics
        counted it."""
        if permit is UNTRACKED:
            return None, False
        try:
            transition = await self.w.breakers.record(
                target.id,
                permit,
                Outcome.SUCCESS,
                count=True,
                report=report,
                carried_failed=partial(self._record_lost, target),
                hold=self.w.steady(target),
            )
        except Exception as exc:
            self.w.bookkeeping_failed(
                "breaker_record", exc, target=target.id, outcome=Outcome.SUCCESS
            )
            return None, False
        return transition, self.w.breakers.success_counter is not None

    def _record_lost(self, target: RouteTarget, exc: BaseException) -> None:
        """A carried success's record never landed (llm_client._breaker.carry): nor did the
        attempt count it carried."""
        self.w.bookkeeping_failed("breaker_record", exc, target=target.id, outcome=Outcome.SUCCESS)
        if self.w.breakers.success_counter is not None:
            self.w.bookkeeping_failed("attempt_counter", exc, target=target.id)

    async def _release(self, target: RouteTarget, permit: Permit) -> None:
        await self._record(target, permit, Outcome.NOT_CHARGED)

    async def _record(
        self, target: RouteTarget, permit: Permit, outcome: Outcome, report: Report = Report()
    ) -> Transition | None:
        """Charge the breaker, best effort: a store fault never changes the call's result."""
        if permit is UNTRACKED:
            return None
        try:
            return await self.w.breakers.record(target.id, permit, outcome, report=report)
        except Exception as exc:
            self.w.bookkeeping_failed("breaker_record", exc, target=target.id, outcome=outcome)
            return None

    # --- one attempt ----------------------------------------------------------------------

    async def _attempt(self, step: Attempt) -> Served | Failed:
        """Make the call under its cap (plus a grace), renewing a probe's lease meanwhile;
        record the outcome on the breaker and announce it."""
        target, permit = step.target, step.permit
        key = f"{self.key}:{target.id}" if self.key else None
        start = self.w.now()
        renewer = self._renewer(target, permit)
        self.w.attempt_started(target)
        try:
            grace = self.w.config.probe_lease_grace_seconds
            async with asyncio.timeout(step.cap + grace) as guard:
                value = await self.attempt_fn(target, step.cap, key)
        except asyncio.CancelledError:
            await _stop(renewer)
            self.w.attempt_ended(self.workflow, target, "cancelled", self.w.now() - start)
            await asyncio.shield(self._release(target, permit))
            raise
        except Exception as exc:
            await _stop(renewer)
            if isinstance(exc, TimeoutError) and guard.expired():
                overran = TaskTimeout(
                    f"attempt on {target.id} overran its {step.cap:g}s cap", seconds=step.cap
                )
                return await self._failed(step, overran, start, guard_expired=True)
            return await self._failed(step, exc, start, guard_expired=False)
        await _stop(renewer)
        elapsed = self.w.now() - start
        self.w.attempt_ended(self.workflow, target, Outcome.SUCCESS.value, elapsed)
        self.w.count(target, success=True)
        report = Report(elapsed_ms=round(elapsed * 1000), tokens=self._tokens(value))
        transition, counted = await self._record_success(target, permit, report)
        await self._announce_transition(target, transition)
        return Served(target, value, counted, elapsed)

    def _tokens(self, value: T) -> int:
        """The tokens a result used, if the caller said how to count them (never fails)."""
        if self.usage is None:
            return 0
        try:
            return max(int(self.usage(value)), 0)
        except Exception:  # bookkeeping: a result without usage counts nothing
            return 0

    async def _failed(
        self, step: Attempt, error: BaseException, start: float, *, guard_expired: bool
    ) -> Failed:
        failed = judge_attempt(
            self.plan,
            step.target,
            error,
            cap=step.cap,
            cap_source=step.cap_source,
            elapsed=self.w.now() - start,
            guard_expired=guard_expired,
            min_slice=self.w.breakers.config.timeout_min_slice_seconds,
        )
        if isinstance(failed.error, LLMError):  # the route and target the answer came from
            failed.error.note_origin(self.workflow, step.target.id)
        self.w.attempt_ended(self.workflow, step.target, failed.outcome.value, failed.elapsed)
        if failed.outcome is Outcome.FAILURE:  # busy, capacity, 429: never an error here
            self.w.count(step.target, success=False)
        cooling = cooling_note(failed)
        notes = (attempt_note(failed),) + (() if cooling is None else (cooling,))
        # the breaker record and the attempt's event (stream, pages, metrics) at once
        transition, _ = await asyncio.gather(
            self._record(step.target, step.permit, failed.outcome, Report(cool_ms=failed.cool_ms)),
            self._announce(notes),
        )
        if not failed.deadline_cut:  # a deadline cut ends the walk unannounced
            await self._announce_transition(step.target, transition)
        return failed

    async def _announce_transition(
        self, target: RouteTarget, transition: Transition | None
    ) -> None:
        note = transition_note(target, transition)
        if note is not None:
            await self._announce((note,))

    def _renewer(self, target: RouteTarget, permit: Permit) -> asyncio.Task[None] | None:
        """Keep a probe permit's lease (and an in-flight slot's) alive while its call runs
        (None for shared permits without a slot)."""
        if not permit.probe and permit.slot is None:
            return None
        return asyncio.create_task(self._renew_loop(target, permit))

    async def _renew_loop(self, target: RouteTarget, permit: Permit) -> None:
        seconds = lease(self.plan, self.w.now())
        while True:
            await asyncio.sleep(seconds / 3)
            try:
                current = await self.w.breakers.renew(target.id, permit, lease_seconds=seconds)
            except Exception as exc:  # keep trying: the store may answer again in time
                self.w.bookkeeping_failed("breaker_renew", exc, target=target.id)
                continue
            if not current:
                return  # reset, or the lease lapsed and another took the probe / slot


async def _stop(task: asyncio.Task[None] | None) -> None:
    """Cancel a lease renewer and wait until it has stopped.

    ``asyncio.wait`` never raises the renewer's own cancellation, so a cancellation of
    the *calling* task that arrives meanwhile still propagates (nothing is swallowed).
    """
    if task is None:
        return
    task.cancel()
    await asyncio.wait([task])
