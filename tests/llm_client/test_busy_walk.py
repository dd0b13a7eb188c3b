"""A busy answer never spends an attempt or charges a breaker (§4, §5, §6, §7).

First a table of walk endings on plain data (the pure step function driven by the scripted
world of ``tests/llm_client/test_walk_step.py``): a walk that ends on a busy answer — a capacity
answer or a 429 — ends with a capacity error and the run is released (``runs.decide``),
however much of its budget is left: the slot wait over or not, the wall or the caller's
deadline spent, a charged failure earlier in the walk. A capacity wait that ran into the
attempt's cap stays a capacity answer (never a timeout the breaker is charged for).

Then hypothesis over farm answers — status × body × headers — through each client (the
Discovery submit, a Discovery poll, a backend answer the farm relayed, the direct
OpenAI-compatible call, on an ``httpx.MockTransport``) and then through the walk and the
release-or-fail decision (:data:`FARM_ANSWER_EXAMPLES` examples). Whatever the farm sends,
the client raises an ``llm_client`` error and nothing else, its ``retry_after`` is
``None`` or a sane pause, and an answer that is busy — a 429 whatever its body and
headers, a 503 with a valid ``Retry-After`` whatever its body (RFC 9110 §15.6.4; not when
relayed: the farm relays no headers), or any capacity phrase of the family in any spelling
and any non-rejecting status — is never charged to a breaker and never spends an attempt;
one that named a pause cools its target and the walk moves on. The
end-to-end table over real HTTP, the farm simulator and the worker's pipeline is
``tests/e2e/test_busy_answers_e2e.py``.
"""

from __future__ import annotations

import asyncio
import base64
import math
from dataclasses import dataclass
from datetime import datetime

import httpx
import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from llm_client import (
    CapacityUnavailable,
    CapacityWaitExpired,
    CapacityWaitTimeout,
    ClientConfig,
    CoolingDown,
    DeadlineExceeded,
    DiscoveryClient,
    EventType,
    FailureReason,
    LLMError,
    NoCandidates,
    OpenAICompatClient,
    Outcome,
    RoutingEvent,
    TaskTimeout,
    Upstream,
    retryable_reason,
)
from llm_client._retry.classify import NOT_BUSY_STATUSES
from llm_client._routing.judge import judge_attempt
from llm_client._routing.plan import WalkPlan
from llm_client._routing.step import Done, Stop
from memory_worker.paging.policy import page_decision
from memory_worker.runs.policy import Verdict, decide
from tests.llm_client.test_walk_step import BUSY, CRASH, DOWN, A, B, World, drive, plan

R = FailureReason
BUSY_REASONS = frozenset({R.CAPACITY_UNAVAILABLE, R.PROVIDER_OVERLOADED})

#: A 429 the way a farm sends it (no capacity word: the Discovery client does not wait).
RATE = Upstream("submit: status 429: rate limit", code="HTTP_429", status_code=429)
#: The Discovery client's capacity wait, cut where the attempt's cap was.
WAITED = CapacityWaitExpired("no capacity before the caller's deadline", seconds=5.0)
SLOW = TaskTimeout("no answer within the task budget", seconds=40.0)
#: A 503 that names its pause (RFC 9110 §15.6.4): busy, whatever its text says.
UNAVAILABLE_FOR_30S = Upstream(
    "submit: status 503: Service Unavailable", code="HTTP_503", status_code=503, retry_after=30.0
)


def released(ending: Done | Stop) -> bool:
    """Whether the run is released by how the walk ended (a success is no attempt lost)."""
    return isinstance(ending, Done) or decide(ending.error).verdict is Verdict.RELEASE


