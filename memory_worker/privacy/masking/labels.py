"""Secrets recognised by their label: "the wifi password for the office is …", "Passwort:
…", "пароль от почты qwerty123", "Xk2… as my password", ``DB_PASSWORD=…``, ``"apiKey": "…"``.

Three readers share the lexicon (:mod:`memory_worker.privacy.masking.lexicon`):

- :func:`labelled_values` — a label in running text, then up to four words
  naming what it is for ("for the office"), a connector of the label's
  language (``is``, ``ist``, ``est``, ``это``, ``是``, ``:``, ``=``, ``-``, ``'s``;
  an adverb in its place: "пароль теперь …") and the value (one token, or a
  quoted phrase). Without a connector only a value that reads as generated is
  taken (``password hunter22``; also after "<preposition> <word>": ``пароль
  от вайфая qwerty123``, and after a preposition of change: "set the password
  to Xk2…", "Passwort auf Xk2… geändert"). The label's family decides what the
  value may be (see the lexicon's docstring).
- :func:`values_before_labels` — a generated-looking value named afterwards:
  "j'ai mis Xk2… comme mot de passe", "Xk2… as my password".
- :func:`assigned_values` — an identifier whose parts name a secret
  (``DB_PASSWORD``, ``PGPASSWORD``, ``aws_secret_access_key``, ``apiKey``,
  ``x-api-key``) assigned with ``=``, ``:``, ``:=`` or ``=>`` (env files, JSON,
  YAML, code). Parts that say it is *about* a secret rather than one
  (``MAX_TOKENS``, ``password_min_length``, ``TOKEN_FILE``, ``primary_key``)
  rule it out.

Values that are never secrets: ordinary words (the lexicon's ``NOT_VALUES``),
a plain word that opens a phrase ("password: *ask* at the desk", "le mot de
passe est *envoyé* par SMS"), templates (``${DB_PASSWORD}``, ``<password>``,
``{{ token }}``, ``%s``, ``YOUR_API_KEY``), code (``request.form['password']``,
``getToken()``, ``os.environ[…]``), runs of ``*``/``•``/``x`` (already hidden),
URLs (a URL's own credentials are :mod:`~memory_worker.privacy.masking.shapes`' business)
and text already masked.
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
    NAME_KEY_PARTS,
    NAME_NEEDLES,
    NAME_NOT_SECRET_PARTS,
    NAME_PASSWORD_PARTS,
    PAIR_LABELS,
    PASS_LABELS,
    PASSWORD_LABELS,
    PIN_LABELS,
    SAID_KEY_LABELS,
)
from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.ordinary import (
    AS_WORDS,
    BEFORE_WORDS,
    CHANGE_PREPOSITIONS,
    DEMONSTRATIVES,
    CHANGE_VERBS,
    DIGIT_STOPS,
    FILLER_ADJECTIVES,
    FILLER_ADVERBS,
    NEGATIONS,
    NOT_BEFORE,
    NOT_FILLERS,
    NOT_SECRET_CODES,
    NOT_VALUES_MORE,
    PLACEHOLDER_WORDS,
    PREPOSITIONS,
    USER_LABELS,
)
from memory_worker.privacy.masking.ordinary import NOT_VALUES as _NOT_VALUES_FIRST
from memory_worker.privacy.masking.shapes import Span, placeholder, token_like

NOT_VALUES = _NOT_VALUES_FIRST | NOT_VALUES_MORE
_FAMILIES = {
    "password": PASSWORD_LABELS,
    "pass": PASS_LABELS,
    "key": KEY_LABELS,
    "cvv": CVV_LABELS,
    "pin": PIN_LABELS,
    "code": CODE_LABELS,
    "pair": PAIR_LABELS,
    "saidkey": SAID_KEY_LABELS,
}
_KINDS = {"key": "token", "saidkey": "token", "pin": "pin", "code": "pin", "cvv": "pin"}
#: Families whose values are digits (any language's copula may stand before them).
_DIGIT_FAMILIES = frozenset({"pin", "code", "cvv"})
#: Families whose value comes only after a connector (or, for ``pass``, a user name).
_SAID_ONLY = frozenset({"pass", "pair", "saidkey"})
#: Languages whose labels are matched inside words (no spaces, or glued particles and
#: prefixes), and those whose values are ASCII (a password is typed in Latin letters).
_GLUED = frozenset({"zh", "ja", "ko", "ar"})
_ASCII_VALUES = _GLUED | {"he", "fa", "hi", "el"}


def _label_pattern() -> re.Pattern[str]:
    groups = []
    for family, table in _FAMILIES.items():
        for lang, labels in table.items():
            body = "|".join(sorted(labels, key=len, reverse=True))
            if lang in _GLUED:
                groups.append(f"(?P<{family}_{lang}>{body})")
            else:
                groups.append(f"(?<!\\w)(?P<{family}_{lang}>{body})(?!\\w)")
    return re.compile("|".join(groups), re.IGNORECASE)


_SYMBOLS = r"(?:=>|->|→|—|–|:=|=|:|：|-(?=\s)|\?+(?=\s))"
#: Languages whose copulas an English-spelt label takes too ("la password è …", "het
#: password is …", "password adalah …").
_LATIN = ("en", "de", "fr", "es", "pt", "it", "pl", "nl", "sv", "cs", "id", "da", "tr")


def _alternatives(words: set[str], glued: set[str]) -> str:
    """Words as one alternation: a whole word each, but a glued language's (a particle, a
    copula of a language without spaces) anywhere."""
    parts = []
    if words:
        parts.append("(?:" + "|".join(sorted(words, key=len, reverse=True)) + r")(?!\w)")
    if glued:
        parts.append("(?:" + "|".join(sorted(glued, key=len, reverse=True)) + ")")
    return "(?:" + "|".join(parts) + ")"


def _connector_pattern(lang: str) -> re.Pattern[str]:
    """Symbols, then the label's language's copulas and English's (an English-spelt label
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
    return re.compile(
        rf"\s*(?:{_SYMBOLS}\s*(?:{body}\s*)?(?:{_SYMBOLS}\s*)?"
        rf"|['’]s(?!\w)\s*|{body}\s*(?:{_SYMBOLS}\s*)?)",
        re.IGNORECASE,
    )


