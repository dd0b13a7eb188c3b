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
from functools import lru_cache

#: Characters that take no space: zero-width space/joiners, word joiner, BOM, soft hyphen,
#: direction marks, Mongolian vowel separator, combining grapheme joiner, and the Arabic
#: tatweel (a stretch of the line between letters, "كلمـــة": no letter of its own).
ZERO_WIDTH = (
    "\u200b\u200c\u200d\u200e\u200f\u2060\u2061\u2062\u2063\u2064\ufeff\u00ad\u180e\u034f\u0640"
)
#: Half-width kana voicing marks: they join the kana before them ("ﾊﾟ" is "パ").
_HALF_WIDTH_MARKS = "\uff9e\uff9f"
_ZERO = re.compile(f"[{ZERO_WIDTH}]")
_CYRILLIC_GREEK = "\u0370-\u03ff\u0400-\u052f"
_LATIN = "A-Za-z\u00c0-\u024f"
#: Cyrillic and Greek letters drawn like Latin ones that no Russian or Ukrainian word has (the
#: Komi and Abkhaz ``ԁ ԝ ԛ``, the Greek lunate sigma ``ϲ Ϲ`` and yot ``ϳ``, …): a word holding one
#: is folded whatever its other letters.
_NOT_RUSSIAN_LETTERS = "ѕԁԝԛӏһјЅЈԀԜԚӀҺϲϹϳͿҮѴѵԌԍ"
#: Capitals drawn like Latin ones, in Greek and Cyrillic.
_LOOKALIKE_CAPITALS = "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧАВЕКМНОРСТХ"
_MIXED = re.compile(
    f"[{_LATIN}][{_CYRILLIC_GREEK}]|[{_CYRILLIC_GREEK}][{_LATIN}]|[{_NOT_RUSSIAN_LETTERS}]"
    f"|(?<![^\\W\\d_])[{_LOOKALIKE_CAPITALS}]{{2,}}(?![^\\W\\d_])"
)
_WORD = re.compile(r"[^\W\d_]+")
_CAPITALS_WORD = re.compile(f"^[{_LOOKALIKE_CAPITALS}]+$")
_CYRILLIC = re.compile("[\u0400-\u052f]")
#: Digits of other scripts (Arabic-Indic ٥٠٥٧, Devanagari, …); NFKC keeps them as they are.
_OTHER_DIGITS = re.compile(r"(?![0-9])\d")
#: Latin small capitals (NFKC keeps them), in the order of ``a``–``z`` without ``q`` and ``x``.
SMALL_CAPITALS = "ᴀʙᴄᴅᴇꜰɢʜɪᴊᴋʟᴍɴᴏᴘʀꜱᴛᴜᴠᴡʏᴢ"
#: Whatever makes a text NFKC-normal text fold differently: one scan.
_SLOW = re.compile(f"[{ZERO_WIDTH}{SMALL_CAPITALS}ɑɡ]|{_MIXED.pattern}|{_OTHER_DIGITS.pattern}")

#: Cyrillic and Greek letters drawn like Latin ones.
TO_LATIN = str.maketrans(
    "аеорсухіјѕԁԛԝһӏкмнтвАВЕКМНОРСТХУІЈЅαοριυχνκΑΒΕΖΗΙΚΜΝΟΡΤΥΧԀԜԚӀҺϲϹϳͿҮѴѵԌԍεωγτησ",
    "aeopcyxijsdqwhlkmhtbABEKMHOPCTXYIJSaopiuxvkABEZHIKMNOPTYXDWQlHcCjJYVvGgewytno",
)
#: Latin letters drawn like Cyrillic ones (a Cyrillic word with a Latin one inside).
TO_CYRILLIC = str.maketrans("aeopcyxkABEKMHOPCTXY", "аеорсухкАВЕКМНОРСТХУ")
_NOT_RUSSIAN = frozenset(_NOT_RUSSIAN_LETTERS)
_TO_LATIN_FROM = frozenset(chr(c) for c in TO_LATIN)
_TO_CYRILLIC_FROM = frozenset(chr(c) for c in TO_CYRILLIC)


