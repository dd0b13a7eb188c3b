"""``forget --chat ID [--user ID]``: erase a user's memory in a chat, or the chat's (§14).

Without ``--yes`` the counts of what would go are shown and confirmed (y/N);
``--dry-run`` only shows them. Bad input (a non-integer id, an unknown chat,
``--user`` without ``--chat``) is one line and exit 2, nothing changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from memory_worker.cli.common import (
    DryRunFlag,
    JsonFlag,
    YesFlag,
    app,
    confirm,
    err,
    out,
    print_json,
    run_sync,
    with_redis,
)
from memory_worker.settings import get_settings
from memory_worker.storage.connections import RedisHandle

if TYPE_CHECKING:
    from rich.console import Console

    from memory_worker.privacy.forget import ForgetResult, ForgetScope
    from memory_worker.upkeep.forgetter import Forgetter


@app.command()
def forget(
    chat: Annotated[str | None, typer.Option("--chat", metavar="ID", help="The chat id.")] = None,
    user: Annotated[
        str | None,
        typer.Option("--user", metavar="ID", help="Only this user's memory in the chat."),
    ] = None,
    dry_run: DryRunFlag = False,
    yes: YesFlag = False,
    as_json: JsonFlag = False,
) -> None:
    """Erase memory on request: a user's in one chat (--user), or a whole chat's.

    Cards (with vectors, links, superseded history), episodes and the messages of
    runs not yet completed go; the append-only file is rewritten; an audit event
    (no content) records who, from where, when and how much.
    """
    from memory_worker.privacy.forget import parse_scope

    scope = parse_scope(chat, user)
    settings = get_settings()

    async def action(handle: RedisHandle) -> int:
        return await _forget(handle, scope, dry_run=dry_run, yes=yes, as_json=as_json)

    code = run_sync(with_redis(settings, action))
    if code:
        raise typer.Exit(code)


async def _forget(
    handle: RedisHandle, scope: ForgetScope, *, dry_run: bool, yes: bool, as_json: bool
) -> int:
    """Count, show, confirm, forget; the exit status."""
    from memory_worker.storage.connections import cards_client, close_cards_client
    from memory_worker.wiring import forgetter

    settings = get_settings()
    cards = cards_client(settings, handle.client)  # MEMORY_CARDS_URL, else the queue's server
    try:
        steps = forgetter(handle.client, settings, cards)
        return await _confirmed(steps, scope, dry_run=dry_run, yes=yes, as_json=as_json)
    finally:
        await close_cards_client(cards, handle.client)


async def _confirmed(
    forgetter: Forgetter, scope: ForgetScope, *, dry_run: bool, yes: bool, as_json: bool
) -> int:
    """Preview and ask unless ``--yes``; then forget (the exit status)."""
    if dry_run or not yes:
        preview = await forgetter.forget(scope, dry_run=True, actor="cli")
        if dry_run:
            _show(preview, as_json, out)
            return 0
        _show(preview, False, err)
        if not confirm(f"Forget this {_what(preview)}?"):
            err.print("aborted: nothing was changed")
            return 1
    done = await forgetter.forget(scope, actor="cli")
    _show(done, as_json, out)
    return 0


def _what(result: ForgetResult) -> str:
    if result.user_id is None:
        return f"chat {result.chat_id}"
    return f"user {result.user_id} in chat {result.chat_id}"


def _show(result: ForgetResult, as_json: bool, console: Console) -> None:
    if as_json:
        print_json(result.as_dict())
        return
    head = "[bold]Dry run[/bold] — would forget" if result.dry_run else "Forgot"
    console.print(
        f"{head} {_what(result)}: {result.cards} card(s), {result.vectors} vector(s), "
        f"{result.episodes} episode(s), {result.links} link(s); {result.messages} message(s) "
        f"in {result.runs} run(s).",
        highlight=False,
    )
