"""The text the detectors read: NFKC, zero-width characters removed, Latin/Cyrillic/Greek
look-alikes folded — and the way back to the text as written.

People hide a label without meaning to or on purpose: a zero-width space pasted inside
``pass​word``, full-width ``ｐａｓｓｗｏｒｄ：`` from a Japanese keyboard, a Cyrillic ``а`` in
``pаssword``. Every detector reads :func:`fold`'s text; each span it finds is mapped back
to the characters of the original (:meth:`Folded.span`), so the masked text keeps
everything else exactly as written.

Look-alikes are folded only inside a word that mixes scripts (``pаssword`` → ``password``,
``пaроль`` → ``пароль``, by the word's majority script) or that holds a Cyrillic letter no
Russian or Ukrainian word has (``ѕ``, ``ԁ``, ``ԝ``…): a Russian word stays Russian.

Cost: an ASCII text, and any text that NFKC leaves alone with no zero-width character and
no mixed-script word (most chat text in any language), is its own fold — one C-speed check
each; the rest pay a pass over their characters.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

#: Characters that take no space: zero-width space/joiners, word joiner, BOM, soft hyphen,
#: direction marks, Mongolian vowel separator, combining grapheme joiner.
ZERO_WIDTH = "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u034f"
_ZERO = re.compile(f"[{ZERO_WIDTH}]")
_CYRILLIC_GREEK = "\u0370-\u03ff\u0400-\u052f"
_MIXED = re.compile(f"[A-Za-z][{_CYRILLIC_GREEK}]|[{_CYRILLIC_GREEK}][A-Za-z]|[ѕԁԝԛӏһјЅЈ]")
_WORD = re.compile(r"[^\W\d_]+")

#: Cyrillic and Greek letters drawn like Latin ones.
TO_LATIN = str.maketrans(
    "аеорсухіјѕԁԛԝһӏкмнтвАВЕКМНОРСТХУІЈЅαοριυχνκΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdqwhlkmhtbABEKMHOPCTXYIJSaopiuxvkABEZHIKMNOPTYX",
)
#: Latin letters drawn like Cyrillic ones (a Cyrillic word with a Latin one inside).
TO_CYRILLIC = str.maketrans("aeopcyxkABEKMHOPCTXY", "аеорсухкАВЕКМНОРСТХУ")
_NOT_RUSSIAN = frozenset("ѕԁԝԛӏһјЅЈ")


def _fold_word(match: re.Match[str]) -> str:
    word = match.group(0)
    latin = sum(c.isascii() for c in word)
    if latin == len(word):
        return word
    if latin * 2 >= len(word) or _NOT_RUSSIAN.intersection(word):
        return word.translate(TO_LATIN)
    if latin:
        return word.translate(TO_CYRILLIC)
    return word


@dataclass(frozen=True, slots=True)
class Folded:
    """A folded text and, when it differs from the original, where each of its characters
    came from (``starts[i]``/``ends[i]``: the original characters that made ``text[i]``)."""

    text: str
    starts: tuple[int, ...] | None = None
    ends: tuple[int, ...] | None = None

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of the folded ``[start, end)``."""
        if self.starts is None or self.ends is None:
            return start, end
        if end <= start:
            at = self.starts[start] if start < len(self.starts) else self.ends[-1]
            return at, at
        return self.starts[start], self.ends[end - 1]


def _cached_nfkc(piece: str, cache: dict[str, str]) -> str:
    folded = cache.get(piece)
    if folded is None:
        folded = cache[piece] = unicodedata.normalize("NFKC", piece)
    return folded


_NFKC_CACHE: dict[str, str] = {}


def fold(text: str) -> Folded:
    """``text`` as the detectors read it (see the module doc)."""
    if text.isascii() or (
        _ZERO.search(text) is None
        and _MIXED.search(text) is None
        and unicodedata.is_normalized("NFKC", text)
    ):
        return Folded(text)
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    cache = _NFKC_CACHE if len(_NFKC_CACHE) < 4096 else {}
    while i < n:
        j = i + 1
        while j < n and unicodedata.combining(text[j]):
            j += 1
        if j == i + 1 and text[i] in ZERO_WIDTH:
            i = j
            continue
        piece = text[i:j]
        if not piece.isascii():
            piece = _cached_nfkc(_ZERO.sub("", piece), cache)
        out.append(piece)
        starts.extend([i] * len(piece))
        ends.extend([j] * len(piece))
        i = j
    folded = "".join(out)
    if _MIXED.search(folded):
        folded = _WORD.sub(_fold_word, folded)
    return Folded(folded, tuple(starts), tuple(ends))
