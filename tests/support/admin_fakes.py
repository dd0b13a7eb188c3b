"""A fake Telegram Bot API (and webhook) on loopback that records every request."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Received:
    path: str
    token: str | None
    json: dict[str, Any]


@dataclass
class FakeTelegram:
    """``POST /bot<token>/sendMessage`` and ``POST /hook``; queued failure answers first."""

    host: str = "127.0.0.1"
    received: list[Received] = field(default_factory=list)
    #: Answers to give before succeeding: (status, json body).
    failures: list[tuple[int, dict[str, Any]]] = field(default_factory=list)
    hook_failures: list[int] = field(default_factory=list)
    base_url: str = ""
    _runner: web.AppRunner | None = None

    async def start(self) -> FakeTelegram:
        app = web.Application()
        app.router.add_post("/bot{token}/sendMessage", self._send)
        app.router.add_post("/hook", self._hook)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, 0)
        await site.start()
        port = self._runner.addresses[0][1]
        self.base_url = f"http://{self.host}:{port}"
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    async def _send(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.received.append(Received(request.path, request.match_info["token"], body))
        if self.failures:
            status, answer = self.failures.pop(0)
            return web.json_response(answer, status=status)
        return web.json_response({"ok": True, "result": {"message_id": len(self.received)}})

    async def _hook(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.received.append(Received(request.path, None, body))
        if self.hook_failures:
            return web.json_response({"error": "nope"}, status=self.hook_failures.pop(0))
        return web.json_response({"ok": True})

    def messages(self) -> list[Received]:
        return [r for r in self.received if r.path.endswith("/sendMessage")]

    def hooks(self) -> list[Received]:
        return [r for r in self.received if r.path == "/hook"]
