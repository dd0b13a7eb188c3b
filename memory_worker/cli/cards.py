"""``cards show|history|retract|correct REF`` and ``cards remember FACT``: one card, read,
corrected or written by hand (§10, §13).

``REF`` names a card across chats, ``<chat id>:<card id>`` (``-100123:7``). ``show`` prints
it with what it replaced and what replaced it; ``history`` prints its events, oldest first
(``MemoryQueue.history``: when, what, the actor, the run or request that caused it); ``retract`` and ``correct`` show the card
first and ask (y/N) unless ``--yes``, then call ``MemoryQueue.retract`` / ``correct`` (actor
``cli:<login>`` unless ``--actor``), which leave the audit event. ``remember`` stores a fact
in a chat (``--chat``; ``--user``, ``--thread``, ``--valid-from``) through
``MemoryQueue.remember`` — it only adds, so it does not ask — and prints the card holding it.
Thin over the library: bad input is one line and exit 2, nothing changed.
"""

from __future__ import annotations

import getpass
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from memory_worker.cli.common import (
    JsonFlag,
    YesFlag,
    an_id,
    app,
    confirm,
    err,
    fail,
    out,
    print_json,
    run_sync,
    with_redis,
)
from memory_worker.settings import get_settings
from memory_worker.storage.connections import RedisHandle

if TYPE_CHECKING:
    from rich.console import Console

    from memory_worker.api import MemoryQueue
    from memory_worker.cards import Card, CardEvent

T = TypeVar("T")

cards_app = typer.Typer(
    help="Read, retract or correct one memory card, or remember a fact.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    pretty_exceptions_show_locals=False,
)
app.add_typer(cards_app, name="cards")

#: A chat id may be negative (a Telegram group's): ``-100123:7`` is a reference, not an option.
_NEGATIVE_IDS = {"ignore_unknown_options": True}

Ref = Annotated[str, typer.Argument(metavar="REF", help="The card: <chat id>:<card id>.")]
Actor = Annotated[
    str | None, typer.Option("--actor", help="Who acts, for the audit (default cli:<login>).")
]


def _actor(actor: str | None) -> str:
    if actor:
        return actor
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"


async def with_queue(action: Callable[[MemoryQueue], Awaitable[T]]) -> T:
    """``action`` on a :class:`MemoryQueue` over the CLI's Redis (embedded when unset)."""
    from memory_worker.api import MemoryQueue
    from memory_worker.storage.connections import close_cards_client

    settings = get_settings()

    async def run(handle: RedisHandle) -> T:
        queue = MemoryQueue(handle, settings)
        try:
            return await action(queue)
        finally:
            await queue._close_recall()
            if queue._cards is not None:
                await close_cards_client(queue._cards.redis, handle.client)

    return await with_redis(settings, run)


def card_json(card: Card) -> dict[str, Any]:
    return {"ref": card.ref, **card.model_dump(mode="json")}


def show_card(card: Card, console: Console) -> None:
    console.print(
        f"[bold]{card.ref}[/bold]  {card.status.value}  {card.scope_key}", highlight=False
    )
    console.print(f"  {card.fact_text}", highlight=False, markup=False)
    rows = [
        ("subject · predicate · object", f"{card.subject} · {card.predicate} · {card.object}"),
        ("confidence, salience", f"{card.confidence:.2f}, {card.salience:.2f}"),
        ("observed", f"{card.observation_count}x, last {card.observed_at:%Y-%m-%d %H:%M}"),
        ("valid", f"{card.valid_from:%Y-%m-%d} → {_day(card.valid_until)}"),
        ("sources", ",".join(str(m) for m in card.source_message_ids) or "-"),
    ]
    for label, attr in (
        ("superseded by", "superseded_by"),
        ("corrects", "corrects"),
        ("merged into", "merged_into"),
        ("asserted by", "asserted_by"),
        ("retracted by", "retracted_by"),
        ("reason", "retract_reason"),
    ):
        value = getattr(card, attr)
        if value:
            rows.append((label, str(value)))
    for label, value in rows:
        console.print(f"  {label:<30} {value}", highlight=False, markup=False)


def _day(moment: Any) -> str:
    return "now" if moment is None else f"{moment:%Y-%m-%d}"


@cards_app.command("show", context_settings=_NEGATIVE_IDS)
def show(ref: Ref, as_json: JsonFlag = False) -> None:
    """One card: its fact, provenance, validity and what replaced it."""
    from memory_worker.cards.corrections import parse_card_ref
    from memory_worker.errors import CardNotFound

    chat_id, card_id = parse_card_ref(ref)

    async def action(queue: MemoryQueue) -> Card:
        card = await queue.cards.get_card(chat_id, card_id)
        if card is None:
            raise CardNotFound(f"{chat_id}:{card_id}")
        return card

    card = run_sync(with_queue(action))
    if as_json:
        print_json(card_json(card))
    else:
        show_card(card, out)


def event_json(event: CardEvent) -> dict[str, Any]:
    return event.model_dump(mode="json")


