"""The operator console's HTTP side (§15): routes, security headers, CSRF, actions.

Mounted by :func:`add_console` onto the aiohttp application of ``memory-worker
serve`` (the same server as ``/metrics``). Pages are GETs rendered from Jinja2
templates with autoescape on; the data comes from :mod:`memory_worker.console.data`.

Security:

- every response carries a strict Content-Security-Policy (no script at all,
  styles only from ``/static``), ``nosniff``, ``no-referrer``, ``no-store`` and
  ``frame-ancestors 'none'``;
- reads: on loopback the pages are open; off loopback (or with a read token set) every page
  needs a token — a login cookie or a bearer header (:mod:`memory_worker.console.gate`),
  and :func:`add_console` refuses (:class:`~memory_worker.errors.ConsoleExposedError`) to
  mount a console off loopback with no token configured;
- actions (breaker reset, replay, a run's cancel or replay, forget, a card's retract or
  correct) are POSTs that need ``MEMORY_CONSOLE_TOKEN``
  typed into the form and a CSRF token (double submit: an HttpOnly
  ``SameSite=Strict`` cookie and the same value in a hidden field). Without a
  configured token the console is read-only: the forms are not rendered and
  every action answers 403 without touching Redis. A refused action is logged
  (no token value) and changes nothing; a done action leaves an audit event on
  the routing-event stream. The read token never opens an action. Wrong tokens
  (login, bearer, action) are rate-limited per client address: 429 + Retry-After;
- no page renders a secret (settings are masked) and card or message text only
  appears in the memory browser, which ``MEMORY_CONSOLE_SHOW_MEMORY=0`` turns off.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import resources
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

import jinja2
from aiohttp import web
from redis.asyncio import Redis
from redis.exceptions import RedisError

from memory_worker.console import data, docs, explain, memory_data, runs_data
from memory_worker.console.auth import (
    CSRF_COOKIE,
    csrf_pair_ok,
    exposure_problem,
    is_loopback,
    valid_csrf,
)
from memory_worker.console.gate import Gate
from memory_worker.errors import (
    CardNotFound,
    CardNotLive,
    ConsoleExposedError,
    EmbeddingUnavailable,
    ForgetInputError,
    InvalidCorrection,
    StoredRunUnreadable,
    StoreError,
)
from memory_worker.keys import Keys
from memory_worker.logs import get_logger
from memory_worker.models import SKIP_MEANING, Run, RunStatus
from memory_worker.ops.audit import AUDIT_WORKFLOW, audit
from memory_worker.paging.notifiers import configured_channels
from memory_worker.paging.policy import age_text, clock_text, unconfigured_warning
from memory_worker.privacy.forget import ForgetResult, ForgetScope
from memory_worker.runs.replay import (
    FILTER_SCOPES,
    ReplayFilter,
    ReplayPreview,
    ReplayScope,
    parse_rate,
    parse_when,
)
from memory_worker.runs.workers import fleet_workers
from memory_worker.settings import Settings
from memory_worker.storage.connections import cards_client, close_cards_client
from memory_worker.upkeep.run_actions import (
    CancelOutcome,
    RunActions,
    cancel_preview,
    cancel_refusal,
    replay_refusal,
)
from memory_worker.wiring import (
    breaker_store,
    card_store_on,
    forgetter,
    replay_store,
    reset_target,
    run_actions,
)

if TYPE_CHECKING:
    from memory_worker.api import MemoryQueue
    from memory_worker.cards import Card

log = get_logger(__name__)

CSP = (
    "default-src 'none'; style-src 'self'; img-src 'self' data:; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}
#: The overview reloads itself this often (a meta refresh: works without JavaScript).
REFRESH_SECONDS = 5
#: Who the audit events of a console action name as the actor.
ACTOR = "console"
#: What the run page's forms may do to one run (§13).
RUN_ACTIONS = ("cancel", "replay")
#: The statuses a run may be replayed by id from (a failed one only with attempts to reset).
REPLAYABLE = (RunStatus.FAILED, RunStatus.SKIPPED, RunStatus.CANCELLED)


@dataclass(frozen=True, slots=True)
class RunPreview:
    """What a run action would do: the action, whether it can, one sentence."""

    action: str
    allowed: bool
    what: str


#: What the card page's forms may do to one card.
CARD_ACTIONS = ("retract", "correct")
#: What a forget's audit event counts.
_FORGET_COUNTED = ("cards", "vectors", "episodes", "links", "runs", "messages")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _fmt_ms(ms: float | None) -> str:
    return data.iso(ms) or "-"


def _fmt_dt(moment: datetime | None) -> str:
    if moment is None:
        return "-"
    return clock_text(moment.timestamp() * 1000)


def _fmt_age(seconds: float | None) -> str:
    return "-" if seconds is None else age_text(seconds, detailed=True)


def environment() -> jinja2.Environment:
    """The template environment: package templates, autoescape on for every template."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("memory_worker.console", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["ms"] = _fmt_ms
    env.filters["dt"] = _fmt_dt
    env.filters["age"] = _fmt_age
    env.globals["advice"] = explain.advice
    env.globals["runbook_href"] = explain.runbook_href
    env.globals["next_probe_meaning"] = explain.NEXT_PROBE_MEANING
    env.globals["cooldown_meaning"] = explain.COOLDOWN_MEANING
    env.globals["skip_meaning"] = SKIP_MEANING
    return env


