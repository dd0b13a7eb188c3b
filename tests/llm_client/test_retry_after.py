"""``Retry-After`` per RFC 9110 (§3): ASCII delay-seconds or an HTTP-date, and nothing else.

A table of what farms really send (and what they get wrong), then hypothesis: any text in
the header (and in ``Date``) is read without raising, as ``None`` or a finite pause in
``[0, MAX_SECONDS]``; a pause is only ever read from ASCII digits or an HTTP-date; and a
date written in any of the three forms reads back as itself.
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from llm_client._transport.retry_after import MAX_SECONDS, http_date, retry_after_seconds

#: The reader's clock in the table: 2024-03-01 12:00:00 UTC.
NOW = datetime(2024, 3, 1, 12, 0, 0, tzinfo=UTC).timestamp()

ROWS = [
    # delay-seconds: ASCII digits, optional whitespace around them
    pytest.param("7", None, 7.0, id="digits"),
    pytest.param("0", None, 0.0, id="zero"),
    pytest.param("007", None, 7.0, id="leading-zeros"),
    pytest.param(" 120 ", None, 120.0, id="spaces"),
    pytest.param("\t30", None, 30.0, id="tab"),
    pytest.param("99999999999999999999", None, float(MAX_SECONDS), id="huge-capped"),
    pytest.param("9" * 5000, None, float(MAX_SECONDS), id="longer-than-int-parses"),
    # digits that are not ASCII, and numbers that are not delay-seconds
    pytest.param("²", None, None, id="superscript-two"),
    pytest.param("١٢٠", None, None, id="arabic-indic-digits"),
    pytest.param("１２", None, None, id="full-width-digits"),
    pytest.param("1.5", None, None, id="decimal"),
    pytest.param("1e3", None, None, id="exponent"),
    pytest.param("-1", None, None, id="negative"),
    pytest.param("+5", None, None, id="plus"),
    pytest.param("nan", None, None, id="nan"),
    pytest.param("inf", None, None, id="inf"),
    pytest.param("0x10", None, None, id="hex"),
    pytest.param("5 s", None, None, id="unit"),
    pytest.param("5, 6", None, None, id="list"),
    pytest.param("7\n", None, None, id="newline"),
    pytest.param("", None, None, id="empty"),
    pytest.param("   ", None, None, id="blank"),
    pytest.param(None, None, None, id="absent"),
    # HTTP-date, the three forms, against the reader's clock
    pytest.param("Fri, 01 Mar 2024 12:01:00 GMT", None, 60.0, id="imf-fixdate"),
    pytest.param("Friday, 01-Mar-24 12:01:00 GMT", None, 60.0, id="rfc850"),
    pytest.param("Fri Mar  1 12:01:00 2024", None, 60.0, id="asctime"),
    pytest.param("Fri, 01 Mar 2024 12:00:60 GMT", None, 59.0, id="leap-second"),
    pytest.param("Wed, 21 Oct 2015 07:28:00 GMT", None, 0.0, id="past-is-now"),
    # ... against the answer's own Date header when it has a valid one
    pytest.param(
        "Fri, 01 Mar 2024 12:01:00 GMT", "Fri, 01 Mar 2024 12:00:30 GMT", 30.0, id="date-header"
    ),
    pytest.param(
        "Fri, 01 Mar 2024 13:00:00 GMT",
        "Fri, 01 Mar 2024 11:00:00 GMT",
        7200.0,
        id="farm-clock-an-hour-behind",
    ),
    pytest.param("Fri, 01 Mar 2024 12:01:00 GMT", "yesterday", 60.0, id="junk-date-header"),
    # not HTTP-dates
    pytest.param("Sat, 31 Feb 2024 12:00:00 GMT", None, None, id="no-such-day"),
    pytest.param("Fri, 01 Mar 2024 25:00:00 GMT", None, None, id="hour-25"),
    pytest.param("fri, 01 mar 2024 12:01:00 gmt", None, None, id="wrong-case"),
    pytest.param("Fri, 01 Mar 2024 12:01:00 +0000", None, None, id="offset-not-gmt"),
    pytest.param("Fri, 1 Mar 2024 12:01:00 GMT", None, None, id="one-digit-day"),
    pytest.param("Fri, ０1 Mar 2024 12:01:00 GMT", None, None, id="full-width-in-date"),
    pytest.param("2024-03-01T12:01:00Z", None, None, id="iso-8601"),
    pytest.param("Fri, 01 Mar 0000 12:01:00 GMT", None, None, id="year-zero"),
]


@pytest.mark.parametrize(("value", "date", "seconds"), ROWS)
def test_retry_after(value: str | None, date: str | None, seconds: float | None) -> None:
    assert retry_after_seconds(value, now=NOW, date=date) == seconds


@pytest.mark.parametrize(
    ("value", "year"),
    [
        pytest.param("Sunday, 06-Nov-94 08:49:37 GMT", 1994, id="94-is-1994"),
        pytest.param("Monday, 01-Mar-74 00:00:00 GMT", 2074, id="50-years-ahead-is-ahead"),
        pytest.param("Thursday, 01-Mar-75 00:00:00 GMT", 1975, id="51-years-ahead-is-behind"),
        pytest.param("Wednesday, 01-Mar-30 00:00:00 GMT", 2030, id="30-is-2030"),
    ],
)
def test_rfc850_two_digit_years(value: str, year: int) -> None:
    moment = http_date(value, now=NOW)
    assert moment is not None
    assert datetime.fromtimestamp(moment, tz=UTC).year == year


# --- properties ----------------------------------------------------------------------------

headers = st.text(max_size=40) | st.sampled_from(
    ["²", "١٢٠", "1.5", "-0", "Fri, 01 Mar 2024 12:01:00 GMT", "Fri Mar  1 12:01:00 2024"]
)
clocks = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False)


@settings(max_examples=400)
@given(value=headers, date=st.none() | headers, now=clocks)
def test_any_header_is_read_without_raising_as_none_or_a_sane_pause(
    value: str, date: str | None, now: float
) -> None:
    seconds = retry_after_seconds(value, now=now, date=date)
    if seconds is None:
        return
    assert math.isfinite(seconds)
    assert 0.0 <= seconds <= MAX_SECONDS
    text = value.strip(" \t")
    is_digits = text != "" and all(c in "0123456789" for c in text)
    assert is_digits or http_date(value, now=now) is not None


@settings(max_examples=200)
@given(st.from_regex(r"\A[0-9]{1,40}\Z"))
def test_ascii_digits_are_that_many_seconds(digits: str) -> None:
    assert retry_after_seconds(digits, now=NOW) == float(min(int(digits), MAX_SECONDS))


MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def forms(moment: datetime) -> list[str]:
    """``moment`` written in each of RFC 9110's three HTTP-date forms."""
    day, month = DAYS[moment.weekday()], MONTHS[moment.month - 1]
    clock = moment.strftime("%H:%M:%S")
    return [
        f"{day[:3]}, {moment.day:02d} {month} {moment.year:04d} {clock} GMT",
        f"{day}, {moment.day:02d}-{month}-{moment.year % 100:02d} {clock} GMT",
        f"{day[:3]} {month} {moment.day:2d} {clock} {moment.year:04d}",
    ]


@settings(max_examples=200)
@given(
    offset=st.integers(min_value=-49 * 365 * 86400, max_value=49 * 365 * 86400),
    date_offset=st.none() | st.integers(min_value=-86400, max_value=86400),
)
def test_every_http_date_form_reads_back_as_its_moment(
    offset: int, date_offset: int | None
) -> None:
    moment = datetime.fromtimestamp(NOW, tz=UTC) + timedelta(seconds=offset)
    sent = None
    if date_offset is not None:
        sent = forms(moment - timedelta(seconds=date_offset))[0]
    for written in forms(moment):
        assert http_date(written, now=NOW) == moment.timestamp(), written
        expected = float(min(max(offset if sent is None else date_offset or 0, 0), MAX_SECONDS))
        assert retry_after_seconds(written, now=NOW, date=sent) == expected, written
