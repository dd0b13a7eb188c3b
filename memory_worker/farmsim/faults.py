"""Fault injection for the farm simulator: what can go wrong, and for how long.

A :class:`Fault` is set per service (or ``"*"`` for every service) and applies
to the next ``times`` submits of that service, or until cleared when ``times``
is None. A service's own fault wins over the ``"*"`` fault.

Faults come in two families, and the server treats them differently:

- *wire* faults (:data:`WIRE_FAULTS`) act on the HTTP exchange itself: the
  submit is refused, dropped, never answered or answered with a broken
  envelope. They also act on polls while they are active (without using up
  ``times``), because a farm that drops connections drops them for everyone.
- *job* faults act on what a newly created job turns into (failed, cancelled,
  hung, slow, stuck in the queue, bad upstream answer). They are fixed when the
  job is created, so jobs already in flight are not affected by a later fault.

Codes: ``job_failed`` puts ``{code, message}`` in ``result.error``;
``job_cancelled`` with a ``code`` does the same for a CANCELLED job (without
one it only carries ``message`` as a top-level error); ``job_failed_string``
gives ``result.error`` as the string ``"CODE: message"``; ``submit_status``
with a ``code`` answers ``{"code", "message"}`` (a farm-level error such as
``404 SERVICE_NOT_FOUND``) instead of ``{"error": message}``. A ``submit_status``
(or, on the direct endpoint, ``upstream_status``) with ``seconds`` sends them as its
``Retry-After`` header: ``429 too many requests`` with ``seconds=30`` is a farm asking
for a 30 s pause; ``retry_after`` sends that header verbatim instead (any text: an HTTP-date,
``"²"``, junk), a farm writing it its own way. ``slow`` with ``seconds`` makes the service's jobs run that long. ``stuck_queued``
keeps a job QUEUED (for ``seconds``, or forever); the direct endpoint has no
queue and answers normally under it. ``job_failed_error_code`` fails the
job the way a status-level farm reports it: ``error_code`` beside the status word
and the message as a bare string ``error`` beside it —
``{"status": "JOB_STATE_FAILED", "error_code": "UPSTREAM_ERROR", "error": "…"}``.

``adversarial`` makes a chat service play an adversarial model
(:mod:`memory_worker.farmsim.adversary`): every fact the rule-based model finds — known to
the chat or not: it never reinforces — comes back reworded, re-scoped, translated and split,
never word for word; its ``code`` names the moves (comma-separated, e.g.
``"reword,split"``; none: all).

A job fault with ``share`` acts on that share of the service's submits only, spread
evenly (``share=0.6``: three of every five), the others healthy: a flaky node.

``job_not_found`` is the farm losing its jobs, as after a restart or
behind a load-balanced replica without them: for ``seconds`` on the simulator's
clock after it is set (until cleared when None), every poll of the service's
jobs answers ``404 {"error": "job not found"}`` and a resubmit with a known
idempotency key is not recognised (a new job is made, and lost the same way).
Submits themselves are accepted normally, so the farm issues ids it then
forgets. (Without this fault, ``stop()``/``start()`` keeps every job and key: a
resubmit after a simulated reboot answers the same job.)
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class FaultKind(StrEnum):
    """Every failure the simulated farm can produce (values are lower-case)."""

    HEALTHY = "healthy"
    JOB_FAILED = "job_failed"
    JOB_FAILED_TOP_LEVEL = "job_failed_top_level"
    JOB_FAILED_BARE = "job_failed_bare"
    JOB_CANCELLED = "job_cancelled"
    JOB_FAILED_STRING = "job_failed_string"
    JOB_FAILED_ERROR_CODE = "job_failed_error_code"
    JOB_NOT_FOUND = "job_not_found"
    STUCK_QUEUED = "stuck_queued"
    UPSTREAM_STATUS = "upstream_status"
    SUBMIT_STATUS = "submit_status"
    RESET = "reset"
    SLOW = "slow"
    HANG = "hang"
    HANG_HTTP = "hang_http"
    MALFORMED_ENVELOPE = "malformed_envelope"
    EMPTY_BODY = "empty_body"
    TRUNCATED_JSON = "truncated_json"
    GARBAGE = "garbage"
    ADVERSARIAL = "adversarial"


#: Faults acting on the HTTP exchange rather than on the job.
WIRE_FAULTS: frozenset[FaultKind] = frozenset(
    {
        FaultKind.SUBMIT_STATUS,
        FaultKind.RESET,
        FaultKind.HANG_HTTP,
        FaultKind.MALFORMED_ENVELOPE,
    }
)

#: Wire faults that also act on polls of existing jobs (a refusal is submit-only).
POLL_FAULTS: frozenset[FaultKind] = WIRE_FAULTS - {FaultKind.SUBMIT_STATUS}

#: Faults that answer a status: their ``seconds`` is the answer's ``Retry-After``.
STATUS_FAULTS: frozenset[FaultKind] = frozenset(
    {FaultKind.SUBMIT_STATUS, FaultKind.UPSTREAM_STATUS}
)

#: Faults whose ``seconds`` is how long they stay active (on the simulator's clock).
WINDOW_FAULTS: frozenset[FaultKind] = frozenset({FaultKind.JOB_NOT_FOUND})

#: Defaults used when a fault leaves a field unset.
DEFAULT_FAILED_CODE = "UPSTREAM_ERROR"
DEFAULT_FAILED_MESSAGE = "upstream backend unreachable"
DEFAULT_TOP_LEVEL_MESSAGE = "job failed"
DEFAULT_UPSTREAM_STATUS = 503
DEFAULT_UPSTREAM_MESSAGE = "model loading"
DEFAULT_SUBMIT_STATUS = 503
DEFAULT_SUBMIT_MESSAGE = "no slots available"
DEFAULT_SLOW_SECONDS = 1.0

#: The service name that makes a fault or script apply to every service.
ANY_SERVICE = "*"


@dataclass(frozen=True, slots=True)
class Fault:
    """One injected failure; ``times`` = next N submits, None = until cleared."""

    kind: FaultKind
    code: str | None = None
    message: str | None = None
    status_code: int | None = None
    seconds: float | None = None
    times: int | None = None
    #: A status fault's ``Retry-After`` header, verbatim (wins over ``seconds``).
    retry_after: str | None = None
    #: A job fault acting on only this share of the submits, spread evenly (0.6: three of
    #: every five fail); the others are healthy. None: every submit.
    share: float | None = None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fault:
        """Build a fault from the admin API's JSON (raises ValueError on bad input)."""
        if "kind" not in data:
            raise ValueError("kind is required")
        kind = FaultKind(str(data["kind"]).lower())
        status = data.get("status_code")
        seconds = data.get("seconds")
        times = data.get("times")
        if status is not None and not isinstance(status, int):
            raise ValueError("status_code must be an integer")
        if seconds is not None and not isinstance(seconds, int | float):
            raise ValueError("seconds must be a number")
        if times is not None and (not isinstance(times, int) or times < 1):
            raise ValueError("times must be a positive integer")
        raw_retry_after = data.get("retry_after")
        if raw_retry_after is not None and not isinstance(raw_retry_after, str):
            raise ValueError("retry_after must be a string")
        share = data.get("share")
        if share is not None and (not isinstance(share, int | float) or not 0 < share <= 1):
            raise ValueError("share must be a number in (0, 1]")
        code = data.get("code")
        message = data.get("message")
        return cls(
            kind=kind,
            code=None if code is None else str(code),
            message=None if message is None else str(message),
            status_code=status,
            seconds=None if seconds is None else float(seconds),
            times=times,
            retry_after=raw_retry_after,
            share=None if share is None else float(share),
        )

    def to_json(self) -> dict[str, Any]:
        """The fault as the admin API shows it."""
        return {
            "kind": self.kind.value,
            "code": self.code,
            "message": self.message,
            "status_code": self.status_code,
            "seconds": self.seconds,
            "times": self.times,
            "retry_after": self.retry_after,
            "share": self.share,
        }