class Console:
    """The console's handlers over one Redis client and the settings."""

    def __init__(
        self, redis: Redis, settings: Settings, *, clock: Callable[[], float] = time.time
    ) -> None:
        self.redis = redis
        self.settings = settings
        self.gate = Gate(self.render, settings, clock)
        self.keys = Keys(settings.key_prefix)
        self.cards = cards_client(settings, redis)  # MEMORY_CARDS_URL, else ``redis``
        self.card_store = card_store_on(self.cards, settings)
        self.forgetter = forgetter(redis, settings, self.cards)
        self.env = environment()
        self.route_config = data.load_console_routes(settings)
        self.routes = data.route_targets(self.route_config)
        self.targets = list(dict.fromkeys(t for ts in self.routes.values() for t in ts))
        self.css = (
            resources.files("memory_worker.console") / "static" / "console.css"
        ).read_bytes()

    # --- plumbing -------------------------------------------------------------------------------
    def host_allowed(self, host: str | None) -> bool:
        """Bound to loopback, answer only loopback names: a web page the operator visits
        cannot reach the console through DNS rebinding (another bind address: no check)."""
        if not is_loopback(self.settings.serve_host):
            return True
        return is_loopback(host)

    @property
    def actions_enabled(self) -> bool:
        token = self.settings.console_token
        return token is not None and bool(token.get_secret_value())

    async def render(
        self,
        request: web.Request,
        template: str,
        *,
        status: int = 200,
        banner: data.Banner | bool | None = True,
        **context: Any,
    ) -> web.Response:
        csrf = request.cookies.get(CSRF_COOKIE) or ""
        fresh = not valid_csrf(csrf)
        if fresh:
            csrf = secrets.token_urlsafe(24)
        if banner is True:
            try:
                banner = await data.banner_data(self.redis, self.settings, self.routes)
            except (RedisError, OSError, TimeoutError):
                banner = None  # pages that need Redis answer 503 themselves (see _guarded)
        body = self.env.get_template(template).render(
            banner=banner or None,
            csrf=csrf,
            actions=self.actions_enabled,
            signed_in=self.gate.closed and self.gate.session(request) is not None,
            show_memory=self.settings.console_show_memory,
            path=request.path,
            now_ms=int(time.time() * 1000),
            retention_days=self.settings.retired_run_message_retention_days,
            runbook_url=self.settings.console_runbook_url,
            **context,
        )
        response = web.Response(text=body, status=status, content_type="text/html", charset="utf-8")
        if fresh:
            response.set_cookie(
                CSRF_COOKIE, csrf, httponly=True, samesite="Strict", path="/", max_age=86_400
            )
        return response

    async def render_form(
        self, request: web.Request, template: str, problems: list[str], **context: Any
    ) -> web.Response:
        """A page with a query form: 400 when its query had problems (the page lists them)."""
        status = 400 if problems else 200
        return await self.render(request, template, status=status, problems=problems, **context)

    async def refuse(
        self, request: web.Request, action: str, why: str, *, retry_after: int = 0
    ) -> web.Response:
        log.warning("console.action_refused", action=action, why=why)
        response = await self.render(
            request,
            "refused.html.j2",
            status=429 if retry_after else 403,
            banner=False,
            action=action,
            why=why,
        )
        if retry_after:
            response.headers["Retry-After"] = str(retry_after)
        return response

    async def authorize(self, request: web.Request, action: str) -> web.Response | dict[str, str]:
        """The action's form fields, or a 403 page (read-only console, bad CSRF, bad token),
        or 429 while the client address must wait after wrong tokens."""
        if not self.actions_enabled:
            return await self.refuse(request, action, "read-only console (no MEMORY_CONSOLE_TOKEN)")
        form = {k: str(v) for k, v in (await request.post()).items()}
        if not csrf_pair_ok(request.cookies.get(CSRF_COOKIE, ""), form.get("csrf", "")):
            return await self.refuse(
                request, action, "missing or stale CSRF token: reload the page"
            )
        client, wait = self.gate.limited(request, "action")
        if wait:
            why = f"too many wrong tokens from your address: try again in {wait} s"
            return await self.refuse(request, action, why, retry_after=wait)
        if self.gate.kind_of(form.get("token", "")) != "full":  # the read token opens no action
            self.gate.wrong_token(request, client, "action")
            return await self.refuse(request, action, "wrong or missing console token")
        return form

    # --- pages ----------------------------------------------------------------------------------
    async def overview(self, request: web.Request) -> web.Response:
        overview = await data.overview_data(self.redis, self.settings, self.targets)
        banner = await data.banner_data(
            self.redis, self.settings, self.routes, breakers=overview.sample.breakers
        )
        peak = max([1, *(max(h.completed, h.failed, h.released) for h in overview.hours)])
        paging_warning = unconfigured_warning(  # §9: pages that reach nobody, said loudly
            configured_channels(self.settings), overview.sample.admin_pages
        )
        return await self.render(
            request,
            "overview.html.j2",
            banner=banner,
            paging_warning=paging_warning,
            o=overview,
            s=overview.sample,
            peak=peak,
            refresh=REFRESH_SECONDS,
            status_figures=explain.STATUS_FIGURES,
            state_figures=explain.STATE_FIGURES,
            total_figures=explain.TOTAL_FIGURES,
            totals={
                "total-completed": overview.completed_total,
                "total-failed": overview.failed_total,
                "total-retired": overview.retired_total,
                "total-released": overview.released,
            },
        )

    async def runs(self, request: web.Request) -> web.Response:
        q = request.query
        problems: list[str] = []
        wanted = runs_data.RunFilter()
        try:
            wanted = _run_filter(q)
        except ValueError as exc:
            problems.append(str(exc))
        offset = _int(q.get("offset"), 0)
        page = await runs_data.runs_page(self.redis, self.settings, wanted, offset=max(offset, 0))
        keep = {k: v for k, v in q.items() if k != "offset" and v}
        return await self.render_form(
            request,
            "runs.html.j2",
            problems,
            page=page,
            q=q,
            keep=keep,
            statuses=runs_data.RUN_FILTERS,
        )

    async def run(self, request: web.Request) -> web.Response:
        """The run; with ``action`` (cancel, replay) and ``preview``, what it would do."""
        run_id = request.match_info["run_id"]
        try:
            run = await runs_data.run_detail(self.redis, self.settings, run_id)
        except StoredRunUnreadable as exc:
            return await self._unreadable(request, exc)
        if run is None:
            return await self.render(request, "missing.html.j2", status=404, what=f"run {run_id}")
        action = request.query.get("action", "")
        preview = None
        if request.query.get("preview") and action in RUN_ACTIONS:
            preview = await self._run_preview(run, action)
        return await self._run_page(request, run, preview=preview)

    async def _unreadable(self, request: web.Request, exc: StoredRunUnreadable) -> web.Response:
        """A run whose stored hash no longer reads: its fields, never their values (500: the
        store's data, not the request, is wrong)."""
        return await self.render(
            request, "unreadable.html.j2", status=500, run_id=exc.run_id, problems=exc.problems
        )

    # --- actions: one run by id (§13) -----------------------------------------------------------
    # ``GET /runs/ID?action=cancel|replay&preview=1`` says what the action would do (reads
    # only, read-only consoles included); ``POST /runs/ID`` does it (token and CSRF first) and
    # leaves a ``console_run_cancel`` / ``console_run_replay`` audit event (ids only).

    def _run_actions(self) -> RunActions:
        return run_actions(self.redis, self.settings, self.cards)

    async def _run_preview(self, run: Run, action: str) -> RunPreview:
        if action == "cancel":
            cancel = cancel_preview(run)
            return RunPreview(action, cancel.allowed, cancel.what)
        plan = await self._run_actions().preview_replay(run.id, now_ms=int(time.time() * 1000))
        if not plan.items:
            return RunPreview(action, False, replay_refusal(run) + ".")
        return RunPreview(
            action,
            True,
            f"Attempts {run.attempts} → 0 and claimable now; the error log is kept "
            "(+ a replay entry); it stays outside the queued cap until it completes or "
            "fails again.",
        )

    async def _run_page(
        self,
        request: web.Request,
        run: Run,
        *,
        preview: RunPreview | None = None,
        done: str = "",
        problems: list[str] | None = None,
        status: int = 200,
    ) -> web.Response:
        return await self.render(
            request,
            "run.html.j2",
            status=status,
            run=run,
            release_keep=self.settings.release_log_max_entries,
            preview=preview,
            done=done,
            problems=problems or [],
            can_cancel=cancel_preview(run).allowed,
            can_replay=run.status in REPLAYABLE,
        )

    async def run_act(self, request: web.Request) -> web.Response:
        """Cancel or replay the run for real (token and CSRF checked first: refused → 403)."""
        form = await self.authorize(request, "run")
        if isinstance(form, web.Response):
            return form
        run_id = request.match_info["run_id"]
        action = form.get("action", "")
        try:
            run = await runs_data.run_detail(self.redis, self.settings, run_id)
        except StoredRunUnreadable as exc:
            return await self._unreadable(request, exc)
        if run is None or action not in RUN_ACTIONS:
            return await self.render(request, "missing.html.j2", status=404, what=f"run {run_id}")
        actions, now = self._run_actions(), int(time.time() * 1000)
        context = {"run_id": run.id, "chat_id": str(run.chat_id), "status_before": run.status.value}
        if action == "cancel":
            done = await actions.cancel(run.id, actor=ACTOR, now_ms=now)
            ok = done.outcome is CancelOutcome.CANCELLED
            said = f"Run {run.id} cancelled (was {done.before})."
            refusal = cancel_refusal(run.id, done.outcome) + "."
            counters: dict[str, int] = {}
        else:
            _, outcome = await actions.replay(run.id, now_ms=now)
            ok = bool(outcome.replayed)
            said = f"Run {run.id} replayed: attempts {run.attempts} → 0, claimable now."
            refusal = replay_refusal(run) + "; nothing was replayed."
            counters = {"attempts_before": run.attempts}
            if ok:
                await self._queue().wake()
        after = await runs_data.run_detail(self.redis, self.settings, run_id) or run
        if not ok:
            return await self._run_page(request, after, problems=[refusal], status=409)
        await audit(
            self.redis, self.settings, f"console_run_{action}", counters=counters, context=context
        )
        log.info(f"console.run_{action}", run_id=run.id, chat_id=run.chat_id)
        return await self._run_page(request, after, done=said)

    async def workers(self, request: web.Request) -> web.Response:
        rows = await fleet_workers(
            self.redis,
            self.keys,
            now_ms=int(time.time() * 1000),
            ttl_ms=int(self.settings.worker_heartbeat_seconds * 3000),
        )
        return await self.render(
            request,
            "workers.html.j2",
            rows=rows,
            heartbeat_s=self.settings.worker_heartbeat_seconds,
        )

    async def breakers(self, request: web.Request) -> web.Response:
        rows = await data.breakers_data(
            self.redis, self.settings, self.routes, config=self.route_config
        )
        return await self.render(
            request,
            "breakers.html.j2",
            rows=rows,
            done=request.query,
            buckets=data.LATENCY_BUCKET_LABELS,
        )

    async def events(self, request: web.Request) -> web.Response:
        workflow = request.query.get("workflow") or None
        event_type = request.query.get("type") or None
        timeline = await data.timeline_data(
            self.redis, self.settings, workflow=workflow, event_type=event_type
        )
        return await self.render(
            request,
            "events.html.j2",
            t=timeline,
            gap_min=data.INCIDENT_GAP_MS // 60_000,
            workflow=workflow or "",
            event_type=event_type or "",
            workflows=sorted({*self.routes, AUDIT_WORKFLOW, "pipeline"}),
        )

    async def memory_index(self, request: web.Request) -> web.Response:
        if not self.settings.console_show_memory:
            return await self.render(request, "memory_off.html.j2")
        chat = request.query.get("chat")
        if chat:
            try:
                raise web.HTTPFound(f"/memory/{int(chat)}")
            except ValueError:
                pass
        chats = await memory_data.chat_list(self.cards, self.settings)
        return await self.render(request, "memory_index.html.j2", chats=chats)

    async def memory(self, request: web.Request) -> web.Response:
        if not self.settings.console_show_memory:
            return await self.render(request, "memory_off.html.j2")
        try:
            chat_id = int(request.match_info["chat_id"])
        except ValueError:
            return await self.render(request, "missing.html.j2", status=404, what="that chat")
        query = request.query.get("q", "").strip()[:200]
        try:
            as_of = memory_data.parse_as_of(request.query.get("as_of", "")[:40])
        except ValueError:
            as_of, problem = None, "as of: not an ISO 8601 time (e.g. 2026-03-01T12:00)"
        else:
            problem = ""
        memory = await memory_data.memory_data(
            self.redis,
            self.settings,
            chat_id,
            query=query,
            card_store=self.card_store,
            as_of=as_of,
        )
        return await self.render(request, "memory.html.j2", m=memory, problem=problem)

    async def settings_page(self, request: web.Request) -> web.Response:
        return await self.render(
            request, "settings.html.j2", rows=data.settings_rows(self.settings)
        )

    async def replay_form(self, request: web.Request) -> web.Response:
        q = request.query
        plan = None
        problems: list[str] = []
        if q.get("preview"):
            try:
                wanted, rate = _replay_filter(q)
                plan = await replay_store(self.redis, self.settings).preview(
                    wanted, now_ms=int(time.time() * 1000), rate_per_second=rate
                )
            except ValueError as exc:
                problems.append(str(exc))
        return await self.render_form(
            request, "replay.html.j2", problems, q=q, plan=plan, result=None
        )

    async def static(self, _: web.Request) -> web.Response:
        return web.Response(body=self.css, content_type="text/css", charset="utf-8")

    async def docs_index(self, _: web.Request) -> web.Response:
        raise web.HTTPFound(f"/docs/{docs.INDEX}")

    async def docs_page(self, request: web.Request) -> web.Response:
        """A bundled documentation page as HTML (its headings carry MkDocs' anchors), or one
        of its images; the banner's runbook links land here by default."""
        name = request.match_info["name"]
        if not docs.PAGE_NAME.match(name):
            return await self.render(request, "missing.html.j2", status=404, what="such page")
        if name.endswith(".png"):
            body = docs.image(name)
            if body is None:
                return await self.render(request, "missing.html.j2", status=404, what=name)
            return web.Response(body=body, content_type="image/png")
        found = docs.page(name)
        if found is None:
            return await self.render(request, "missing.html.j2", status=404, what=name)
        return await self.render(request, "docs.html.j2", page=found, pages=docs.names())

    # --- actions --------------------------------------------------------------------------------
    async def breaker_reset(self, request: web.Request) -> web.Response:
        form = await self.authorize(request, "breaker reset")
        if isinstance(form, web.Response):
            return form
        target = form.get("target", "")
        if target not in self.targets:
            known = await breaker_store(self.redis, self.settings).known_targets()
            if target not in known:
                return await self.render(
                    request, "missing.html.j2", status=404, what=f"breaker {target}"
                )
        before = await breaker_store(self.redis, self.settings).view(target)
        await reset_target(self.redis, self.settings, target)  # and its ejection
        await audit(
            self.redis,
            self.settings,
            "console_breaker_reset",
            counters={"trips_before": before.trips},
            context={"target": target, "state_before": before.circuit.value},
        )
        log.info("console.breaker_reset", target=target, state_before=before.circuit.value)
        raise web.HTTPSeeOther("/breakers?" + urlencode({"reset": target}))

    async def replay(self, request: web.Request) -> web.Response:
        form = await self.authorize(request, "replay")
        if isinstance(form, web.Response):
            return form
        try:
            wanted, rate = _replay_filter(form)
        except ValueError as exc:
            return await self.render_form(
                request, "replay.html.j2", [str(exc)], q=form, plan=None, result=None
            )
        store = replay_store(self.redis, self.settings)
        plan = await store.plan(wanted, now_ms=int(time.time() * 1000), rate_per_second=rate)
        outcome = await store.apply(plan)
        await audit(
            self.redis,
            self.settings,
            "console_replay",
            counters={
                "matched": len(plan.items),
                "replayed": len(outcome.replayed),
                "skipped": len(outcome.skipped),
            },
            context={
                k: str(v) for k, v in wanted.as_dict().items() if v is not None and k != "since"
            },
        )
        return await self.render_form(
            request, "replay.html.j2", [], q=form, plan=ReplayPreview.of_plan(plan), result=outcome
        )

    # --- actions: forget (§14) ------------------------------------------------------------------
    # ``GET /forget?chat=…&user=…&preview=1`` counts what would go (a dry run of the
    # :class:`~memory_worker.upkeep.forgetter.Forgetter`: nothing is written, read-only
    # consoles included); ``POST /forget`` forgets with actor ``console`` (the forget's own
    # audit event) and leaves a ``console_forget`` event on the routing-event stream (ids and
    # counts only). The pages show ids and counts, never a card or message text, so they
    # render with ``MEMORY_CONSOLE_SHOW_MEMORY=0`` too.

    async def _forget_page(
        self,
        request: web.Request,
        q: Any,
        *,
        result: ForgetResult | None = None,
        problems: list[str] | None = None,
        status: int = 200,
    ) -> web.Response:
        return await self.render(
            request,
            "forget.html.j2",
            status=status,
            q=q,
            r=result,
            what=forget_what(ForgetScope(result.chat_id, result.user_id)) if result else "",
            problems=problems or [],
        )

    async def forget_form(self, request: web.Request) -> web.Response:
        """The form; with ``preview`` the dry run's counts (nothing written)."""
        q = request.query
        if not q.get("preview"):
            return await self._forget_page(request, q)
        try:
            scope = forget_scope(q)
            preview = await self.forgetter.forget(scope, dry_run=True, actor=ACTOR)
        except ForgetInputError as exc:  # an unknown chat (a ValueError too: caught first)
            return await self._forget_page(request, q, problems=[str(exc)], status=404)
        except ValueError as exc:
            return await self._forget_page(request, q, problems=[str(exc)], status=400)
        return await self._forget_page(request, q, result=preview)

    async def forget(self, request: web.Request) -> web.Response:
        """Forget for real (token and CSRF checked first: refused → 403, nothing changed)."""
        form = await self.authorize(request, "forget")
        if isinstance(form, web.Response):
            return form
        try:
            scope = forget_scope(form)
            done = await self.forgetter.forget(scope, actor=ACTOR)
        except ForgetInputError as exc:
            return await self._forget_page(request, form, problems=[str(exc)], status=404)
        except ValueError as exc:
            return await self._forget_page(request, form, problems=[str(exc)], status=400)
        counts = {k: int(getattr(done.counts, k)) for k in _FORGET_COUNTED}
        context = {"chat_id": str(done.chat_id), "scope": done.scope}
        if done.user_id is not None:
            context["user_id"] = str(done.user_id)
        await audit(self.redis, self.settings, "console_forget", counters=counts, context=context)
        log.info("console.forget", scope=done.scope, **counts)
        return await self._forget_page(request, form, result=done)

    # --- actions: one card (§10) ----------------------------------------------------------------
    # ``GET /cards/{chat}/{card}`` shows the card (the memory browser's: its text, so
    # ``MEMORY_CONSOLE_SHOW_MEMORY=0`` turns it off) with its history (§13: each event's time,
    # kind, other card, cause, actor, run or request) and a retract form (a reason) and a
    # correct form (the new fact). ``GET …?action=retract&reason=…&preview=1`` (or
    # ``action=correct&fact=…``) says what will happen, writing nothing, and holds the confirm
    # form. ``POST /cards/{chat}/{card}`` calls ``MemoryQueue.retract`` / ``correct`` with
    # actor ``console`` (their audit events, no text) and leaves a ``console_retract`` /
    # ``console_correct`` event on the routing-event stream (ids only). Bad input is the page
    # with its problem, nothing changed.

    def _queue(self) -> MemoryQueue:
        """The bot's API over the console's clients (its recall walker built on first use)."""
        from memory_worker.api import MemoryQueue
        from memory_worker.storage.connections import RedisHandle

        return MemoryQueue(RedisHandle(self.redis, ""), self.settings, cards=self.card_store)

    async def _card_page(
        self,
        request: web.Request,
        card: Card,
        *,
        form: Any,
        preview: str = "",
        done: Card | None = None,
        problems: list[str] | None = None,
        status: int = 200,
    ) -> web.Response:
        _, events = await self.card_store.history(card.chat_id, card.id)
        return await self.render(
            request,
            "card.html.j2",
            status=status,
            c=card,
            q=form,
            preview=preview,
            done=done,
            problems=problems or [],
            events=events,
        )

    async def card_page(self, request: web.Request) -> web.Response:
        """The card with its forms; with ``preview`` what the chosen action will do."""
        if not self.settings.console_show_memory:
            return await self.render(request, "memory_off.html.j2")
        ids = _card_ids(request)
        queue = self._queue()
        card = None if ids is None else await queue.cards.get_card(*ids)
        if card is None:
            return await self.render(request, "missing.html.j2", status=404, what="that card")
        q = request.query
        action = q.get("action", "")
        if not q.get("preview") or action not in CARD_ACTIONS:
            return await self._card_page(request, card, form=q)
        problems = _card_problems(action, q, card, self.settings)
        if problems:
            return await self._card_page(request, card, form=q, problems=problems, status=400)
        return await self._card_page(request, card, form=q, preview=action)

    async def card_act(self, request: web.Request) -> web.Response:
        """Retract or correct for real (token and CSRF checked first: refused → 403)."""
        form = await self.authorize(request, "card")
        if isinstance(form, web.Response):
            return form
        ids = _card_ids(request)
        queue = self._queue()
        card = None if ids is None else await queue.cards.get_card(*ids)
        action = form.get("action", "")
        if card is None or action not in CARD_ACTIONS:
            return await self.render(request, "missing.html.j2", status=404, what="that card")
        try:
            if action == "retract":
                done = await queue.retract(card, actor=ACTOR, reason=form.get("reason", ""))
            else:
                done = await queue.correct(card, form.get("fact", ""), actor=ACTOR)
        except (InvalidCorrection, CardNotLive, CardNotFound) as exc:
            return await self._card_page(request, card, form=form, problems=[str(exc)], status=400)
        except EmbeddingUnavailable as exc:  # the farm is down: nothing was written, say so
            return await self._card_page(request, card, form=form, problems=[str(exc)], status=503)
        finally:
            await queue._close_recall()
        context = {"chat_id": str(card.chat_id), "card_id": card.id, "new_card_id": done.id}
        await audit(self.redis, self.settings, f"console_{action}", context=context)
        log.info(f"console.card_{action}", chat_id=card.chat_id, card_id=card.id, now_id=done.id)
        return await self._card_page(request, card, form={}, done=done)


