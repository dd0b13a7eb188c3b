"""Redis connections: URL parsing (incl. Sentinel and TLS) and the embedded default.

``open_redis(settings)`` is the one way the project gets a client:

- ``REDIS_URL`` set → that server (``redis://``, ``rediss://``, ``unix://``,
  ``redis+sentinel://host:port[,host:port]/<master>[/db]``);
- unset → the embedded Valkey in ``<data_dir>/valkey`` (started or reused, password in
  the URL, left running for the other processes of the deployment).

Clients are ``redis.asyncio.Redis`` (a bot's install has no arq); a worker hands arq its
connection pool (``memory_worker.worker.main.create_worker``).

The card store may live elsewhere (§2): ``cards_client(settings, queue)`` is
the queue's client when ``MEMORY_CARDS_URL`` is unset, else a client of that URL — a
``redis.asyncio.cluster.RedisCluster`` for ``redis+cluster://h1:p1[,h2:p2…]``.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast
from urllib.parse import parse_qs, unquote, urlparse

from redis.asyncio import Redis
from redis.asyncio.cluster import ClusterNode, ClusterPipeline, RedisCluster
from redis.asyncio.connection import Connection
from redis.asyncio.sentinel import Sentinel

from memory_worker.errors import RedisUrlError
from memory_worker.logs import get_logger
from memory_worker.settings import Settings
from memory_worker.settings.types import reveal
from memory_worker.storage.embedded import EmbeddedValkey
from memory_worker.storage.faults import (
    client_fault,
    is_transient_fault,
    store_answer,
    store_edge,
)
from memory_worker.storage.lean_send import LeanConnection
from memory_worker.storage.private_socket import FollowingUnixConnection

T = TypeVar("T")

log = get_logger(__name__)


@dataclass(frozen=True)
class SentinelUrl:
    sentinels: list[tuple[str, int]]
    master: str
    db: int
    password: str | None
    username: str | None
    ssl: bool


def _addresses(hosts: str, default_port: str, what: str) -> list[tuple[str, int]]:
    """``h1:p1,h2:p2,…`` as (host, port) pairs; a lone host gets ``default_port``."""
    addresses: list[tuple[str, int]] = []
    for part in hosts.split(","):
        if not part:
            continue
        host, _, port = part.rpartition(":")
        if not host:
            host, port = port, default_port
        try:
            addresses.append((host, int(port)))
        except ValueError as exc:
            raise RedisUrlError(f"bad {what} {part!r}") from exc
    return addresses


def parse_sentinel_url(url: str) -> SentinelUrl:
    """Parse ``redis+sentinel://[user:pass@]h1:p1,h2:p2/<master>[/db]``."""
    parsed = urlparse(url)
    netloc = parsed.netloc
    userinfo, _, hosts = netloc.rpartition("@")
    username: str | None = None
    password: str | None = None
    if userinfo:
        user, _, pwd = userinfo.partition(":")
        username = unquote(user) or None
        password = unquote(pwd) or None
    sentinels = _addresses(hosts, "26379", "sentinel address")
    path = [p for p in parsed.path.split("/") if p]
    if not sentinels or not path:
        raise RedisUrlError("sentinel URL needs hosts and a master name")
    db = int(path[1]) if len(path) > 1 else int(parse_qs(parsed.query).get("db", ["0"])[0])
    return SentinelUrl(
        sentinels=sentinels,
        master=path[0],
        db=db,
        password=password,
        username=username,
        ssl=parsed.scheme.startswith("rediss"),
    )


CLUSTER_SCHEMES = frozenset(
    {"redis+cluster", "rediss+cluster", "valkey+cluster", "valkeys+cluster"}
)

#: A client of the card store: a plain server (often the queue's own) or a cluster.
CardsRedis = Redis | RedisCluster


@dataclass(frozen=True)
class ClusterUrl:
    nodes: list[tuple[str, int]]
    password: str | None
    username: str | None
    ssl: bool


def parse_cluster_url(url: str) -> ClusterUrl:
    """Parse ``redis+cluster://[user:pass@]h1:p1[,h2:p2…][/]`` (any node is a seed)."""
    parsed = urlparse(url)
    userinfo, _, hosts = parsed.netloc.rpartition("@")
    user, _, pwd = userinfo.partition(":")
    nodes = [
        (host.strip("[]"), port) for host, port in _addresses(hosts, "6379", "cluster node address")
    ]
    if not nodes:
        raise RedisUrlError("cluster URL needs at least one host:port")
    return ClusterUrl(
        nodes=nodes,
        password=unquote(pwd) or None,
        username=unquote(user) or None,
        ssl=parsed.scheme.startswith(("rediss", "valkeys")),
    )


