"""Prompt versions (§7): which runs a worker claims, skips or leaves alone.

Versions compare by their trailing number (``memory_v2`` > ``memory_v1``).
A worker

- **claims** runs of its own version, and runs enqueued without a version
  (they take the claiming worker's version: the bot need not know it);
- **skips** runs of an *older* version, for good (status ``skipped``,
  replayable with ``memory-worker replay --scope skipped``);
- **parks** everything else — a newer version, or one it cannot order
  (no trailing number, or the same number under another name): the run is
  moved, untouched, out of the shared queue into the per-version set
  ``runs:parked:<version>``, so older workers never look at it again, and a
  worker of that version moves it back when it claims.

Skipping is destructive, so it needs proof that the run is older; anything
uncertain waits. :func:`claim_action` is the decision; :data:`VERSION_ACTION_LUA`
is its line-by-line Lua twin used inside the claim script (an agreement test
runs both over one table).
"""

from __future__ import annotations

import re
from enum import StrEnum

#: Trailing numbers longer than this are not compared (Lua numbers are doubles).
MAX_DIGITS = 15

_TRAILING = re.compile(r"([0-9]+)$")


class ClaimAction(StrEnum):
    CLAIM = "claim"
    SKIP = "skip"
    PARK = "park"


def version_number(version: str) -> int | None:
    """The trailing number of ``version`` (``memory_v12`` → 12), or None."""
    found = _TRAILING.search(version)
    if found is None or len(found.group(1)) > MAX_DIGITS:
        return None
    return int(found.group(1))


def claim_action(run_version: str, worker_version: str) -> ClaimAction:
    """What a worker of ``worker_version`` does with a run of ``run_version`` ('' = none)."""
    if run_version in ("", worker_version):
        return ClaimAction.CLAIM
    run_n, worker_n = version_number(run_version), version_number(worker_version)
    if run_n is not None and worker_n is not None and run_n < worker_n:
        return ClaimAction.SKIP
    return ClaimAction.PARK


VERSION_ACTION_LUA = """
local function version_number(v)
  local digits = string.match(v, '([0-9]+)$')
  if digits == nil or #digits > 15 then return nil end
  return tonumber(digits)
end
local function version_action(run_v, worker_v)
  if run_v == '' or run_v == worker_v then return 'claim' end
  local rn, wn = version_number(run_v), version_number(worker_v)
  if rn ~= nil and wn ~= nil and rn < wn then return 'skip' end
  return 'park'
end
"""
