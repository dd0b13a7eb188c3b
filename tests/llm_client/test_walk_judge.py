"""judge_failure: how one failed attempt counts, decided on plain data (no walker, no clock)."""

from __future__ import annotations

import pytest

from llm_client import BackendUnavailable, DecodeError, FailureReason, Outcome, TaskTimeout
from llm_client._routing.judge import judge_failure

T = FailureReason.PROVIDER_TIMEOUT


@pytest.mark.parametrize(
    ("error", "elapsed", "cap", "source", "guard", "expected"),
    [
        pytest.param(
            BackendUnavailable("down"),
            0.5,
            60.0,
            "wall",
            False,
            (FailureReason.PROVIDER_UNAVAILABLE, Outcome.FAILURE, False, False),
            id="charged",
        ),
        pytest.param(
            DecodeError("bad json"),
            60.0,
            60.0,
            "wall",
            False,
            (FailureReason.PROVIDER_PROTOCOL_ERROR, Outcome.FAILURE, False, False),
            id="not-timeoutish-never-cut",
        ),
        pytest.param(
            TaskTimeout("slow", seconds=60),
            60.0,
            60.0,
            "wall",
            False,
            (T, Outcome.FAILURE, True, False),
            id="cut-by-wall-long-slice",
        ),
        pytest.param(
            TaskTimeout("slow", seconds=60),
            60.0,
            60.0,
            "deadline",
            False,
            (T, Outcome.NOT_CHARGED, True, True),
            id="cut-by-deadline",
        ),
        pytest.param(
            TaskTimeout("slow", seconds=5),
            5.0,
            5.0,
            "wall",
            False,
            (T, Outcome.NOT_CHARGED, True, False),
            id="short-slice-not-charged",
        ),
        pytest.param(
            RuntimeError("hung"),
            40.0,
            40.0,
            "wall",
            True,
            (T, Outcome.FAILURE, True, False),
            id="guard-expired-is-a-timeout",
        ),
        pytest.param(
            RuntimeError("bug"),
            1.0,
            40.0,
            "wall",
            False,
            (None, Outcome.NOT_CHARGED, False, False),
            id="not-retryable",
        ),
    ],
)
def test_judge_failure(
    error: BaseException,
    elapsed: float,
    cap: float,
    source: str,
    guard: bool,
    expected: tuple[FailureReason | None, Outcome, bool, bool],
) -> None:
    assert (
        judge_failure(
            error,
            elapsed=elapsed,
            cap=cap,
            cap_source=source,
            guard_expired=guard,
            cut_tolerance=0.05,
            min_slice=30.0,
        )
        == expected
    )
