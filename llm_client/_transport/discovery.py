"""The farm's Discovery job API, client side (§3): submit, wait for capacity, poll.

One call (:meth:`DiscoveryClient.invoke`) is:

1. **submit** ``POST {base}/v1/jobs/blocking`` with the inner request base64-encoded
   in ``invocation.body``. The provider's bearer token travels only inside
   ``invocation.headers``; the outer request carries no credentials. A 429/503
   "no slots"/"capacity" answer is a :class:`CapacityUnavailable`: the client
   waits ``capacity_poll`` and resubmits (same idempotency key) until the
   capacity-wait budget is spent, then raises :class:`CapacityWaitExpired`. One
   that carries a ``Retry-After`` is raised at once with it (``retry_after``): the
   farm asked for a pause, and the walker honours it fleet-wide by cooling the
   target and moving on, instead of this client resubmitting inside it (§3). So is any
   429, and a 503 with a valid ``Retry-After`` (a submit or a poll answer): busy, never
   charged (``llm_client._retry.classify.busy_status``).
2. **poll** ``GET {base}/v1/jobs/{id}`` until the envelope resolves
   (``llm_client._transport.envelope.resolve``). The first poll follows a pending submit
   at once, later ones back off to ``job_poll``.
3. a job the farm issued and then no longer knows (a poll answered 404, as after a
   farm restart or from a replica without the job) is the farm's loss: the
   call is resubmitted once with the same idempotency key (a farm that still knows
   the key answers the same job; one that forgot it starts a new one), within the
   same budgets; lost again, it raises :class:`JobLost` — a ``BackendUnavailable``,
   so the walker charges the target and fails over, and the run is released.

Budgets (:class:`llm_client._transport.base.ClientConfig`): every HTTP round trip
gets ``request_timeout`` (→ :class:`RequestTimeout`); the job must finish
within ``task_timeout`` of the moment it is first seen RUNNING (→
:class:`TaskTimeout` naming the job). Until then it is waiting for capacity
(§3): a job a poll still reports QUEUED/PENDING once ``capacity_wait`` has
passed since the first submit is a :class:`CapacityWaitExpired` (a capacity
answer, neutral for breakers, the run is released), not a task timeout. The
job always gets one poll after its submit (so ``capacity_wait = 0`` means "no
waiting", not "never"), and ``capacity_wait + task_timeout`` bounds a job that
never reports RUNNING. A caller's ``timeout`` caps the whole call; when it is
what cuts the call the error is a :class:`TaskTimeout` of those seconds (or
:class:`CapacityWaitExpired` while still waiting for a slot), so a
caller-deadline cut is never reported as an unreachable farm.

Logs carry the job id, service, endpoint, state, error kind/code and elapsed
time; never bodies, prompts or tokens.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Final
from urllib.parse import quote

import httpx

from llm_client._edge import b64encode, dumps, mapped
from llm_client._errors import (
    CapacityUnavailable,
    CapacityWaitExpired,
    DecodeError,
    JobLost,
    LLMError,
    TaskTimeout,
)
from llm_client._log import get_logger
from llm_client._transport.base import (
    ChatResult,
    ClientConfig,
    EmbedResult,
    OwnedHttp,
    UpstreamResponse,
)
from llm_client._transport.envelope import (
    Envelope,
    JobState,
    chat_result,
    embed_result,
    parse_envelope,
    poll_status_error,
    resolve,
    submit_status_error,
)
from llm_client._transport.error_text import clip
from llm_client._transport.retry_after import retry_after_seconds

log = get_logger(__name__)

#: ``invocation.timeout_ms`` when the task budget is zero (the farm's own default).
DEFAULT_TIMEOUT_MS: Final = 600_000
#: Fractions of ``job_poll`` waited before the 2nd, 3rd, … poll (then ``job_poll``).
POLL_RAMP: Final = (0.125, 0.25, 0.5)
_JSON_HEADERS: Final = {"Content-Type": "application/json", "Accept": "application/json"}


def poll_delay(polls_done: int, job_poll: float) -> float:
    """Pause before the next poll: none before the first, then ramping up to ``job_poll``.

    Short jobs (embeddings, a warm model) finish in well under a second; the ramp
    catches them without hammering the farm during a long generation.
    """
    if polls_done <= 0:
        return 0.0
    if polls_done <= len(POLL_RAMP):
        return job_poll * POLL_RAMP[polls_done - 1]
    return job_poll


def _retry_after(answer: httpx.Response) -> float | None:
    """The pause an answer's ``Retry-After`` names (RFC 9110, against its ``Date``), if any."""
    headers = answer.headers
    return retry_after_seconds(
        headers.get("retry-after"), now=time.time(), date=headers.get("date")
    )


