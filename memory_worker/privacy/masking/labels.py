"""Secrets recognised by their label, right before them: "the wifi password for the office is
…", "Passwort: …", "пароль от почты qwerty123", "alarm wyłączasz kodem 2117".

:func:`labelled_values` reads a label in running text (the lexicon,
:mod:`memory_worker.privacy.masking.lexicon`, in every language it knows, mistyped forms
too), then up to six words naming what it is for ("for the office", "van het gedeelde Ziggo
account"), a connector of the label's language (``is``, ``ist``, ``est``, ``это``, ``是``,
``:``, ``=``, ``-``, ``'s``; an adverb in its place: "пароль теперь …", "şifresi artık …")
and the value (one token, or a quoted phrase), or the value alone on the next line. Without
a connector only a value that reads as generated is taken (``password hunter22``; also after
a preposition and up to three words: ``пароль от вайфая qwerty123``, "senha do notebook
saudade_7787", and after a preposition of change: "set the password to Xk2…", "Passwort auf
Xk2… geändert"). The label's family decides what the value may be (see the lexicon's
docstring); a code's digits may stand a few words after the label and after a connector
followed by words ("Alarmanlage: beim Reinkommen 6533 eintippen").

The labels found in a text are computed once (:func:`label_matches`) and shared with the
readers of :mod:`.around` (values named after, above or a little after their label); what a
value may be is :mod:`.values`; assignments in code and configs are :mod:`.assign`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import NamedTuple

from memory_worker.privacy.masking.lexicon import (
    CODE_LABELS,
    CONNECTOR_WORDS,
    CVV_LABELS,
    KEY_LABELS,
    LABEL_NEEDLES,
    PAIR_LABELS,
    PASS_LABELS,
    PASSWORD_LABELS,
    PIN_LABELS,
    SAID_KEY_LABELS,
    WORD_LABELS,
)
from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.ordinary import (
    CHANGE_PREPOSITIONS,
    CHANGE_VERBS,
    CONJUNCTIONS,
    DIGIT_STOPS,
    FILLER_ADJECTIVES,
    FILLER_ADVERBS,
    NOT_BEFORE,
    NOT_FILLERS,
    NOT_NEAR_KEYS,
    NOT_SECRET_CODES,
    OTHER_SENSES,
    PASS_NOT_BEFORE,
    PASS_TARGETS,
    PREPOSITIONS,
    UNITS,
    USER_LABELS,
)
from memory_worker.privacy.masking.shapes import Span, token_like
from memory_worker.privacy.masking.values import (
    KEYS_NOT_SECRET,
    PASSPHRASE,
    PROSE,
    TRAILING,
    code_digits,
    generated,
    not_a_value,
    strong,
    wordy,
)

_FAMILIES = {
    "password": PASSWORD_LABELS,
    "word": WORD_LABELS,
    "pass": PASS_LABELS,
    "key": KEY_LABELS,
    "cvv": CVV_LABELS,
    "pin": PIN_LABELS,
    "code": CODE_LABELS,
    "pair": PAIR_LABELS,
    "saidkey": SAID_KEY_LABELS,
}
KINDS = {"key": "token", "saidkey": "token", "pin": "pin", "code": "pin", "cvv": "pin"}
#: Families whose values are digits (any language's copula may stand before them).
_DIGIT_FAMILIES = frozenset({"pin", "code", "cvv"})
#: Families whose value comes only after a connector (or, for ``pass``, a user name).
_SAID_ONLY = frozenset({"pass", "pair", "saidkey"})
#: Languages whose labels are matched inside words (no spaces, or glued particles and
#: prefixes), and those whose values are ASCII (a password is typed in Latin letters).
_GLUED = frozenset({"zh", "ja", "ko", "ar"})
_ASCII_VALUES = _GLUED | {"he", "fa", "hi", "el"}


#: Where a label of a spaced language ends: not inside a word, but a particle of a script
#: written without spaces may be glued to it ("CVC는 913", "PINは4821", "SSID叫…").
_LABEL_END = r"(?![^\W\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"


#: The scripts written without spaces: a label of a spaced language may be glued after one of
#: their characters ("アプリのPIN: …"), when no label of theirs starts there ("手机PIN码").
_UNSPACED = "\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af"


@lru_cache(maxsize=1)
def reference_label_pattern() -> re.Pattern[str]:
    """Every label as one pattern of named groups (``<family>_<lang>``): the reference the
    fast scan (:func:`_label_at` over :data:`_FLAT_ALL`) is tested against, and the scan of
    a text whose needles were not looked for. Compiled on first use (it takes most of a
    second; a process that masks only with needles never needs it)."""
    glued = "|".join(
        label
        for table in _FAMILIES.values()
        for lang, labels in table.items()
        if lang in _GLUED
        for label in labels
    )
    start = f"(?:(?<!\\w)|(?<=[{_UNSPACED}])(?!(?:{glued})))"
    groups = [
        (lang in _GLUED, f"(?P<{family}_{lang}>{'|'.join(sorted(labels, key=len, reverse=True))})")
        for family, table in _FAMILIES.items()
        for lang, labels in table.items()
    ]
    return re.compile(_alternation(groups, before=start, each=_LABEL_END, after=""), re.IGNORECASE)


def _alternation(items: list[tuple[bool, str]], *, before: str, each: str, after: str) -> str:
    """``items`` (glued?, pattern) as one alternation in their order: a glued one alone, each
    run of consecutive spaced ones as ``before(?:A each|B each…)after``. ``before`` and
    ``after`` consume nothing, so the run matches as ``before A each after|…`` would, in
    the same order; written once a run instead of once an item (its lookahead over every
    glued label, or the end check), the pattern compiles in a fraction of the time."""
    out: list[str] = []
    run: list[str] = []
    for glued, pattern in [*items, (True, "")]:
        if not glued:
            run.append(f"{pattern}{each}")
            continue
        if run:
            out.append(f"{before}(?:{'|'.join(run)}){after}")
            run = []
        if pattern:
            out.append(pattern)
    return "|".join(out)


_SYMBOLS = r"(?:=>|->|→|—|–|:=|=|:|：|-(?=\s)|\?+(?=\s))"
#: Languages whose copulas an English-spelt label takes too ("la password è …", "het
#: password is …", "password adalah …"); not Danish, whose ``er`` is German's "he" ("das
#: Passwort fragt er dann ab").
_LATIN = ("en", "de", "fr", "es", "pt", "it", "pl", "nl", "sv", "cs", "id", "tr")


def _alternatives(words: set[str], glued: set[str]) -> str:
    """Words as one alternation: a whole word each, but a glued language's (a particle, a
    copula of a language without spaces) anywhere."""
    parts = []
    if words:
        parts.append("(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")(?!\w)")
    if glued:
        parts.append("(?:" + "|".join(sorted(glued, key=len, reverse=True)) + ")")
    return "(?:" + "|".join(parts) + ")"


#: A comma, then a pronoun and its copula restating what was named: "my security answer,
#: it's …", "la réponse secrète, c'est …", "die Antwort, das ist …" (any label's language).
_RESTATED = (
    r",[ \t]*(?:it['’]s|it\s+is|that['’]s|that\s+is|c['’]est|das\s+ist|es\s+ist|eso\s+es"
    r"|это|to\s+jest|dat\s+is|det\s+är|isso\s+é)(?!\w)[ \t]*(?::[ \t]*)?"
)


def _connector_pattern(lang: str) -> re.Pattern[str]:
    """Symbols, then the label's language's copulas and English's, for a code's digits a comma
    before them too ("cryptogramme visuel, c'est 402") (an English-spelt label
    takes every Latin-script language's: "password" is said in all of them); Polish
    ``to`` only after a Polish label (in English it is a preposition). ``any``: every
    language's (a PIN's value is digits only: "PIN to 4821", "PIN ist 4821", "暗証番号は4821")."""
    words = set(CONNECTOR_WORDS["en"]) | set(CONNECTOR_WORDS.get(lang, ()))
    if lang in ("en", "any"):
        words.update(w for other in _LATIN for w in CONNECTOR_WORDS[other])
    if lang == "any":
        words.update(w for table in CONNECTOR_WORDS.values() for w in table)
    elif lang != "pl":
        words.discard("to")
    glued_langs = _GLUED if lang == "any" else _GLUED & {lang}
    glued = {w for other in glued_langs for w in CONNECTOR_WORDS[other]}
    body = _alternatives(words - glued, glued)
    comma = r"(?:,[ \t]*)?" if lang == "any" else ""  # a code's digits only: "CVC, it's 226"
    return re.compile(
        rf"\s*(?:{_SYMBOLS}\s*(?:{body}\s*)?(?:{_SYMBOLS}\s*)?"
        rf"|['’]s(?!\w)\s*|{comma}{body}\s*(?:{_SYMBOLS}\s*)?|{_RESTATED})",
        re.IGNORECASE,
    )


_CONNECTORS = {lang: _connector_pattern(lang) for lang in [*CONNECTOR_WORDS, "any"]}
_QUOTES = {'"': '"', "'": "'", "«": "»", "“": "”", "„": "“", "‘": "’", "`": "`", "「": "」"}
_BARE = re.compile(r"[^\s]+")
#: A value in square brackets: one word, no space (not "[ask me]"), not a placeholder left
#: where a value was masked ("[redacted]", "[Filtered]": masking stays idempotent).
_BRACKETED = re.compile(r"\[(?!(?i:redacted|filtered|email|phone)\])[^\s\[\]]{3,64}\]")
_ASCII = re.compile(r"[!-~]+")
#: A code's digits, then a letter of a script written without spaces (a particle, a copula),
#: or a full-width comma folded and such a letter ("PIN是7694，别写进wiki").
_GLUED_DIGITS = re.compile(
    r"[#*]?\d{3,8}[#*]?(?=(?:[,.;!?][ \t]*)?[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af])"
)
#: A word between a label and its value (a dot inside it too: "bol.com"; a comma after it:
#: "the CVV only, it's 845").
FILLER = re.compile(r"[ \t]+(?P<w>(?:[^\s.!?,;:=：]|\.(?=\w)){1,30})(?=\s|[:=：](?!//)|,|$)")
#: A password that starts with a word of the writer's own script (or letters outside ASCII)
#: glued to a generated ASCII part ("富士-euj27", "고양이-2lU83", "قمر-XG819", "één_ZER13"):
#: the ASCII part must hold a letter and a digit.
_LOCAL_GLUED = re.compile(
    r"[A-Za-z]{0,6}[^\x00-\x7f\s、。，！？：「」『』（）]{1,8}(?:[A-Za-z]{1,6}(?=[-_]))?[-_]?"
    r"(?P<t>[A-Za-z0-9][!-~]*)"
)
_LETTER = re.compile(r"[A-Za-z]")
_DIGIT = re.compile(r"\d")
_PAIR = re.compile(r"[ \t]*(?P<user>[^\s/]{1,64})[ \t]*/[ \t]*(?P<v>[^\s/]+)")


def _value(text: str, at: int, lang: str, family: str = "") -> tuple[int, int, bool] | None:
    """The value starting at ``at`` (spaces skipped): (start, end, quoted). In a language whose
    passwords are typed in Latin letters it is ASCII, but a code word is a word of the language."""
    while at < len(text) and text[at] in " \t":
        at += 1
    if text[at : at + 1] in (">", "》", "〉"):
        return None  # a label closing a placeholder: "<你的密码>", "<your password>"
    if at < len(text) and text[at] in _QUOTES:
        close = text.find(_QUOTES[text[at]], at + 1, at + 102)
        if close > at + 1 and "\n" not in text[at + 1 : close]:
            return at + 1, close, True
    if text[at : at + 1] == "[" and (inner := _BRACKETED.match(text, at)) is not None:
        return at + 1, inner.end() - 1, False  # "PW: [Zomi70?]": one word in square brackets
    if family in ("password", "pass") and (phrase := PASSPHRASE.match(text, at)) is not None:
        return at, phrase.end(), False  # "비번 tiger lemon garden rocket27"
    if family in _DIGIT_FAMILIES and (glued := _GLUED_DIGITS.match(text, at)) is not None:
        return at, glued.end(), False  # a code's digits glued to a particle: "913이에요"
    if family in ("password", "pass") and (local := _LOCAL_GLUED.match(text, at)) is not None:
        tail = local.group("t").rstrip(TRAILING)
        if len(tail) >= 4 and _LETTER.search(tail) and _DIGIT.search(tail):
            return at, local.start("t") + len(tail), False  # "富士-euj27", "één_ZER13"
    match = (_ASCII if lang in _ASCII_VALUES and family != "word" else _BARE).match(text, at)
    if match is None:
        return None
    end = match.end()
    if lang in _ASCII_VALUES and (comma := text.find(",", at, end)) >= at + 3:
        end = comma  # a full-width comma after the value, folded: "9087#，12楼"
    while end > at and text[end - 1] in TRAILING:
        end -= 1
    return (at, end, False) if end > at else None


def _accepts(family: str, value: str, *, connector: bool, lang: str = "") -> bool:
    if family in _DIGIT_FAMILIES:
        return bool(value) and code_digits(family, value, connector=connector)
    if not value or not_a_value(value):
        return False
    if family == "saidkey":
        return (
            connector
            and (len(value) >= _SAID_KEY_CHARS or sum(c.isalpha() for c in value) >= 3)
            and token_like(value)
            and not KEYS_NOT_SECRET.match(value)
        )
    if not connector and family == "pass":
        return strong(value) and not value.isalpha()  # "wifi pass Sakura1972", "пасс Xk2…"
    if not connector:
        number = value.strip("#*")
        digits = family == "password" and number.isdigit() and 4 <= len(number) <= 12
        return family in ("password", "key") and (strong(value) or digits or generated(value))
    if family in ("password", "pass", "word"):
        return len(value) >= 3
    if family == "key" and value.isdigit() and lang in _DIGIT_KEY_LANGS:
        return 4 <= len(value) <= 8 and not _YEAR.match(value)  # "la clave del cajero es 3490"
    return token_like(value)


#: Languages whose word for a key is said of a PIN too ("clave", "chave", "chiave").
_DIGIT_KEY_LANGS = frozenset({"es", "pt", "it"})
_LINE_END = re.compile(rf"[{re.escape(TRAILING)}]*[ \t]*(?:\r?\n|$)")
#: The end of a clause after a value: punctuation, a line's end, the text's end.
_CLAUSE_END = re.compile(r"[ \t]*(?:[.,;!?。，！？]|\r?\n|$)")
#: Words a little after a code's digits that say they number something else ("… of the order").
_OTHER_NUMBER = re.compile(
    rf"(?:[ \t]+[^\W\d]+){{0,2}}[ \t]+(?:{'|'.join(sorted(NOT_SECRET_CODES, key=len, reverse=True))})(?!\w)",
    re.IGNORECASE,
)
#: "the key is …": a value this long, or with three letters (a room's key tag, "3F-217", has
#: neither).
_SAID_KEY_CHARS = 8
#: A number followed by one of these is an amount, not a code ("за 15000 рублей").
_UNIT = re.compile(
    rf"[ \t]*(?:[%€$£¥₽₴₺元円원]|(?:{'|'.join(sorted(UNITS, key=len, reverse=True))})(?!\w))", re.I
)


#: A hyphen and a letter right after a connector word: the word was a compound's first part.
_HYPHENED = re.compile(r"-[^\W\d_]")


class _Past(NamedTuple):
    """A connector whose value was refused, in a family that may look further ("Alarmanlage:
    beim Reinkommen 6533 eintippen"): go on reading words from ``at``."""

    at: int


def _joined(
    text: str, at: int, family: str, lang: str, *, symbols_only: bool = False
) -> tuple[int, int] | bool | _Past:
    """After a connector at ``at``: the value's span, False when the connector is followed
    by no value (or one refused: the phrase is settled; for a code's digits, :class:`_Past`),
    True when there is no connector (``symbols_only``: far from the label, a word such as
    "is" is the sentence's own verb, only ``:`` or ``=`` joins a value)."""
    connector = _CONNECTORS["any" if family in _DIGIT_FAMILIES else lang]
    if symbols_only:
        connector = _SYMBOL_CONNECTOR
    joined: re.Match[str] | None = connector.match(text, at)
    adverb = FILLER.match(text, at)
    if adverb is not None and adverb.group("w").casefold() in FILLER_ADVERBS:
        joined = connector.match(text, adverb.end()) or adverb  # "пароль теперь …"
    if joined is None or not joined.group(0).strip():
        return True
    if _HYPHENED.match(text, joined.end()) and joined.group(0)[-1:].isalpha():
        return True  # a word's first part, not a copula: "e-tjänst", "e-urzędu", "E-Postfach"
    if family == "pair":
        pair = _PAIR.match(text, joined.end())
        if pair is None or not (strong(pair.group("v")) or token_like(pair.group("v"))):
            return False
        return pair.span("v")
    spaced = _SPACED_DIGITS.match(text, joined.end())
    numbered = spaced is not None and family in (*_DIGIT_FAMILIES, "password")
    if spaced is not None and numbered and not _OTHER_NUMBER.match(text, spaced.end()):
        return spaced.span()  # "code: 123 456", "login code: 48 21 93"
    if family in ("password", "key") and (groups := _DIGIT_GROUPS.match(text, joined.end())):
        return groups.span()
    found = _value(text, joined.end(), lang, family)
    if found is not None and text[found[0] : found[1]].casefold() in FILLER_ADVERBS:
        symbol = _SYMBOL_CONNECTOR.match(text, found[1])  # "lautet jetzt: …"
        found = _value(text, symbol.end() if symbol else found[1], lang, family)
    refused: bool | _Past = False
    if family in _DIGIT_FAMILIES and "\n" not in joined.group(0):
        refused = _Past(joined.start() + len(joined.group(0).rstrip()))
    if found is None:
        return refused
    begin, end, quoted = found
    value = text[begin:end]
    if joined.group(0).lstrip().startswith(",") and family not in _DIGIT_FAMILIES:
        if not strong(value):
            return True  # restated, then a word: "the password, it's annoying"
        return begin, end
    if not quoted and wordy(value) and _PHONE_AFTER.match(text, end):
        return refused  # a word, then a phone number: whom to call ("mot de passe perdu :
        # appelez le +33 1 42 68 53 00"), never the value
    if not quoted and wordy(value) and PROSE.match(text, end):
        return refused  # a plain word opening a phrase: "password: ask at the desk"
    if not quoted and wordy(value) and joined.group(0).strip().startswith("?"):
        return refused  # a question, then a word of the answer: "hasło? zapomniałam"
    if "\n" in joined.group(0) and not _LINE_END.match(text, end):
        return refused  # past a line's end, the value fills its line: not "2024 edition, …"
    below = text[begin : text.find("\n", begin) if "\n" in text[begin:] else len(text)]
    if "\n" in joined.group(0) and (
        (begin > 0 and text[begin - 1] in "[(") or any(ord(c) >= 0x2E80 for c in below)
    ):
        return refused  # a note on the next line: "password:\n[photo]", ":\n2024年に変更"
    if value.isdigit() and _UNIT.match(text, end):
        return refused  # an amount: "la clave es 1499 euros"
    return (begin, end) if _accepts(family, value, connector=True, lang=lang) else refused


def _bare_allowed(fillers: list[str], before: str) -> bool:
    """Whether a value may follow without a connector after these filler words."""
    folded = [f.casefold() for f in fillers]
    if all(f in FILLER_ADJECTIVES for f in folded):
        return True  # none, or "senha temporária Xk2…"
    if 2 <= len(folded) <= _BARE_FILLERS and folded[0] in PREPOSITIONS:
        return True  # "пароль от вайфая qwerty123", "senha do notebook da sala Xk2…"
    if folded[-1] in CHANGE_PREPOSITIONS:  # "password has been changed to Xk2…"
        words = {*before.casefold().split(), *folded}
        return folded[-1] != "to" or bool(CHANGE_VERBS & words)
    return False


_SPACED_DIGITS = re.compile(
    r"[\[(]?(?:\d{3}[ -]\d{3}|\d{2}(?:[ -]\d{2}){2,3}|\d(?: \d){3,7})[\])]?(?![\d-])"
)
_SYMBOL_CONNECTOR = re.compile(rf"[ \t]*{_SYMBOLS}\s*")
#: A value alone on the next line (blank lines and a pointer before it: "👉 Xk2…", "↓ Xk2…").
_NEXT_LINE = re.compile(
    r"[ \t]*(?:\r?\n[ \t]*){1,2}(?:[👉👇⬇↓→➡▶][\ufe0f]?[ \t]*)?(?P<v>[^\s]+)[ \t]*(?=\r?\n|$)"
)
#: A label's line that points down at its value on the next line: a word for "below" or
#: "here" in any label language (a particle before it), or a downward arrow, closing the line
#: ("pass below:\nXk2…", "パスワードは下記\nXk2…", "密码在下面\nXk2…", "hasło poniżej:").
_BELOW = (
    r"(?:(?:right|just|juste|aqu[ií]|qui|tutaj|тут|här)[ \t]+)?"
    r"(?:below|underneath|down\s+here|here|following|unten|hierunter|darunter|folgend"
    r"|ci-dessous|en[ \t]+dessous|dessous|ci-apr[eè]s|abajo|debajo|a[ \t]+continuaci[oó]n|sotto"
    r"|di[ \t]+seguito|abaixo|embaixo|a[ \t]+seguir|hieronder|beneden|nedan|nedanf[öo]r"
    r"|poni[żz]ej|ni[żz]ej|ниже|внизу|a[şs]a[ğg][ıi]da|下記|下に|以下|下|아래|밑에|如下|下面|见下"
    r"|بالأسفل|أدناه|تحت)"
)
#: Or a demonstrative closing the line, after a copula or not ("la clave del wifi es esta",
#: "şifresi şu", "비번은 이거", "密码是这个").
_THIS = (
    r"(?:this(?:\s+one)?|esta|este|esto|ésta|éste|questa|questo|eccola|eccolo|ecco|voici|celui-ci"
    r"|celle-ci|dieses|folgendes|das\s+hier|deze|dit|den\s+här|detta|det\s+här|ten|to|oto"
    r"|это|вот|şu|bu|이거|이것|요거|这个|これ|こちら|هذا|هذه|هاي)"
)
_COPULA = r"(?:is|es|est|è|é|ist|lautet|är|jest|to|это|—|-|–)"
_ARROWS = r"(?:[👇⬇↓⤵→➡][\ufe0f]?|->|=>)"
_BELOW_LINE = re.compile(
    rf"[ \t]*(?:(?:{_COPULA}[ \t]+)?(?:は|が|を|는|은|이|가|在|就在|是|:)?[ \t]*"
    rf"(?i:{_BELOW}|{_THIS})(?![^\W\d_])[ \t]*[:：]?"
    rf"[ \t]*{_ARROWS}?|[ \t]*[:：]?[ \t]*{_ARROWS})"
    r"(?=[ \t]*\r?\n)"
)
#: A version on the next line ("v1.2.3"), not a value.
_VERSION = re.compile(r"^v?\d+(?:\.\d+){1,3}$", re.IGNORECASE)
#: A key in groups of digits ("WLAN-Schlüssel 1234 5678 9012 3456", a router's key).
_DIGIT_GROUPS = re.compile(r"\d{4,6}(?:[ -]\d{4,6}){2,}(?![\d-])")
#: Words read between a label and a connector word ("is"), a value that follows bare, and a
#: ``:`` or ``=`` ("Passwort für das neue Konto bei der Sparkasse: …").
#: A phone number in international form a word or two on ("appelez le +33 1 42 68 53 00").
_PHONE_AFTER = re.compile(
    r"(?:[ \t]+[^\W\d_]{1,12}){0,2}[ \t]*:?[ \t]*\+\d{1,3}(?:[ \t.-]?\d{1,4}){2,6}"
)
#: A comma closing a word of the fillers, a word following it.
_CLAUSE_COMMA = re.compile(r",(?=[ \t]+[^\W\d_])")
_SAID_FILLERS = 5
#: More words a code's label may stand from its digits past a clause's comma (only ``:`` joins
#: them there: "sms code from the airline, just landed in my inbox: 904417").
_CLAUSE_FILLERS = 4
_BARE_FILLERS = 5
_MAX_FILLERS = 8
#: A time or a year right after a word of time ("at 0630", "a las 0415", "in 2020").
_TIME_OR_YEAR = re.compile(r"[ \t]+(?:(?:[01]\d|2[0-3])[0-5]\d|(?:19|20)\d\d)(?!\d)")
_YEAR = re.compile(r"^(?:19|20)\d\d$")
#: Words glued after a label in a language without spaces, up to a colon ("ワンタイムパスワード
#: 届いた: 036310").
_GLUED_FILLER = re.compile(r"(?P<w>[^\x00-\x7f\s、。，！？：]{1,8})(?=[ \t]*[:：=])")


def _after_user(before: str) -> bool:
    """Whether a user name was given just before, on the same line ("user admin pass …"), not
    the two named together ("usuário e senha", "username and password": a conjunction right
    before the label)."""
    line = _COMMAND.sub(" ", before.rpartition("\n")[2]).casefold()
    words = line.split()
    if words and words[-1] in CONJUNCTIONS:
        return False
    return any(word.strip(":=,") in USER_LABELS for word in words)


#: A command in backticks: its words are the command's ("`docker login ghcr.io`": ``login``
#: names no user there).
_COMMAND = re.compile(r"`[^`\n]*`")


def _next_line(text: str, at: int, family: str) -> tuple[int, int] | None:
    """A value alone on the line after a label that ends its line ("wifi password\nXk2…"),
    or after a word or an arrow pointing down at it ("pass below:\nXk2…")."""
    pointer = _BELOW_LINE.match(text, at)
    below = _NEXT_LINE.match(text, pointer.end() if pointer else at)
    if below is None:
        return None
    value = below.group("v").rstrip(TRAILING)
    if _VERSION.match(value) or any(ord(c) >= 0x2E80 for c in value):
        return None  # a version, or a line of CJK or Hangul ("2024年4月に変更"): no value typed
    pair = family == "pair" and strong(value) and not value.isalpha()  # "netflix login\nXk2…"
    said = family in _DIGIT_FAMILIES or family == "saidkey"
    if not pair and not _accepts(family, value, connector=said):
        return None
    return below.start("v"), below.start("v") + len(value)


def _bare(text: str, at: int, family: str, lang: str, *, named: bool) -> tuple[int, int] | None:
    """A value right at ``at`` without a connector (``named``: a user name was given)."""
    spaced = _SPACED_DIGITS.match(text, at + 1) if family in _DIGIT_FAMILIES else None
    if spaced is not None and text[at : spaced.start()].isspace():
        other = _OTHER_NUMBER.match(text, spaced.end())
        return None if other else spaced.span()  # "код з смс 478 431"
    groups = _DIGIT_GROUPS.match(text, at + 1) if family in ("password", "key") else None
    if groups is not None and text[at : groups.start()].isspace():
        return groups.span()  # "WLAN-Schlüssel 1234 5678 9012 3456"
    found = _value(text, at, lang, family) if at < len(text) else None
    if found is None or not (found[0] > at or lang in _GLUED):
        return None
    begin, end, quoted = found
    if quoted and begin == at + 1:
        return None  # the label's own closing quote: 'PASSWORD': os.environ[…]
    if family == "word":  # "кодовое слово ромашка": one word that ends the clause
        value = text[begin:end]
        close = _CLAUSE_END.match(text, end)
        ends = close is not None and "?" not in close.group() and "？" not in close.group()
        return (
            (begin, end)
            if ends and wordy(value) and len(value) >= 4 and not not_a_value(value)
            else None
        )
    if family in _DIGIT_FAMILIES and _OTHER_NUMBER.match(text, end):
        return None  # "code 482193 of the order"
    if text[begin:end].isdigit() and _UNIT.match(text, end):
        return None  # "сигнализация за 15000 рублей"
    return (begin, end) if _accepts(family, text[begin:end], connector=quoted or named) else None


_CLOSING = frozenset(")）]】」』")
#: What a label is for, in brackets glued to it (no space: "password(VPN):", "pwd(nas):";
#: full-width brackets are folded to these).
_QUALIFIER = re.compile(r"\([^()\n]{1,40}\)")
#: A case ending after an apostrophe (Turkish: "PIN'i", "CVV'si", "PUK'u", "PIN'ini"), not
#: English's "'s" (a connector) nor an elision.
_CASE_ENDING = re.compile(r"['’](?!s(?!\w))[a-zçğıöşü]{1,5}(?![\w'’])")


def _after_label(text: str, start: int, at: int, family: str, lang: str) -> tuple[int, int] | None:
    """The value a label ending at ``at`` names, if any (see the module doc)."""
    fillers: list[str] = []
    if text[at : at + 1] in _CLOSING:
        at += 1  # a label in brackets, then its value: "Antwort (Kennantwort): …"
    elif (qualifier := _QUALIFIER.match(text, at)) is not None:
        at = qualifier.end()  # its qualifier glued to it: "password(VPN):…", "密码（路由器）：…"
    elif (suffix := _CASE_ENDING.match(text, at)) is not None:
        at = suffix.end()  # a case ending after an apostrophe: "PIN'i: …", "CVV'si 418"
    before = text[max(0, start - 60) : start]
    named = family in ("pass", "password") and _after_user(before)
    digits = family in _DIGIT_FAMILIES and family != "code"
    # a word of ordinary talk among the fillers: only a strong value after it; so too after a
    # word of another sense a little before the label ("映画の中のパスワードは「…」")
    strict = _sense_before(before.rpartition("\n")[2])
    while True:
        if _BELOW_LINE.match(text, at) and (below := _next_line(text, at, family)) is not None:
            return _unless_weak(text, below, strict=strict)  # "pass below:\nXk2…"
        said = _SAID_FILLERS + (3 if family in _DIGIT_FAMILIES else 0)  # "pin de la tarjeta de…"
        far = len(fillers) > said
        joined = _joined(text, at, family, lang, symbols_only=far)
        if far and joined is True and family in ("password", "pass"):
            # far from the label a copula is the sentence's own verb, unless what follows is a
            # value no sentence holds ("la contraseña nueva de la cuenta del club es QlO…")
            said_far = _joined(text, at, family, lang)
            if not isinstance(said_far, (bool, _Past)) and _unless_weak(
                text, said_far, strict=True
            ):
                return said_far
        if isinstance(joined, _Past):
            fillers.append(text[at : joined.at].strip())
            at = joined.at
        elif joined is not True:
            return _unless_weak(text, joined or None, strict=strict)
        elif (below := _next_line(text, at, family)) is not None:
            return _unless_weak(text, below, strict=strict)
        else:
            clause = "," in fillers  # past a clause's comma only ``:`` joins a value
            found = (
                None
                if clause
                else _bare_after(text, at, family, lang, fillers, before, named=named)
            )
            if found is not None:
                return _unless_weak(text, found, strict=strict)
        word = FILLER.match(text, at) or (
            _GLUED_FILLER.match(text, at) if lang in _GLUED or _cjk(text, at) else None
        )
        if word is None and family in _DIGIT_FAMILIES and _CLAUSE_COMMA.match(text, at):
            # a code's label, a clause after a comma, then its digits after a colon ("код
            # подтверждения с портала, только что пришёл: 997613"): far, only ``:`` joins
            fillers.append(",")
            at += 1
            continue
        most = _MAX_FILLERS + (_CLAUSE_FILLERS if "," in fillers else 0)
        if word is None or len(fillers) >= most or word.end() - start > 100:
            return None
        folded = word.group("w").casefold()
        if folded in OTHER_SENSES or (not folded.isascii() and _other_sense(folded)):
            strict = True  # "the password in the movie was 'swordfish'": only a strong value
        if folded in NOT_FILLERS and fillers and family in ("password", "pass"):
            strict = True  # "password for the router admin page is Charlie2011"
        elif family == "pass" and not fillers and folded in PASS_TARGETS and not named:
            strict = True  # "pass wifi Xk2…", not "pass wifi is down"
        elif (
            folded in NOT_FILLERS
            or (family in ("key", "saidkey") and folded in NOT_NEAR_KEYS)
            or (
                family == "pass"
                and not fillers
                and folded not in PREPOSITIONS
                and folded not in PASS_TARGETS
                and not named
            )
        ):
            return None
        if family in _DIGIT_FAMILIES and folded in NOT_SECRET_CODES and len(fillers) < 2:
            # right after the label only ("código de erro 4031"); further on it names whom the
            # code came from ("code from the tax office, just came in: …")
            return None  # "código de erro 4031", "Alarmanlage Modell 4500"
        if digits and folded in DIGIT_STOPS and _TIME_OR_YEAR.match(text, word.end()):
            return None  # "PIN changed at 1400", "la alarma sonó a las 0415"
        fillers.append(word.group("w"))
        at = word.end()
        if family in ("password", "pass") and folded.strip(":=,") in USER_LABELS:
            name = FILLER.match(text, at)
            if name is not None:  # "invalid password for user 'crew'": the user's name
                fillers.append(name.group("w"))
                at = name.end()


#: The words of :data:`OTHER_SENSES` in scripts written without spaces, found inside a glued
#: filler ("映画の").
_OTHER_GLUED = tuple(w for w in OTHER_SENSES if ord(w[0]) >= 0x2E80)


def _other_sense(folded: str) -> bool:
    return any(w in folded for w in _OTHER_GLUED)


#: How many words before a label may give it another sense ("in the movie, the password …").
_SENSE_REACH = 4


def _sense_before(line: str) -> bool:
    """Whether a word of :data:`OTHER_SENSES` stands among the last words of ``line`` (the
    label's line up to it)."""
    words = [w.strip(",.:;!?()\"'«»「」").casefold() for w in line.split()[-_SENSE_REACH:]]
    return any(w in OTHER_SENSES or (not w.isascii() and _other_sense(w)) for w in words)


def _cjk(text: str, at: int) -> bool:
    """Whether a character of a script written without spaces stands at ``at`` (glued after a
    Latin label: "ＰＩＮ码：…", "PIN번호: …")."""
    return at < len(text) and ("\u3040" <= text[at] <= "\u9fff" or "\uac00" <= text[at] <= "\ud7af")


def _unless_weak(
    text: str, found: tuple[int, int] | None, *, strict: bool
) -> tuple[int, int] | None:
    """``found``, unless ``strict`` and its value could be a word of the sentence."""
    if found is None or not strict:
        return found
    value = text[found[0] : found[1]]
    return found if strong(value) and not value.isalpha() else None


def _bare_after(
    text: str, at: int, family: str, lang: str, fillers: list[str], before: str, *, named: bool
) -> tuple[int, int] | None:
    """A value without a connector after these fillers, if the family and the fillers allow
    one there."""
    if family == "pair" and not fillers and (pair := _PAIR.match(text, at)) is not None:
        value = pair.group("v").rstrip(TRAILING)
        other_name = value.startswith(pair.group("user"))  # "wifi Home5G / Home5G_EXT"
        if strong(value) and not value.isalpha() and not not_a_value(value) and not other_name:
            return pair.start("v"), pair.start("v") + len(value)  # "wifi Rosewood / Petals!2024"
    if len(fillers) > _BARE_FILLERS or (family in _SAID_ONLY - {"pass"} and not named):
        return None
    if family == "pass" and not named:
        first = fillers[0].casefold() if fillers else ""
        if first and first not in PREPOSITIONS and first not in PASS_TARGETS:
            return None
        words = before.split()
        if words and words[-1].casefold().strip(",.:;!?") in PASS_NOT_BEFORE:
            return None
        if first in PASS_TARGETS and len(fillers) == 1:
            return _bare(text, at, family, lang, named=False)
    digits = family in _DIGIT_FAMILIES and family != "code"
    loose = digits or (lang in _ASCII_VALUES and all(not f.isascii() for f in fillers))
    if not (loose or _bare_allowed(fillers, before)):
        return None
    found = _bare(text, at, family, lang, named=named and not fillers)
    year = found is not None and _YEAR.match(text[slice(*found)]) is not None
    if year and fillers and (family == "password" or digits):
        return None  # "the password for the 2024 tax return", "the safe … since 2015"
    return found


def _word_before(text: str, start: int) -> str:
    words = text[max(0, start - 30) : start].split()
    return words[-1].casefold().strip(".,:;") if words else ""


_COMPOUND_CODE = re.compile(r"(?i)(.+?)[-_]?(?:code|kod(?:en|u)?)$")


def skipped(family: str, text: str, start: int, end: int | None = None) -> bool:
    """Whether the word before a label makes it no label: "*reset* password flow", "*zip*
    code" (a "code" is a secret unless said to be another kind), or the head of a compound
    says so ("Fehlercode", "Gutscheincode", "rabattkod")."""
    before = _word_before(text, start)
    if before in NOT_BEFORE or (family in _DIGIT_FAMILIES and before in NOT_SECRET_CODES):
        return True
    head = _COMPOUND_CODE.match(text, start, end) if end is not None else None
    if head is None or family not in _DIGIT_FAMILIES:
        return False
    first = head.group(1).casefold()
    return any(first.startswith(word) for word in NOT_SECRET_CODES if len(word) >= 3)


#: Longest stretch from a label's start to a needle inside its word
#: ("Routeradministratorpasswort"), from a label's first word to its needle ("personal access
#: token"), and from a label written without spaces to its needle ("ワンタイムコード").
_LABEL_REACH = 40
_WORDS_REACH = 24
_GLUED_REACH = 8


def _label_starts(text: str, needles: list[int]) -> list[int]:
    """Where a label may start: the start of a needle's word, a word start at most
    ``_WORDS_REACH`` before it, or a CJK character at most ``_GLUED_REACH`` before it."""
    starts: set[int] = set()
    for pos in needles:
        word = pos
        while word > 0 and pos - word < _LABEL_REACH and text[word - 1].isalnum():
            word -= 1
        starts.add(word)
        for at in range(max(0, pos - _WORDS_REACH), pos + 1):
            if (
                at == 0
                or not text[at - 1].isalnum()
                or (pos - at <= _GLUED_REACH and ord(text[at]) >= 0x2E80)
                or ord(text[at - 1]) >= 0x2E80  # a Latin label glued after CJK: "手机PIN码"
            ):
                starts.add(at)
    return sorted(starts)


class Label(NamedTuple):
    """A label found in a text: where, and its family and language in the lexicon."""

    start: int
    end: int
    family: str
    lang: str


def _flat(glued_only: bool) -> re.Pattern[str]:
    """Every label as one flat alternation, casefolded, in the order of :data:`_GROUPS` (so the
    first alternative that matches belongs to the first group that matches, as in
    ``reference_label_pattern``): a flat alternation of literals is tried far faster than named groups."""
    alternatives = [
        (lang in _GLUED, f"(?:{alternative})")
        for _, lang, labels, _ in _GROUPS
        if lang in _GLUED or not glued_only
        for alternative in labels
    ]
    return re.compile(_alternation(alternatives, before="", each="", after=_LABEL_END))


_ESCAPE = re.compile(r"\\.|[^\\]+", re.S)


def _fold_pattern(pattern: str) -> str:
    """A label pattern for casefolded text: its letters casefolded, its escapes (``\\S``,
    ``\\W``) kept."""
    return "".join(
        part if part.startswith("\\") else part.casefold() for part in _ESCAPE.findall(pattern)
    )


def _groups() -> list[tuple[str, str, list[str], re.Pattern[str]]]:
    """(family, lang, its labels casefolded longest first, its own pattern) in lexicon order."""
    out = []
    for family, table in _FAMILIES.items():
        for lang, labels in table.items():
            folded = sorted((_fold_pattern(label) for label in labels), key=len, reverse=True)
            body = "|".join(folded)
            pattern = f"(?:{body})" if lang in _GLUED else f"(?:{body}){_LABEL_END}"
            out.append((family, lang, folded, re.compile(pattern)))
    return out


_GROUPS = _groups()
_FLAT_ALL = _flat(glued_only=False)
_FLAT_GLUED = _flat(glued_only=True)


_UNSPACED_CHAR = re.compile(f"[{_UNSPACED}]")


def _label_at(lowered: str, at: int) -> Label | None:
    """The label starting at ``at`` in the casefolded text, as ``reference_label_pattern().match`` finds it."""
    inside = at > 0 and (lowered[at - 1].isalnum() or lowered[at - 1] == "_")
    flat = (_FLAT_GLUED if inside else _FLAT_ALL).match(lowered, at)
    if flat is None and inside and _UNSPACED_CHAR.match(lowered, at - 1):
        # a Latin label glued after a kana or Han character starts a word there ("アプリの
        # PIN: …"), when no label of those scripts does ("手机PIN码")
        inside = False
        flat = _FLAT_ALL.match(lowered, at)
    if flat is None:
        return None
    for family, lang, _, pattern in _GROUPS:
        if inside and lang not in _GLUED:
            continue
        match = pattern.match(lowered, at)
        if match is not None:
            return Label(at, match.end(), family, lang)
    return None  # unreachable: the flat pattern matched one of the groups


@lru_cache(maxsize=16)
def label_matches(text: str, hits: Hits) -> tuple[Label, ...]:
    """The labels of ``text`` (as ``reference_label_pattern().finditer`` finds them), tried only where a label
    may start; computed once for the few readers of the same text."""
    needles = hits.positions(LABEL_NEEDLES)
    if needles is None:
        return tuple(
            Label(m.start(), m.end(), *(m.lastgroup or "_").partition("_")[::2])
            for m in reference_label_pattern().finditer(text)
        )
    lowered = text.casefold()
    end = 0
    found = []
    for at in _label_starts(text, needles):
        if at < end:
            continue
        label = _label_at(lowered, at)
        if label is not None:
            end = label.end
            found.append(label)
    return tuple(found)


def labelled_values(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of values named by a label in running text, in any of the lexicon's languages
    (``hits``: the needles ``text`` holds)."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for label in label_matches(text, hits):
        if skipped(label.family, text, label.start, label.end):
            continue
        family = label.family
        if family in ("key", "saidkey") and _NETWORK.search(
            text, _line_start(text, label.start), label.start
        ):
            family = "password"  # "SSID CafeNet, key amber_fox_river_62": the network's key
        found = _after_label(text, label.start, label.end, family, label.lang)
        if found is None and label.family in ("password", "word"):
            found = _closing_value(text, label.end)
        if found is not None:
            yield found[0], found[1], KINDS.get(label.family, "password")


#: A network named on a key's line: the key is its password ("SSID CafeNet / key …").
_NETWORK = re.compile(
    r"(?i)(?<!\w)(?:ssid|wi-?fi|wlan|wireless|r[ée]seau|red|rete|rede|netwerk|n[äa]tverk|sie[ćc]|"
    r"сеть|мережа|ağ)(?!\w)|ネットワーク|와이파이|网络|شبكة"
)


def _line_start(text: str, at: int) -> int:
    return text.rfind("\n", 0, at) + 1


#: A value that closes its label's line after a colon, however many words stand between
#: ("secret answer for the utility account's security question (the name I use): Xk2…").
_CLOSING_VALUE = re.compile(r"[^\n]*?[:：][ \t]+(?P<v>[^\s:：/]+)[ \t]*(?=\r?\n|$)")
_CLOSING_REACH = 160


def _closing_value(text: str, at: int) -> tuple[int, int] | None:
    """A strong value (:func:`.values.strong`) ending the line of a password label, after a
    colon and a space within :data:`_CLOSING_REACH` characters of it (not a link's ``://``,
    not a path)."""
    match = _CLOSING_VALUE.match(text, at)
    if match is None or match.start("v") - at > _CLOSING_REACH:
        return None
    value = match.group("v").rstrip(TRAILING)
    if not strong(value) or not_a_value(value):
        return None
    return match.start("v"), match.start("v") + len(value)
