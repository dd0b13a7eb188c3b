"""Time in recall (§16): a card's time span, the ``since``/``until`` filter, named times.

A card's **span** runs from its ``valid_from`` to its last observation
(``observed_at``), or to its ``valid_until`` when that is later: the time the
memory knew the fact to hold. ``recall(since=, until=)`` keeps the cards
whose span meets ``[since, until)`` (either bound may be open).

:func:`named_window` finds the time a question names — "yesterday", "last
week", "last month", "3 days ago", "in May", "in May 2023", "in 2024" — in
EN/RU/DE/ES/FR/UK, relative to ``now`` unless a year is named; recall can favour the cards of that window (``time_boost``).
Pure: ``now`` is an argument.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from memory_worker.cards.recall.tokens import words

if TYPE_CHECKING:  # the card store imports this package: no import of it back at run time
    from memory_worker.cards.model import Card


@dataclass(frozen=True, slots=True)
class Window:
    """``[since, until)``; None is open."""

    since: datetime | None = None
    until: datetime | None = None

    def __post_init__(self) -> None:
        for moment in (self.since, self.until):
            if moment is not None and moment.tzinfo is None:
                raise ValueError("since/until need a timezone (aware datetimes)")
        if self.since is not None and self.until is not None and self.until <= self.since:
            raise ValueError("until must be after since")

    @property
    def open(self) -> bool:
        return self.since is None and self.until is None

    def meets(self, start: datetime, end: datetime) -> bool:
        """Whether the span ``[start, end]`` meets the window."""
        return (self.until is None or start < self.until) and (
            self.since is None or end >= self.since
        )

    def meets_ms(self, start: int, end: int) -> bool:
        """:meth:`meets` on epoch milliseconds."""
        return (self.until is None or start < _ms(self.until)) and (
            self.since is None or end >= _ms(self.since)
        )


def _ms(moment: datetime) -> int:
    return int(moment.timestamp() * 1000)


def card_span(card: Card) -> tuple[datetime, datetime]:
    """When the memory knew the card to hold (see the module)."""
    end = card.observed_at
    if card.valid_until is not None and card.valid_until > end:
        end = card.valid_until
    return min(card.valid_from, end), end


def card_in_window(card: Card, window: Window) -> bool:
    start, end = card_span(card)
    return window.meets(start, end)


# --- times a question names ----------------------------------------------------------------


def _slavic(stem: str, endings: str) -> tuple[str, ...]:
    return tuple(stem + ending for ending in endings.split(","))


#: Every form a month is named by, January first (Slavic months in their usual cases).
_MONTHS: tuple[tuple[str, ...], ...] = (
    ("january", "januar", "janvier", "enero", *_slavic("январ", "ь,я,е"), *_slavic("січ", "ень,ня,ні")),
    ("february", "februar", "février", "fevrier", "febrero", *_slavic("феврал", "ь,я,е"),
     *_slavic("лют", "ий,ого,ому")),
    ("march", "märz", "marz", "mars", "marzo", *_slavic("март", ",а,е"), *_slavic("берез", "ень,ня,ні")),
    ("april", "avril", "abril", *_slavic("апрел", "ь,я,е"), *_slavic("квіт", "ень,ня,ні")),
    ("may", "mai", "mayo", "май", "мая", "мае", *_slavic("трав", "ень,ня,ні")),
    ("june", "juni", "juin", "junio", *_slavic("июн", "ь,я,е"), *_slavic("черв", "ень,ня,ні")),
    ("july", "juli", "juillet", "julio", *_slavic("июл", "ь,я,е"), *_slavic("лип", "ень,ня,ні")),
    ("august", "août", "aout", "agosto", *_slavic("август", ",а,е"), *_slavic("серп", "ень,ня,ні")),
    ("september", "septembre", "septiembre", *_slavic("сентябр", "ь,я,е"),
     *_slavic("верес", "ень,ня,ні")),
    ("october", "oktober", "octobre", "octubre", *_slavic("октябр", "ь,я,е"),
     *_slavic("жовт", "ень,ня,ні")),
    ("november", "novembre", "noviembre", *_slavic("ноябр", "ь,я,е"), *_slavic("листопад", ",а,і")),
    ("december", "dezember", "décembre", "decembre", "diciembre", *_slavic("декабр", "ь,я,е"),
     *_slavic("груд", "ень,ня,ні")),
)  # fmt: skip
_MONTH_OF = {name: index for index, names in enumerate(_MONTHS, start=1) for name in names}
#: English "may" and French/German "mai" only after one of these (else "may" is a verb).
_MAY_CUES = frozenset(
    ["in", "of", "since", "until", "by", "during", "early", "late", "mid", "im", "seit", "bis",
     "en", "de", "depuis"]
)  # fmt: skip

_RELATIVE = {
    "yesterday": ("day", 1),
    "gestern": ("day", 1),
    "ayer": ("day", 1),
    "hier": ("day", 1),
    "вчера": ("day", 1),
    "вчора": ("day", 1),
}
_LAST_WEEK = re.compile(
    r"last week|letzte[nr]? woche|vorige[nr]? woche|semana pasada|semaine derni[eè]re|"
    r"прошлой неделе|минулого тижня|минулому тижні"
)
_LAST_MONTH = re.compile(
    r"last month|letzte[nr]? monat|vorige[nr]? monat|mes pasado|mois dernier|"
    r"прошлом месяце|минулого місяця|минулому місяці"
)
_AGO = re.compile(
    r"(\d+)\s*(days?|weeks?|tage?n?|wochen?|d[ií]as?|semanas?|jours?|semaines?|"
    r"дн[еяи]й?|день|недел[иью]?|дні|днів|тижн[іяв]*)\s*(ago|her|назад|тому)|"
    r"(?:vor|hace|il y a)\s*(\d+)\s*(tage?n?|wochen?|d[ií]as?|semanas?|jours?|semaines?)"
)


def _month_of(word: str, previous: str) -> int | None:
    month = _MONTH_OF.get(word)
    if month == 5 and word in ("may", "mai") and previous not in _MAY_CUES:
        return None  # "may" the verb
    return month


def _month_window(month: int, now: datetime) -> Window:
    """The latest ``month`` that began at or before ``now``."""
    return _month_of_year(month, now.year if month <= now.month else now.year - 1)


def _day_start(moment: datetime) -> datetime:
    return moment.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


_TIME_WORDS = (
    frozenset(_MONTH_OF)
    | frozenset(_RELATIVE)
    | frozenset(
        [
            "last",
            "week",
            "month",
            "ago",
            "days",
            "weeks",
            "letzte",
            "letzten",
            "woche",
            "monat",
            "vor",
            "tagen",
            "wochen",
            "semana",
            "pasada",
            "mes",
            "pasado",
            "hace",
            "días",
            "dias",
            "semaine",
            "dernière",
            "mois",
            "dernier",
            "il",
            "y",
            "jours",
            "прошлой",
            "неделе",
            "прошлом",
            "месяце",
            "назад",
            "дней",
            "недели",
            "минулого",
            "тижня",
            "місяця",
            "тому",
            "днів",
        ]
    )
)


def without_time_words(text: str) -> str:
    """``text`` without the words that name a time (months, "last week", "ago"…): once a
    named time acts through the time boost, they are no evidence of content."""
    return " ".join(w for w in words(text) if w not in _TIME_WORDS and not w.isdigit())


def named_window(text: str, now: datetime) -> Window | None:
    """The time ``text`` names, relative to ``now`` (None: it names none). See the module."""
    low = " ".join(words(text))
    today = _day_start(now)
    if _LAST_WEEK.search(low):
        monday = today - timedelta(days=today.weekday())
        return Window(monday - timedelta(days=7), monday)
    if _LAST_MONTH.search(low):
        first = today.replace(day=1)
        previous = (first - timedelta(days=1)).replace(day=1)
        return Window(previous, first)
    ago = _AGO.search(low)
    if ago is not None:
        count = int(ago.group(1) or ago.group(4))
        unit = ago.group(2) or ago.group(5)
        days = count * (7 if re.match("w|sem|нед|тиж", unit) else 1)
        day = today - timedelta(days=days)
        return Window(day - timedelta(days=1), day + timedelta(days=2))
    found = words(text)
    for index, word in enumerate(found):
        if word in _RELATIVE:
            day = today - timedelta(days=_RELATIVE[word][1])
            return Window(day, day + timedelta(days=1))
        month = _month_of(word, found[index - 1] if index else "")
        if month is not None:
            year = _year(found[index + 1 : index + 3])
            return _month_window(month, now) if year is None else _month_of_year(month, year)
    year = _year(found)
    if year is not None:
        return Window(datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC))
    return None


def _year(found: list[str]) -> int | None:
    """The first word of ``found`` that is a year (1900-2199), if any."""
    for word in found:
        if len(word) == 4 and word.isdigit() and 1900 <= int(word) < 2200:
            return int(word)
    return None


def _month_of_year(month: int, year: int) -> Window:
    start = datetime(year, month, 1, tzinfo=UTC)
    return Window(start, datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=UTC))
