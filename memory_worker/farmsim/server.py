"""The farm simulator: a real loopback HTTP server speaking the Discovery job API.

:class:`FarmSimulator` runs an aiohttp application on the caller's event loop
(§3, §12). It serves:

- ``POST /v1/jobs/blocking`` and ``GET /v1/jobs/{id}`` — Discovery jobs whose
  states follow the configured timings (:mod:`memory_worker.farmsim.jobs`);
  chat services answer with the rule-based extractor, service ``embedder``
  (endpoint ``encode``) with the simulator's embedder (``embedder=``: the real
  multilingual e5-small model by default, computed off the event loop and
  cached per text; ``"hashed"`` for tests that need exact similarities);
- ``POST /v1/chat/completions`` — a direct OpenAI-compatible endpoint
  (service ``direct`` in stats and faults): status faults answer their status,
  job failures a 502 naming the code, ``reset``/``hang``/``hang_http`` drop or
  never answer the request, content faults change the assistant content;
- ``GET /`` — a banner saying this is a simulator, and ``/_sim/...`` admin
  endpoints for faults, scripted outputs and stats.

Job states follow the simulator's ``clock`` (``time.monotonic`` unless a test
injects one it moves by hand): a job's queue, run and SLOW/HANG timings are read
on it, so a test can step a job through its life without waiting. The waits on
the HTTP exchange itself — a blocking submit's block, a direct request's SLOW
pause, a hung request — stay real time: they are what a client's timeouts meet.

Every answer carries ``Server: farm-simulator``. Jobs, faults, scripts and
stats live in this object, so ``stop()`` then ``start()`` resumes on the same
port with the same state, like a farm node rebooting.

Stats per service: ``submits`` (every submit or direct request received),
``polls``, ``succeeded``/``failed`` (jobs counted once, when their terminal
state is first reported; cancelled counts as failed; a direct request counts
by its HTTP status), ``rejected`` (submits that created no job: refused,
dropped, hung or answered with a malformed envelope). ``outer_auth_count``
counts Discovery requests that carried an outer ``Authorization`` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import socket
import struct
import time
from collections import deque
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Self

import orjson
from aiohttp import web

from memory_worker.farmsim import backends
from memory_worker.farmsim.embedder import EmbedderKind, SimEmbedder, make_embedder
from memory_worker.farmsim.faults import (
    ANY_SERVICE,
    DEFAULT_SLOW_SECONDS,
    POLL_FAULTS,
    WIRE_FAULTS,
    Fault,
    FaultBook,
    FaultKind,
    retry_after,
    status_answer,
)
from memory_worker.farmsim.jobs import (
    DEFAULT_STYLES,
    EnvelopeStyle,
    Job,
    JobState,
    envelope,
    finishes_at,
    job_state,
)
from memory_worker.logs import get_logger

log = get_logger(__name__)

SERVER_HEADER = "farm-simulator"
DIRECT_SERVICE = "direct"
STAT_FIELDS: tuple[str, ...] = ("submits", "polls", "succeeded", "failed", "rejected")

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _json(data: Any, status: int = 200, headers: Mapping[str, str] | None = None) -> web.Response:
    body = orjson.dumps(data)
    return web.Response(body=body, status=status, content_type="application/json", headers=headers)


def _error(status: int, message: str) -> web.Response:
    return _json({"error": message}, status=status)


async def _json_object(request: web.Request) -> dict[str, Any] | web.Response:
    """The request's JSON body ({} when it is not an object), or the 400 for a body that is not JSON."""
    try:
        data = orjson.loads(await request.read())
    except orjson.JSONDecodeError:
        return _error(400, "request body is not valid JSON")
    return data if isinstance(data, dict) else {}


def _header(headers: object, name: str) -> str | None:
    """A header from a JSON headers object, case-insensitively."""
    if not isinstance(headers, Mapping):
        return None
    wanted = name.casefold()
    for key, value in headers.items():
        if str(key).casefold() == wanted:
            return str(value)
    return None


def _drop_connection(request: web.Request) -> None:
    """Reset the client's connection (RST, no HTTP answer)."""
    transport = request.transport
    if transport is None:
        return
    sock = transport.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    transport.abort()


