"""The edge table: each foreign exception family becomes the right ``llm_client`` error."""

from __future__ import annotations

import binascii
import json

import httpx
import orjson
import pytest

from llm_client import (
    DecodeError,
    LLMError,
    RequestError,
    RequestTimeout,
    TaskTimeout,
    Transport,
    Upstream,
)
from llm_client._edge import mapped

REQUEST = httpx.Request("GET", "http://farm.invalid/v1/jobs/1")


@pytest.mark.parametrize(
    ("foreign", "expected"),
    [
        pytest.param(
            httpx.ConnectError("[Errno 111] Connection refused", request=REQUEST),
            Transport,
            id="connect",
        ),
        pytest.param(
            httpx.ConnectError("[Errno -3] Temporary failure in name resolution", request=REQUEST),
            Transport,
            id="dns",
        ),
        pytest.param(
            httpx.ReadError("connection reset by peer", request=REQUEST), Transport, id="reset"
        ),
        pytest.param(
            httpx.RemoteProtocolError(
                "Server disconnected without sending a response.", request=REQUEST
            ),
            Transport,
            id="remote-protocol",
        ),
        pytest.param(
            httpx.ReadTimeout("timed out", request=REQUEST), RequestTimeout, id="read-timeout"
        ),
        pytest.param(httpx.PoolTimeout("pool", request=REQUEST), RequestTimeout, id="pool-timeout"),
        pytest.param(
            httpx.ConnectTimeout("connect", request=REQUEST), RequestTimeout, id="connect-timeout"
        ),
        pytest.param(TimeoutError(), RequestTimeout, id="local-timeout"),
        pytest.param(ConnectionResetError(104, "reset"), Transport, id="raw-socket-reset"),
        pytest.param(
            httpx.UnsupportedProtocol("ftp", request=REQUEST), RequestError, id="bad-scheme"
        ),
        pytest.param(
            httpx.LocalProtocolError("bad header", request=REQUEST),
            RequestError,
            id="local-protocol",
        ),
        pytest.param(
            httpx.DecodingError("gzip", request=REQUEST), DecodeError, id="content-decoding"
        ),
        pytest.param(json.JSONDecodeError("x", "doc", 0), DecodeError, id="json"),
        pytest.param(binascii.Error("Incorrect padding"), DecodeError, id="base64"),
        pytest.param(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"), DecodeError, id="unicode"),
    ],
)
def test_foreign_exceptions_map_onto_the_tree(foreign: Exception, expected: type[LLMError]) -> None:
    with pytest.raises(expected) as info, mapped("poll job 1", seconds=2.5):
        raise foreign
    assert info.value.__cause__ is foreign
    assert str(info.value).startswith("poll job 1")


def test_timeouts_name_the_budget_seconds() -> None:
    with pytest.raises(RequestTimeout) as info, mapped("submit", seconds=2.5):
        raise TimeoutError
    assert str(info.value) == "submit timed out after 2.5s"
    assert info.value.seconds == 2.5
    assert info.value.budget == "request"


def test_a_deadline_cut_uses_the_callers_error() -> None:
    with (
        pytest.raises(TaskTimeout),
        mapped("poll", seconds=1, timeout_error=lambda: TaskTimeout("cut", seconds=1)),
    ):
        raise httpx.ReadTimeout("timed out", request=REQUEST)


def test_connect_timeout_is_a_request_timeout_of_the_connect_budget() -> None:
    cut = TaskTimeout("task", seconds=600)
    with (
        pytest.raises(RequestTimeout) as info,
        mapped("chat", seconds=600, connect_seconds=5, timeout_error=lambda: cut),
    ):
        raise httpx.ConnectTimeout("connect", request=REQUEST)
    assert info.value.seconds == 5


def test_llm_errors_and_unknown_exceptions_pass_through() -> None:
    own = Upstream("already typed")
    with pytest.raises(Upstream) as info, mapped("x"):
        raise own
    assert info.value is own
    with pytest.raises(KeyError), mapped("x"):
        raise KeyError("a bug stays a bug")


def test_unserialisable_is_request_error() -> None:
    with pytest.raises(RequestError), mapped("encode"):
        orjson.dumps({"x": {1, 2}})


def test_the_most_specific_row_wins_whatever_the_table_order() -> None:
    """httpx-style: a subclass's row wins over its base's wherever either sits in the table,
    so reordering the map (or appending a broader row) cannot change a mapping."""
    import itertools

    from llm_client._edge import EXCEPTION_MAP, factory_for

    samples: list[BaseException] = [
        httpx.ConnectTimeout("connect", request=REQUEST),
        httpx.ReadTimeout("read", request=REQUEST),
        httpx.ConnectError("refused", request=REQUEST),
        httpx.UnsupportedProtocol("ftp", request=REQUEST),
        httpx.DecodingError("gzip", request=REQUEST),
        TimeoutError(),
        ConnectionResetError(104, "reset"),
        json.JSONDecodeError("x", "doc", 0),
        UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad"),
        binascii.Error("pad"),
    ]
    expected = {id(s): factory_for(s) for s in samples}
    assert all(expected.values())
    rows = list(EXCEPTION_MAP)
    orders = [tuple(reversed(rows)), *itertools.islice(itertools.permutations(rows), 0, 200, 7)]
    for order in orders:
        for sample in samples:
            assert factory_for(sample, tuple(order)) is expected[id(sample)], (sample, order)


def test_every_row_of_the_map_is_reachable() -> None:
    """No row is shadowed: each class maps through its own row."""
    from llm_client._edge import EXCEPTION_MAP, factory_for

    for foreign, factory in EXCEPTION_MAP:
        probe = foreign.__new__(foreign)  # an instance of exactly that class
        assert factory_for(probe) is factory, foreign
