"""Count a Valkey's commands by origin with MONITOR (benchmarks' breakdown of commands per run).

:class:`CommandTally` runs ``MONITOR`` on its own connection and sorts every command
into a readable bucket: ``EVALSHA`` calls by the first key they name (prefix and ids
stripped, so ``{p q}:run:<id>`` → ``run_store:<script>``), plain commands by name and
key family. MONITOR slows the server a little; use it to count, never to time.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections import Counter
from typing import Any

from redis.asyncio import Redis

_ID = re.compile(r"[0-9a-f]{12,}|\d{3,}")


def family(key: str) -> str:
    """A key without its prefix tag and ids: ``{b1:q}:run:r0ab…`` → ``q:run:*``."""
    key = re.sub(r"^\{[^}:]*:", "{", key)
    key = key.replace("{", "").replace("}", "")
    return _ID.sub("*", key)


def bucket(args: list[str], scripts: dict[str, str]) -> str:
    """A short label for one monitored command."""
    if not args:
        return "?"
    name = args[0].upper()
    if name in ("EVALSHA", "EVAL") and len(args) >= 3:
        label = scripts.get(args[1].lower())
        keys = int(args[2]) if args[2].isdigit() else 0
        first = family(args[3]) if keys else "-"
        return f"{name} {label or first}"
    if len(args) >= 2 and name not in (
        "PING",
        "INFO",
        "CLIENT",
        "SCRIPT",
        "SELECT",
        "MULTI",
        "EXEC",
    ):
        return f"{name} {family(args[1])}"
    return name


class CommandTally:
    """Collects ``(client address, label)`` for every command while running."""

    def __init__(self, url: str, scripts: dict[str, str] | None = None) -> None:
        self.url = url
        self.scripts = scripts or {}
        self.counts: Counter[str] = Counter()
        self.total = 0
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._client: Any = None

    async def __aenter__(self) -> CommandTally:
        self._client = Redis.from_url(self.url, decode_responses=True)
        self._task = asyncio.create_task(self._listen())
        await asyncio.wait_for(self._ready.wait(), 10)
        return self

    async def _listen(self) -> None:
        conn = self._client.connection_pool.make_connection()
        await conn.connect()
        await conn.send_command("MONITOR")
        await conn.read_response()  # OK
        self._ready.set()
        try:
            while True:
                line = await conn.read_response()
                text = line.decode() if isinstance(line, bytes) else str(line)
                head, _, rest = text.partition('"')
                if "lua]" in head:
                    continue  # commands inside a script: counted as the script
                self.counts[bucket(_split('"' + rest), self.scripts)] += 1
                self.total += 1
        finally:
            await conn.disconnect()

    async def __aexit__(self, *exc: object) -> None:
        await asyncio.sleep(0.2)  # let the monitor stream catch up
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        with contextlib.suppress(Exception):
            await self._client.aclose()

    def table(self, per: int, *, top: int = 40) -> str:
        lines = [f"{'commands':>9} {'per run':>8}  origin"]
        for label, n in self.counts.most_common(top):
            lines.append(f"{n:>9} {n / per:>8.2f}  {label}")
        cards = sum(n for label, n in self.counts.items() if is_card(label))
        lines.append(f"{self.total:>9} {self.total / per:>8.2f}  total")
        lines.append(f"{cards:>9} {cards / per:>8.2f}  of which card-store keys (cluster-bound)")
        return "\n".join(lines)


def is_card(label: str) -> bool:
    """A command on the card store's keys (``{P chat:<id>}``, the chat registry, cards.*)."""
    return " chat:" in label or "chats" in label or "cards." in label


def _split(command: str) -> list[str]:
    """MONITOR's quoted argument list → plain strings (enough for labels)."""
    return [m.group(1) for m in re.finditer(r'"((?:[^"\\]|\\.)*)"', command)]


#: The names :func:`record_script_names` records (one patch per process, however often asked).
_SCRIPT_NAMES: dict[str, str] | None = None


def record_script_names() -> dict[str, str]:
    """Name every script registered from now on (``module.attribute``), by SHA1.

    Patches ``register_script`` of redis-py's async client once per process (a second call
    returns the same names: a patch over the patch would name its own frame); the names come
    from the registering line (``self._claim = redis.register_script(...)`` →
    ``run_store._claim``).
    """
    import hashlib
    import inspect

    from redis.asyncio import client as async_client

    global _SCRIPT_NAMES
    if _SCRIPT_NAMES is not None:
        return _SCRIPT_NAMES
    names: dict[str, str] = {}
    _SCRIPT_NAMES = names
    original = async_client.Redis.register_script

    def register(self: Any, script: Any) -> Any:
        frame = inspect.stack()[1]
        line = (frame.code_context or [""])[0]
        found = re.search(r"(\w+)\s*=\s*\w+\.register_script", line)
        module = frame.frame.f_globals.get("__name__", "?").rsplit(".", 1)[-1]
        if module in ("store", "__init__"):
            module = frame.frame.f_globals.get("__name__", "?").split(".")[-2]
        text = script.encode() if isinstance(script, str) else script
        names[hashlib.sha1(text).hexdigest()] = f"{module}.{found.group(1) if found else '?'}"
        return original(self, script)

    async_client.Redis.register_script = register  # type: ignore[method-assign]
    return names