class FarmSimulator:
    """An in-process Discovery farm with fault injection, for tests and the demo."""

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 0,
        queued_seconds: float = 0.0,
        run_seconds: float = 0.0,
        submit_block_seconds: float = 0.0,
        *,
        envelope_styles: Sequence[EnvelopeStyle | str] = DEFAULT_STYLES,
        shutdown_timeout: float = 0.5,
        max_jobs: int = 10_000,
        embedder: EmbedderKind | str | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not envelope_styles:
            raise ValueError("envelope_styles must not be empty")
        if max_jobs < 1:
            raise ValueError("max_jobs must be positive")
        self.host = host
        self.queued_seconds = queued_seconds
        self.run_seconds = run_seconds
        self.submit_block_seconds = submit_block_seconds
        self.outer_auth_count = 0
        self._port = port
        self._styles = tuple(EnvelopeStyle(s) for s in envelope_styles)
        self._shutdown_timeout = shutdown_timeout
        self._max_jobs = max_jobs
        self._clock = clock
        if embedder is None:  # MEMORY_FARMSIM_EMBEDDER, like every other setting
            from memory_worker.settings import Settings

            embedder = Settings().farmsim_embedder
        self.embedder: SimEmbedder = make_embedder(embedder)
        self._faults = FaultBook(clock=clock)
        self._scripts: dict[str, deque[str]] = {}
        self._jobs: dict[str, Job] = {}
        self._by_key: dict[str, str] = {}
        self._reported: set[str] = set()
        self._stats: dict[str, dict[str, int]] = {}
        self._last_auth: dict[str, str | None] = {}
        self._last_submit: dict[str, dict[str, Any]] = {}
        self._last_request: dict[str, Any] = {}
        self._received: deque[tuple[str, bytes]] = deque(maxlen=max_jobs)
        self._seq = 0
        self._malformed = 0
        self._runner: web.AppRunner | None = None
        self._release = asyncio.Event()

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        """The bound port (known after the first ``start()`` when created with 0)."""
        if self._port == 0:
            raise RuntimeError("the simulator has not been started yet")
        return self._port

    @property
    def base_url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        """Listen (a free port the first time if ``port`` was 0, the same port after)."""
        if self._runner is not None:
            return
        sock = self._bind()
        self._port = sock.getsockname()[1]
        self._release = asyncio.Event()
        runner = web.AppRunner(
            self._app(),
            handle_signals=False,
            access_log=None,
            shutdown_timeout=self._shutdown_timeout,
            handler_cancellation=True,
        )
        await runner.setup()
        try:
            await web.SockSite(runner, sock).start()
        except BaseException:
            await runner.cleanup()
            sock.close()
            raise
        self._runner = runner
        log.info("farmsim.started", base_url=self.base_url)

    async def stop(self) -> None:
        """Close the listener and every open connection; state is kept."""
        runner, self._runner = self._runner, None
        if runner is None:
            return
        self._release.set()  # wake hung handlers so they drop their connections
        await runner.cleanup()
        log.info("farmsim.stopped", base_url=self.base_url)

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    def _bind(self) -> socket.socket:
        family, kind, proto, _, address = socket.getaddrinfo(
            self.host, self._port, type=socket.SOCK_STREAM
        )[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(128)
            sock.setblocking(False)
        except BaseException:
            sock.close()
            raise
        return sock

    def _app(self) -> web.Application:
        app = web.Application()
        app.on_response_prepare.append(self._label)
        app.router.add_get("/", self._banner)
        app.router.add_post("/v1/jobs/blocking", self._submit)
        app.router.add_get("/v1/jobs/{job_id}", self._poll)
        app.router.add_post("/v1/chat/completions", self._direct)
        app.router.add_get("/_sim/stats", self._admin_stats)
        app.router.add_post("/_sim/reset-stats", self._admin_reset_stats)
        app.router.add_get("/_sim/faults", self._admin_faults)
        app.router.add_post("/_sim/faults", self._admin_set_fault)
        app.router.add_delete("/_sim/faults", self._admin_clear_faults)
        app.router.add_post("/_sim/script", self._admin_script)
        return app

    @staticmethod
    async def _label(request: web.Request, response: web.StreamResponse) -> None:
        response.headers["Server"] = SERVER_HEADER

    # ------------------------------------------------------------------ Python API

    def set_fault(self, service: str, fault: Fault) -> None:
        """Inject ``fault`` for ``service`` (``"*"`` = every service)."""
        self._faults.set(service, fault)
        log.info("farmsim.fault_set", service=service, kind=fault.kind.value, times=fault.times)

    def clear_faults(self, service: str | None = None) -> None:
        """Clear one service's fault, or all faults."""
        self._faults.clear(service)
        log.info("farmsim.faults_cleared", service=service)

    def faults(self) -> dict[str, dict[str, Any]]:
        """The active faults by service, with their remaining uses."""
        return self._faults.active()

    def script(self, service: str, outputs: Sequence[str]) -> None:
        """Queue assistant contents for ``service`` (``"*"`` = any chat service), FIFO."""
        self._scripts.setdefault(service, deque()).extend(outputs)

    def stats(self) -> dict[str, dict[str, int]]:
        """Counters per service (see the module docstring)."""
        return {service: dict(counts) for service, counts in sorted(self._stats.items())}

    def submits(self, service: str) -> int:
        return self._stats.get(service, {}).get("submits", 0)

    def reset_stats(self) -> None:
        """Zero every counter, including ``outer_auth_count``."""
        self._stats.clear()
        self.outer_auth_count = 0

    def last_auth(self, service: str) -> str | None:
        """The ``Authorization`` the last submit of ``service`` carried inside its invocation."""
        return self._last_auth.get(service)

    def last_submit(self, service: str) -> dict[str, Any] | None:
        """The last submit JSON received for ``service`` (outer request, body still base64)."""
        return self._last_submit.get(service)

    def last_request(self, service: str) -> Any:
        """The last inner request of ``service`` decoded from JSON (None if none/undecodable)."""
        return self._last_request.get(service)

    def received(self, service: str | None = None) -> list[bytes]:
        """Every inner request body received (of ``service``; None: all), oldest first —
        what a farm operator could read (the last ``max_jobs``)."""
        return [body for name, body in self._received if service in (None, name)]

    def job_ids(self) -> list[str]:
        """Every job id, in submission order."""
        return list(self._jobs)

    # ------------------------------------------------------------------ bookkeeping

    def _bump(self, service: str, counter: str) -> None:
        counts = self._stats.setdefault(service, dict.fromkeys(STAT_FIELDS, 0))
        counts[counter] += 1

    def _report(self, job: Job, state: JobState) -> None:
        if state.terminal and job.id not in self._reported:
            self._reported.add(job.id)
            self._bump(job.service, "succeeded" if state is JobState.SUCCEEDED else "failed")

    def _take_script(self, service: str) -> str | None:
        for key in (service, ANY_SERVICE):
            queue = self._scripts.get(key)
            if queue:
                return queue.popleft()
        return None

    async def _pause(self, seconds: float | None) -> None:
        """Sleep ``seconds`` (forever if None), ending early when the server stops."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._release.wait(), timeout=seconds)

    async def _wire_fault(self, request: web.Request, fault: Fault) -> web.StreamResponse:
        """Answer (or not) under a fault acting on the HTTP exchange."""
        if fault.kind is FaultKind.SUBMIT_STATUS:
            status, answer, headers = status_answer(fault)
            return _json(answer, status=status, headers=headers)
        if fault.kind is FaultKind.MALFORMED_ENVELOPE:
            body, content_type = backends.malformed_body(self._malformed)
            self._malformed += 1
            return web.Response(body=body, content_type=content_type)
        if fault.kind in (FaultKind.HANG_HTTP, FaultKind.HANG):
            await self._pause(None)
        _drop_connection(request)
        return web.Response(status=500)  # never delivered: the connection is gone

    # ------------------------------------------------------------------ Discovery

    async def _submit(self, request: web.Request) -> web.StreamResponse:
        if "Authorization" in request.headers:
            self.outer_auth_count += 1
        payload = await _json_object(request)
        if isinstance(payload, web.Response):
            return payload
        invocation = payload.get("invocation")
        service = invocation.get("service_name") if isinstance(invocation, dict) else None
        if not isinstance(invocation, dict) or not isinstance(service, str) or not service:
            return _error(400, "invocation.service_name is required")
        self._bump(service, "submits")
        self._last_submit[service] = payload
        self._last_auth[service] = _header(invocation.get("headers"), "Authorization")

        fault = self._faults.peek(service)
        if fault.kind in WIRE_FAULTS:
            self._faults.take(service)
            self._bump(service, "rejected")
            log.debug("farmsim.submit_faulted", service=service, kind=fault.kind.value)
            return await self._wire_fault(request, fault)

        endpoint = str(invocation.get("endpoint_name") or "")
        # The model runs before the idempotency check: no await between that check and
        # the job's creation, so a retry racing its original never makes a second job.
        if backends.answers_vectors(fault.kind):
            await self._warm_embeddings(endpoint, invocation.get("body"))
        key = payload.get("idempotency_key")
        existing = self._by_key.get(key) if isinstance(key, str) and key else None
        if fault.kind is FaultKind.JOB_NOT_FOUND:
            existing = None  # a farm that lost its jobs forgot their keys too
        if existing is not None:
            job = self._jobs[existing]
            state = await self._block_on(job, fresh=False)
        else:
            try:
                raw = backends.decode_body(invocation.get("body"))
            except ValueError as exc:
                self._bump(service, "rejected")
                return _error(400, str(exc))
            job = self._create_job(service, endpoint, raw, key)
            state = await self._block_on(job, fresh=True)
        self._report(job, state)
        return _json(envelope(job, state))

    async def _warm_embeddings(self, endpoint: str, body: object) -> None:
        """Run the model for an embedding request in a thread, so the loop never waits on it."""
        if not backends.is_embed_endpoint(endpoint):
            return
        try:
            raw = backends.decode_body(body)
        except ValueError:
            return  # answered as a bad request below
        found = backends.embed_prompts(raw)
        if found is not None and found[0]:
            await asyncio.to_thread(self.embedder.warm, *found)

    def _create_job(self, service: str, endpoint: str, raw: bytes, key: object) -> Job:
        fault = self._faults.take(service)
        self._seq += 1
        job_id = f"simjob-{self._seq:06d}"
        self._received.append((service, raw))
        try:
            self._last_request[service] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self._last_request[service] = None
        scripted = None
        if fault.kind in (FaultKind.HEALTHY, FaultKind.SLOW) and not backends.is_embed_endpoint(
            endpoint
        ):
            scripted = self._take_script(service)
        queued_seconds = self.queued_seconds
        if fault.kind is FaultKind.STUCK_QUEUED:
            queued_seconds = fault.seconds if fault.seconds is not None else math.inf
        if fault.kind is FaultKind.HANG:
            run_seconds: float | None = None
        elif fault.kind is FaultKind.SLOW:
            run_seconds = fault.seconds if fault.seconds is not None else DEFAULT_SLOW_SECONDS
        else:
            run_seconds = self.run_seconds
        job = Job(
            id=job_id,
            service=service,
            endpoint=endpoint,
            submitted_at=self._clock(),
            queued_seconds=queued_seconds,
            run_seconds=run_seconds,
            outcome=backends.job_outcome(endpoint, raw, fault, scripted, job_id, self.embedder),
            style=self._styles[(self._seq - 1) % len(self._styles)],
            idempotency_key=key if isinstance(key, str) and key else None,
        )
        self._jobs[job.id] = job
        if job.idempotency_key is not None:
            self._by_key[job.idempotency_key] = job.id
        self._forget_oldest_jobs()
        log.debug("farmsim.job_created", job_id=job.id, service=service, fault=fault.kind.value)
        return job

    def _forget_oldest_jobs(self) -> None:
        """Keep at most ``max_jobs`` jobs, like a farm's result retention."""
        while len(self._jobs) > self._max_jobs:
            old = self._jobs.pop(next(iter(self._jobs)))
            self._reported.discard(old.id)
            if old.idempotency_key is not None and self._by_key.get(old.idempotency_key) == old.id:
                del self._by_key[old.idempotency_key]

    async def _block_on(self, job: Job, *, fresh: bool) -> JobState:
        """The state a submit reports, after waiting up to ``submit_block_seconds``.

        Without a block budget a new job is reported QUEUED at once and a
        resubmitted one (same idempotency key) as it is now.
        """
        if self.submit_block_seconds <= 0:
            return JobState.QUEUED if fresh else job_state(job, self._clock())
        end = finishes_at(job)
        now = self._clock()
        wait = (
            self.submit_block_seconds if end is None else min(end - now, self.submit_block_seconds)
        )
        if wait > 0:
            await self._pause(wait)
        return job_state(job, self._clock())

    async def _poll(self, request: web.Request) -> web.StreamResponse:
        if "Authorization" in request.headers:
            self.outer_auth_count += 1
        job = self._jobs.get(request.match_info["job_id"])
        if job is None:
            return _error(404, "job not found")
        self._bump(job.service, "polls")
        fault = self._faults.peek(job.service)
        if fault.kind is FaultKind.JOB_NOT_FOUND:
            return _error(404, "job not found")
        if fault.kind in POLL_FAULTS:
            return await self._wire_fault(request, fault)
        state = job_state(job, self._clock())
        self._report(job, state)
        return _json(envelope(job, state))

    # ------------------------------------------------------------------ direct

    async def _direct(self, request: web.Request) -> web.StreamResponse:
        service = DIRECT_SERVICE
        raw = await request.read()
        self._received.append((service, raw))
        self._bump(service, "submits")
        self._last_auth[service] = request.headers.get("Authorization")
        try:
            self._last_request[service] = orjson.loads(raw)
        except orjson.JSONDecodeError:
            self._last_request[service] = None
        fault = self._faults.take(service)
        if fault.kind in WIRE_FAULTS - {FaultKind.SUBMIT_STATUS} or fault.kind is FaultKind.HANG:
            self._bump(service, "rejected")
            return await self._wire_fault(request, fault)
        if fault.kind is FaultKind.SLOW:
            await self._pause(fault.seconds if fault.seconds is not None else DEFAULT_SLOW_SECONDS)
        scripted = (
            self._take_script(service)
            if fault.kind in (FaultKind.HEALTHY, FaultKind.SLOW)
            else None
        )
        self._seq += 1
        reply = backends.direct_reply(raw, fault, scripted, f"direct-{self._seq:06d}")
        self._bump(service, "succeeded" if reply.status_code < 400 else "failed")
        headers = {"Content-Type": reply.content_type, **retry_after(fault)}
        return web.Response(body=reply.body, status=reply.status_code, headers=headers)

    # ------------------------------------------------------------------ banner and admin

    async def _banner(self, request: web.Request) -> web.StreamResponse:
        return _json(
            {
                "name": SERVER_HEADER,
                "simulator": True,
                "description": (
                    "Farm simulator: a loopback Discovery job API with a deterministic "
                    "rule-based extractor, an embedder, and fault injection. Not a real farm."
                ),
                "embedder": self.embedder.kind.value,
                "endpoints": [
                    "POST /v1/jobs/blocking",
                    "GET /v1/jobs/{id}",
                    "POST /v1/chat/completions",
                    "GET|POST|DELETE /_sim/faults",
                    "POST /_sim/script",
                    "GET /_sim/stats",
                    "POST /_sim/reset-stats",
                ],
                "faults": self.faults(),
                "jobs": len(self._jobs),
                "outer_auth_count": self.outer_auth_count,
            }
        )

    async def _admin_stats(self, request: web.Request) -> web.StreamResponse:
        return _json(self.stats())

    async def _admin_reset_stats(self, request: web.Request) -> web.StreamResponse:
        self.reset_stats()
        return _json({"ok": True})

    async def _admin_faults(self, request: web.Request) -> web.StreamResponse:
        return _json(self.faults())

    async def _admin_set_fault(self, request: web.Request) -> web.StreamResponse:
        try:
            data = orjson.loads(await request.read())
            if not isinstance(data, dict):
                raise ValueError("expected a JSON object")
            service = data.get("service")
            if not isinstance(service, str) or not service:
                raise ValueError("service is required")
            fault = Fault.from_json(data)
        except (orjson.JSONDecodeError, ValueError) as exc:
            return _error(400, str(exc))
        self.set_fault(service, fault)
        return _json({"ok": True, "service": service, "fault": fault.to_json()})

    async def _admin_clear_faults(self, request: web.Request) -> web.StreamResponse:
        service = request.query.get("service") or None
        self.clear_faults(service)
        return _json({"ok": True, "service": service})

    async def _admin_script(self, request: web.Request) -> web.StreamResponse:
        data = await _json_object(request)
        if isinstance(data, web.Response):
            return data
        service = data.get("service")
        outputs = data.get("outputs")
        if not isinstance(service, str) or not service:
            return _error(400, "service is required")
        if not isinstance(outputs, list) or not all(isinstance(o, str) for o in outputs):
            return _error(400, "outputs must be a list of strings")
        self.script(service, outputs)
        return _json({"ok": True, "service": service, "queued": len(self._scripts[service])})
