"""The routed walker (§6): try a workflow's targets in order, with breakers and budgets.

One routed call (:meth:`Walker.call`):

1. Resolve the route (none → ``route_unavailable`` event, :class:`RouteUnavailable`);
   no enabled target → ``no_candidates``, :class:`NoCandidates`.
2. Order the targets (:mod:`llm_client._gateway.balance`): tier by tier (a file
   without tiers: route order); within a tier, shared by weight (least in flight in
   this process, or weighted random) with slow outliers last. Then closed breakers
   first, in that order; breaker-open ones moved to the end, where they are tried as
   probes (their breaker hands out one probe permit per cooldown, fleet-wide). When
   *every* target is open the walker emits ``circuit_open_exhaustion``. A target
   cooling after a ``Retry-After`` or over a cap is skipped as capacity: no hop, no
   charge (:mod:`llm_client._routing.step`).
3. Walk. Before each attempt: stop at ``max_hops``, at the route's wall budget
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
(its state, attempts, budgets and ending) is :class:`~llm_client._routing.walk.Walk`.
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from llm_client._breaker.store import BreakerStore
from llm_client._errors import (
    RouteUnavailable,
)
from llm_client._gateway.balance import prefer
from llm_client._gateway.model import Latency, estimate_tokens
from llm_client._log import get_logger
from llm_client._routing.events import EventSink, EventType, RoutingEvent, with_context
from llm_client._routing.plan import WalkObserver
from llm_client._routing.routes import Route, RoutesConfig, RouteTarget, tier_of
from llm_client._routing.walk import AttemptFn, Routed, UsageFn, Walk, WalkerConfig
from llm_client._transport.base import (
    ChatResult,
    EmbedResult,
)
from llm_client._transport.clients import TransportFactory

log = get_logger(__name__)

T = TypeVar("T")

#: Events that say a route's breakers changed or were found open (:attr:`Walker.breaker_news`).
BREAKER_NEWS = frozenset(
    {
        EventType.CIRCUIT_OPENED,
        EventType.CIRCUIT_CLOSED,
        EventType.CIRCUIT_OPEN_EXHAUSTION,
        EventType.FAILOPEN_PROBE,
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
            )
        )

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