HEALTHY = Fault(kind=FaultKind.HEALTHY)


def parse_fault_spec(spec: str) -> tuple[str, Fault]:
    """``KIND`` or ``KIND:SERVICE`` (the command line's ``--fault``) as (service, fault);
    without a service it acts on every service. ValueError names the kinds it knows."""
    kind, _, service = spec.partition(":")
    try:
        fault = Fault(kind=FaultKind(kind.strip().lower()))
    except ValueError:
        known = ", ".join(k.value for k in FaultKind)
        raise ValueError(f"--fault {spec!r}: unknown kind (known: {known})") from None
    return (service.strip() or ANY_SERVICE), fault


def status_answer(fault: Fault) -> tuple[int, dict[str, str], dict[str, str]]:
    """A ``submit_status`` fault's answer: status, JSON body (with a ``code``: a farm-level
    error answer) and headers."""
    status = fault.status_code or DEFAULT_SUBMIT_STATUS
    message = fault.message or DEFAULT_SUBMIT_MESSAGE
    if fault.code is not None:
        return status, {"code": fault.code, "message": message}, retry_after(fault)
    return status, {"error": message}, retry_after(fault)


def retry_after(fault: Fault) -> dict[str, str]:
    """The ``Retry-After`` header a status fault with ``retry_after`` (verbatim) or ``seconds``
    answers with (a farm naming its pause), else none."""
    if fault.kind not in STATUS_FAULTS:
        return {}
    if fault.retry_after is not None:
        return {"Retry-After": fault.retry_after}
    if fault.seconds is not None:
        return {"Retry-After": f"{fault.seconds:g}"}
    return {}