ENDINGS = [
    pytest.param(
        plan(A, wall_seconds=2.0, slot_wait_seconds=30.0, slot_poll_seconds=5.0),
        World(answers={A.id: [RATE] * 9}, attempt_seconds=0.5),
        CapacityWaitTimeout,
        id="429-ends-a-walk-whose-wall-is-nearly-spent",
    ),
    pytest.param(
        plan(A, deadline=2.0, slot_wait_seconds=30.0, slot_poll_seconds=5.0),
        World(answers={A.id: [BUSY] * 9}, attempt_seconds=0.5),
        CapacityWaitTimeout,
        id="capacity-ends-a-walk-whose-deadline-is-nearly-spent",
    ),
    pytest.param(
        plan(A, B, deadline=1.0),
        World(answers={A.id: [RATE] * 9}, attempt_seconds=1.0),
        CapacityWaitTimeout,
        id="429-then-the-deadline",
    ),
    pytest.param(
        plan(A, deadline=5.0),
        World(answers={A.id: [WAITED] * 9}, attempt_seconds=10.0),
        CapacityWaitTimeout,
        id="capacity-wait-cut-by-the-deadline",
    ),
    pytest.param(
        plan(A, wall_seconds=60.0),
        World(answers={A.id: [WAITED] * 9}, attempt_seconds=100.0),
        CapacityWaitTimeout,
        id="capacity-wait-cut-by-the-wall-long-slice",
    ),
    pytest.param(
        plan(A, B, slot_wait_seconds=3.0),
        World(answers={A.id: [SLOW], B.id: [RATE] * 9}, attempt_seconds=40.0),
        CapacityWaitTimeout,
        id="timeout-then-429-ends-on-the-429",
    ),
    pytest.param(
        plan(A, B, slot_wait_seconds=3.0),
        World(answers={A.id: [CRASH], B.id: [BUSY] * 9}),
        CapacityWaitTimeout,
        id="crash-then-busy-ends-on-busy",
    ),
    pytest.param(
        plan(A, B, slot_wait_seconds=0.0),
        World(answers={A.id: [BUSY], B.id: [SLOW]}, attempt_seconds=40.0),
        TaskTimeout,
        id="busy-then-a-timeout-ends-on-the-timeout",
    ),
    pytest.param(
        plan(A, B, slot_wait_seconds=0.0),
        World(answers={A.id: [BUSY], B.id: [CRASH]}),
        NoCandidates,
        id="busy-then-a-crash-is-the-route-unable",
    ),
    pytest.param(
        plan(A, B, slot_wait_seconds=0.0),
        World(answers={A.id: [BUSY], B.id: [DOWN]}),
        type(DOWN),
        id="busy-then-down-ends-on-down",
    ),
    pytest.param(
        plan(A),
        World(answers={A.id: [CapacityUnavailable("slow down", retry_after=30.0)]}),
        CoolingDown,
        id="named-pause-ends-cooling",
    ),
    pytest.param(
        plan(A),
        World(answers={A.id: [UNAVAILABLE_FOR_30S] * 9}),
        CoolingDown,
        id="503-with-retry-after-ends-cooling",
    ),
    pytest.param(
        plan(A, B, slot_wait_seconds=0.0),
        World(answers={A.id: [CRASH], B.id: [UNAVAILABLE_FOR_30S] * 9}),
        CoolingDown,
        id="crash-then-503-with-retry-after-ends-cooling",
    ),
]


@pytest.mark.parametrize(("p", "world", "ending"), ENDINGS)
def test_how_a_walk_ends(p: WalkPlan, world: World, ending: type[BaseException]) -> None:
    done, state = drive(p, world)
    assert isinstance(done, Stop)
    assert type(done.error) is ending
    ended_busy = state.records[-1].reason in BUSY_REASONS
    assert released(done) is (ended_busy or ending in (NoCandidates, type(DOWN)))
    for record in state.records:  # a busy answer is never charged
        if record.error_kind in ("CapacityWaitExpired", "CapacityUnavailable") or (
            record.error_kind == "Upstream"
        ):
            assert record.outcome is Outcome.NEUTRAL, record


def test_a_busy_ending_says_how_long_it_waited_and_how_many_answers_were_busy() -> None:
    world = World(answers={A.id: [SLOW], B.id: [RATE] * 9}, attempt_seconds=40.0)
    done, _ = drive(plan(A, B, slot_wait_seconds=3.0), world)
    assert isinstance(done, Stop)
    (note,) = done.notes
    assert note.fields["counters"]["busy_attempts"] == world.attempts.count(B.id)
    assert done.error.__cause__ is RATE


# --- hypothesis: farm answers through the client and the walk ------------------------------

