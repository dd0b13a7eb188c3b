"""The language a card is written in, guessed from its few words (§10).

A card is one short sentence ("Max spielt Geige."), often without a single stop word, so
:func:`memory_worker.cards.recall.tokens.guess_language` (stop words and marks, enough for a
message) leaves most cards unknown. :func:`card_language` looks harder, in three steps, each
answering only when one language leads by a clear margin:

1. the script: mostly Cyrillic is Russian, Ukrainian by і/ї/є/ґ;
2. the words: the stop words of each language, the forms of the verbs a fact about someone
   is stated with (to be, to have, to like, to work, to live, to play, to speak…) and the
   letters with marks (ß, ñ, ç…), the subject's own words aside (a name says nothing:
   "Lucía likes black tea." is English);
3. word shapes: endings and letter groups typical of each language ("-ing", "sch", "-ción",
   "eau"…).

None when nothing gives it away. :func:`other_languages` is what the withdrawn-fact rule asks:
whether two cards are surely in two languages — two scripts, or two languages guessed.
Pure, memoised.
"""

from __future__ import annotations

import re
from functools import lru_cache

from memory_worker.cards.recall.tokens import stop_words, words

#: The Latin-script languages guessed, in a fixed order (ties answer None).
LATIN = ("en", "de", "es", "fr")
#: How far ahead of the next a language's score must be, words first, then word shapes.
WORD_MARGIN = 0.5
SHAPE_MARGIN = 0.5
#: What one letter with a mark, and one word-shape cue, add to a language's score.
MARK_WEIGHT = 0.5
SHAPE_WEIGHT = 0.25


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


#: Besides each language's stop words (lexical recall's), the verbs and particles a fact about
#: someone is most often stated with.
_VERBS: dict[str, frozenset[str]] = {
    "en": _split(
        "again every never longer likes loves enjoys works lives plays speaks goes owns wants "
        "named called doesn don isn wasn didn won"
    ),
    "de": _split(
        "als beim vom sehr gern gerne nie mehr immer jeden jede sein seine seinen seiner ihre "
        "ihren ihrem mag liebt arbeitet wohnt lebt spielt spricht"
    ),
    "es": _split(
        "está están tiene tienen gusta gustan encanta trabaja vive juega habla nunca todos "
        "todas cada"
    ),
    "fr": _split(
        "chez comme très jamais plus tous chaque aime adore travaille habite vit joue parle"
    ),
}
_MARKS = {"en": "", "de": "äöüß", "es": "ñáíóú¿¡", "fr": "çàâèêëîïôûœ"}
_ENDINGS = {
    "en": ("ing", "ed", "s", "ly", "y", "'t"),
    "de": ("t", "en", "er", "ung", "lich", "isch", "keit", "heit", "chen"),
    "es": ("a", "o", "as", "os", "ción", "dad", "ía"),
    "fr": ("e", "es", "ent", "eau", "eux", "ière", "ais", "ait", "é"),
}
_GROUPS = {
    "en": ("th", "wh", "sh", "ee", "oo", "w", "ck"),
    "de": ("sch", "tz", "ei", "ie", "ß", "ü", "ö", "ä", "k", "w"),
    "es": ("ll", "ñ", "qu", "ue"),
    "fr": ("ou", "eau", "qu", "ai", "oi", "è", "ç"),
}
_WORDS = {lang: stop_words(lang) | verbs for lang, verbs in _VERBS.items()}
_CYRILLIC = re.compile("[а-яёіїєґ]")
_UKRAINIAN = re.compile("[іїєґ]")


def _word_score(found: list[str], lang: str) -> float:
    known = sum(w in _WORDS[lang] for w in found)
    return known + MARK_WEIGHT * sum(ch in _MARKS[lang] for w in found for ch in w)


def _shape_score(found: list[str], lang: str) -> float:
    score = _word_score(found, lang)
    for w in found:
        if len(w) < 3 or w in _WORDS[lang]:
            continue
        score += SHAPE_WEIGHT * any(w.endswith(e) for e in _ENDINGS[lang])
        score += SHAPE_WEIGHT * sum(g in w for g in _GROUPS[lang])
    return score


def _leader(scores: dict[str, float], margin: float) -> str | None:
    ranked = sorted(scores.values(), reverse=True)
    if ranked[0] <= 0 or ranked[0] - ranked[1] < margin:
        return None
    return max(LATIN, key=lambda lang: scores[lang])


def script(text: str) -> str | None:
    """``cyrillic`` or ``latin`` by most of ``text``'s letters (None: no letters)."""
    letters = "".join(ch for w in words(text) for ch in w if ch.isalpha())
    if not letters:
        return None
    cyrillic = len(_CYRILLIC.findall(letters))
    return "cyrillic" if cyrillic * 2 > len(letters) else "latin"


@lru_cache(maxsize=65_536)
def card_language(text: str, subject: str = "") -> str | None:
    """The language of a card's ``text`` (en/de/es/fr/ru/uk; None: not given away), the
    words of its ``subject`` aside — see the module doc."""
    named = set(words(subject))
    found = [w for w in words(text) if w not in named and not w.isdigit()]
    letters = "".join(found)
    if not letters:
        return None
    if len(_CYRILLIC.findall(letters)) * 2 > len(letters):
        return "uk" if _UKRAINIAN.search(letters) else "ru"
    for score, margin in ((_word_score, WORD_MARGIN), (_shape_score, SHAPE_MARGIN)):
        leader = _leader({lang: score(found, lang) for lang in LATIN}, margin)
        if leader is not None:
            return leader
    return None


def other_languages(a: str, a_subject: str, b: str, b_subject: str) -> bool:
    """Whether two card texts are surely in two languages: two scripts, or two languages
    guessed (a text whose language is not given away is taken as the other's)."""
    left, right = script(a), script(b)
    if left is not None and right is not None and left != right:
        return True
    first, second = card_language(a, a_subject), card_language(b, b_subject)
    return first is not None and second is not None and first != second