def cluster_from_url(url: str, **kwargs: Any) -> RedisCluster:
    """A ``RedisCluster`` client seeded by the URL's nodes (connects on first command)."""
    spec = parse_cluster_url(url)
    options: dict[str, Any] = {
        "socket_connect_timeout": DEFAULT_CONNECT_TIMEOUT,
        "socket_timeout": DEFAULT_SOCKET_TIMEOUT,
        "health_check_interval": 15,
        **kwargs,
    }
    return cast(
        RedisCluster,
        StoreCluster(
            startup_nodes=[ClusterNode(host, port) for host, port in spec.nodes],
            password=spec.password,
            username=spec.username,
            ssl=spec.ssl,
            **options,
        ),
    )


def is_cluster_url(url: str | None) -> bool:
    return bool(url) and urlparse(url or "").scheme in CLUSTER_SCHEMES


def cards_client(settings: Settings, queue: CardsRedis) -> CardsRedis:
    """The card store's client: ``queue`` itself unless ``MEMORY_CARDS_URL`` names another.

    A client this returns other than ``queue`` belongs to the caller (close it).
    """
    url = reveal(settings.cards_url)
    if not url:
        return queue
    if is_cluster_url(url):
        return cluster_from_url(url, **timeout_options(settings))
    return client_from_url(url, **timeout_options(settings))


async def close_cards_client(client: CardsRedis, queue: CardsRedis) -> None:
    """Close a client :func:`cards_client` opened (never the queue's own)."""
    if client is not queue:
        await client.aclose()


#: Timeouts of a client made without settings (the settings' defaults).
DEFAULT_CONNECT_TIMEOUT = 5.0
DEFAULT_SOCKET_TIMEOUT = 10.0


def timeout_options(settings: Settings) -> dict[str, float]:
    """``client_from_url`` keyword arguments: the connect and socket timeouts of ``settings``."""
    return {
        "socket_connect_timeout": settings.redis_connect_timeout_seconds,
        "socket_timeout": settings.redis_socket_timeout_seconds,
    }


def client_from_url(url: str, **kwargs: Any) -> Redis:
    """A client for any supported URL (does not connect yet).

    Every client has a connect and a socket timeout (§7: a black-holed
    Redis must not hang a worker); pass :func:`timeout_options` to use the settings'.
    """
    scheme = urlparse(url).scheme
    options: dict[str, Any] = {
        "socket_connect_timeout": DEFAULT_CONNECT_TIMEOUT,
        "socket_timeout": DEFAULT_SOCKET_TIMEOUT,
        "health_check_interval": 15,
        **kwargs,
    }
    if scheme in {"redis+sentinel", "rediss+sentinel", "sentinel"}:
        spec = parse_sentinel_url(url)
        sentinel = Sentinel(  # type: ignore[no-untyped-call]
            spec.sentinels,
            sentinel_kwargs={
                "password": spec.password,
                "ssl": spec.ssl,
                "socket_connect_timeout": options["socket_connect_timeout"],
                "socket_timeout": options["socket_timeout"],
            },
            ssl=spec.ssl,
            password=spec.password,
            username=spec.username,
            db=spec.db,
            **options,
        )
        return cast(Redis, sentinel.master_for(spec.master, redis_class=Redis))
    if scheme not in {"redis", "rediss", "unix", "valkey", "valkeys"}:
        raise RedisUrlError(f"unsupported REDIS_URL scheme {scheme!r}")
    if scheme.startswith("valkey"):
        url = "redis" + url[len("valkey") :]
    client = cast(Redis, Redis.from_url(url, **options))
    pool = client.connection_pool
    if scheme == "unix":  # the socket's name is resolved on every connect (private_socket)
        pool.connection_class = FollowingUnixConnection
    elif pool.connection_class is Connection:  # plain TCP: no task per command (lean_send)
        pool.connection_class = LeanConnection
    return client


@dataclass
class RedisHandle:
    """A connected client plus the embedded server it may own."""

    client: Redis
    url: str
    embedded: EmbeddedValkey | None = None

    async def close(self, *, stop_embedded: bool = True) -> None:
        await self.client.aclose()
        if stop_embedded and self.embedded is not None:
            self.embedded.stop()


def resolve_url(settings: Settings) -> tuple[str, EmbeddedValkey | None]:
    """REDIS_URL, or the URL of the (started or reused) embedded Valkey."""
    if settings.redis_url is not None:
        return settings.redis_url.get_secret_value(), None
    # detached: the server belongs to the data dir and outlives whichever process started
    # it, so stopping one process never strands the others (the handle's stop() is a no-op);
    # watched: should the server die, this process restarts it on the same port
    server = EmbeddedValkey(settings.valkey_dir).ensure().detach().watch()
    return server.url, server


