"""Secrets recognised by their label: "the wifi password for the office is …", "Passwort:
…", "пароль от почты qwerty123", ``DB_PASSWORD=…``, ``"apiKey": "…"``.

Two readers share the lexicon (:mod:`memory_worker.masking.lexicon`):

- :func:`labelled_values` — a label in running text, then up to four words
  naming what it is for ("for the office"), a connector of the label's
  language (``is``, ``ist``, ``est``, ``это``, ``是``, ``:``, ``=``, ``-``, ``'s``)
  and the value (one token, or a quoted phrase). Without a connector only a
  value that reads as generated is taken (``password hunter22``, also after
  "<preposition> <word>": ``пароль от вайфая qwerty123``). The family of the
  label decides what the value may be (see the lexicon's docstring).
- :func:`assigned_values` — an identifier whose parts name a secret
  (``DB_PASSWORD``, ``aws_secret_access_key``, ``apiKey``, ``x-api-key``)
  assigned with ``=``, ``:``, ``:=`` or ``=>`` (env files, JSON, YAML, code).
  Parts that say it is *about* a secret rather than one (``MAX_TOKENS``,
  ``password_min_length``, ``TOKEN_FILE``, ``primary_key``) rule it out.

Values that are never secrets: ordinary words (the lexicon's ``NOT_VALUES``),
templates (``${DB_PASSWORD}``, ``<password>``, ``{{ token }}``, ``%s``,
``YOUR_API_KEY``), runs of
``*``/``•``/``x`` (already hidden), URLs (a URL's own credentials are
:mod:`~memory_worker.masking.shapes`' business) and text already masked.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.masking.lexicon import (
    CONNECTOR_WORDS,
    FILLER_ADVERBS,
    NOT_FILLERS,
    KEY_LABELS,
    NAME_KEY_PARTS,
    NAME_NOT_SECRET_PARTS,
    NAME_PASSWORD_PARTS,
    NOT_VALUES,
    PASSWORD_LABELS,
    PIN_LABELS,
    PREPOSITIONS,
)
from memory_worker.masking.shapes import Span, _token_like

_FAMILIES = {"password": PASSWORD_LABELS, "key": KEY_LABELS, "pin": PIN_LABELS}
_KINDS = {"password": "password", "key": "token", "pin": "pin"}


def _label_pattern() -> re.Pattern[str]:
    groups = []
    for family, table in _FAMILIES.items():
        for lang, labels in table.items():
            body = "|".join(sorted(labels, key=len, reverse=True))
            if lang == "zh":
                groups.append(f"(?P<{family}_{lang}>{body})")
            else:
                groups.append(f"(?<!\\w)(?P<{family}_{lang}>{body})(?!\\w)")
    return re.compile("|".join(groups), re.IGNORECASE)


_SYMBOLS = r"(?:=>|->|→|—|–|:=|=|:|：|-(?=\s))"


#: Languages whose copulas an English-spelt label takes too ("la password è …").
_LATIN = ("en", "de", "fr", "es", "pt", "it", "pl")


def _connector_pattern(lang: str) -> re.Pattern[str]:
    """Symbols, then the label's language's copulas and English's (an English-spelt label
    takes every Latin-script language's: "password" is said in all of them); Polish
    ``to`` only after a Polish label (in English it is a preposition). ``any``: every
    language's (a PIN's value is digits only: "PIN to 4821", "PIN ist 4821")."""
    words = set(CONNECTOR_WORDS["en"]) | set(CONNECTOR_WORDS.get(lang, ()))
    if lang in ("en", "any"):
        words.update(w for other in _LATIN for w in CONNECTOR_WORDS[other])
    if lang == "any":
        words.update(w for other in ("ru", "uk") for w in CONNECTOR_WORDS[other])
    elif lang != "pl":
        words.discard("to")
    body = "|".join(sorted(words, key=len, reverse=True))
    end = "" if lang == "zh" else r"(?!\w)"
    return re.compile(
        rf"\s*(?:{_SYMBOLS}\s*(?:(?:{body}){end}\s*)?(?:{_SYMBOLS}\s*)?"
        rf"|['’]s(?!\w)\s*|(?:{body}){end}\s*(?:{_SYMBOLS}\s*)?)",
        re.IGNORECASE,
    )


_LABELS = _label_pattern()
_CONNECTORS = {lang: _connector_pattern(lang) for lang in CONNECTOR_WORDS}
_PIN_CONNECTOR = _connector_pattern("any")
_QUOTES = {'"': '"', "'": "'", "«": "»", "“": "”", "„": "“", "‘": "’", "`": "`", "「": "」"}
_BARE = re.compile(r"[^\s]+")
_ASCII = re.compile(r"[!-~]+")
_TRAILING = ".,;:!?)]}»\"'”’…"
_FILLER = re.compile(r"[ \t]+(?P<w>[^\s.!?,;:=：]{1,30})(?=[\s:=：]|$)")
_TEMPLATE = re.compile(
    r"^(?:\$\{?[\w.]+\}?|%\(?\w*\)?[sd]|\{\{?[^{}]*\}\}?|<[^<>]+>|[*•●xX.·_-]{3,}|…|\?+"
    r"|[A-Z]+(?:[_-][A-Z]+)+)$"  # a placeholder name: YOUR_API_KEY, CHANGE-ME
)


def _value(text: str, at: int, lang: str) -> tuple[int, int, bool] | None:
    """The value starting at ``at`` (spaces skipped): (start, end, quoted)."""
    while at < len(text) and text[at] in " \t":
        at += 1
    if at < len(text) and text[at] in _QUOTES:
        close = text.find(_QUOTES[text[at]], at + 1, at + 102)
        if close > at + 1 and "\n" not in text[at + 1 : close]:
            return at + 1, close, True
    match = (_ASCII if lang == "zh" else _BARE).match(text, at)
    if match is None:
        return None
    end = match.end()
    while end > at and text[end - 1] in _TRAILING:
        end -= 1
    return (at, end, False) if end > at else None


def not_a_value(value: str) -> bool:
    """Whether ``value`` (after a label) is an ordinary word, a template, a URL or a mask."""
    folded = value.casefold()
    return (
        folded in NOT_VALUES
        or value.startswith(("[", "<", "{"))
        or bool(_TEMPLATE.match(value))
        or "://" in value
        or folded.startswith("www.")
    )


def _strong(value: str) -> bool:
    """A value no sentence would hold in that place: letters mixed with digits or symbols."""
    return (
        len(value) >= 6
        and any(c.isalpha() for c in value)
        and any(c.isdigit() or c in "!@#$%^&*_+=~" for c in value)
    )


def _accepts(family: str, value: str, *, connector: bool) -> bool:
    if not value or not_a_value(value):
        return False
    if family == "pin":
        return value.isdigit() and (3 if connector else 4) <= len(value) <= 8
    if not connector:
        return _strong(value)
    if family == "password":
        return len(value) >= 3
    return _token_like(value)


def _after_label(text: str, at: int, family: str, lang: str) -> tuple[int, int] | None:
    """The value a label at ``at`` names, if any (see the module doc)."""
    connector = _PIN_CONNECTOR if family == "pin" else _CONNECTORS[lang]
    start = at
    fillers: list[str] = []
    while True:
        joined = connector.match(text, at)
        adverb = _FILLER.match(text, at)
        if adverb is not None and adverb.group("w").casefold() in FILLER_ADVERBS:
            joined = connector.match(text, adverb.end()) or adverb  # "пароль теперь …"
        if joined is not None and joined.group(0).strip():
            found = _value(text, joined.end(), lang)
            if found is not None and text[found[0] : found[1]].casefold() in FILLER_ADVERBS:
                found = _value(text, found[1], lang)
            if found is None:
                return None
            begin, end, quoted = found
            value = text[begin:end]
            return (begin, end) if _accepts(family, value, connector=True) else None
        bare_ok = not fillers or (len(fillers) == 2 and fillers[0].casefold() in PREPOSITIONS)
        found = _value(text, at, lang) if bare_ok and at < len(text) else None
        if found is not None and (found[0] > at or lang == "zh"):
            begin, end, quoted = found
            if _accepts(family, text[begin:end], connector=quoted):
                return begin, end
        word = _FILLER.match(text, at)
        if word is None or len(fillers) == 4 or word.end() - start > 80:
            return None
        if word.group("w").casefold() in NOT_FILLERS:
            return None
        fillers.append(word.group("w"))
        at = word.end()


def labelled_values(text: str) -> Iterator[Span]:
    """Spans of values named by a label in running text, in any of the lexicon's languages."""
    for match in _LABELS.finditer(text):
        family, _, lang = (match.lastgroup or "").partition("_")
        found = _after_label(text, match.end(), family, lang)
        if found is not None:
            yield found[0], found[1], _KINDS[family]


