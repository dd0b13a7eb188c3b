"""Words to index terms for lexical recall (§16): folding, stemming, transliteration.

A text becomes a bag of **terms** in two streams, so one ranker serves every
language the cards are written in (EN/RU/DE/ES/FR/UK):

- the **stem** of each word (NFKC, case-folded, ``ё`` → ``е``): Snowball's
  stemmer of the text's language (a stop-word and letter guess,
  :func:`guess_language`), a light suffix stripper for Ukrainian (Snowball
  has none), diacritics stripped after stemming so "Lucía" finds "Lucia";
- the **skeleton** of each word, prefixed ``~``: the word transliterated to
  Latin and folded (``x`` → ``ks``, ``kh`` → ``h``, ``j``/``y`` → ``i``, double
  letters single, trailing vowels gone) so one name in two scripts meets:
  "Мария", "Марии", "Maria" and "Mariya" all give ``~mar``.

Stop words (question words included) give no term. Pure, memoised per word.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

import snowballstemmer  # type: ignore[import-untyped]

#: Languages with a Snowball stemmer here, by the codes :func:`guess_language` answers.
_SNOWBALL = {"en": "english", "de": "german", "es": "spanish", "fr": "french", "ru": "russian"}


def _split(text: str) -> frozenset[str]:
    return frozenset(text.split())


_STOP: dict[str, frozenset[str]] = {
    "en": _split(
        "a an and are as at be been but by can could did do does for from had has have he her "
        "hers him his how i if in into is it its me my no not of on or our she so than that the "
        "their them then there these they this those to us was we were what when where which "
        "who whom whose why will with would you your about any anyone ever"
    ),
    "de": _split(
        "der die das den dem des ein eine einen einem einer und oder aber ist sind war waren "
        "hat haben ich du er sie es wir ihr mich mir dich dir sich in im am an auf aus bei mit "
        "nach von vor zu zum zur für über wie was wer wo wann warum welche welcher welches "
        "nicht kein keine noch schon auch so dass wem wen wessen hast hatte"
    ),
    "es": _split(
        "el la los las un una unos unas y o pero es son era fue ha han he yo tú él ella "
        "nosotros ellos ellas me te se nos le les lo en de del al a con por para sobre como "
        "qué que quién quiénes dónde cuándo cuál cuáles cómo por qué no su sus mi mis tu tus "
        "ya muy este esta estos estas"
    ),
    "fr": _split(
        "le la les un une des et ou mais est sont était a ont je tu il elle nous vous ils "
        "elles me te se lui leur en de du au aux à avec par pour sur dans que qui quoi où "
        "quand comment quel quelle quels quelles pourquoi ne pas son sa ses mon ma mes ce "
        "cette ces d l qu c est-ce"
    ),
    "ru": _split(
        "и или но а в во на с со к ко по о об от до из за для у не ни что кто где когда "
        "как какой какая какое какие почему зачем чей чья чьё чьи это этот эта эти тот та те "
        "он она оно они я ты мы вы его ее её их ему ей им мне меня тебя нам вас был была было "
        "были есть ли же бы уже ещё еще"
    ),
    "uk": _split(
        "і й та або але а в у на з зі із до від по про за для не ні що хто де коли як який "
        "яка яке які чому навіщо чий чия чиє чиї це цей ця ці той та ті він вона воно вони "
        "я ти ми ви його її їх йому їй їм мені мене тебе нам вас був була було були є чи же "
        "б вже ще"
    ),
}
_ALL_STOP = frozenset().union(*_STOP.values())
_LATIN_MARKS = {"es": "ñ¿¡áíóú", "de": "äöüß", "fr": "çàâèêëîïôûœ"}
_WORD = re.compile(r"[^\W_]+")
_LETTER = re.compile(r"[^\W\d_]")


def fold(text: str) -> str:
    """NFKC, case-folded, ``ё`` as ``е``."""
    return unicodedata.normalize("NFKC", text).casefold().replace("ё", "е")


def stop_words(lang: str) -> frozenset[str]:
    """The stop words of ``lang`` (none for a language not here)."""
    return _STOP.get(lang, frozenset())


def is_stop(word: str) -> bool:
    """Whether a folded word is a stop word of any language here."""
    return word in _ALL_STOP


def strip_marks(word: str) -> str:
    """A word without diacritics (é → e, ñ → n); Cyrillic й/ї keep their letter."""
    decomposed = unicodedata.normalize("NFD", word)
    kept = [ch for ch in decomposed if not unicodedata.combining(ch)]
    return unicodedata.normalize("NFC", "".join(kept)).replace("и\u0306", "й")


def guess_language(words: list[str]) -> str | None:
    """The language of folded ``words`` among en/de/es/fr/ru/uk (None: nothing gives it away).

    Cyrillic: Ukrainian by і/ї/є/ґ, else Russian. Latin: the most stop words, letters
    with marks breaking ties.
    """
    letters = "".join(words)
    if not letters:
        return None
    cyrillic = sum("а" <= ch <= "я" or ch in "іїєґ" for ch in letters)
    if cyrillic * 2 > len(letters):
        return "uk" if re.search("[іїєґ]", letters) else "ru"
    scores = {
        lang: sum(w in _STOP[lang] for w in words)
        + 0.5 * sum(ch in _LATIN_MARKS.get(lang, "") for ch in letters)
        for lang in ("en", "de", "es", "fr")
    }
    best = max(scores, key=lambda lang: scores[lang])
    if scores[best] == 0 or list(scores.values()).count(scores[best]) > 1:
        return None
    return best


_UK_ENDINGS = tuple(
    sorted(
        _split(
            "ування ювання ують юють ення ання ість ості істю ією ами ями ові еві ого ому ими "
            "іми уть ють ать ять ить іть ете емо ємо ія ії ію ій ий ої "
            "ою ею ам ям ах ях ів їв ти ть ла ли ло ся сь ться ного ної ному ним ній ні а я о "
            "е і и у ю ь й ї є"
        ),
        key=len,
        reverse=True,
    )
)


def stem_ukrainian(word: str) -> str:
    """A light Ukrainian stemmer: the longest common ending off, at least 3 letters kept."""
    for ending in _UK_ENDINGS:
        if word.endswith(ending) and len(word) - len(ending) >= 3:
            return word[: -len(ending)]
    return word


@lru_cache(maxsize=8)
def _stemmer(lang: str) -> snowballstemmer.stemmer:
    return snowballstemmer.stemmer(_SNOWBALL[lang])


@lru_cache(maxsize=200_000)
def stem(word: str, lang: str | None) -> str:
    """``word`` (folded) stemmed for ``lang``, its script's stemmer when ``lang`` is
    unknown or of the other script, diacritics stripped after."""
    if not _LETTER.search(word):
        return word
    cyrillic = "а" <= word[0] <= "я" or word[0] in "іїєґ"
    if cyrillic:
        lang = lang if lang in ("ru", "uk") else "ru"
    elif lang not in ("en", "de", "es", "fr"):
        lang = "en"
    stemmed = stem_ukrainian(word) if lang == "uk" else _stemmer(lang).stemWord(word)
    return strip_marks(stemmed)


_TRANSLIT = {
    "а": "a", "б": "b", "в": "v", "г": "g", "ґ": "g", "д": "d", "е": "e", "є": "e", "ж": "zh",
    "з": "z", "и": "i", "і": "i", "ї": "i", "й": "i", "к": "k", "л": "l", "м": "m", "н": "n",
    "о": "o", "п": "p", "р": "r", "с": "s", "т": "t", "у": "u", "ф": "f", "х": "h", "ц": "ts",
    "ч": "ch", "ш": "sh", "щ": "shch", "ъ": "", "ы": "i", "ь": "", "э": "e", "ю": "iu",
    "я": "ia", "'": "", "’": "",
}  # fmt: skip
_LATIN_FOLDS = (("kh", "h"), ("x", "ks"), ("ph", "f"), ("ck", "k"), ("q", "k"), ("w", "v"))
_VOWELS = "aeiouy"


@lru_cache(maxsize=200_000)
def latin(word: str) -> str:
    """A folded word in Latin letters without diacritics: "мюнхене" → "miunhene",
    "münchen" → "munchen" (Cyrillic transliterated as :func:`skeleton` does)."""
    return strip_marks("".join(_TRANSLIT.get(ch, ch) for ch in word))


@lru_cache(maxsize=200_000)
def skeleton(word: str) -> str:
    """A folded word's script-free skeleton: "мария", "марии", "maria", "mariya" → "mar".

    Transliterated to Latin, diacritics stripped, a few spellings folded, ``j``/``y``
    as ``i``, ``c`` as ``k`` (``s`` before e/i), doubles single, trailing vowels off
    (the Slavic case endings with them); "" for a word of fewer than 3 letters.
    """
    if len(word) < 3:
        return ""
    shape = latin(word)
    for old, new in _LATIN_FOLDS:
        shape = shape.replace(old, new)
    shape = re.sub("[jy]", "i", shape)
    shape = re.sub("c(?=[ei])", "s", shape).replace("c", "k")
    shape = re.sub(r"(.)\1+", r"\1", shape)
    base = shape.rstrip(_VOWELS)
    if len(base) < 2 or not base.isalpha() or not base.isascii():
        return ""
    return base


def words(text: str) -> list[str]:
    """The folded words of ``text`` (letters and digits, in order)."""
    return _WORD.findall(fold(text))


def terms(text: str, *, lang: str | None = None) -> list[str]:
    """Index terms of ``text``: each non-stop word's stem and its ``~skeleton`` (see the module).

    ``lang`` forces the stemmer's language; by default it is guessed from the text.
    """
    found = words(text)
    language = lang or guess_language(found)
    out: list[str] = []
    for word in found:
        if word in _ALL_STOP or (len(word) == 1 and not word.isdigit()):
            continue
        out.append(stem(word, language))
        if len(word) >= 3 and not word.isdigit():
            shape = skeleton(word)
            if shape:
                out.append("~" + shape)
    return out