def new_idempotency_key(workload: str) -> str:
    """A fresh key; it is also the ``X-Request-Id`` the backend sees."""
    return f"{workload}-{uuid.uuid4().hex}"


def submit_payload(
    *,
    service: str,
    endpoint: str,
    body: bytes,
    headers: Mapping[str, str],
    idempotency_key: str,
    priority: int,
    timeout_ms: int,
) -> dict[str, Any]:
    """The JSON of ``POST /v1/jobs/blocking`` (§3); empty headers are omitted."""
    invocation: dict[str, Any] = {
        "service_name": service,
        "endpoint_name": endpoint,
        "body": b64encode(body),
        "content_type": "application/json",
        "timeout_ms": timeout_ms if timeout_ms > 0 else DEFAULT_TIMEOUT_MS,
    }
    if headers:
        invocation["headers"] = dict(headers)
    return {
        "invocation": invocation,
        "idempotency_key": idempotency_key,
        "priority": max(priority, 0),
    }


@dataclass(slots=True)
class CallBudget:
    """The deadlines of one call (monotonic seconds); pure apart from ``elapsed_ms``."""

    started: float
    #: The caller's cap on the whole call, if any.
    call_deadline: float | None
    call_seconds: float | None
    #: When the job must be done; re-anchored when it is first seen RUNNING.
    task_deadline: float
    task_seconds: float
    #: The end of the capacity wait (first submit + ``capacity_wait``): a job a poll
    #: still reports QUEUED after it is a capacity answer.
    queue_deadline: float | None = None
    queue_seconds: float = 0.0
    running: bool = False
    #: A poll (not the submit answer) reported the job QUEUED: the queue deadline applies.
    queued_seen: bool = False
    #: Submits are being refused for capacity (no job yet): a cut now is a capacity answer.
    waiting_for_slot: bool = False
    #: The job as last seen (for logs): its id and status word.
    job_id: str | None = None
    status: str = ""

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def mark_running(self, now: float, task_timeout: float) -> None:
        """Re-anchor the task deadline at the first sight of RUNNING (later calls are no-ops)."""
        if not self.running:
            self.running = True
            self.task_deadline = now + task_timeout
            self.task_seconds = task_timeout

    def mark_queued(self) -> None:
        """A poll saw the job still QUEUED: from now on the capacity wait bounds it."""
        if not self.running:
            self.queued_seen = True

    def _own_deadline(self) -> float:
        if not self.running and self.queued_seen and self.queue_deadline is not None:
            return min(self.task_deadline, self.queue_deadline)
        return self.task_deadline

    def limit(self) -> tuple[float, bool]:
        """The earliest deadline, and whether it is the caller's."""
        own = self._own_deadline()
        if self.call_deadline is not None and self.call_deadline <= own:
            return self.call_deadline, True
        return own, False

    def expired(self, what: str, *, by_caller: bool) -> TaskTimeout | CapacityWaitExpired:
        """The error for a deadline that passed: the caller's cut, the capacity wait of a
        job that never started, or the task budget of a running one."""
        if by_caller:
            seconds = self.call_seconds or 0.0
            text = f"{what}: cut by the caller's deadline after {seconds:g}s"
            if self.waiting_for_slot:
                return CapacityWaitExpired(text + " while waiting for capacity", seconds=seconds)
            return TaskTimeout(text, seconds=seconds)
        if self.running:
            return TaskTimeout(
                f"{what} did not finish within the task budget of {self.task_seconds:g}s",
                seconds=self.task_seconds,
            )
        queued = self.queued_seen and self.queue_deadline is not None
        if queued and self.queue_deadline is not None and self.queue_deadline <= self.task_deadline:
            return CapacityWaitExpired(
                f"{what} still queued after the capacity wait of {self.queue_seconds:g}s",
                seconds=self.queue_seconds,
            )
        return CapacityWaitExpired(
            f"{what} did not start within {self.task_seconds:g}s (capacity wait + task budget)",
            seconds=self.task_seconds,
        )


