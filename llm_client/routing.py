"""The routed walker (§6): try a workflow's targets in order, with breakers and budgets.

One routed call (:meth:`Walker.call`):

1. Resolve the route (none → ``route_unavailable`` event, :class:`RouteUnavailable`);
   no enabled target → ``no_candidates``, :class:`NoCandidates`.
2. Order the targets: closed breakers first, in route order; breaker-open ones
   moved to the end, where they are tried as probes (their breaker hands out
   one probe permit per cooldown, fleet-wide). When *every* target is open the
   walker emits ``circuit_open_exhaustion``.
3. Walk. Before each attempt: stop at ``max_hops``, at the route's wall budget
   or at the caller's deadline. Each attempt gets ``timeout = min(deadline,
   wall) remaining``. After it, the breaker is charged per §5
   (:func:`llm_client.breaker.classify`) and:

   - success → return it;
   - a non-retryable error → raised at once: no charge, no fallback;
   - a capacity/overload answer ("no slots", 429) → neutral for the breaker,
     **no hop spent**; the next target is tried. If a pass ends with targets
     that were only busy, the walker pauses ``slot_poll_seconds`` and tries
     those again until ``slot_wait_seconds`` have passed since the first busy
     answer; then :class:`CapacityWaitTimeout` (``capacity_wait_timeout``) if
     nothing but busy answers came back;
   - any other retryable error → a hop spent, the target is not retried in
     this call, the next one is tried;
   - a timeout that the caller's deadline cut → :class:`DeadlineExceeded`
     (chained to the attempt's error), no charge; the walk ends.

4. Fail-open: when no target granted a permit (all open and no probe slot),
   the fleet gets **one** probe per ``probe_interval_seconds`` per workflow
   (a Redis ``SET NX PX`` permit), sent to the route's first target; every
   other caller gets :class:`AllCircuitsOpen` at once, without farm traffic.
   A breaker's own half-open probe holds the same permit for the interval,
   so a fully open route never gets a fail-open probe on top of it.
5. At the end, after failed attempts: ``all_attempts_exhausted`` (with
   ``failed_attempts``) and the **last attempt's error** is raised; the
   routing errors (``Exhausted``, ``DeadlineExceeded``, …) are raised only
   when no attempt produced an error to return — and when a walk that began
   with every target open (probes only) ends on ``provider_error``: that is
   :class:`NoCandidates` (§4 rev 2: the quarantined route is an outage).

Probe permits are short leases (§5 rev 2): a half-open or fail-open probe holds
its target's probe slot for ``permit_lease_seconds`` (30 s), renewed every third
of that while the call runs, so a prober killed mid-call frees the slot within
one lease instead of the whole call budget.

Routing bookkeeping is best effort (§7 "Store faults", rev 2): a store error
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
on the route that matters (§6 rev 2).

:meth:`Walker.route_is_open` answers the run pipeline's pre-claim gate
("would a call be refused right now?") without taking any permit.

The walker depends only on the transport protocols of ``llm_client.transport``:
a :class:`TransportFactory` maps a target to a client (:class:`ClientFactory`
builds the real Discovery / OpenAI-compatible ones).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Generic, Protocol, TypeVar

import httpx
import structlog

from llm_client.breaker import Circuit, Outcome, Permit, Transition, classify
from llm_client.breaker_store import BreakerStore
from llm_client.errors import (
    AllCircuitsOpen,
    CapacityWaitTimeout,
    DeadlineExceeded,
    Exhausted,
    NoCandidates,
    RouteUnavailable,
    TaskTimeout,
    Timeout,
)
from llm_client.events import EventSink, EventType, RoutingEvent, with_context
from llm_client.reasons import FailureReason
from llm_client.retry import retryable_reason
from llm_client.routes import Route, RoutesConfig, RouteTarget
from llm_client.transport import (
    ChatResult,
    ChatTransport,
    ClientConfig,
    EmbedResult,
    EmbedTransport,
)

log = structlog.get_logger(__name__)

T = TypeVar("T")

#: An attempt on one target: ``(target, timeout_seconds, idempotency_key) -> result``.
AttemptFn = Callable[[RouteTarget, float, str | None], Awaitable[T]]

#: The leave given when the breaker store could not be asked (fail-open on store faults):
#: no generation ever matches it, and its outcome is not recorded.
UNTRACKED = Permit(generation=-1, probe=False)


@dataclass(frozen=True, slots=True)
class WalkerConfig:
    """Walker knobs (memory-worker builds this from its settings)."""

    #: One fail-open probe per workflow per this many seconds, fleet-wide
    #: (``MEMORY_CONSOLIDATION_BACKEND_RETRY_INTERVAL``).
    probe_interval_seconds: float = 15.0
    #: An attempt that ignores its timeout is abandoned this long after it.
    probe_lease_grace_seconds: float = 5.0
    #: Lease of a probe permit (half-open or fail-open), renewed every third of it while
    #: the call runs (``MEMORY_BREAKER_PERMIT_LEASE_SECONDS``).
    permit_lease_seconds: float = 30.0
    #: A timeout this close to the attempt's cap counts as "cut by the cap".
    cut_tolerance_seconds: float = 0.05


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """What one attempt did (for logs and the caller's metrics)."""

    target: str
    outcome: Outcome
    reason: FailureReason | None
    error_kind: str | None
    elapsed_s: float


@dataclass(frozen=True, slots=True)
class Routed(Generic[T]):
    """A successful routed call: the value, the target that served it, every attempt."""

    value: T
    target: RouteTarget
    attempts: tuple[AttemptRecord, ...]


class TransportFactory(Protocol):
    """Maps a route target to a transport client."""

    def chat(self, target: RouteTarget) -> ChatTransport: ...

    def embed(self, target: RouteTarget) -> EmbedTransport: ...


class ClientFactory:
    """Real clients per target (cached): Discovery or OpenAI-compatible.

    ``config`` is the template of budgets for chat clients and ``embed_config``
    (default: ``config``) the one for embedding clients — budgets are per
    workflow (§3 rev 2: embeddings default to a 15 s task budget); each
    target's address and optional budget overrides are applied on top. Keys
    are read from the environment variable the target names in ``auth_env``.
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        embed_config: ClientConfig | None = None,
        http: httpx.AsyncClient | None = None,
        env: Mapping[str, str] | None = None,
        local_concurrency: int = 1,
    ) -> None:
        self._config = config
        self._local_concurrency = local_concurrency
        self._embed_config = embed_config or config
        self._http = http
        self._env = env
        self._clients: dict[tuple[str, str], Any] = {}

    def _client_config(self, target: RouteTarget, *, embed: bool = False) -> ClientConfig:
        template = self._embed_config if embed else self._config
        config = replace(template, base_url=target.base_url or target.url or "")
        if target.request_timeout_seconds is not None:
            config = replace(config, request_timeout=target.request_timeout_seconds)
        if target.task_timeout_seconds is not None:
            config = replace(config, task_timeout=target.task_timeout_seconds)
        if target.capacity_wait_seconds is not None:
            config = replace(config, capacity_wait=target.capacity_wait_seconds)
        return config

    def _discovery(self, target: RouteTarget, *, embed: bool = False) -> Any:
        from llm_client.discovery import DiscoveryClient

        return DiscoveryClient(
            self._client_config(target, embed=embed),
            service=target.service or "",  # both validated present by the route model
            endpoint=target.endpoint or "",
            api_key=target.api_key(self._env),
            http=self._http,
        )

    def chat(self, target: RouteTarget) -> ChatTransport:
        key = (target.id, "chat")
        if key not in self._clients:
            if target.transport == "openai":
                from llm_client.openai_compat import OpenAICompatClient

                assert target.url
                self._clients[key] = OpenAICompatClient(
                    target.url,
                    api_key=target.api_key(self._env),
                    config=self._client_config(target),
                    http=self._http,
                )
            else:
                self._clients[key] = self._discovery(target)
        client: ChatTransport = self._clients[key]
        return client

    def embed(self, target: RouteTarget) -> EmbedTransport:
        key = (target.id, "embed")
        if key not in self._clients:
            if target.transport == "local":  # §16: in-process e5 (the local-embed extra)
                from llm_client.local_embed import LocalEmbedClient

                self._clients[key] = LocalEmbedClient(
                    target.model,
                    self._client_config(target, embed=True),
                    concurrency=self._local_concurrency,
                )
            else:
                self._clients[key] = self._discovery(target, embed=True)
        client: EmbedTransport = self._clients[key]
        return client

    async def aclose(self) -> None:
        """Close every client built so far."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            with contextlib.suppress(Exception):
                await client.aclose()


class _Succeeded(Exception):
    """Internal: carries a successful attempt's value out of the walk loop."""

    def __init__(self, value: Any, target: RouteTarget) -> None:
        self.value = value
        self.target = target


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
    ) -> None:
        self.routes = routes
        self.breakers = breakers
        self.events = events
        self.transports = transports
        self.config = config
        self._monotonic = monotonic
        self._sleep = sleep
        #: Store faults swallowed by the walker, per operation (process-local).
        self.bookkeeping_failures: Counter[str] = Counter()

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
    ) -> Routed[T]:
        """Run ``attempt`` on the workflow's targets until one succeeds (see the module doc).

        ``deadline`` is a ``time.monotonic()`` instant; ``idempotency_key`` is the
        caller's key for this walk (each target gets ``"{key}:{target id}"``), so
        it must be unique per walk; ``context`` holds identifiers for events.
        ``probes=False`` keeps an optional call off breaker-open targets entirely.
        """
        route = self.routes.get(workflow)
        if route is None:
            await self.emit(RoutingEvent(EventType.ROUTE_UNAVAILABLE, workflow), context)
            raise RouteUnavailable(
                f"no route is configured for workflow {workflow}", workflow=workflow
            )
        walk = _Walk(self, route, attempt, deadline, idempotency_key, context or {}, probes)
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

        return await self.call(
            workflow, attempt, deadline=deadline, idempotency_key=idempotency_key, context=context
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
    ) -> Routed[EmbedResult]:
        """Routed embeddings (``probes=False``: closed targets only, see :meth:`call`)."""
        factory = self._factory()

        async def attempt(target: RouteTarget, timeout: float, key: str | None) -> EmbedResult:
            return await factory.embed(target).embed(
                texts,
                dimension=dimension,
                task_description=task_description,
                idempotency_key=key,
                timeout=timeout,
            )

        return await self.call(
            workflow,
            attempt,
            deadline=deadline,
            idempotency_key=idempotency_key,
            context=context,
            probes=probes,
        )

    async def route_is_open(self, workflow: str) -> bool:
        """Would a call on ``workflow`` be refused right now? (The pre-claim gate.)

        True only when every enabled target is breaker-open without a free probe
        slot and the workflow's fail-open permit is taken (or the first target's
        probe is in flight). Takes no permit. A missing or empty route is not
        "open": calling it reports the configuration problem instead.
        """
        route = self.routes.get(workflow)
        targets = route.eligible if route is not None else ()
        if not targets:
            return False
        views = await self.breakers.views(t.id for t in targets)
        if any(v.admissible for v in views):
            return False
        if views[0].probe_in_flight:
            return True
        return not await self.breakers.failopen_free(workflow)

    # --- helpers for the walk -------------------------------------------------------------

    def _factory(self) -> TransportFactory:
        if self.transports is None:
            raise RuntimeError("Walker.chat/embed need a TransportFactory")
        return self.transports

    def now(self) -> float:
        return self._monotonic()

    async def sleep(self, seconds: float) -> None:
        await self._sleep(seconds)

    async def emit(self, event: RoutingEvent, context: Mapping[str, str] | None = None) -> None:
        """Emit without ever failing the routed call."""
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


