"""Canary strings for the no-text-in-admin-outputs suites (§11, §14), and a farm walk that
puts them everywhere a farm can.

Every canary is unique to these suites, so finding one in a log line, a Sentry envelope, a
metrics scrape, an admin page or a command's admin output means it came from the input the
test planted it in. :func:`leaks` names the canaries a text holds (a card number is looked
for with and without its spaces).
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx
import orjson
from redis.asyncio import Redis

from llm_client import (
    EMBEDDING,
    AttemptCounter,
    BreakerConfig,
    BreakerStore,
    ClientFactory,
    EjectionConfig,
    EventSink,
    EventType,
    GatewayConfig,
    OutlierStore,
    RedisEventLog,
    RouteDefaults,
    RoutingEvent,
    Walker,
    WalkerConfig,
)
from llm_client._routing.routes import parse_routes
from memory_worker.consolidation.routed import RoutedModels
from memory_worker.deadlines import deadline_after
from memory_worker.farmsim import FarmSimulator, Fault, FaultKind
from memory_worker.keys import Keys
from memory_worker.logs import configure
from memory_worker.paging.reports import AdminReporter, PagedLog
from memory_worker.settings import Settings
from tests.support.simulator import sim_config

#: Message text a user wrote.
MESSAGE = "canary-msg-4c1e I am allergic to walnuts"
#: A password inside message text.
PASSWORD = "Kx9canarypw2b7d"
#: A card number inside message text (Luhn-valid).
CARD_NUMBER = "4539 1488 0343 6467"
#: A card's fact text.
CARD_TEXT = "canary-card-8d2a Alice keeps bees on the roof"
#: A retraction's reason, as an operator typed it.
REASON = "canary-reason-61f0 she told me in confidence"
#: A sender's name.
SENDER = "canary-sender-3b9e"
#: A Redis password (in ``REDIS_URL``).
REDIS_PASSWORD = "canaryredispw5e7a"
#: A console token (``MEMORY_CONSOLE_TOKEN``).
CONSOLE_TOKEN = "canary-console-token-0d4c9a"
#: A read-only console token (``MEMORY_CONSOLE_READ_TOKEN``).
READ_TOKEN = "canary-read-token-7a13f2"

#: The texts a chat message carries in these suites.
MESSAGE_TEXTS = [
    MESSAGE,
    f"my password is {PASSWORD}",
    f"my card is {CARD_NUMBER}",
]

#: What must never be found (fragments: a masked or cut text still shows a leak).
CANARIES = [
    "canary-msg-4c1e",
    "walnuts",
    PASSWORD,
    CARD_NUMBER,
    CARD_NUMBER.replace(" ", ""),
    "canary-card-8d2a",
    "keeps bees",
    "canary-reason-61f0",
    "in confidence",
    SENDER,
    REDIS_PASSWORD,
    CONSOLE_TOKEN,
    READ_TOKEN,
]


def leaks(text: str | bytes) -> list[str]:
    """The canaries found in ``text``."""
    found = text.decode(errors="replace") if isinstance(text, bytes) else text
    return [canary for canary in CANARIES if canary in found]


def leaking_lines(text: str) -> list[str]:
    """The lines of ``text`` that hold a canary."""
    return [line for line in text.splitlines() if leaks(line)]


@contextlib.contextmanager
def log_lines() -> Iterator[io.StringIO]:
    """Every log record of the process meanwhile, rendered as the CLI's processes write them
    (:func:`memory_worker.logs.configure`, JSON, level DEBUG: the most an operator can turn
    on), into the buffer yielded; the logging set-up before is restored on the way out."""
    root = logging.getLogger()
    names = ("memory_worker", "llm_client", "httpx", "httpcore", "aiohttp.access", "arq.worker")
    loggers = [logging.getLogger(name) for name in names]
    saved = (root.handlers[:], root.level, [(lg.level, lg.filters[:]) for lg in loggers])
    buffer = io.StringIO()
    configure("DEBUG", "json")
    for logger in loggers[:2]:
        logger.setLevel(logging.DEBUG)
    handler = root.handlers[0]
    assert isinstance(handler, logging.StreamHandler)
    handler.setStream(buffer)
    try:
        yield buffer
    finally:
        root.handlers[:], root.level = saved[0], saved[1]
        for logger, (level, filters) in zip(loggers, saved[2], strict=True):
            logger.setLevel(level)
            logger.filters[:] = filters


async def stored_text(redis: Redis, prefix: str) -> str:
    """Every key of this test's deployment (its key prefix) and its value, read by its type
    (a DUMP may compress a long value), as one text to search."""
    parts: list[str] = []
    async for key in redis.scan_iter(match=f"*{prefix}*", count=1000):
        kind = (await redis.type(key)).decode()
        value: Any
        if kind == "string":
            value = await redis.get(key)
        elif kind == "hash":
            value = await redis.hgetall(key)  # type: ignore[misc]
        elif kind == "list":
            value = await redis.lrange(key, 0, -1)  # type: ignore[misc]
        elif kind == "set":
            value = await redis.smembers(key)  # type: ignore[misc]
        elif kind == "zset":
            value = await redis.zrange(key, 0, -1, withscores=True)
        elif kind == "stream":
            value = await redis.xrange(key)
        else:
            value = await redis.dump(key)
        parts.append(f"{key!r} {kind} {value!r}")
    return "\n".join(parts)


# --- a farm that echoes the prompt and the secrets in its errors ----------------------------

WF = "memory_extraction"
#: The routed request: the chat's text in the prompt.
REQUEST = {"messages": [{"role": "user", "content": " ".join(MESSAGE_TEXTS)}]}
#: What a farm says when it echoes its input: the message text alone (no scrubber knows it
#: for what it is), and the secrets with it (a scrubber may blank the whole string).
ECHO_TEXT = f"cannot process {MESSAGE}"
ECHO = f"cannot process {' '.join(MESSAGE_TEXTS)}; redis://:{REDIS_PASSWORD}@db:6379/0"
#: An extraction request as the worker sends it: the chat's known cards and the senders'
#: names beside their (masked) messages in the prompt.
PROMPT_REQUEST = {
    "messages": [
        {"role": "system", "content": "Extract durable facts as JSON."},
        {
            "role": "user",
            "content": f"Known facts:\n- {CARD_TEXT}\n\nChat:\n{SENDER}: {MESSAGE}\n"
            f"{SENDER}: my password is [redacted]",
        },
    ]
}
#: A farm quoting that prompt back in a 400 (as JSON, the way a validation error does).
PROMPT_ECHO = f"invalid request body: {orjson.dumps(PROMPT_REQUEST).decode()}"
#: An embedder refusing a card's text, quoting it.
EMBED_ECHO = f"input 0 too long for the model: '{CARD_TEXT}'"

#: The faults, each on its own target (``llm-NAME/m``): a flaky node (ejected), a busy node
#: answering 503 with a Retry-After (cooling), a node at its rate limit whose Retry-After is
#: the echo itself (a header a farm wrote its own way), and two nodes that are down.
FAULTS = {
    "flaky": Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=ECHO_TEXT, share=0.6),
    "busy": Fault(
        kind=FaultKind.SUBMIT_STATUS, status_code=503, message=f"busy: {ECHO_TEXT}", seconds=1
    ),
    "limited": Fault(
        kind=FaultKind.SUBMIT_STATUS, status_code=429, message=ECHO, retry_after=ECHO_TEXT
    ),
    "down": Fault(kind=FaultKind.JOB_FAILED_STRING, code="UPSTREAM_ERROR", message=ECHO),
    "broken": Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=ECHO_TEXT),
}


#: The flaky tier goes on past ``calls`` until the flaky target is ejected, up to this many
#: walks: load sharing weighs a failing target down (success ratio), so the flaky one gets
#: about a third of the walks and ``calls`` of them may leave it under the volume ejection
#: needs; a target never ejected in this many walks still fails the tests that want it.
EJECTION_CALLS_CAP = 200
EJECTED = EventType.TARGET_EJECTED


async def echoing_farm_walks(
    redis: Redis,
    key_prefix: str,
    sim: FarmSimulator,
    *,
    calls: int = 40,
    reporter: AdminReporter | None = None,
) -> list[RoutingEvent]:
    """``calls`` routed chats over a tier of the flaky target and a healthy one (the flaky one
    is ejected), then ``calls`` over a tier of the busy, limited and down ones and a healthy
    one, then 6 over the two down ones alone (every walk fails: the admin pages); outlier ejection, breakers and the event log in ``redis`` (behind ``reporter``, the
    admin reporter, as the worker's is). The events they left."""
    for service, fault in FAULTS.items():
        sim.set_fault(f"llm-{service}", fault)
    keys = Keys(key_prefix)
    ejection = EjectionConfig(
        window_seconds=30, refresh_seconds=0, failure_percentage_min_volume=10
    )
    stream = RedisEventLog(redis, keys)
    events: EventSink = stream if reporter is None else PagedLog(stream, reporter)
    async with httpx.AsyncClient() as http:
        clients = ClientFactory(
            sim_config(sim, request_timeout=5, task_timeout=5, capacity_wait=0.0, job_poll=0.01),
            http=http,
        )
        try:
            tiers = [(["flaky", "ok"], calls), (["busy", "limited", "down", "ok"], calls)]
            tiers.append((["broken", "down"], 6))  # every walk fails: exhausted, then open
            for tier, count in tiers:
                targets: list[dict[str, Any]] = [
                    {"provider": f"llm-{s}", "service": f"llm-{s}", "model": "m"}
                    | {"base_url": sim.base_url, "tier": 0}
                    for s in tier
                ]
                walker = Walker(
                    parse_routes({"routes": {WF: {"targets": targets}}}, RouteDefaults()),
                    BreakerStore(redis, keys, BreakerConfig(failure_threshold=3)),
                    events,
                    clients,
                    WalkerConfig(
                        probe_interval_seconds=60, gateway=GatewayConfig(balance="weighted_random")
                    ),
                    outliers=OutlierStore(redis, keys, ejection),
                )
                for n in range(EJECTION_CALLS_CAP if "flaky" in tier else count):
                    if n >= count and await stream.recent(limit=1, types=[EJECTED]):
                        break  # the flaky one was ejected (see EJECTION_CALLS_CAP)
                    with contextlib.suppress(Exception):  # a failed walk is one outcome wanted
                        await walker.chat(WF, REQUEST, deadline=deadline_after(3))
        finally:
            await clients.aclose()
    return await stream.recent(limit=1000)


@contextlib.asynccontextmanager
async def echoing_models(
    redis: Redis, settings: Settings, sim: FarmSimulator
) -> AsyncIterator[RoutedModels]:
    """The worker's routed chat call and embedder (:class:`RoutedModels`) on a farm whose
    extraction target (``llm-echo/m``) answers 400 quoting :data:`PROMPT_REQUEST` back and
    whose embedder (``embed-echo/e5``) fails quoting :data:`CARD_TEXT`."""
    sim.set_fault(
        "llm-echo", Fault(kind=FaultKind.SUBMIT_STATUS, status_code=400, message=PROMPT_ECHO)
    )
    sim.set_fault(
        "embed-echo", Fault(kind=FaultKind.JOB_FAILED, code="UPSTREAM_ERROR", message=EMBED_ECHO)
    )
    chat = {"provider": "llm-echo", "service": "llm-echo", "model": "m"}
    embed = {"provider": "embed-echo", "service": "embed-echo", "model": "e5"}
    routes = parse_routes(
        {
            "routes": {
                WF: {"targets": [chat | {"base_url": sim.base_url}]},
                EMBEDDING: {"targets": [embed | {"base_url": sim.base_url, "endpoint": "encode"}]},
            }
        },
        RouteDefaults(),
    )
    keys = Keys(settings.key_prefix)
    async with httpx.AsyncClient() as http:
        clients = ClientFactory(
            sim_config(sim, request_timeout=5, task_timeout=5, capacity_wait=0.0, job_poll=0.01),
            http=http,
        )
        events = RedisEventLog(redis, keys)
        walker = Walker(routes, BreakerStore(redis, keys, BreakerConfig()), events, clients)
        try:
            yield RoutedModels(walker, AttemptCounter(redis, keys), settings)
        finally:
            await clients.aclose()