class DiscoveryClient(OwnedHttp):
    """Calls one service/endpoint of the farm through the Discovery job API.

    Satisfies :class:`~llm_client._transport.base.ChatTransport` and
    :class:`~llm_client._transport.base.EmbedTransport`. Share one instance per
    target: it keeps its HTTP connections alive between calls. Pass ``http``
    to share an ``httpx.AsyncClient`` (it is then not closed by :meth:`aclose`).
    """

    def __init__(
        self,
        config: ClientConfig,
        *,
        service: str,
        endpoint: str,
        api_key: str | None = None,
        http: httpx.AsyncClient | None = None,
        workload: str = "memory",
    ) -> None:
        self._config = config
        self.service = service
        self.endpoint = endpoint
        self.workload = workload
        self._api_key = api_key or None
        base = config.base_url.rstrip("/")
        self._submit_url = f"{base}/v1/jobs/blocking"
        self._jobs_url = f"{base}/v1/jobs/"
        super().__init__(http, timeout=config.request_timeout)

    def __repr__(self) -> str:
        return f"DiscoveryClient(service={self.service!r}, endpoint={self.endpoint!r})"

    # --- public calls -----------------------------------------------------------------

    async def chat(
        self,
        request: Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> ChatResult:
        """One OpenAI chat completion (``stream`` is always false)."""
        body = {**request, "stream": False}
        response = await self.invoke(body, idempotency_key=idempotency_key, timeout=timeout)
        return chat_result(response)

    async def embed(
        self,
        texts: Sequence[str],
        *,
        dimension: int,
        task_description: str | None = None,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> EmbedResult:
        """One vector per text, in order; an empty ``texts`` needs no call."""
        if not texts:
            return EmbedResult(embeddings=[], dimension=dimension)
        inner: dict[str, Any] = {"prompts": list(texts), "dimension": dimension}
        if task_description:
            inner["task_description"] = task_description
        response = await self.invoke(inner, idempotency_key=idempotency_key, timeout=timeout)
        return embed_result(response, count=len(texts), dimension=dimension)

    async def invoke(
        self,
        body: bytes | Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        timeout: float | None = None,
    ) -> UpstreamResponse:
        """Submit ``body`` as one job and wait for the backend's 2xx response."""
        config = self._config
        now = time.monotonic()
        clock = CallBudget(
            started=now,
            call_deadline=None if timeout is None else now + timeout,
            call_seconds=timeout,
            task_deadline=now + config.capacity_wait + config.task_timeout,
            task_seconds=config.capacity_wait + config.task_timeout,
            queue_deadline=now + config.capacity_wait,
            queue_seconds=config.capacity_wait,
        )
        key = idempotency_key or new_idempotency_key(self.workload)
        inner = body if isinstance(body, bytes) else dumps(dict(body), "encode request")
        task_ms = config.task_timeout if timeout is None else min(config.task_timeout, timeout)
        payload = dumps(
            submit_payload(
                service=self.service,
                endpoint=self.endpoint,
                body=inner,
                headers=self._invocation_headers(key),
                idempotency_key=key,
                priority=config.priority,
                timeout_ms=max(1, round(task_ms * 1000)) if task_ms > 0 else 0,
            ),
            "encode submit",
        )
        try:
            response = await self._run_job(payload, clock)
        except LLMError as exc:
            self._log(
                log.info,
                "discovery.call_failed",
                clock,
                job_id=clock.job_id,
                state=clock.status or None,
                error=exc.kind,
                code=exc.code,
            )
            raise
        self._log(
            log.debug,
            "discovery.call_succeeded",
            clock,
            job_id=response.job_id,
            state=clock.status,
        )
        return response

    # --- steps ------------------------------------------------------------------------

    def _log(self, emit: Callable[..., Any], event: str, clock: CallBudget, **fields: Any) -> None:
        """Log ``event`` of this call: its target, ``fields``, the time since it started."""
        emit(
            event,
            service=self.service,
            endpoint=self.endpoint,
            **fields,
            elapsed_ms=clock.elapsed_ms(),
        )

    def _invocation_headers(self, key: str) -> dict[str, str]:
        headers = {"X-Request-Id": key, "X-AIFarm-Workload": self.workload}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        return headers

    async def _run_job(self, payload: bytes, clock: CallBudget) -> UpstreamResponse:
        """Submit and wait for the job; a job the farm loses is resubmitted once (same
        idempotency key, same budgets), and a second loss is raised."""
        resubmitted = False
        while True:
            envelope = await self._submit(payload, clock)
            try:
                return await self._await_job(envelope, clock)
            except JobLost as exc:
                if resubmitted:
                    raise JobLost(f"{exc.message}, again after a resubmit", code=exc.code) from exc
                resubmitted = True
                self._log(log.info, "discovery.job_lost", clock, job_id=clock.job_id, code=exc.code)

    async def _submit(self, payload: bytes, clock: CallBudget) -> Envelope:
        """Submit, resubmitting on capacity rejections within the capacity-wait budget.

        Resubmits every ``capacity_poll``, plus one last time at the budget's edge.
        When the next resubmit would fall past the caller's deadline it gives up at once.
        """
        config = self._config
        capacity_deadline = clock.started + config.capacity_wait
        attempts = 0
        while True:
            attempts += 1
            try:
                envelope = await self._submit_once(payload, clock)
            except CapacityUnavailable as exc:
                if exc.retry_after is not None:
                    raise  # a named pause: the walker cools the target fleet-wide (§3)
                clock.waiting_for_slot = True
                now = time.monotonic()
                wait = min(config.capacity_poll, capacity_deadline - now)
                if wait <= 0:
                    raise CapacityWaitExpired(
                        f"no capacity on {self.service}/{self.endpoint} within the "
                        f"{config.capacity_wait:g}s capacity wait "
                        f"({attempts} submits): {exc.message}",
                        seconds=config.capacity_wait,
                    ) from exc
                if clock.call_deadline is not None and now + wait >= clock.call_deadline:
                    seconds = clock.call_seconds or 0.0
                    raise CapacityWaitExpired(
                        f"no capacity on {self.service}/{self.endpoint} before the caller's "
                        f"deadline of {seconds:g}s ({attempts} submits): {exc.message}",
                        seconds=seconds,
                    ) from exc
                self._log(
                    log.info, "discovery.capacity_wait", clock, attempt=attempts, code=exc.code
                )
                await asyncio.sleep(wait)
            else:
                clock.waiting_for_slot = False
                return envelope

    async def _submit_once(self, payload: bytes, clock: CallBudget) -> Envelope:
        answer = await self._round_trip("POST", self._submit_url, "submit", clock, payload)
        if not answer.is_success:
            raise submit_status_error(answer.status_code, answer.content, _retry_after(answer))
        envelope = parse_envelope(answer.content)
        self._log(
            log.debug, "discovery.submitted", clock, job_id=envelope.job_id, state=envelope.status
        )
        return envelope

    async def _await_job(self, envelope: Envelope, clock: CallBudget) -> UpstreamResponse:
        """Poll until the envelope resolves to a response (or an error)."""
        job_id = envelope.job_id
        polls = 0
        state = envelope.state
        while True:
            clock.job_id, clock.status = job_id, clip(envelope.status, 40)
            response = resolve(envelope)
            if response is not None:
                return response if response.job_id else replace(response, job_id=job_id)
            if job_id is None:
                raise DecodeError(f"decode job envelope: {clock.status} job without an id")
            if envelope.state is JobState.RUNNING:
                clock.mark_running(time.monotonic(), self._config.task_timeout)
            elif polls > 0:
                clock.mark_queued()  # a poll, not just the submit answer, saw it queued
            if envelope.state is not state:
                state = envelope.state
                log.debug(
                    "discovery.job_state",
                    service=self.service,
                    job_id=job_id,
                    state=clock.status,
                )
            await self._pause(poll_delay(polls, self._config.job_poll), f"job {job_id}", clock)
            envelope = await self._poll(job_id, clock)
            polls += 1

    async def _pause(self, delay: float, what: str, clock: CallBudget) -> None:
        """Sleep ``delay`` unless a deadline falls first: then sleep to it and raise."""
        deadline, by_caller = clock.limit()
        now = time.monotonic()
        if now + delay < deadline:
            if delay > 0:
                await asyncio.sleep(delay)
            return
        await asyncio.sleep(max(0.0, deadline - now))
        raise clock.expired(what, by_caller=by_caller)

    async def _poll(self, job_id: str, clock: CallBudget) -> Envelope:
        what = f"poll job {job_id}"
        url = self._jobs_url + quote(job_id, safe="")
        answer = await self._round_trip("GET", url, what, clock, None, job_id=job_id)
        if not answer.is_success:
            raise poll_status_error(
                job_id, answer.status_code, answer.content, _retry_after(answer)
            )
        envelope = parse_envelope(answer.content)
        return envelope if envelope.job_id else replace(envelope, job_id=job_id)

    async def _round_trip(
        self,
        method: str,
        url: str,
        what: str,
        clock: CallBudget,
        content: bytes | None,
        *,
        job_id: str | None = None,
    ) -> httpx.Response:
        """One HTTP exchange within the request budget, cut short by the call's deadlines."""
        label = f"job {job_id}" if job_id else what
        deadline, by_caller = clock.limit()
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise clock.expired(label, by_caller=by_caller)

        def cut() -> LLMError:
            return clock.expired(label, by_caller=by_caller)

        # The request budget applies unless a call deadline falls first; then that
        # deadline's own error (TaskTimeout) reports the cut, not a RequestTimeout.
        seconds = self._config.request_timeout
        timeout_error: Callable[[], LLMError] | None = None
        if remaining < seconds:
            seconds, timeout_error = remaining, cut
        with mapped(what, seconds=seconds, timeout_error=timeout_error):
            async with asyncio.timeout(seconds):
                return await self._http.request(
                    method, url, content=content, headers=_JSON_HEADERS, timeout=seconds
                )
