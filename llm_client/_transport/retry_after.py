"""``Retry-After`` read as RFC 9110 defines it (§10.2.3): delay-seconds or an HTTP-date.

A farm names the pause it wants in one of two forms, and this module reads both:

- **delay-seconds**: ``1*DIGIT``, ASCII digits only. ``str.isdigit`` and ``float`` accept
  far more (``"²"``, ``"١٢٠"``, ``"1.5"``, ``"1e3"``, ``"nan"``), none of which is
  delay-seconds, so the form is matched with ``[0-9]+``. A number too long to mean anything
  is :data:`MAX_SECONDS`.
- **HTTP-date**, in each of the three forms a recipient must accept (RFC 9110 §5.6.7):
  IMF-fixdate ``Sun, 06 Nov 1994 08:49:37 GMT``, the obsolete RFC 850 form
  ``Sunday, 06-Nov-94 08:49:37 GMT`` (a two-digit year more than 50 years ahead is the
  century before) and asctime ``Sun Nov  6 08:49:37 1994``. The pause is the date minus
  the answer's own ``Date`` header when that is a valid HTTP-date too (one clock: a farm
  whose clock is off still gets the pause it meant), else minus ``now``; a date already
  past is a pause of 0.

Anything else — junk, a negative or decimal number, a date that does not exist, a day
name or month in the wrong case — is ignored (``None``), and nothing here ever raises: the
header is advice, and a farm's typo must not turn a busy answer into a failed run.
"""

from __future__ import annotations

import re
import time
from datetime import UTC, datetime
from typing import Final

#: The longest pause a header is read as (seconds, ~31 years); the cooling cap
#: (``MEMORY_RETRY_AFTER_MAX_SECONDS``) applies after it.
MAX_SECONDS: Final = 1_000_000_000

_DELAY: Final = re.compile(r"[0-9]+")
_DAY: Final = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)"
_DAY_LONG: Final = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_MONTHS: Final = (
    "Jan",
    "Feb",
    "Mar",
    "Apr",
    "May",
    "Jun",
    "Jul",
    "Aug",
    "Sep",
    "Oct",
    "Nov",
    "Dec",
)
_MONTH: Final = f"(?P<month>{'|'.join(_MONTHS)})"
_TIME: Final = "(?P<hour>[0-9]{2}):(?P<minute>[0-9]{2}):(?P<second>[0-9]{2})"
_IMF_FIXDATE: Final = re.compile(
    rf"{_DAY}, (?P<day>[0-9]{{2}}) {_MONTH} (?P<year>[0-9]{{4}}) {_TIME} GMT"
)
_RFC850: Final = re.compile(
    rf"{_DAY_LONG}, (?P<day>[0-9]{{2}})-{_MONTH}-(?P<yy>[0-9]{{2}}) {_TIME} GMT"
)
_ASCTIME: Final = re.compile(
    rf"{_DAY} {_MONTH} (?P<day>[0-9]{{2}}| [0-9]) {_TIME} (?P<year>[0-9]{{4}})"
)
#: Optional whitespace around a field value (RFC 9110 §5.5: SP and HTAB only).
_OWS: Final = " \t"


def http_date(value: str, *, now: float) -> float | None:
    """An HTTP-date (any of the three forms) as seconds since the epoch, else ``None``.

    ``now`` (seconds since the epoch) only places an RFC 850 two-digit year.
    """
    text = value.strip(_OWS)
    for form in (_IMF_FIXDATE, _RFC850, _ASCTIME):
        match = form.fullmatch(text)
        if match is not None:
            break
    else:
        return None
    fields = match.groupdict()
    if fields.get("yy") is not None:
        year = _two_digit_year(int(fields["yy"]), now)
    else:
        year = int(fields["year"])
    # A leap second (``:60``) is allowed by the grammar; datetime stops at 59.
    second = min(int(fields["second"]), 59)
    try:
        moment = datetime(
            year,
            _MONTHS.index(fields["month"]) + 1,
            int(fields["day"]),
            int(fields["hour"]),
            int(fields["minute"]),
            second,
            tzinfo=UTC,
        )
    except ValueError:  # 31 Feb, hour 25, year 0000: not a date
        return None
    return moment.timestamp()


def _two_digit_year(yy: int, now: float) -> int:
    """RFC 9110 §5.6.7: a two-digit year that would be more than 50 years in the future is
    the most recent past year with the same last two digits."""
    try:
        current = datetime.fromtimestamp(now, tz=UTC).year
    except (OverflowError, OSError, ValueError):  # a clock nobody has: read it as 1970
        current = 1970
    year = current - current % 100 + yy
    return year - 100 if year > current + 50 else year


def retry_after_seconds(
    value: str | None, *, now: float | None = None, date: str | None = None
) -> float | None:
    """The pause ``Retry-After: value`` asks for, in seconds (``None``: no usable header).

    ``now`` is the reader's wall clock (seconds since the epoch; ``None`` reads
    ``time.time()``), used only for an HTTP-date when ``date`` — the answer's own ``Date``
    header — is absent or not an HTTP-date.
    """
    if value is None:
        return None
    text = value.strip(_OWS)
    if _DELAY.fullmatch(text):
        digits = text.lstrip("0")
        if len(digits) > len(str(MAX_SECONDS)):  # int() of 5,000 digits would raise
            return float(MAX_SECONDS)
        return float(min(int(digits or "0"), MAX_SECONDS))
    clock = time.time() if now is None else now
    moment = http_date(text, now=clock)
    if moment is None:
        return None
    sent = http_date(date, now=clock) if date is not None else None
    reference = clock if sent is None else sent
    return float(min(max(moment - reference, 0.0), MAX_SECONDS))