# --- assignments: env files, JSON, YAML, code --------------------------------------------------

_ASSIGN = re.compile(
    r"(?<![\w.-])(?P<q>[\"'`]?)(?P<name>[A-Za-z0-9_.-]*?(?:pass|pwd|pw|secret|token|key|auth|"
    r"cred|sig)[A-Za-z0-9_.-]*)(?P=q)[ \t]*(?P<op>:=|=>|==|=|:)[ \t]*",
    re.IGNORECASE,
)
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


def secret_name(name: str) -> str | None:
    """The label family an identifier names (``password``/``key``), or None."""
    parts = [part.lower() for part in _NAME_PARTS.findall(name)]
    if not parts or any(part in NAME_NOT_SECRET_PARTS for part in parts):
        return None
    if any(part in NAME_PASSWORD_PARTS for part in parts):
        return "password"
    if any(part in NAME_KEY_PARTS for part in parts):
        return "key"
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


def assigned_values(text: str) -> Iterator[Span]:
    """Spans of values assigned to identifiers that name a secret (see the module doc)."""
    for match in _ASSIGN.finditer(text):
        family = secret_name(match.group("name"))
        if family is None:
            continue
        found = _assigned(text, match.end())
        if found is None:
            continue
        begin, end, quoted = found
        value = text[begin:end]
        if not value or not_a_value(value) or value.casefold() in {"null", "none", "nil"}:
            continue
        if family == "key" and not quoted and match.group("op") != "=":
            if not _token_like(value):
                continue
        elif family == "key" and len(value) < 3:
            continue
        yield begin, end, _KINDS[family]
