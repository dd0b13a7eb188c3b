"""``memory-worker cards show|retract|correct``, ``export`` and ``import`` (§13): subprocess runs
of the real CLI against the test's Redis (and, for the cards, the cluster too).

The y/N question guards every change (no: nothing changed); ``--json`` is one document;
bad input and bad files are one ``error:`` line, exit 2, nothing written; an export file
imported into another deployment restores the chat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_worker.cards import CardStatus, CardStore, RunWrites
from memory_worker.keys import Keys
from memory_worker.settings import Settings
from tests.support.cards import ALICE, CHAT, T0, new
from tests.support.dumps import dump_chat
from tests.support.harness import cli


@pytest.fixture
async def two_cards(cards_redis: Any, key_prefix: str) -> CardStore:
    store = CardStore(cards_redis, Keys(key_prefix))
    cards = [new("Alice skis", seed=None), new("Alice lives in Qorvadine", seed=None)]
    await store.apply_run(CHAT, "r1", RunWrites(observed_at=T0, cards=cards), now=T0)
    return store


def env_for(cards_redis: Any, redis: Any, cards_url: str) -> dict[str, str]:
    return {} if cards_redis is redis else {"MEMORY_CARDS_URL": cards_url}


async def test_show_retract_and_correct_ask_first_and_leave_audit_events(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, two_cards: CardStore
) -> None:
    env = env_for(cards_redis, redis, cards_url)
    shown = cli(settings, "cards", "show", f"{CHAT}:1", "--json", **env)
    assert shown.returncode == 0, shown.stderr
    assert json.loads(shown.stdout)["fact_text"] == "Alice skis"

    refused = cli(settings, "cards", "retract", f"{CHAT}:1", "--reason", "no", stdin="n\n", **env)
    assert refused.returncode == 1
    assert "Alice skis" in refused.stderr
    assert "aborted: nothing was changed" in refused.stderr
    card = await two_cards.get_card(CHAT, "1")
    assert card is not None
    assert card.status is CardStatus.ACTIVE

    done = cli(settings, "cards", "retract", f"{CHAT}:1", "--reason", "never", "--yes", "--json", **env)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["status"] == "retracted"
    fixed = cli(
        settings, "cards", "correct", f"{CHAT}:2", "Alice lives in Porto", "--actor", "ann",
        "--yes", "--json", **env,
    )  # fmt: skip
    assert fixed.returncode == 0, fixed.stderr
    new_card = json.loads(fixed.stdout)
    assert (new_card["fact_text"], new_card["asserted_by"], new_card["corrects"]) == (
        "Alice lives in Porto",
        "ann",
        "2",
    )
    events = [
        {k.decode(): v.decode() for k, v in fields.items()}
        for _, fields in await redis.xrange(Keys(settings.key_prefix).audit)
    ]
    assert [(e["type"], e["actor"]) for e in events] == [
        ("retract", "cli:root"),
        ("correct", "ann"),
    ]
    assert not any("Qorvadine" in v or "Porto" in v for e in events for v in e.values())


async def test_retract_with_nobody_to_answer_exits_2_and_changes_nothing(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, two_cards: CardStore
) -> None:
    """No terminal and no --yes (cron, a pipe): one line naming --yes, exit 2, the card
    untouched — not click's "Aborted!" with exit 1."""
    env = env_for(cards_redis, redis, cards_url)
    before = await dump_chat(two_cards, CHAT)
    for args in (("retract", f"{CHAT}:1", "--reason", "no"), ("correct", f"{CHAT}:2", "x")):
        refused = cli(settings, "cards", *args, stdin="", **env)
        assert refused.returncode == 2, refused.stderr
        last = refused.stderr.strip().splitlines()[-1]
        assert last.startswith("error: ")
        assert "pass --yes" in last
        assert "Aborted!" not in refused.stderr
    assert await dump_chat(two_cards, CHAT) == before


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["cards", "show", "12"], "error: a card reference is '<chat id>:<card id>'"),
        (["cards", "show", f"{CHAT}:99"], f"error: no card {CHAT}:99"),
        (["cards", "correct", f"{CHAT}:1", " ", "--yes"], "error: fact_text is empty"),
        (["cards", "retract", f"{CHAT}:9", "--reason", "x", "--yes"], f"error: no card {CHAT}:9"),
    ],
    ids=["not-a-ref", "unknown-card", "empty-fact", "retract-unknown"],
)
async def test_bad_input_is_one_line_and_exit_2(
    settings: Settings, redis: Any, key_prefix: str, args: list[str], line: str
) -> None:
    store = CardStore(redis, Keys(key_prefix))
    await store.apply_run(CHAT, "r1", RunWrites(observed_at=T0, cards=[new("Alice skis")]), now=T0)
    before = await store.all_cards(CHAT)
    done = cli(settings, *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines()[-1].startswith(line)
    assert await store.all_cards(CHAT) == before


async def test_remember_stores_a_fact_and_answers_the_card(
    settings: Settings, redis: Any, cards_redis: Any, cards_url: str, key_prefix: str
) -> None:
    """No embedder is reachable here: the card is stored now, waiting for its vector."""
    env = env_for(cards_redis, redis, cards_url)
    store = CardStore(cards_redis, Keys(key_prefix))
    args = ["cards", "remember", "Alice is vegetarian", "--chat", "-100123", "--user", str(ALICE)]
    done = cli(settings, *args, "--actor", "bot", "--json", **env)
    assert done.returncode == 0, done.stderr
    card = json.loads(done.stdout)
    assert (card["ref"], card["fact_text"], card["asserted_by"]) == (
        "-100123:1",
        "Alice is vegetarian",
        "bot",
    )
    assert (card["scope"], card["user_id"], card["has_embedding"]) == ("user", ALICE, False)
    again = cli(settings, *args, "--valid-from", "2026-01-05T09:00:00+00:00", **env)
    assert again.returncode == 0, again.stderr
    assert "Remembered:" in again.stdout
    assert "-100123:1" in again.stdout  # the same fact: the same card, observed again
    (stored,) = await store.visible_cards(-100123, user_id=ALICE)
    assert stored.observation_count == 2
    assert stored.valid_from.isoformat() == "2026-01-05T09:00:00+00:00"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (["   "], "error: fact_text is empty"),
        (["my password: hunter2hunter2"], "error: fact_text holds what looks like a secret"),
        (["Alice skis", "--valid-from", "soon"], "error: --valid-from: not an ISO 8601 time"),
        (["Alice skis", "--valid-from", "2026-01-05"], "error: valid_from must be an aware"),
        (["Alice skis", "--actor", " "], "error: actor must be a non-empty str"),
    ],
    ids=["empty", "secret", "not-a-time", "no-zone", "blank-actor"],
)
async def test_remember_refuses_bad_input_in_one_line(
    settings: Settings, redis: Any, key_prefix: str, args: list[str], line: str
) -> None:
    store = CardStore(redis, Keys(key_prefix))
    done = cli(settings, "cards", "remember", "--chat", str(CHAT), *args)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [done.stderr.strip().splitlines()[-1]]
    assert done.stderr.strip().startswith(line)
    assert "hunter2" not in done.stderr
    assert await store.chat_keys(CHAT) == []


