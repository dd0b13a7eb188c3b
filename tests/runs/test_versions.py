"""Prompt versions (§7): a table for the decision, and its Lua twin agrees."""

from __future__ import annotations

from typing import Any

import pytest

from memory_worker.runs.versions import (
    VERSION_ACTION_LUA,
    ClaimAction,
    claim_action,
    version_number,
)

CASES = [
    # run version, worker version, action
    ("memory_v1", "memory_v1", ClaimAction.CLAIM),
    ("", "memory_v2", ClaimAction.CLAIM),  # no version: takes the worker's
    ("memory_v1", "memory_v2", ClaimAction.SKIP),  # older: skipped
    ("memory_v0", "memory_v1", ClaimAction.SKIP),
    ("memory_v9", "memory_v10", ClaimAction.SKIP),  # numbers, not strings
    ("memory_v2", "memory_v1", ClaimAction.PARK),  # newer: left for its workers
    ("memory_v10", "memory_v9", ClaimAction.PARK),
    ("other_v1", "memory_v2", ClaimAction.SKIP),  # compare by the trailing number only
    ("memory_v02", "memory_v2", ClaimAction.PARK),  # same number, another name: unknown
    ("legacy", "memory_v2", ClaimAction.PARK),  # no number: cannot prove it older
    ("memory_v1", "custom", ClaimAction.PARK),
    ("memory_v1234567890123456", "memory_v2", ClaimAction.PARK),  # too long to compare
    ("v1", "v1000000000000000", ClaimAction.PARK),
    ("v1", "v100000000000000", ClaimAction.SKIP),
]


@pytest.mark.parametrize(("run", "worker", "action"), CASES, ids=lambda v: str(v) or "none")
def test_claim_action(run: str, worker: str, action: ClaimAction) -> None:
    assert claim_action(run, worker) is action


@pytest.mark.parametrize(
    ("version", "number"),
    [("memory_v2", 2), ("v10", 10), ("x", None), ("", None), ("a1b", None), ("٣", None)],
)
def test_version_number(version: str, number: int | None) -> None:
    assert version_number(version) == number


async def test_lua_twin_agrees_with_python(redis: Any) -> None:
    script = redis.register_script(
        VERSION_ACTION_LUA
        + """
local out = {}
for i = 1, #ARGV, 2 do out[#out + 1] = version_action(ARGV[i], ARGV[i + 1]) end
return out
"""
    )
    pairs = [(run, worker) for run, worker, _ in CASES]
    pairs += [(a, b) for a in ("v1", "v2", "", "z", "w_3") for b in ("v1", "v2", "z", "w_3")]
    args = [x for pair in pairs for x in pair]
    got = [v.decode() if isinstance(v, bytes) else v for v in await script(keys=[], args=args)]
    assert got == [claim_action(run, worker).value for run, worker in pairs]