def forget_scope(q: Any) -> ForgetScope:
    """The scope a forget form names (``chat`` required, ``user`` optional), or ValueError."""
    chat = str(q.get("chat") or "").strip()
    user = str(q.get("user") or "").strip()
    if not chat:
        raise ValueError("chat: a chat id is required (a user is forgotten within one chat)")
    try:
        chat_id = int(chat)
    except ValueError:
        raise ValueError(f"chat {chat!r}: expected an integer chat id") from None
    try:
        user_id = int(user) if user else None
    except ValueError:
        raise ValueError(f"user {user!r}: expected an integer user id") from None
    return ForgetScope(chat_id, user_id)


def forget_what(scope: ForgetScope) -> str:
    if scope.user_id is None:
        return f"chat {scope.chat_id}"
    return f"user {scope.user_id} in chat {scope.chat_id}"


def _card_ids(request: web.Request) -> tuple[int, str] | None:
    try:
        chat_id = int(request.match_info["chat_id"])
        card_id = str(int(request.match_info["card_id"]))
    except ValueError:
        return None
    return chat_id, card_id


def _card_problems(action: str, form: Any, card: Card, settings: Settings) -> list[str]:
    """What is wrong with a card action's request (nothing written either way)."""
    from memory_worker.cards.corrections import check_fact, check_reason

    try:
        if action == "retract":
            check_reason(form.get("reason", ""))
            if card.status.value == "retracted":
                return [f"card {card.ref} is already retracted"]
        else:
            check_fact(form.get("fact", ""), settings.card_max_bytes)
            if not card.live:
                return [f"card {card.ref} is {card.status.value}: only a live card is corrected"]
    except InvalidCorrection as exc:
        return [str(exc)]
    return []


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value else default
    except ValueError:
        return default


