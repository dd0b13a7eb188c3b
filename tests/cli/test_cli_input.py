"""Out-of-range numbers are plain bad input: a chat id beyond 64 bits, a port above 65535,
a limit below its bound, an unknown command — one ``error:`` line, exit 2, nothing on stdout,
never "unexpected" and never a traceback (the CLI's processes); the library refuses an id
beyond 64 bits with its typed error before it reads or writes."""

from __future__ import annotations

import pytest

from memory_worker.api.query_args import check_id, check_k
from memory_worker.errors import ForgetInputError, InvalidId, QueryTooLarge
from memory_worker.privacy.forget import parse_scope
from memory_worker.settings import Settings
from tests.support.harness import cli

BEYOND = str(2**64)
BELOW = str(-(2**63) - 1)


@pytest.mark.parametrize(
    ("argv", "names"),
    [
        pytest.param(["serve", "--port", "70000"], "--port", id="serve-port"),
        pytest.param(["run", "--serve", "--port", "65536"], "--port", id="run-port"),
        pytest.param(["farmsim", "--port", "-1"], "--port", id="farmsim-port"),
        pytest.param(["export", "--chat", BEYOND], "--chat", id="export-chat"),
        pytest.param(["export", "--chat", "1", "--user", BELOW], "--user", id="export-user"),
        pytest.param(["cards", "remember", "a fact", "--chat", BEYOND], "--chat", id="remember"),
        pytest.param(
            ["cards", "remember", "a fact", "--chat", "1", "--thread", BEYOND],
            "--thread",
            id="remember-thread",
        ),
        pytest.param(["forget", "--chat", BEYOND, "--yes"], "--chat", id="forget-chat"),
        pytest.param(["forget", "--chat", "1", "--user", BELOW], "--user", id="forget-user"),
        pytest.param(["replay", "--chat", BEYOND], "--chat", id="replay-chat"),
        pytest.param(["runs", "list", "--limit", "0"], "--limit", id="runs-limit"),
        pytest.param(["report", "--limit", "10001"], "--limit", id="report-limit"),
        pytest.param(["runs", "show"], "run_id", id="missing-argument"),
        pytest.param(["no-such-command"], "no-such-command", id="unknown-command"),
    ],
)
def test_a_number_out_of_range_is_one_line_of_bad_input(
    settings: Settings, argv: list[str], names: str
) -> None:
    done = cli(settings, *argv)
    assert done.returncode == 2, done.stderr
    assert done.stdout == ""
    lines = [line for line in done.stderr.splitlines() if not line.startswith("{")]  # logs
    assert len(lines) == 1, done.stderr
    (line,) = lines
    assert line.startswith("error: ")
    assert names in line
    assert "unexpected" not in line
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 2**64, 10**30])
def test_the_library_refuses_an_id_beyond_64_bits(value: int) -> None:
    with pytest.raises(InvalidId, match="signed 64-bit"):
        check_id("chat_id", value)
    with pytest.raises(ForgetInputError, match="64-bit"):
        parse_scope(value, None)
    with pytest.raises(ForgetInputError, match="64-bit"):
        parse_scope(str(1), str(value))


@pytest.mark.parametrize("value", [2**63 - 1, -(2**63), 0, -1001234567890])
def test_every_64_bit_id_is_an_id(value: int) -> None:
    assert check_id("chat_id", value) == value
    assert parse_scope(value, value).chat_id == value


def test_a_huge_k_is_still_too_large_not_a_bad_id() -> None:
    with pytest.raises(QueryTooLarge):
        check_k(2**70, 100)