def event_line(event: CardEvent) -> str:
    """One event as a line: when, what (and the other card), the cause."""
    what = event.kind.value
    if event.card_id:
        what += f" {event.card_id}"
    cause = [event.via or "?"]
    if event.actor:
        cause.append(f"by {event.actor}")
    if event.run_id:
        cause.append(f"run {event.run_id}")
    if event.request_id:
        cause.append(f"request {event.request_id}")
    if event.derived:
        cause.append("(from the card's fields)")
    return f"  {event.at:%Y-%m-%d %H:%M:%S}  {what:<24} {' '.join(cause)}"


@cards_app.command("history", context_settings=_NEGATIVE_IDS)
def history(ref: Ref, as_json: JsonFlag = False) -> None:
    """A card's history, oldest first: created, observed, superseded, corrected,
    retracted, imported…, each with its time, actor and run or request."""

    async def action(queue: MemoryQueue) -> tuple[Card, list[CardEvent]]:
        events = await queue.history(ref)
        card = await queue._card(*_parsed(ref))
        return card, events

    card, events = run_sync(with_queue(action))
    if as_json:
        print_json({"ref": card.ref, "events": [event_json(e) for e in events]})
        return
    out.print(f"[bold]{card.ref}[/bold]  {card.status.value}  {card.scope_key}", highlight=False)
    out.print(f"  {card.fact_text}", highlight=False, markup=False)
    for event in events:
        out.print(event_line(event), highlight=False, markup=False)


def _parsed(ref: str) -> tuple[int, str]:
    from memory_worker.cards.corrections import parse_card_ref

    return parse_card_ref(ref)


def _confirm(queue: MemoryQueue, ref: str, what: str, yes: bool) -> Awaitable[bool]:
    async def ask() -> bool:
        from memory_worker.cards.corrections import parse_card_ref
        from memory_worker.errors import CardNotFound

        chat_id, card_id = parse_card_ref(ref)
        card = await queue.cards.get_card(chat_id, card_id)
        if card is None:
            raise CardNotFound(f"{chat_id}:{card_id}")
        if yes:
            return True
        show_card(card, err)
        return confirm(f"{what} card {card.ref}?")

    return ask()


@cards_app.command("retract", context_settings=_NEGATIVE_IDS)
def retract(
    ref: Ref,
    reason: Annotated[str, typer.Option("--reason", help="Why (kept on the card, not logged).")],
    actor: Actor = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Withdraw a card: kept as retracted, never shown or recalled again, and not learned
    again from messages sent before now."""
    who = _actor(actor)

    async def action(queue: MemoryQueue) -> Card | None:
        if not await _confirm(queue, ref, "Retract", yes):
            return None
        return await queue.retract(ref, actor=who, reason=reason)

    _done(run_sync(with_queue(action)), "Retracted", as_json)


@cards_app.command("correct", context_settings=_NEGATIVE_IDS)
def correct(
    ref: Ref,
    fact: Annotated[str, typer.Argument(metavar="FACT", help="The corrected fact, as written.")],
    actor: Actor = None,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Replace a live card's fact: a card asserted by you supersedes it (kept as history)."""
    who = _actor(actor)

    async def action(queue: MemoryQueue) -> Card | None:
        if not await _confirm(queue, ref, "Correct", yes):
            return None
        return await queue.correct(ref, fact, actor=who)

    _done(run_sync(with_queue(action)), "Now", as_json)


@cards_app.command("remember", context_settings=_NEGATIVE_IDS)
def remember(
    fact: Annotated[str, typer.Argument(metavar="FACT", help="The fact, as written.")],
    chat: Annotated[int, typer.Option("--chat", callback=an_id, help="The chat's id.")],
    user: Annotated[
        int | None,
        typer.Option("--user", callback=an_id, help="The user the fact is about (their scope)."),
    ] = None,
    thread: Annotated[
        int, typer.Option("--thread", callback=an_id, help="The thread (its scope).")
    ] = 0,
    valid_from: Annotated[
        str | None,
        typer.Option(
            "--valid-from", help="When it became true: ISO 8601 with a zone (default now)."
        ),
    ] = None,
    actor: Actor = None,
    as_json: JsonFlag = False,
) -> None:
    """Store a fact now, with no run and no farm call (a known one is observed again)."""
    from datetime import datetime

    who = _actor(actor)
    since: datetime | None = None
    if valid_from is not None:
        try:
            since = datetime.fromisoformat(valid_from)
        except ValueError:
            raise fail(
                "--valid-from: not an ISO 8601 time (e.g. 2026-05-01T09:00:00+00:00)"
            ) from None

    async def action(queue: MemoryQueue) -> Card:
        return await queue.remember(
            chat, fact, user_id=user, thread_id=thread, actor=who, valid_from=since
        )

    _done(run_sync(with_queue(action)), "Remembered", as_json)


def _done(card: Card | None, head: str, as_json: bool) -> None:
    if card is None:
        err.print("aborted: nothing was changed")
        raise typer.Exit(1)
    if as_json:
        print_json(card_json(card))
        return
    out.print(f"{head}:", highlight=False)
    show_card(card, out)