def _when(text: str | None) -> int | None:
    if not text:
        return None
    return int(parse_when(text, now=datetime.now(UTC)).timestamp() * 1000)


def _run_filter(q: Any) -> runs_data.RunFilter:
    status = q.get("status") or None
    if status is not None and status not in runs_data.RUN_FILTERS:
        raise ValueError(f"status {status!r}: expected one of {', '.join(runs_data.RUN_FILTERS)}")
    chat = q.get("chat") or None
    try:
        chat_id = int(chat) if chat else None
    except ValueError:
        raise ValueError(f"chat {chat!r}: expected an integer chat id") from None
    return runs_data.RunFilter(
        status=status,
        chat_id=chat_id,
        error_code=q.get("code") or None,
        reason=q.get("reason") or None,
        since_ms=_when(q.get("since")),
        until_ms=_when(q.get("until")),
    )


def _replay_filter(q: Any) -> tuple[ReplayFilter, float | None]:
    scope = q.get("scope") or ReplayScope.RETIRED.value
    try:
        chosen = ReplayScope(scope)
    except ValueError:
        chosen = ReplayScope.RUN
    if chosen not in FILTER_SCOPES:
        raise ValueError(f"scope {scope!r}: expected retired or failed")
    chat = q.get("chat") or None
    try:
        chat_id = int(chat) if chat else None
    except ValueError:
        raise ValueError(f"chat {chat!r}: expected an integer chat id") from None
    rate = parse_rate(q["rate"]) if q.get("rate") else None
    return (
        ReplayFilter(
            scope=chosen,
            since_ms=_when(q.get("since")),
            until_ms=_when(q.get("until")),
            error_code=q.get("code") or None,
            reason=q.get("reason") or None,
            chat_id=chat_id,
        ),
        rate,
    )


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Strict headers on every response of the server (pages, redirects, errors, metrics),
    plus ``Server-Timing`` with the time the server spent on it."""
    started = time.perf_counter()
    try:
        response = await handler(request)
    except web.HTTPException as exc:
        exc.headers.update(SECURITY_HEADERS)
        raise
    response.headers.update(SECURITY_HEADERS)
    # the server's own time for this response (read by bench/console_pages.py)
    response.headers["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
    return response


def _guarded(console: Console, handler: Handler) -> Handler:
    """``handler``, answering 503 with a plain page when Redis cannot be read in time."""

    async def guarded(request: web.Request) -> web.StreamResponse:
        if not console.host_allowed(request.url.host):
            log.warning("console.foreign_host_refused", path=request.path)
            return web.Response(text="misdirected request\n", status=421)
        refused = await console.gate.check(request)
        if refused is not None:
            return refused
        try:
            return await handler(request)
        except (RedisError, StoreError, OSError, TimeoutError) as exc:  # StoreError: the
            # bot's edge around MemoryQueue's calls typed redis-py's error
            log.warning("console.redis_unavailable", path=request.path, error=type(exc).__name__)
            body = console.env.get_template("unavailable.html.j2").render(
                banner=None,
                csrf="",
                actions=False,
                signed_in=False,
                show_memory=console.settings.console_show_memory,
                path=request.path,
                now_ms=int(time.time() * 1000),
                error=type(exc).__name__,
            )
            return web.Response(text=body, status=503, content_type="text/html", charset="utf-8")

    return guarded


def add_console(
    app: web.Application,
    redis: Redis,
    settings: Settings,
    *,
    clock: Callable[[], float] = time.time,
) -> Console:
    """Mount the console's routes on ``app`` (call before the app starts).

    Raises :class:`ConsoleExposedError` when ``settings.serve_host`` is off loopback and no
    token is configured: the pages would be anyone's who can reach the address."""
    problem = exposure_problem(
        settings.serve_host, settings.console_token, settings.console_read_token
    )
    if problem is not None:
        raise ConsoleExposedError(problem)
    console = Console(redis, settings, clock=clock)
    app.middlewares.append(security_headers)
    routes: list[tuple[str, str, Handler]] = [
        ("GET", "/", console.overview),
        ("GET", "/runs", console.runs),
        ("GET", "/runs/{run_id}", console.run),
        ("POST", "/runs/{run_id}", console.run_act),
        ("GET", "/breakers", console.breakers),
        ("GET", "/workers", console.workers),
        ("POST", "/breakers/reset", console.breaker_reset),
        ("GET", "/events", console.events),
        ("GET", "/memory", console.memory_index),
        ("GET", "/memory/{chat_id}", console.memory),
        ("GET", "/settings", console.settings_page),
        ("GET", "/replay", console.replay_form),
        ("POST", "/replay", console.replay),
        ("GET", "/forget", console.forget_form),
        ("POST", "/forget", console.forget),
        ("GET", "/cards/{chat_id}/{card_id}", console.card_page),
        ("POST", "/cards/{chat_id}/{card_id}", console.card_act),
        ("GET", "/static/console.css", console.static),
        ("GET", "/docs", console.docs_index),
        ("GET", "/docs/{name}", console.docs_page),
    ]
    if console.gate.closed:
        routes += [
            ("GET", "/login", console.gate.login_form),
            ("POST", "/login", console.gate.login),
            ("POST", "/logout", console.gate.logout),
        ]
    for method, path, handler in routes:
        app.router.add_route(method, path, _guarded(console, handler))

    async def close_cards(_: web.Application) -> None:
        await close_cards_client(console.cards, redis)

    app.on_cleanup.append(close_cards)
    return console
