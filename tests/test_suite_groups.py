"""The suite's own machinery: ``--dist loadgroup`` really keeps an ``xdist_group`` on one
worker (tests that share a costly fixture or must not overlap rely on it). pytest 9.2 made
xdist's nodeid suffix a silent no-op, and every group was spread over the workers."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.xdist_group("suite-groups")


def test_a_grouped_test_carries_its_group_under_loadgroup(request: pytest.FixtureRequest) -> None:
    if not request.config.getvalue("loadgroup"):
        pytest.skip("not run by pytest-xdist with --dist loadgroup")
    assert request.node.nodeid.endswith("@suite-groups"), request.node.nodeid