#: The busy family as farms phrase it (d-inference's, and the classic answers).
FAMILY = (
    "insufficient kv",
    "insufficient memory",
    "insufficient slots",
    "not loaded",
    "model is loading",
    "loading",
    "no model loaded",
    "slot cap",
    "slot cap exceeded",
    "queue full",
    "queue is full",
    "over capacity",
    "too many requests",
    "server busy",
    "no slots available",
)
#: Words around a busy phrase in a real answer (none rejects, none says a load failed).
FILLER = ("", "model gpt-oss-120b", "node 3", "need 4096 have 1024", "please retry", "7")


def spell(phrase: str, style: int) -> str:
    """``phrase`` as a backend might write it: case, CamelCase, separators."""
    words = phrase.split()
    return [
        phrase,
        phrase.upper(),
        phrase.title(),
        "".join(w[:1].upper() + w[1:] for w in words),
        words[0] + "".join(w[:1].upper() + w[1:] for w in words[1:]),
        "_".join(words).upper(),
        "-".join(words),
        ".".join(words),
        ", ".join(words) + "!",
    ][style]


@st.composite
def busy_texts(draw: st.DrawFn) -> str:
    phrase = spell(draw(st.sampled_from(FAMILY)), draw(st.integers(0, 8)))
    before, after = draw(st.sampled_from(FILLER)), draw(st.sampled_from(FILLER))
    sep = draw(st.sampled_from([" ", ": ", " - ", "; "]))
    return sep.join(part for part in (before, phrase, after) if part)


def bodies(texts: st.SearchStrategy[str]) -> st.SearchStrategy[bytes]:
    """Error bodies the way backends and farms shape them, around ``texts``."""
    shaped = st.one_of(
        texts.map(lambda t: {"error": {"message": t}}),
        texts.map(lambda t: {"error": t}),
        texts.map(lambda t: {"detail": t}),
        texts.map(lambda t: {"message": t}),
        st.tuples(texts, st.sampled_from(["rate_limited", "server_error", "E42"])).map(
            lambda p: {"error": {"message": p[0], "code": p[1]}}
        ),
    )
    return shaped.map(orjson.dumps) | texts.map(str.encode)


plain_text = st.text(st.characters(codec="utf-8"), max_size=60) | st.sampled_from(
    [
        "Internal Server Error",
        "validation failed",
        "timed out",
        "UPSTREAM_ERROR: unreachable",
        "model loading failed",
        "no slots",
        "",
    ]
)
any_body = (
    bodies(plain_text)
    | st.binary(max_size=80)
    | st.sampled_from(
        [b'{"code": "UPSTREAM_ERROR", "message": "x"}', b'{"code": 503}', b"[]", b"null"]
    )
)
header_text = st.text(st.characters(blacklist_categories=("Cs", "Cc")), max_size=30)
retry_afters = (
    st.none()
    | header_text
    | st.sampled_from(
        ["²", "١٢٠", "1.5", "30", "Fri, 01 Mar 2024 12:01:00 GMT", "Sunday, 06-Nov-94 08:49:37 GMT"]
    )
)


_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


def imf_fixdate(moment: datetime) -> str:
    """``moment`` as an IMF-fixdate (RFC 9110 §5.6.7), written here, not by the parser."""
    return (
        f"{_DAYS[moment.weekday()]}, {moment.day:02d} {_MONTHS[moment.month - 1]} "
        f"{moment.year:04d} {moment.hour:02d}:{moment.minute:02d}:{moment.second:02d} GMT"
    )


#: ``Retry-After`` values RFC 9110 §10.2.3 calls valid: delay-seconds (ASCII digits, any
#: length, leading zeros and optional whitespace around them) or an HTTP-date.
valid_retry_afters = st.one_of(
    st.integers(0, 10**12).map(str),
    st.tuples(st.integers(0, 3), st.integers(0, 600)).map(lambda p: "0" * p[0] + str(p[1])),
    st.integers(0, 600).map(lambda n: f" {n}\t"),
    st.datetimes(min_value=datetime(1995, 1, 1), max_value=datetime(2090, 12, 31)).map(imf_fixdate),
)


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    retry_after: str | None
    date: str | None
    #: Busy by construction (the oracle), not by asking the classifier.
    busy: bool
    #: A 503 that names a valid pause: busy wherever its headers reach the client.
    paused: bool = False