class _Walk(Generic[T]):
    """The state of one routed call."""

    def __init__(
        self,
        walker: Walker,
        route: Route,
        attempt: AttemptFn[T],
        deadline: float | None,
        key: str | None,
        context: Mapping[str, str],
        probes: bool = True,
    ) -> None:
        self.w = walker
        self.probes = probes
        self.route = route
        self.workflow = route.workflow
        self.attempt_fn = attempt
        self.deadline = deadline
        self.key = key
        self.context = context
        self.started = walker.now()
        self.hops = 0
        self.records: list[AttemptRecord] = []
        self.failed_attempts = 0
        self.last_error: BaseException | None = None
        self.last_busy_error: BaseException | None = None
        self.first_busy: float | None = None
        self.busy: list[RouteTarget] = []
        self.stop: str | None = None
        #: The walk began with every target breaker-open: its attempts were only probes.
        self.all_open = False

    async def emit(self, event_type: str, **fields: Any) -> None:
        await self.w.emit(RoutingEvent(event_type, self.workflow, **fields), self.context)

    # --- the walk -------------------------------------------------------------------------

    async def run(self) -> Routed[T]:
        targets = self.route.eligible
        if not targets:
            await self.emit(EventType.NO_CANDIDATES)
            raise NoCandidates(
                f"route {self.workflow} has no enabled target", workflow=self.workflow
            )
        try:
            views = await self.w.breakers.views(t.id for t in targets)
        except Exception as exc:  # fail open: an unreadable breaker counts as closed
            self.w.bookkeeping_failed("breaker_views", exc, workflow=self.workflow)
            closed = list(targets)
        else:
            closed = [t for t, v in zip(targets, views, strict=True) if v.circuit is Circuit.CLOSED]
        # Open targets go last, as probes; an optional call (probes=False) skips them.
        ordered = closed + [t for t in targets if t not in closed and self.probes]
        exhaustion = not closed
        self.all_open = exhaustion
        if exhaustion:
            await self.emit(EventType.CIRCUIT_OPEN_EXHAUSTION, counters={"targets": len(targets)})
        try:
            granted = await self._pass(ordered)
            if not granted and self.stop is None:
                if not self.probes:
                    raise AllCircuitsOpen(
                        f"no closed target of {self.workflow} for an optional call",
                        workflow=self.workflow,
                    )
                await self._fail_open(targets[0], exhaustion_emitted=exhaustion)
            await self._capacity_passes()
        except _Succeeded as done:
            return Routed(done.value, done.target, tuple(self.records))
        raise await self._exhausted()

    async def _pass(self, candidates: Sequence[RouteTarget]) -> int:
        """Try each candidate once; returns how many permits were granted."""
        self.busy = []
        granted = 0
        for target in candidates:
            if self._budget_spent():
                break
            try:
                permit = await self.w.breakers.acquire(
                    target.id,
                    lease_seconds=self._lease(),
                    workflow=self.workflow,
                    interval_seconds=self.w.config.probe_interval_seconds,
                )
            except Exception as exc:  # fail open: call it, untracked
                self.w.bookkeeping_failed("breaker_acquire", exc, target=target.id)
                permit = UNTRACKED
            if permit is None:
                continue  # open (or probe taken elsewhere): skipped, no hop
            granted += 1
            await self._attempt(target, permit)
        return granted

    async def _capacity_passes(self) -> None:
        """Retry targets that were only busy, until the route's slot-wait budget is spent."""
        while self.busy and self.stop is None and self.first_busy is not None:
            waited = self.w.now() - self.first_busy
            if waited >= self.route.slot_wait_seconds:
                return
            pause = min(self.route.slot_poll_seconds, self.route.slot_wait_seconds - waited)
            cap, _ = self._cap()
            if pause >= cap:
                return
            await self.w.sleep(pause)
            if not await self._pass(list(self.busy)):
                return

    async def _fail_open(self, first: RouteTarget, *, exhaustion_emitted: bool) -> None:
        """Every target refused: one fleet-wide probe per interval to the first target."""
        if not exhaustion_emitted:
            await self.emit(
                EventType.CIRCUIT_OPEN_EXHAUSTION, counters={"targets": len(self.route.eligible)}
            )
        try:
            permit, taken = await self.w.breakers.acquire_failopen(
                first.id,
                self.workflow,
                lease_seconds=self._lease(),
                interval_seconds=self.w.config.probe_interval_seconds,
            )
        except Exception as exc:  # fail open: call it, untracked
            self.w.bookkeeping_failed("breaker_acquire", exc, target=first.id)
            permit, taken = UNTRACKED, False
        if permit is None:
            raise AllCircuitsOpen(
                f"every target of {self.workflow} is breaker-open; the fleet's probe is taken",
                workflow=self.workflow,
            )
        if taken:
            await self.emit(EventType.FAILOPEN_PROBE, target=first.id)
        await self._attempt(first, permit)

    # --- one attempt ----------------------------------------------------------------------

    async def _attempt(self, target: RouteTarget, permit: Permit) -> None:
        cap, cap_source = self._cap()
        if cap <= 0:
            await self._release(target, permit)
            self.stop = cap_source
            return
        key = f"{self.key}:{target.id}" if self.key else None
        start = self.w.now()
        guard_expired = False
        renewer = self._renewer(target, permit)
        try:
            async with asyncio.timeout(cap + self.w.config.probe_lease_grace_seconds) as guard:
                value = await self.attempt_fn(target, cap, key)
        except asyncio.CancelledError:
            await _stop(renewer)
            await asyncio.shield(self._release(target, permit))
            raise
        except Exception as exc:
            await _stop(renewer)
            error: BaseException = exc
            if isinstance(exc, TimeoutError) and guard.expired():
                guard_expired = True
                error = TaskTimeout(f"attempt on {target.id} overran its {cap:g}s cap", seconds=cap)
            await self._failed(target, permit, error, start, cap, cap_source, guard_expired)
            return
        await _stop(renewer)
        elapsed = self.w.now() - start
        transition = await self._record(target, permit, Outcome.SUCCESS)
        await self._transition_event(target, transition)
        self.records.append(AttemptRecord(target.id, Outcome.SUCCESS, None, None, elapsed))
        raise _Succeeded(value, target)

    async def _failed(
        self,
        target: RouteTarget,
        permit: Permit,
        error: BaseException,
        start: float,
        cap: float,
        cap_source: str,
        guard_expired: bool,
    ) -> None:
        elapsed = self.w.now() - start
        reason = retryable_reason(error)
        timeoutish = (
            guard_expired
            or isinstance(error, Timeout)
            or (reason is FailureReason.PROVIDER_TIMEOUT)
        )
        cut = timeoutish and elapsed >= cap - self.w.config.cut_tolerance_seconds
        if cut:
            reason = FailureReason.PROVIDER_TIMEOUT  # the cap ended it, whatever the transport said
        deadline_cut = cut and cap_source == "deadline"
        outcome = classify(
            reason,
            slice_seconds=elapsed,
            deadline_cut=deadline_cut,
            min_slice_seconds=self.w.breakers.config.timeout_min_slice_seconds,
        )
        transition = await self._record(target, permit, outcome)
        kind = type(error).__name__
        code = getattr(error, "code", None)
        self.records.append(AttemptRecord(target.id, outcome, reason, kind, elapsed))
        counters = {"elapsed_ms": int(elapsed * 1000), "charged": int(outcome is Outcome.FAILURE)}
        if deadline_cut:
            await self.emit(
                EventType.ATTEMPT_DEADLINE_EXCEEDED,
                target=target.id,
                reason=reason,
                error_kind=kind,
                error_code=code,
                counters=counters,
            )
            raise DeadlineExceeded(
                f"the caller's deadline cut the attempt on {target.id}", workflow=self.workflow
            ) from error
        await self.emit(
            EventType.ATTEMPT_FAILED,
            target=target.id,
            reason=reason or "not_retryable",
            error_kind=kind,
            error_code=code,
            counters=counters,
        )
        await self._transition_event(target, transition)
        if reason is None:
            raise error  # non-retryable: at once, no charge, no fallback
        if cut and cap_source == "wall":
            self.stop = "wall"
        if outcome is Outcome.NEUTRAL:
            self.busy.append(target)
            self.last_busy_error = error
            if self.first_busy is None:
                self.first_busy = self.w.now()
            return
        self.hops += 1
        self.failed_attempts += 1
        self.last_error = error

    async def _release(self, target: RouteTarget, permit: Permit) -> None:
        await self._record(target, permit, Outcome.NOT_CHARGED)

    async def _record(
        self, target: RouteTarget, permit: Permit, outcome: Outcome
    ) -> Transition | None:
        """Charge the breaker, best effort: a store fault never changes the call's result."""
        if permit is UNTRACKED:
            return None
        try:
            return await self.w.breakers.record(target.id, permit, outcome)
        except Exception as exc:
            self.w.bookkeeping_failed("breaker_record", exc, target=target.id, outcome=outcome)
            return None

    def _renewer(self, target: RouteTarget, permit: Permit) -> asyncio.Task[None] | None:
        """Keep a probe permit's lease alive while its call runs (None for shared permits)."""
        if not permit.probe:
            return None
        return asyncio.create_task(self._renew_loop(target, permit))

    async def _renew_loop(self, target: RouteTarget, permit: Permit) -> None:
        lease = self._lease()
        while True:
            await asyncio.sleep(lease / 3)
            try:
                current = await self.w.breakers.renew(target.id, permit, lease_seconds=lease)
            except Exception as exc:  # keep trying: the store may answer again in time
                self.w.bookkeeping_failed("breaker_renew", exc, target=target.id)
                continue
            if not current:
                return  # reset, or the lease lapsed and another probe took the slot

    async def _transition_event(self, target: RouteTarget, transition: Transition | None) -> None:
        if transition in (Transition.OPENED, Transition.REOPENED):
            await self.emit(
                EventType.CIRCUIT_OPENED,
                target=target.id,
                reason=transition.value if transition else None,
            )
        elif transition is Transition.CLOSED:
            await self.emit(EventType.CIRCUIT_CLOSED, target=target.id)

    # --- budgets --------------------------------------------------------------------------

    def _cap(self) -> tuple[float, str]:
        """Seconds the next attempt may take, and which budget sets that."""
        now = self.w.now()
        wall = self.route.wall_seconds - (now - self.started)
        if self.deadline is not None and self.deadline - now <= wall:
            return self.deadline - now, "deadline"
        return wall, "wall"

    def _lease(self) -> float:
        """A probe permit's lease: short and renewed, never longer than the attempt may run."""
        attempt = max(self._cap()[0], 0.0) + self.w.config.probe_lease_grace_seconds
        return min(self.w.config.permit_lease_seconds, attempt)

    def _budget_spent(self) -> bool:
        if self.stop is not None:
            return True
        if self.hops >= self.route.max_hops:
            self.stop = "hops"
            return True
        cap, source = self._cap()
        if cap <= 0:
            self.stop = source
            return True
        return False

    async def _exhausted(self) -> Exception:
        """The error that ends a walk without success (see the module docstring)."""
        if self.last_error is not None:
            await self.emit(
                EventType.ALL_ATTEMPTS_EXHAUSTED,
                reason=retryable_reason(self.last_error),
                error_kind=type(self.last_error).__name__,
                counters={
                    "failed_attempts": self.failed_attempts,
                    "busy_attempts": len(self.records) - self.failed_attempts,
                },
            )
            assert isinstance(self.last_error, Exception)
            if self.all_open and (
                retryable_reason(self.last_error) is FailureReason.PROVIDER_ERROR
            ):
                # §4 rev 2: once every target is open, a probe that crashed again is the
                # outage, not this call's fault — a routing error (released), not a failure.
                quarantined = NoCandidates(
                    f"every target of {self.workflow} is breaker-open and the probe failed",
                    workflow=self.workflow,
                )
                quarantined.__cause__ = self.last_error
                return quarantined
            return self.last_error
        if self.stop == "deadline":
            return DeadlineExceeded(
                f"the caller's deadline ended the walk of {self.workflow}", workflow=self.workflow
            )
        if self.last_busy_error is not None:
            waited = self.w.now() - (self.first_busy or self.w.now())
            if waited >= self.route.slot_wait_seconds or self.stop == "wall":
                await self.emit(
                    EventType.CAPACITY_WAIT_TIMEOUT,
                    counters={"busy_attempts": len(self.records), "waited_ms": int(waited * 1000)},
                )
                error = CapacityWaitTimeout(
                    f"every target of {self.workflow} stayed busy for {waited:.1f}s",
                    workflow=self.workflow,
                )
                error.__cause__ = self.last_busy_error
                return error
            assert isinstance(self.last_busy_error, Exception)
            return self.last_busy_error
        return Exhausted(
            f"routed attempts of {self.workflow} exhausted ({self.stop or 'no target admitted'})",
            workflow=self.workflow,
        )


async def _stop(task: asyncio.Task[None] | None) -> None:
    """Cancel a lease renewer and wait until it has stopped.

    ``asyncio.wait`` never raises the renewer's own cancellation, so a cancellation of
    the *calling* task that arrives meanwhile still propagates (nothing is swallowed).
    """
    if task is None:
        return
    task.cancel()
    await asyncio.wait([task])