async def test_export_to_a_file_then_import_it_elsewhere(
    settings: Settings,
    redis: Any,
    cards_redis: Any,
    cards_url: str,
    two_cards: CardStore,
    tmp_path: Path,
) -> None:
    env = env_for(cards_redis, redis, cards_url)
    out = tmp_path / "chat.jsonl"
    done = cli(settings, "export", "--chat", str(CHAT), "--out", str(out), **env)
    assert done.returncode == 0, done.stderr
    assert "exported chat" in done.stderr
    assert done.stdout == ""
    assert oct(out.stat().st_mode & 0o777) == "0o600"
    lines = out.read_bytes().splitlines(keepends=True)
    assert orjson.loads(lines[0])["counts"]["cards"] == 2

    elsewhere = settings.model_copy(update={"key_prefix": settings.key_prefix + "x:"})
    target = CardStore(cards_redis, Keys(elsewhere.key_prefix))
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(b"".join(lines[:-1]))
    bad = cli(elsewhere, "import", str(cut), **env)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1].startswith(f"error: {cut}: ")
    assert "nothing was imported" in bad.stderr
    assert await target.chat_keys(CHAT) == []

    imported = cli(elsewhere, "import", str(out), "--json", **env)
    assert imported.returncode == 0, imported.stderr
    assert json.loads(imported.stdout)["cards"] == 2
    assert await target.visible_cards(CHAT, user_id=ALICE) == await two_cards.visible_cards(
        CHAT, user_id=ALICE
    )
    again = cli(elsewhere, "import", "-", "--json", stdin=out.read_text(), **env)
    assert json.loads(again.stdout)["present"] == 2
    to_stdout = cli(settings, "export", "--chat", str(CHAT), "--user", str(ALICE), **env)
    assert orjson.loads(to_stdout.stdout.splitlines()[0])["user_id"] == ALICE