@dataclass(slots=True)
class _Slot:
    fault: Fault
    remaining: int | None
    #: When a window fault (:data:`WINDOW_FAULTS`) ends, on the book's clock.
    until: float | None = None
    #: Submits a ``share`` fault has seen (it acts when ``seen × share`` crosses an integer).
    seen: int = 0


@dataclass(slots=True)
class FaultBook:
    """The active faults by service, with their remaining uses (and windows, on ``clock``)."""

    clock: Callable[[], float] = time.monotonic
    _slots: dict[str, _Slot] = field(default_factory=dict)

    def set(self, service: str, fault: Fault) -> None:
        """Make ``fault`` the active fault of ``service`` (replacing any other)."""
        until = None
        if fault.kind in WINDOW_FAULTS and fault.seconds is not None:
            until = self.clock() + fault.seconds
        self._slots[service] = _Slot(fault=fault, remaining=fault.times, until=until)

    def clear(self, service: str | None = None) -> None:
        """Clear one service's fault, or every fault when ``service`` is None."""
        if service is None:
            self._slots.clear()
        else:
            self._slots.pop(service, None)

    def peek(self, service: str) -> Fault:
        """The fault that would act on ``service`` now, without using it up."""
        slot = self._slot_for(service)
        return HEALTHY if slot is None else slot[1].fault

    def take(self, service: str) -> Fault:
        """The fault acting on this submit of ``service``; uses up one of its ``times``."""
        found = self._slot_for(service)
        if found is None:
            return HEALTHY
        key, slot = found
        if slot.fault.share is not None:
            slot.seen += 1
            if math.floor(slot.seen * slot.fault.share) == math.floor(
                (slot.seen - 1) * slot.fault.share
            ):
                return HEALTHY  # this submit is in the healthy share
        if slot.remaining is not None:
            slot.remaining -= 1
            if slot.remaining <= 0:
                del self._slots[key]
        return slot.fault

    def active(self) -> dict[str, dict[str, Any]]:
        """Every active fault with its remaining uses, for the admin API."""
        for service in list(self._slots):
            self._slot_for(service)  # drops a window fault whose window is over
        return {
            service: {**slot.fault.to_json(), "remaining": slot.remaining}
            for service, slot in sorted(self._slots.items())
        }

    def _slot_for(self, service: str) -> tuple[str, _Slot] | None:
        for key in (service, ANY_SERVICE):
            slot = self._slots.get(key)
            if slot is not None and slot.until is not None and self.clock() >= slot.until:
                del self._slots[key]  # its window is over
                slot = None
            if slot is not None:
                return key, slot
        return None