async def open_redis(settings: Settings, *, url: str | None = None) -> RedisHandle:
    """Connect to Redis (or the embedded Valkey) and check it answers."""
    embedded: EmbeddedValkey | None = None
    if url is None:
        url, embedded = resolve_url(settings)
    client = client_from_url(url, **timeout_options(settings))
    await client.ping()
    return RedisHandle(client=client, url=url, embedded=embedded)


#: Store-write retries log at these failure counts only (then every 64th).
LOG_RETRY_AT = frozenset({1, 2, 4, 8, 16, 32})


def next_failure_count(failures: int, *, iteration_ok: bool) -> int:
    """The poll loop's Redis-failure counter: +1 on a failed iteration, 0 on a good one.

    Only the iteration's *own* Redis calls count; errors of finished job tasks
    (stale: they happened while Redis was away) are logged, never counted.
    """
    return 0 if iteration_ok else failures + 1


def backoff_delay(failures: int, *, base: float, cap: float) -> float:
    """Sleep before retry number ``failures`` (1-based): ``base · 2^(failures-1)``, capped.

    One schedule for the worker loop riding out Redis and for retried store writes.
    """
    if failures <= 0:
        return 0.0
    return float(min(base * 2 ** min(failures - 1, 30), cap))


async def retry_store_write(
    what: str,
    write: Callable[[], Awaitable[T]],
    *,
    cap: float,
    give_up_after: float | None = None,
    on_attempt: Callable[[], None] | None = None,
) -> T:
    """Retry ``write`` on a transient store fault with capped back-off until it lands (§7).

    For writes that are safe to repeat: fenced by a lease token (a repeat of a write
    that landed answers "not yours") or idempotent (a run's card write). An outage is
    never evidence against the work, so the default is to wait for Redis as long as it
    takes; ``give_up_after`` (seconds) bounds it where the caller cannot wait (shutdown)
    and re-raises the last error. An answer no retry heals (the store refusing writes,
    corrupt data, a script's error: :func:`store_answer`) is raised at once, as our typed
    error. ``on_attempt`` is called before each attempt (a retrying write is progress, for
    the worker's watchdog).
    """
    failures = 0
    end = None if give_up_after is None else time.monotonic() + give_up_after
    while True:
        if on_attempt is not None:
            on_attempt()
        try:
            return await write()
        except Exception as exc:
            answer = store_answer(exc)
            if answer is not None and answer is not exc:
                raise answer from exc
            if not is_transient_fault(exc):
                raise
            failures += 1
            delay = backoff_delay(failures, base=0.05, cap=cap)
            if end is not None and time.monotonic() + delay > end:
                raise
            if failures in LOG_RETRY_AT or failures % 64 == 0:
                log.warning(
                    "store_write_retry",
                    write=what,
                    error=type(exc).__name__,
                    failures=failures,
                    retry_in=round(delay, 2),
                )
            await asyncio.sleep(delay)


class StorePipeline(ClusterPipeline):
    """A cluster pipeline behind :func:`store_edge`, results included (``raise_on_error=False``
    hands back the errors as values: each foreign one is mapped too)."""

    async def initialize(self) -> ClusterPipeline:
        with store_edge():
            return await super().initialize()

    async def execute(
        self, raise_on_error: bool = True, allow_redirections: bool = True
    ) -> list[Any]:
        with store_edge():
            results = await super().execute(raise_on_error, allow_redirections)
        return [(client_fault(r) or r) if isinstance(r, BaseException) else r for r in results]


class StoreCluster(RedisCluster):
    """The card store's cluster client: every command, script and pipeline behind
    :func:`store_edge`, so a failover reaches the tick as a store fault."""

    async def initialize(self) -> RedisCluster:
        with store_edge():
            return await super().initialize()

    async def execute_command(self, *args: Any, **kwargs: Any) -> Any:
        with store_edge():
            return await super().execute_command(*args, **kwargs)

    async def aclose(self) -> None:
        """Close every node's connections, always: redis-py skips it when a failure left the
        client to be initialised again, yet commands in flight meanwhile reconnected nodes
        it had closed — they were left open (``Unclosed ClusterNode`` at exit)."""
        await super().aclose()
        await self.nodes_manager.aclose()
        await self.nodes_manager.aclose("startup_nodes")

    def pipeline(
        self, transaction: Any | None = None, shard_hint: Any | None = None
    ) -> ClusterPipeline:
        super().pipeline(transaction, shard_hint)  # its argument checks
        return StorePipeline(self)  # type: ignore[abstract]  # as redis-py builds its own


async def awaited(value: Awaitable[T] | T) -> T:
    """Await redis-py's ``Awaitable[X] | X`` command results in a typed way."""
    if inspect.isawaitable(value):
        return cast(T, await value)
    return value
