"""The functional core of forgetting (§14): what goes, table by table, no Redis."""

from __future__ import annotations

import orjson
import pytest

from memory_worker.errors import ForgetInputError
from memory_worker.privacy.forget import (
    ForgetCounts,
    ForgetScope,
    RunAction,
    StoredCard,
    author_fields,
    card_goes,
    chunks,
    doomed_author_fields,
    doomed_episodes,
    doomed_links,
    parse_authors,
    parse_scope,
    plan_restrict,
    plan_run,
    sha1_hex,
)

ALICE, BOB = 21, 22
AUTHORS = {1: ALICE, 2: ALICE, 3: BOB}


def card(sk: str, *sources: int) -> StoredCard:
    return StoredCard(id="7", sk=sk, sources=sources, updated="1", has_row=True)


@pytest.mark.parametrize(
    ("stored", "goes"),
    [
        (card("user:21"), True),  # about Alice, whatever it cites
        (card("user:21", 3), True),
        (card("chat", 1, 2), True),  # cites only Alice's messages
        (card("thread:5", 1), True),
        (card("chat", 1, 3), False),  # cites Bob too: kept
        (card("chat", 3), False),
        (card("user:22", 1), True),  # citing only her words (validation never stores one)
        (card("chat"), False),  # cites nothing known
        (card("chat", 1, 99), False),  # a message of unknown author: kept
    ],
    ids=[
        "user-scope",
        "user-scope-citing-bob",
        "only-hers",
        "thread-only-hers",
        "mixed",
        "only-bob",
        "bob-scope-her-words",
        "no-sources",
        "unknown-author",
    ],
)
def test_which_cards_go_when_alice_is_forgotten(stored: StoredCard, goes: bool) -> None:
    assert card_goes(stored, ALICE, AUTHORS) is goes


def msgs(*users: int) -> bytes:
    return orjson.dumps(
        [{"message_id": i, "user_id": u, "text": f"t{i}"} for i, u in enumerate(users)]
    )


@pytest.mark.parametrize(
    ("status", "users", "forget", "action", "kept", "removed"),
    [
        ("queued", (ALICE, BOB, ALICE), ALICE, RunAction.STRIP, (BOB,), 2),
        ("failed", (ALICE, BOB), ALICE, RunAction.STRIP, (BOB,), 1),
        ("processing", (ALICE, BOB), ALICE, RunAction.STRIP, (BOB,), 1),
        ("skipped", (ALICE, BOB), ALICE, RunAction.STRIP, (BOB,), 1),
        ("queued", (ALICE, ALICE), ALICE, RunAction.SKIP, (), 2),
        ("queued", (BOB,), ALICE, None, None, 0),
        ("completed", (ALICE,), ALICE, None, None, 0),
        ("queued", (ALICE, BOB), None, RunAction.SKIP, (), 2),
        ("processing", (BOB,), None, RunAction.SKIP, (), 1),
        ("completed", (), None, None, None, 0),
    ],
    ids=[
        "queued-strip",
        "failed-strip",
        "processing-strip",
        "skipped-strip",
        "left-empty",
        "not-hers",
        "completed",
        "chat-queued",
        "chat-processing",
        "chat-completed",
    ],
)
def test_what_a_forget_does_to_a_run(
    status: str,
    users: tuple[int, ...],
    forget: int | None,
    action: RunAction | None,
    kept: tuple[int, ...] | None,
    removed: int,
) -> None:
    raw = msgs(*users) if status != "completed" else None
    fields = {"status": status.encode(), "prompt_version": b"memory_v1"}
    if raw is not None:
        fields["messages"] = raw
    change = plan_run("r1", fields, forget)
    if action is None:
        assert change is None
        return
    assert change is not None
    assert (change.action, change.removed, change.expected) == (action, removed, sha1_hex(raw))
    left = [m["user_id"] for m in orjson.loads(change.messages)] if change.messages else []
    assert tuple(left) == kept
    assert change.message_count == len(left)


def test_a_skipped_run_without_messages_is_left_alone() -> None:
    assert plan_run("r", {"status": b"skipped"}, None) is None


@pytest.mark.parametrize(
    ("chat", "user", "expected"),
    [
        ("42", None, ForgetScope(42, None)),
        ("-100123", "7", ForgetScope(-100123, 7)),
        (42, 7, ForgetScope(42, 7)),
        (" 5 ", None, ForgetScope(5, None)),
    ],
)
def test_scopes_parse(chat: str | int, user: str | int | None, expected: ForgetScope) -> None:
    assert parse_scope(chat, user) == expected


@pytest.mark.parametrize(
    ("chat", "user", "message"),
    [
        ("abc", None, "--chat must be an integer id, got 'abc'"),
        (None, "7", "--user needs --chat: a user is forgotten within one chat"),
        (None, None, "--chat is required"),
        ("", None, "--chat is required"),
        ("1", "x", "--user must be an integer id, got 'x'"),
        (True, None, "--chat must be an integer id"),
    ],
)
def test_bad_scopes_are_one_clear_line(chat: object, user: object, message: str) -> None:
    with pytest.raises(ForgetInputError) as caught:
        parse_scope(chat, user)
    assert str(caught.value) == message


def test_links_touching_a_forgotten_card_go() -> None:
    fields = ["1|about|2", "2|about|3", "3|likes|4", "10|x|1"]
    assert doomed_links(fields, ["1"]) == ["10|x|1", "1|about|2"]
    assert doomed_links(fields, []) == []


def test_authors_round_trip_and_episodes_of_her_runs() -> None:
    flat = author_fields("r1", [(1, ALICE), (3, BOB)]) + author_fields("r2", [(5, BOB)])
    raw = dict(zip(flat[::2], flat[1::2], strict=True))
    messages, runs = parse_authors(raw)
    assert messages == {1: ALICE, 3: BOB, 5: BOB}
    assert runs == {"r1": frozenset({ALICE, BOB}), "r2": frozenset({BOB})}
    assert doomed_episodes(["r1", "r2", "r3"], runs, ALICE) == ["r1"]
    assert doomed_author_fields(messages, runs, ALICE) == ["1", "run:r1"]
    assert author_fields("r", []) == []


def test_chunks_and_counts() -> None:
    assert [list(c) for c in chunks([1, 2, 3, 4, 5], 2)] == [[1, 2], [3, 4], [5]]
    assert [list(c) for c in chunks([1, 2], 0)] == [[1], [2]]
    total = ForgetCounts(cards=1, vectors=1) + ForgetCounts(runs=2, messages=3)
    assert total == ForgetCounts(cards=1, vectors=1, runs=2, messages=3)


def test_restrict_keeps_only_the_allowed_messages() -> None:
    fields = {"status": b"queued", "prompt_version": b"", "messages": msgs(ALICE, BOB, ALICE)}
    change = plan_restrict("r", fields, {1})
    assert change is not None
    assert change.action is RunAction.STRIP
    assert [m["message_id"] for m in orjson.loads(change.messages)] == [1]
    assert plan_restrict("r", fields, {0, 1, 2}) is None
    gone = plan_restrict("r", fields, set())
    assert gone is not None
    assert gone.action is RunAction.SKIP
    assert plan_restrict("r", {"status": b"completed"}, set()) is None


def test_a_write_records_the_authors_of_cited_messages_and_every_author_of_the_run() -> None:
    flat = author_fields("r1", [(1, ALICE), (2, ALICE), (3, BOB)], {2})
    assert flat == ["2", str(ALICE), "run:r1", f"{ALICE},{BOB}"]