@st.composite
def answers(draw: st.DrawFn) -> Answer:
    retry_after, date = draw(retry_afters), draw(st.none() | header_text)
    kind = draw(st.sampled_from(["429", "phrase", "503-paused", "any"]))
    if kind == "429":
        return Answer(429, draw(any_body), retry_after, date, busy=True)
    if kind == "phrase":
        status = draw(st.sampled_from([404, 409, 423, 429, 500, 502, 503, 504, 507, 529]))
        return Answer(status, draw(bodies(busy_texts())), retry_after, date, busy=True)
    if kind == "503-paused":  # RFC 9110 §15.6.4: whatever its body says
        body = draw(any_body | bodies(busy_texts()))
        return Answer(503, body, draw(valid_retry_afters), date, busy=False, paused=True)
    status = draw(st.integers(200, 599))
    return Answer(status, draw(any_body), retry_after, date, busy=False)


def busy_on(answer: Answer, path: str) -> bool:
    """The oracle: whether ``answer`` on ``path`` is busy. The farm relays a backend's
    status and body, not its headers, so a relayed 503 has no pause to name; a poll
    answered 404 is a lost job whatever it says."""
    if path == "poll" and answer.status == 404:
        return False
    return answer.busy or (answer.paused and path != "relayed")


def respond(answer: Answer) -> httpx.Response:
    headers = [(b"content-type", b"application/json")]
    for name, value in (("retry-after", answer.retry_after), ("date", answer.date)):
        if value is not None:
            headers.append((name.encode(), value.encode("utf-8")))
    return httpx.Response(answer.status, content=answer.body, headers=headers)


def relayed(answer: Answer) -> httpx.Response:
    """A succeeded job relaying the backend's answer (the farm relays no headers)."""
    envelope = {
        "job_id": "j1",
        "status": "JOB_STATE_SUCCEEDED",
        "result": {
            "response": {
                "status_code": answer.status,
                "body": base64.b64encode(answer.body).decode(),
            }
        },
    }
    return httpx.Response(200, content=orjson.dumps(envelope))


CONFIG = ClientConfig(
    base_url="http://farm.test",
    request_timeout=5.0,
    task_timeout=5.0,
    capacity_wait=0.0,
    capacity_poll=0.001,
    job_poll=0.001,
)
REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}]}


async def through_client(path: str, answer: Answer) -> BaseException | None:
    """The error a client raises for ``answer`` on ``path`` (None: it served the call)."""

    def handler(request: httpx.Request) -> httpx.Response:
        if path == "relayed" and request.method == "POST":
            return relayed(answer)
        if path == "poll":  # the submit is taken; the poll meets the answer
            if request.method == "POST":
                return httpx.Response(200, content=b'{"job_id": "j1", "status": "QUEUED"}')
            return respond(answer)
        if request.method == "GET":  # a poll of a job the farm does not know
            return httpx.Response(404, content=b'{"error": "job not found"}')
        return respond(answer)

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        try:
            if path == "direct":
                direct = OpenAICompatClient("http://farm.test/v1", config=CONFIG, http=http)
                await direct.chat(REQUEST, timeout=5.0)
            else:
                farm = DiscoveryClient(CONFIG, service="s", endpoint="e", http=http)
                await farm.chat(REQUEST, timeout=5.0)
        except Exception as exc:
            return exc
    return None


WALKS = st.fixed_dictionaries(
    {
        "wall_seconds": st.sampled_from([1.0, 5.0, 60.0, 900.0]),
        "deadline": st.none() | st.sampled_from([0.5, 2.0, 30.0, 100.0]),
        "slot_wait_seconds": st.sampled_from([0.0, 1.0, 10.0, 60.0]),
        "slot_poll_seconds": st.sampled_from([0.5, 1.0, 5.0]),
    }
)


#: Examples the property below runs (status × body × headers × path × budgets).
FARM_ANSWER_EXAMPLES = 400


