"""plan_run: what a run covers is decided before any call, from the request and settings alone."""

from __future__ import annotations

import pytest

from memory_worker.consolidation.consolidate import plan_run
from memory_worker.settings import Settings
from tests.support.factories import make_request


@pytest.mark.parametrize(
    ("texts", "max_messages", "extracted", "continues"),
    [
        pytest.param(["I love green tea", "I moved to Porto"], 50, 2, False, id="fits"),
        pytest.param(
            ["remote job, $300 a day, no experience, write me in DM", "I love green tea"],
            50,
            1,
            False,
            id="spam",
        ),
        pytest.param([f"fact number {i} about tea" for i in range(5)], 2, 2, True, id="too-long"),
    ],
)
def test_plan_run(texts: list[str], max_messages: int, extracted: int, continues: bool) -> None:
    request = make_request(texts=texts)
    settings = Settings(max_batch_messages=max_messages)
    plan = plan_run(request, settings)
    assert plan.prompt_version == settings.prompt_version
    assert len(plan.messages) == len(texts)
    assert len(plan.run_slice.kept) == extracted
    assert sum(len(b) for b in plan.batches) >= extracted
    assert (plan.continuation is not None) is continues
    covered = len(plan.run_slice.covered)
    assert sum(plan.noise_dropped.values()) == covered - extracted
    base = plan.base_result("r1", request)
    assert (base.messages_covered, base.messages_extracted) == (covered, extracted)
    assert base.llm_calls == 0
    assert plan_run(request, settings) == plan  # pure: same request, same plan
