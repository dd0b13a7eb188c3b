"""Replay selection and planning (§11) as pure functions: tables and properties, no Redis."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memory_worker.models import ErrorLogEntry
from memory_worker.runs.replay import (
    Candidate,
    ReplayFilter,
    ReplayScope,
    last_failure,
    last_failure_of_raw,
    matches,
    parse_rate,
    parse_when,
    plan,
    replay_entry,
)
from tests.support.factories import retired_candidate

NOW = datetime(2026, 11, 2, 12, 0, tzinfo=UTC)
NOW_MS = int(NOW.timestamp() * 1000)

RETIRED = retired_candidate("r1", 7, NOW_MS - 3_600_000, "provider_unavailable")
SKIPPED = replace(RETIRED, status="skipped", retired=False, attempts=0, code=None, reason=None)


@pytest.mark.parametrize(
    ("candidate", "wanted", "expected"),
    [
        (RETIRED, ReplayFilter(), True),
        (RETIRED, ReplayFilter(error_code="UPSTREAM_ERROR"), True),
        (RETIRED, ReplayFilter(error_code="upstream_error"), True),
        (RETIRED, ReplayFilter(error_code="DecodeError"), False),
        (RETIRED, ReplayFilter(reason="provider_unavailable"), True),
        (RETIRED, ReplayFilter(reason="provider_timeout"), False),
        (RETIRED, ReplayFilter(chat_id=7), True),
        (RETIRED, ReplayFilter(chat_id=8), False),
        (RETIRED, ReplayFilter(prompt_version="memory_v1"), True),
        (RETIRED, ReplayFilter(prompt_version="memory_v0"), False),
        (RETIRED, ReplayFilter(since_ms=NOW_MS - 3_600_000), True),
        (RETIRED, ReplayFilter(since_ms=NOW_MS - 3_599_999), False),
        (RETIRED, ReplayFilter(until_ms=NOW_MS - 3_600_000), True),
        (RETIRED, ReplayFilter(until_ms=NOW_MS - 3_600_001), False),
        (replace(RETIRED, retired=False, attempts=2), ReplayFilter(), False),
        (
            replace(RETIRED, retired=False, attempts=2),
            ReplayFilter(scope=ReplayScope.FAILED),
            True,
        ),
        (replace(RETIRED, attempts=0), ReplayFilter(), False),
        (
            replace(RETIRED, attempts=0, retired=False),
            ReplayFilter(scope=ReplayScope.FAILED),
            False,
        ),
        (replace(RETIRED, status="queued"), ReplayFilter(scope=ReplayScope.FAILED), False),
        (replace(RETIRED, status="completed"), ReplayFilter(), False),
        (replace(RETIRED, code=None), ReplayFilter(error_code="UPSTREAM_ERROR"), False),
        (SKIPPED, ReplayFilter(scope=ReplayScope.SKIPPED), True),
        (SKIPPED, ReplayFilter(scope=ReplayScope.SKIPPED, prompt_version="memory_v1"), True),
        (SKIPPED, ReplayFilter(), False),
        (RETIRED, ReplayFilter(scope=ReplayScope.SKIPPED), False),
        (replace(RETIRED, has_messages=False), ReplayFilter(), False),
        (replace(SKIPPED, has_messages=False), ReplayFilter(scope=ReplayScope.SKIPPED), False),
    ],
    ids=[
        "retired-no-filter",
        "code",
        "code-case-insensitive",
        "other-code",
        "reason",
        "other-reason",
        "chat",
        "other-chat",
        "prompt-version",
        "other-prompt-version",
        "since-inclusive",
        "before-since",
        "until-inclusive",
        "after-until",
        "failed-not-retired-default-scope",
        "failed-not-retired-failed-scope",
        "already-replayed",
        "already-replayed-failed-scope",
        "queued-never",
        "completed-never",
        "no-error-entry",
        "skipped-scope",
        "skipped-by-version",
        "skipped-not-in-retired-scope",
        "retired-not-in-skipped-scope",
        "messages-pruned",
        "skipped-messages-pruned",
    ],
)
def test_matches(candidate: Candidate, wanted: ReplayFilter, expected: bool) -> None:
    assert matches(candidate, wanted) is expected


def test_last_failure_skips_replay_entries() -> None:
    at = NOW
    failure = ErrorLogEntry(attempt=5, failed_at=at, code="UPSTREAM_ERROR", kind="retired")
    replayed = ErrorLogEntry(attempt=5, failed_at=at, code="replay", kind="replay")
    assert last_failure([failure, replayed]) == failure
    assert last_failure([replayed]) is None
    assert last_failure([]) is None
    # the stored-JSON variant agrees, whatever the order of entries
    for log in ([failure, replayed], [replayed], [], [replayed, failure, replayed, replayed]):
        raw = [e.model_dump_json() for e in log]
        assert last_failure_of_raw(raw) == last_failure(log)


def test_plan_without_rate_makes_everything_available_now_oldest_failure_first() -> None:
    older = replace(RETIRED, id="r0", failed_at_ms=RETIRED.failed_at_ms - 1)
    other = replace(RETIRED, id="r9", code="DecodeError")
    result = plan([RETIRED, other, older], ReplayFilter(error_code="UPSTREAM_ERROR"), now_ms=NOW_MS)
    assert [i.run_id for i in result.items] == ["r0", "r1"]
    assert {i.available_at_ms for i in result.items} == {NOW_MS}
    assert result.by_code == {"UPSTREAM_ERROR": 2}


def test_plan_staggers_at_the_rate() -> None:
    runs = [replace(RETIRED, id=f"r{i:03d}", failed_at_ms=NOW_MS - 1000 + i) for i in range(30)]
    result = plan(runs, ReplayFilter(), now_ms=NOW_MS, rate_per_second=parse_rate("14/min"))
    times = [i.available_at_ms for i in result.items]
    assert times[0] == NOW_MS
    # 14 per minute: the 15th run (index 14) is one minute after the first
    assert times[14] - times[0] == 60_000
    assert result.last_available_ms == times[-1]
    per_minute = sum(1 for t in times if t < NOW_MS + 60_000)
    assert per_minute == 14


@given(
    n=st.integers(min_value=0, max_value=300),
    rate=st.floats(min_value=0.01, max_value=1000, allow_nan=False),
)
def test_plan_never_exceeds_the_rate_in_any_window(n: int, rate: float) -> None:
    runs = [replace(RETIRED, id=f"r{i:04d}", failed_at_ms=i) for i in range(n)]
    result = plan(runs, ReplayFilter(), now_ms=0, rate_per_second=rate)
    times = [i.available_at_ms for i in result.items]
    assert times == sorted(times)
    assert len(times) == n
    # any k+1 consecutive runs span at least k / rate seconds (floor rounding: < 1 ms early)
    for k in (1, 10):
        for a, b in zip(times, times[k:], strict=False):
            assert b - a >= k * 1000 / rate - 1


@pytest.mark.parametrize(
    ("text", "per_second"),
    [
        ("14/min", 14 / 60),
        ("14 / minute", 14 / 60),
        ("2/s", 2.0),
        ("2/sec", 2.0),
        ("500/h", 500 / 3600),
        ("0.5/s", 0.5),
        ("30", 0.5),
    ],
)
def test_parse_rate(text: str, per_second: float) -> None:
    assert parse_rate(text) == pytest.approx(per_second)


@pytest.mark.parametrize("text", ["", "fast", "0/min", "-3/min", "14/day", "14/"])
def test_parse_rate_rejects(text: str) -> None:
    with pytest.raises(ValueError, match="rate"):
        parse_rate(text)


def test_plan_rejects_non_positive_rate() -> None:
    with pytest.raises(ValueError, match="positive"):
        plan([RETIRED], ReplayFilter(), now_ms=NOW_MS, rate_per_second=0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("6h", NOW - timedelta(hours=6)),
        ("90m", NOW - timedelta(minutes=90)),
        ("2d", NOW - timedelta(days=2)),
        ("30s", NOW - timedelta(seconds=30)),
        ("2026-11-01T10:00:00Z", datetime(2026, 11, 1, 10, tzinfo=UTC)),
        ("2026-11-01T10:00:00+02:00", datetime(2026, 11, 1, 8, tzinfo=UTC)),
        ("2026-11-01", datetime(2026, 11, 1, tzinfo=UTC)),
    ],
)
def test_parse_when(text: str, expected: datetime) -> None:
    assert parse_when(text, now=NOW) == expected


def test_parse_when_rejects_nonsense() -> None:
    with pytest.raises(ValueError, match="ISO 8601"):
        parse_when("yesterday-ish", now=NOW)


def test_replay_entry_is_a_replay_kind_with_codes_only() -> None:
    (item,) = plan([RETIRED], ReplayFilter(), now_ms=NOW_MS).items
    entry = replay_entry(item, now_ms=NOW_MS)
    assert entry.kind == "replay"
    assert entry.attempt == 5
    assert entry.failed_at == NOW
    assert "UPSTREAM_ERROR" in entry.message