def _latin(char: str) -> bool:
    return char.isascii() or "\u00c0" <= char <= "\u024f"


def _fold_word(word: str, latin_text: bool) -> str:
    """A word by the one script all its letters can be drawn in ("пapoль": the Latin ``a``,
    ``p``, ``o`` have Cyrillic twins, ``п`` and ``л`` no Latin one, so the word is Cyrillic;
    "раssе" is Latin for ``s``), else by its majority script (``latin_text``: the text's
    letters are mostly Latin, so a word of look-alike capitals alone, "SIM-ΡΙΝ", is Latin
    too)."""
    latin = sum(_latin(c) for c in word)
    if latin == len(word):
        return word
    as_latin = all(_latin(c) or c in _TO_LATIN_FROM for c in word)
    as_cyrillic = all(not _latin(c) or c in _TO_CYRILLIC_FROM for c in word)
    if as_latin != as_cyrillic and _CYRILLIC.search(word):
        return word.translate(TO_LATIN if as_latin else TO_CYRILLIC)
    if latin * 2 >= len(word) or _NOT_RUSSIAN.intersection(word):
        return word.translate(TO_LATIN)
    if latin and not _CYRILLIC.search(word):
        return word.translate(TO_LATIN)  # Greek and Latin letters: "ΡIΝ" is "PIN"
    if latin:
        return word.translate(TO_CYRILLIC)
    if latin_text and _CAPITALS_WORD.match(word):
        return word.translate(TO_LATIN)
    return word


def _mostly_latin(text: str) -> bool:
    """Whether the letters of ``text`` outside words of look-alike capitals are mostly Latin
    (none at all counts as Latin: "ΡΙΝ 2143" alone is "PIN 2143")."""
    letters = [c for word in _WORD.findall(text) if not _CAPITALS_WORD.match(word) for c in word]
    return sum(_latin(c) for c in letters) * 2 >= len(letters)


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
#: Look-alikes NFKC would turn into letters no longer drawn like Latin ones (the lunate sigma
#: ``Ϲ`` becomes ``Σ``), or leaves as they are though they are Latin letters drawn small
#: (small capitals ``ᴘᴀssᴡᴏʀᴅ``, the Latin alpha and script g): folded to Latin first.
_BEFORE_NFKC = str.maketrans("Ϲϲ" + SMALL_CAPITALS + "ɑɡ", "Cc" + "abcdefghijklmnoprstuvwyz" + "ag")


@lru_cache(maxsize=64)
def fold(text: str) -> Folded:
    """``text`` as the detectors read it (see the module doc); the last few are kept, as
    :func:`~.detect.mask`, its last guard and :func:`~.detect.contains_secret` read the same
    text in turn."""
    if text.isascii() or (_SLOW.search(text) is None and unicodedata.is_normalized("NFKC", text)):
        return Folded(text)
    out: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    i, n = 0, len(text)
    cache = _NFKC_CACHE if len(_NFKC_CACHE) < 4096 else {}
    while i < n:
        j = i + 1
        while j < n and (unicodedata.combining(text[j]) or text[j] in _HALF_WIDTH_MARKS):
            j += 1
        if j == i + 1 and text[i] in ZERO_WIDTH:
            i = j
            continue
        piece = text[i:j]
        if not piece.isascii():
            piece = _cached_nfkc(_ZERO.sub("", piece).translate(_BEFORE_NFKC), cache)
            if j == i + 1 and len(piece) == 1 and piece.isdigit() and not piece.isascii():
                piece = str(unicodedata.digit(piece, 0))
        out.append(piece)
        starts.extend([i] * len(piece))
        ends.extend([j] * len(piece))
        i = j
    folded = "".join(out)
    if _MIXED.search(folded):
        latin_text = _mostly_latin(folded)
        folded = _WORD.sub(lambda m: _fold_word(m.group(0), latin_text), folded)
    return Folded(folded, tuple(starts), tuple(ends))