_LABELS = _label_pattern()
_CONNECTORS = {lang: _connector_pattern(lang) for lang in [*CONNECTOR_WORDS, "any"]}
_QUOTES = {'"': '"', "'": "'", "«": "»", "“": "”", "„": "“", "‘": "’", "`": "`", "「": "」"}
_BARE = re.compile(r"[^\s]+")
_ASCII = re.compile(r"[!-~]+")
_TRAILING = ".,;:!?)]}»\"'”’…"
_FILLER = re.compile(r"[ \t]+(?P<w>[^\s.!?,;:=：]{1,30})(?=\s|[:=：](?!//)|$)")
_PROSE = re.compile(r"[ \t]+[^\W_]+[ \t]+[^\W\d_]+")
_PAIR = re.compile(r"[ \t]*(?P<user>[^\s/]{1,64})[ \t]*/[ \t]*(?P<v>[^\s/]+)")
_TEMPLATE = re.compile(
    r"^(?:\$\{[\w.]+\}?|\$[A-Z_][A-Z0-9_]*|\$\(|`|!\w+|(?:env|vault|arn|ssm|secret):|"
    r"(?i:(?:your|my|the|some|enter|insert|paste|put|example|sample|dummy|fake|change)[-_]?"
    r"[\w-]*?(?:password|passwd|pass|pwd|key|token|secret|here|me|value|pin)(?:[-_]?here)?)|"
    r"(?i:\w+[-_]here|changeme|change_me|tbd|todo)|"
    r"%\(?\w*\)?[sd]|\{\{?[^{}]*\}\}?|<[^<>]+>|"
    r"[*•●xX.·_-]{3,}|…|\?+"
    r"|[A-Z]+(?:[_-][A-Z]+)+)$"  # a placeholder name: YOUR_API_KEY, CHANGE-ME
)
#: Code, not a value: a call or an index (``getToken()``, ``os.environ['X']``) or a dotted
#: name (``request.form``).
_CODE = re.compile(
    r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[(\[]|^[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+$"
)


def _value(text: str, at: int, lang: str) -> tuple[int, int, bool] | None:
    """The value starting at ``at`` (spaces skipped): (start, end, quoted)."""
    while at < len(text) and text[at] in " \t":
        at += 1
    if at < len(text) and text[at] in _QUOTES:
        close = text.find(_QUOTES[text[at]], at + 1, at + 102)
        if close > at + 1 and "\n" not in text[at + 1 : close]:
            return at + 1, close, True
    match = (_ASCII if lang in _ASCII_VALUES else _BARE).match(text, at)
    if match is None:
        return None
    end = match.end()
    while end > at and text[end - 1] in _TRAILING:
        end -= 1
    return (at, end, False) if end > at else None


#: What is public about a key: an SSH public key's type or body, a fingerprint
#: (``SHA256:…``, ``MD5:…``).
_PUBLIC = re.compile(
    r"^(?:ssh-(?:rsa|dss|ed25519|ed448)(?:-cert-v01@openssh\.com)?|ecdsa-sha2-\S+|"
    r"sk-(?:ssh|ecdsa)-\S+@openssh\.com|AAAA[BCE][0-9A-Za-z+/]+=*|(?:SHA256|SHA1|MD5):\S+)$"
)


_PARTS = re.compile(r"[_-]")


def _placeholder_phrase(value: str) -> bool:
    """Words joined by ``_`` or ``-`` that say what to put there ("tu_contraseña_aquí")."""
    parts = _PARTS.split(value.strip("\"'`").casefold())
    return (
        len(parts) >= 2
        and all(part.isalpha() for part in parts)
        and any(part in PLACEHOLDER_WORDS for part in parts)
    )


def not_a_value(value: str) -> bool:
    """Whether ``value`` (after a label) is an ordinary word, a template, code, a URL, a
    public key or fingerprint, or a mask."""
    folded = value.casefold()
    return (
        folded in NOT_VALUES
        or _PUBLIC.match(value) is not None
        or _placeholder_phrase(value)
        or placeholder(value)
        or value.startswith(("[", "<", "{"))
        or bool(_TEMPLATE.match(value) or _CODE.match(value))
        or "://" in value
        or folded.startswith("www.")
    )


def _wordy(value: str) -> bool:
    """A plain word, an elided one too ("i'll", "c'est")."""
    return value.replace("'", "").replace("’", "").isalpha()


def _strong(value: str) -> bool:
    """A value no sentence would hold in that place: letters mixed with digits or symbols."""
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and any(c.isdigit() or c in "!@#$%^&*_+=~" for c in value)
    )


#: Not a generated value after "the key is": a key combination or a musical key.
_KEYS_NOT_SECRET = re.compile(
    r"(?i)^(?:(?:ctrl|control|alt|shift|cmd|command|option|opt|fn|win|super|meta)[+-].*|"
    r"[A-G][#b♯♭]?(?:m|min|minor|maj|major|dur|moll)?)$"
)


def _digits(family: str, value: str, *, connector: bool) -> bool:
    """A code's digits: a PIN 3–8 (4–8 without a connector), a CVV 3–4, a code 4–8; a
    keypad's ``#`` or ``*`` around them is part of the value."""
    digits = value.strip("#*[](){}").replace("-", "")
    if not digits.isdigit():
        return False
    if family == "cvv":
        return 3 <= len(digits) <= 4
    least = 3 if connector and family == "pin" else 4
    return least <= len(digits) <= 8


def _accepts(family: str, value: str, *, connector: bool) -> bool:
    if family in _DIGIT_FAMILIES:
        return bool(value) and _digits(family, value, connector=connector)
    if not value or not_a_value(value):
        return False
    if family == "saidkey":
        return connector and token_like(value) and not _KEYS_NOT_SECRET.match(value)
    if not connector:
        digits = family == "password" and value.isdigit() and 4 <= len(value) <= 12
        return family in ("password", "key") and (_strong(value) or digits)
    if family in ("password", "pass"):
        return len(value) >= 3
    return token_like(value)


class _Past(NamedTuple):
    """A connector whose value was refused, in a family that may look further ("Alarmanlage:
    beim Reinkommen 6533 eintippen"): go on reading words from ``at``."""

    at: int


def _joined(text: str, at: int, family: str, lang: str) -> tuple[int, int] | bool | _Past:
    """After a connector at ``at``: the value's span, False when the connector is followed
    by no value (or one refused: the phrase is settled; for a code's digits, :class:`_Past`),
    True when there is no connector."""
    connector = _CONNECTORS["any" if family in _DIGIT_FAMILIES else lang]
    joined: re.Match[str] | None = connector.match(text, at)
    adverb = _FILLER.match(text, at)
    if adverb is not None and adverb.group("w").casefold() in FILLER_ADVERBS:
        joined = connector.match(text, adverb.end()) or adverb  # "пароль теперь …"
    if joined is None or not joined.group(0).strip():
        return True
    if family == "pair":
        pair = _PAIR.match(text, joined.end())
        if pair is None or not (_strong(pair.group("v")) or token_like(pair.group("v"))):
            return False
        return pair.span("v")
    if family in _DIGIT_FAMILIES and (spaced := _SPACED_DIGITS.match(text, joined.end())):
        return spaced.span()  # "code: 123 456"
    found = _value(text, joined.end(), lang)
    if found is not None and text[found[0] : found[1]].casefold() in FILLER_ADVERBS:
        found = _value(text, found[1], lang)
    refused: bool | _Past = False
    if family in _DIGIT_FAMILIES and "\n" not in joined.group(0):
        refused = _Past(joined.start() + len(joined.group(0).rstrip()))
    if found is None:
        return refused
    begin, end, quoted = found
    value = text[begin:end]
    if not quoted and _wordy(value) and _PROSE.match(text, end):
        return refused  # a plain word opening a phrase: "password: ask at the desk"
    return (begin, end) if _accepts(family, value, connector=True) else refused


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


_SPACED_DIGITS = re.compile(r"[\[(]?\d{3}[ -]\d{3}[\])]?(?![\d-])")
_NEXT_LINE = re.compile(r"[ \t]*\r?\n[ \t]*(?P<v>[^\s]+)[ \t]*(?=\r?\n|$)")
#: Words read between a label and a value that follows it bare, and before a connector
#: ("wachtwoord van het gedeelde Ziggo account: …").
_BARE_FILLERS = 4
_MAX_FILLERS = 6
_NUMBER = re.compile(r"[ \t]+[#*(\[]?\d")


def _after_user(before: str) -> bool:
    """Whether a user name was given just before, on the same line ("user admin pass …")."""
    line = before.rpartition("\n")[2].casefold()
    return any(word.strip(":=,") in USER_LABELS for word in line.split())


def _next_line(text: str, at: int, family: str) -> tuple[int, int] | None:
    """A value alone on the line after a label that ends its line ("wifi password\nXk2…")."""
    below = _NEXT_LINE.match(text, at)
    if below is None:
        return None
    value = below.group("v").rstrip(_TRAILING)
    if not _accepts(family, value, connector=family in _DIGIT_FAMILIES or family == "saidkey"):
        return None
    return below.start("v"), below.start("v") + len(value)


def _bare(text: str, at: int, family: str, lang: str, *, named: bool) -> tuple[int, int] | None:
    """A value right at ``at`` without a connector (``named``: a user name was given)."""
    if family in _DIGIT_FAMILIES and (spaced := _SPACED_DIGITS.match(text, at + 1)):
        if text[at : spaced.start()].isspace():
            return spaced.span()  # "код з смс 478 431"
    found = _value(text, at, lang) if at < len(text) else None
    if found is None or not (found[0] > at or lang in _GLUED):
        return None
    begin, end, quoted = found
    if quoted and begin == at + 1:
        return None  # the label's own closing quote: 'PASSWORD': os.environ[…]
    return (begin, end) if _accepts(family, text[begin:end], connector=quoted or named) else None


def _after_label(text: str, start: int, at: int, family: str, lang: str) -> tuple[int, int] | None:
    """The value a label ending at ``at`` names, if any (see the module doc)."""
    fillers: list[str] = []
    before = text[max(0, start - 60) : start]
    named = family in ("pass", "password") and _after_user(before)
    digits = family in _DIGIT_FAMILIES and family != "code"
    while True:
        joined = _joined(text, at, family, lang)
        if isinstance(joined, _Past):
            fillers.append(text[at : joined.at].strip())
            at = joined.at
        elif joined is not True:
            return joined or None
        elif not fillers and (below := _next_line(text, at, family)) is not None:
            return below
        else:
            found = _bare_after(text, at, family, lang, fillers, before, named=named)
            if found is not None:
                return found
        word = _FILLER.match(text, at)
        if word is None or len(fillers) >= _MAX_FILLERS or word.end() - start > 100:
            return None
        folded = word.group("w").casefold()
        if folded in NOT_FILLERS or (
            family == "pass" and not fillers and folded not in PREPOSITIONS and not named
        ):
            return None
        if family == "code" and folded in NOT_SECRET_CODES:
            return None  # "código de erro 4031"
        if digits and folded in DIGIT_STOPS and _NUMBER.match(text, word.end()):
            return None  # "PIN changed at 1400"
        fillers.append(word.group("w"))
        at = word.end()


def _bare_after(
    text: str, at: int, family: str, lang: str, fillers: list[str], before: str, *, named: bool
) -> tuple[int, int] | None:
    """A value without a connector after these fillers, if the family and the fillers allow
    one there."""
    if len(fillers) > _BARE_FILLERS or (family in _SAID_ONLY and not named):
        return None
    digits = family in _DIGIT_FAMILIES and family != "code"
    loose = digits or (lang in _ASCII_VALUES and all(not f.isascii() for f in fillers))
    if not (loose or _bare_allowed(fillers, before)):
        return None
    return _bare(text, at, family, lang, named=named and not fillers)


def _word_before(text: str, start: int) -> str:
    words = text[max(0, start - 30) : start].split()
    return words[-1].casefold().strip(".,:;") if words else ""


def _skipped(family: str, text: str, start: int) -> bool:
    """Whether the word before a label makes it no label: "*reset* password flow", "*zip*
    code" (a "code" is a secret unless said to be another kind)."""
    before = _word_before(text, start)
    return before in NOT_BEFORE or (family == "code" and before in NOT_SECRET_CODES)


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
            ):
                starts.add(at)
    return sorted(starts)


@lru_cache(maxsize=16)
def _label_matches(text: str, hits: Hits) -> tuple[re.Match[str], ...]:
    """``_LABELS.finditer(text)``, tried only where a label may start (kept for the few
    readers of the same text)."""
    needles = hits.positions(LABEL_NEEDLES)
    if needles is None:
        return tuple(_LABELS.finditer(text))
    end = 0
    found = []
    for at in _label_starts(text, needles):
        if at < end:
            continue
        match = _LABELS.match(text, at)
        if match is not None:
            end = match.end()
            found.append(match)
    return tuple(found)


def labelled_values(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of values named by a label in running text, in any of the lexicon's languages
    (``hits``: the needles ``text`` holds)."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for match in _label_matches(text, hits):
        family, _, lang = (match.lastgroup or "").partition("_")
        if _skipped(family, text, match.start()):
            continue
        found = _after_label(text, match.start(), match.end(), family, lang)
        if found is not None:
            yield found[0], found[1], _KINDS.get(family, "password")


_AS_LABEL = re.compile(
    rf"(?<!\w)(?:{'|'.join(sorted(AS_WORDS, key=len, reverse=True))})[ \t]+"
    r"(?:[^\s.,;:!?]{1,15}[ \t]+){0,2}"
    r"(?:password|passwort|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha|hasło|пароль|"
    r"пароля)(?!\w)",
    re.IGNORECASE,
)
_LAST_WORD = re.compile(r"(\S+)[ \t]+$")


def values_before_labels(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of generated-looking values named as a password afterwards ("Xk2… as my
    password", "j'ai mis Xk2… comme mot de passe")."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for match in _AS_LABEL.finditer(text):
        before = _LAST_WORD.search(text, max(0, match.start() - 120), match.start())
        if before is None:
            continue
        value = before.group(1).rstrip(_TRAILING)
        if _strong(value) and not not_a_value(value) and not _address(value):
            yield before.start(1), before.start(1) + len(value), "password"


#: The words before a label, as runs of ASCII and runs of anything else ("Xk2…是我的密码").
_BACK_TOKEN = re.compile(r"[!-~\u00c0-\u058f]+(?=[\u0590-\uffff])|[\u0590-\uffff]\S*|\S+")
_GLUED_BEFORE = tuple(w for w in BEFORE_WORDS if not w.isascii())
_NAMED_FAMILIES = frozenset({"password", "pin", "key"})


#: A lowercase ``user@host`` (an ssh target, a key comment): who, not a password.
_USER_AT_HOST = re.compile(r"^[\"'`(]?[a-z][a-z0-9._-]+@[a-z][a-z0-9.-]+[\"'`)]?$")


def _address(value: str) -> bool:
    return _USER_AT_HOST.match(value) is not None


def _joins(word: str) -> bool:
    folded = word.casefold().strip(",")
    return folded in BEFORE_WORDS or folded.startswith(_GLUED_BEFORE)


def _value_named_after(text: str, start: int, family: str) -> tuple[int, int] | None:
    """A value a few words before a label that names it ("Xk2… is the new wifi password",
    "Xk2… — это мой пароль", "Xk2… benim şifrem", "Xk2… 是我的密码"): the word right after
    the value joins it to the label (a copula, a dash, a possessive), and no word between
    denies it or ends the sentence."""
    line = text.rfind("\n", 0, start) + 1
    tokens = list(_BACK_TOKEN.finditer(text, max(line, start - 120), start))
    for k in range(len(tokens) - 1, -1, -1):
        word = tokens[k].group(0)
        value = word.rstrip(_TRAILING)
        gap = len(tokens) - 1 - k
        label = (
            text[start : start + 40].split(maxsplit=1)[0].casefold() if start < len(text) else ""
        )
        if (
            gap
            and _joins(tokens[k + 1].group(0))
            and not word[len(value) :].startswith((",", ";"))  # "moi@serveur, il demandera…"
            and not not_a_value(value)
            and not _address(value)
            and (not label or label not in value.casefold())
        ):
            digits = family == "pin" and value.isdigit() and 4 <= len(value) <= 8
            if digits or (_strong(value) if family == "password" else token_like(value)):
                return tokens[k].start(), tokens[k].start() + len(value)
        if gap >= 5 or word.casefold() in NEGATIONS or any(c in ".!?;。！？" for c in word):
            return None
    return None


def values_named_after(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of values named by a label that follows them (see :func:`_value_named_after`)."""
    if hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for match in _label_matches(text, hits):
        family = (match.lastgroup or "").partition("_")[0]
        if family not in _NAMED_FAMILIES or _skipped(family, text, match.start()):
            continue
        after = _FILLER.match(text, match.end())
        if text[match.end() : match.end() + 1] == "-" or (
            after is not None and after.group("w").casefold() in NOT_FILLERS
        ):
            continue  # "password-protected", "password manager"
        found = _value_named_after(text, match.start(), family)
        if found is not None:
            yield found[0], found[1], _KINDS.get(family, "password")


# --- a value on its own line, named by the line after it ---------------------------------------

#: What points up at the line above: ``^``, arrows, a pointing hand (with its variation
#: selector or skin tone).
_POINTER = re.compile(r"[ \t]*(?:[\^↑⬆⤴☝👆🔝][\ufe0f\U0001f3fb-\U0001f3ff]*[ \t]*)+")
_ABOVE_WORDS = 4
#: Demonstratives of languages without spaces, matched at a word's start ("这是", "これは").
_GLUED_DEMONSTRATIVES = tuple(w for w in DEMONSTRATIVES if ord(w[0]) >= 0x2E80)
_ALONE = re.compile(r"[ \t]*(?P<v>\S{6,64})[ \t]*")


def _pointed(text: str, line: int, start: int) -> bool:
    """Whether the words from a line's start to a label on it point at the line above:
    a pointer, or a demonstrative first ("это пароль…", "dat is het wachtwoord"), and no
    more than a few words, none denying it."""
    pointer = _POINTER.match(text, line, start)
    words = text[pointer.end() if pointer else line : start].split()
    if len(words) > _ABOVE_WORDS or any(w.casefold() in NEGATIONS for w in words):
        return False
    if pointer is not None and pointer.end() > line:
        return True
    first = words[0].casefold().strip(",.:;!") if words else ""
    return first in DEMONSTRATIVES or first.startswith(_GLUED_DEMONSTRATIVES)


def values_above_labels(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of a generated-looking value alone on its line, named by the line after it
    ("M4gg…\n^ that's the pw for the drive", "Xk2…\nэто пароль от облака")."""
    if "\n" not in text or hits.present.isdisjoint(LABEL_NEEDLES):
        return
    for match in _label_matches(text, hits):
        family = (match.lastgroup or "").partition("_")[0]
        if family not in ("password", "pass", "key"):
            continue
        line = text.rfind("\n", 0, match.start())
        if line < 1 or not _pointed(text, line + 1, match.start()):
            continue
        above = text.rfind("\n", 0, line) + 1
        alone = _ALONE.fullmatch(text, above, line)
        if alone is None:
            continue
        value = alone.group("v").rstrip(_TRAILING)
        if (_strong(value) or token_like(value)) and not not_a_value(value):
            yield alone.start("v"), alone.start("v") + len(value), _KINDS.get(family, "password")


# --- assignments: env files, JSON, YAML, code --------------------------------------------------

_ASSIGN = re.compile(
    r"(?<![\w.-])(?P<q>[\"'`]?)(?P<name>[A-Za-z0-9_.-]{2,80})(?P=q)[ \t]*"
    r"(?P<op>:=|=>|==|=|:)[ \t]*"
)
_GLUED_PASSWORD = ("password", "passwd")
_GLUED_KEY = ("secret", "token", "apikey")
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def secret_name(name: str) -> str | None:
    """The label family an identifier names (``password``/``key``), or None."""
    parts = [part.lower() for part in _NAME_PARTS.findall(name)]
    if not parts or any(part in NAME_NOT_SECRET_PARTS for part in parts):
        return None
    if any(part in NAME_PASSWORD_PARTS or part.endswith(_GLUED_PASSWORD) for part in parts):
        return "password"  # PGPASSWORD, MYSQL_PWD
    if any(part in NAME_KEY_PARTS or part.endswith(_GLUED_KEY) for part in parts):
        return "key"  # GITHUBTOKEN
    return None


_JSON_STRING = re.compile(r'"((?:[^"\\\n]|\\.){1,400})"')
_SINGLE_STRING = re.compile(r"'([^'\n]{1,400})'|`([^`\n]{1,400})`")
_BARE_ASSIGNED = re.compile(r"[^\s,;}\]&\"'<>]+")


def _assigned(text: str, at: int) -> tuple[int, int, bool] | None:
    for pattern in (_JSON_STRING, _SINGLE_STRING):
        match = pattern.match(text, at)
        if match is not None:
            group = match.lastindex or 1
            return match.start(group), match.end(group), True
    match = _BARE_ASSIGNED.match(text, at)
    return (match.start(), match.end(), False) if match is not None else None


def assigned_values(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of values assigned to identifiers that name a secret (see the module doc)."""
    if ("=" not in text and ":" not in text) or hits.present.isdisjoint(NAME_NEEDLES):
        return
    for match in _ASSIGN.finditer(text):
        family = secret_name(match.group("name"))
        if family is None:
            continue
        found = _assigned(text, match.end())
        if found is None:
            continue
        begin, end, quoted = found
        value = text[begin:end]
        raw = value if quoted else _BARE.match(text, begin).group(0).rstrip(_TRAILING) or value  # type: ignore[union-attr]
        if not value or not_a_value(raw) or value.casefold() in {"null", "none", "nil"}:
            continue
        if not quoted and _wordy(raw) and _PROSE.match(text, begin + len(raw)):
            continue  # "Passwort: sag ich dir nachher"
        if family == "key" and not quoted and match.group("op") != "=":
            if not token_like(value):
                continue
        elif family == "key" and len(value) < 3:
            continue
        yield begin, end, _KINDS.get(family, "password")