@settings(
    max_examples=FARM_ANSWER_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    answer=answers(),
    path=st.sampled_from(["submit", "poll", "relayed", "direct"]),
    budgets=WALKS,
    attempt_seconds=st.sampled_from([0.1, 1.0, 40.0, 1000.0]),
    before=st.none() | st.sampled_from([DOWN, CRASH, SLOW]),
)
def test_farm_answers_never_raise_off_the_tree_and_busy_ones_cost_nothing(
    answer: Answer,
    path: str,
    budgets: dict[str, float | None],
    attempt_seconds: float,
    before: BaseException | None,
) -> None:
    error = asyncio.run(through_client(path, answer))
    busy = busy_on(answer, path)
    if error is None:  # a 2xx body that happened to be a chat completion
        assert not busy
        return
    assert isinstance(error, LLMError), repr(error)  # never an unexpected exception
    pause = getattr(error, "retry_after", None)
    assert pause is None or (math.isfinite(pause) and pause >= 0)
    reason = retryable_reason(error)
    if path == "relayed" and answer.status < 300:
        return  # a succeeded job: the backend's 2xx is decoded, not a status answer
    if busy:
        assert reason in BUSY_REASONS, (path, answer, error)
    if busy and answer.paused:  # the pause it named travels with it, to cool the target
        assert pause is not None, (path, answer, error)
    if reason not in BUSY_REASONS:
        return
    # Through the walk: the busy target answers the same way every time it is asked;
    # ``before`` is what another target answered first (charged, a hop spent).
    targets = (A,) if before is None else (B, A)
    world = World(answers={A.id: [error] * 500}, attempt_seconds=attempt_seconds)
    if before is not None:
        world.answers[B.id] = [before]
    done, state = drive(plan(*targets, **budgets), world)
    busy_records = [r for r in state.records if r.target == A.id]
    assert all(r.outcome is Outcome.NEUTRAL for r in busy_records)  # never charged
    assert isinstance(done, Stop)
    if before is None:
        assert busy_records  # the only target was asked
    if state.records[-1].target == A.id:  # the walk ended on the busy answer: released
        assert decide(done.error).verdict is Verdict.RELEASE, done.error
        assert not isinstance(done.error, DeadlineExceeded)
    if busy_records and pause is not None and pause > 0:
        # it named its pause: the target cools fleet-wide for it, within the cap
        # (MEMORY_RETRY_AFTER_MAX_SECONDS), and the walk moves on, never asking it again
        p = plan(*targets, **budgets)
        judged = judge_attempt(
            p,
            A,
            error,
            cap=30.0,
            cap_source="wall",
            elapsed=0.1,
            guard_expired=False,
            min_slice=30.0,
        )
        cap_ms = p.config.gateway.retry_after_max_ms
        assert judged.cool_ms == min(math.ceil(pause * 1000), cap_ms) > 0
        assert A in state.resting
        assert world.attempts.count(A.id) == 1


def test_the_oracle_never_uses_a_status_that_rejects_a_bad_request() -> None:
    assert not NOT_BUSY_STATUSES & {404, 409, 423, 429, 500, 502, 503, 504, 507, 529}


QUIET_OR_LOUD = [
    pytest.param(
        plan(A, wall_seconds=2.0, slot_wait_seconds=30.0, slot_poll_seconds=5.0),
        World(answers={A.id: [RATE] * 9}, attempt_seconds=0.5),
        False,
        id="too-little-left-for-another-try",
    ),
    pytest.param(
        plan(A, B, deadline=1.0),
        World(answers={A.id: [RATE] * 9}, attempt_seconds=1.0),
        False,
        id="the-callers-deadline",
    ),
    pytest.param(
        plan(A, slot_wait_seconds=3.0), World(answers={A.id: [RATE] * 9}), True, id="whole-wait"
    ),
    pytest.param(
        plan(A, B, wall_seconds=1.0),
        World(answers={A.id: [RATE] * 9}, attempt_seconds=1.0),
        True,
        id="the-routes-wall",
    ),
]


@pytest.mark.parametrize(("p", "world", "pages"), QUIET_OR_LOUD)
def test_a_busy_ending_pages_only_when_the_farm_stayed_busy_for_the_wait_or_the_wall(
    p: WalkPlan, world: World, pages: bool
) -> None:
    """The wait ran its whole slot-wait budget (or the route's wall): the farm is busy,
    the admins hear of it. The caller's deadline or too little time left for another try
    ended it first: the run is released quietly (an info event)."""
    done, _ = drive(p, world)
    assert isinstance(done, Stop)
    assert isinstance(done.error, CapacityWaitTimeout)
    (note,) = done.notes
    assert note.type == EventType.CAPACITY_WAIT_TIMEOUT
    assert page_decision(RoutingEvent(note.type, "w", **note.fields)) is pages
    if not pages:
        assert (note.fields["admin_actionable"], note.fields["severity"]) == (False, "info")
