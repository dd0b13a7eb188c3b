"""Secrets assigned to a name that says what they are: env files, JSON, YAML, code
(``DB_PASSWORD=…``, ``"apiKey": "…"``, ``PGPASSWORD``, ``aws_secret_access_key``,
``x-api-key``; assigned with ``=``, ``:``, ``:=`` or ``=>``) and calls that set one
(``define('DB_PASSWORD', '…')``, ``setenv("TOKEN", "…")``). Parts of a name that say it is
*about* a secret rather than one (``MAX_TOKENS``, ``password_min_length``, ``TOKEN_FILE``,
``primary_key``) rule it out.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.labels import KINDS
from memory_worker.privacy.masking.lexicon import (
    NAME_KEY_PARTS,
    NAME_NEEDLES,
    NAME_NOT_SECRET_PARTS,
    NAME_PASSWORD_PARTS,
)
from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.shapes import Span, token_like
from memory_worker.privacy.masking.values import PROSE, TRAILING, not_a_value, wordy

_BARE = re.compile(r"[^\s]+")

_ASSIGN = re.compile(
    r"(?<![\w.-])(?P<q>[\"'`]?)(?P<name>[\w.-]{2,80})(?P=q)[ \t]*"
    r"(?P<op>:=|=>|==|=|:)[ \t]*"
)
_GLUED_PASSWORD = ("password", "passwd")
_GLUED_KEY = ("secret", "token", "apikey")
_NAME_PARTS = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


#: An identifier's letters without their accents (``SMTP_LÖSEN``, ``DB_ŞIFRE``, ``HASŁO``: the
#: words of :data:`NAME_PASSWORD_PARTS` are spelt in ASCII, as most people type a key).
_PLAIN = str.maketrans(
    "ÄÖÜÅÉÈÊÑÇÃÕÁÍÓÚÀÂŁŚĆŹŻĄĘŞĞİäöüåéèêñçãõáíóúàâłśćźżąęşğı",
    "AOUAEEENCAOAIOUAALSCZZAESGIaouaeeencaoaiouaalsczzaesgi",
)


def secret_name(name: str) -> str | None:
    """The label family an identifier names (``password``/``key``), or None."""
    parts = [part.lower() for part in _NAME_PARTS.findall(name.translate(_PLAIN))]
    if not parts or any(part in NAME_NOT_SECRET_PARTS for part in parts):
        return None
    if "".join(parts) in NAME_PASSWORD_PARTS:
        return "password"  # a label of several words, split: MOT_DE_PASSE, palavra_passe
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


#: A call that sets a named value: ``define('DB_PASSWORD', 'x')`` (PHP), ``putenv``,
#: ``setenv("TOKEN", "x")``, ``config.set("api_key", "x")``.
_CALL_ASSIGN = re.compile(
    r"\b[A-Za-z_][\w.]*\(\s*(?P<q>[\"'])(?P<name>[A-Za-z0-9_.-]{2,80})(?P=q)\s*,\s*"
    r"(?P<v>\"(?:[^\"\\\n]|\\.){1,400}\"|'[^'\n]{1,400}')"
)


def _called_values(text: str) -> Iterator[Span]:
    for match in _CALL_ASSIGN.finditer(text):
        family = secret_name(match.group("name"))
        value = match.group("v")[1:-1]
        if family is None or not value or not_a_value(value):
            continue
        if family == "key" and len(value) < 3:
            continue
        yield match.start("v") + 1, match.end("v") - 1, KINDS.get(family, "password")


def assigned_values(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of values assigned to identifiers that name a secret (see the module doc)."""
    if hits.present.isdisjoint(NAME_NEEDLES):
        return
    if "(" in text:
        yield from _called_values(text)
    if "=" not in text and ":" not in text:
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
        raw = value if quoted else _BARE.match(text, begin).group(0).rstrip(TRAILING) or value  # type: ignore[union-attr]
        if not value or not_a_value(raw) or value.casefold() in {"null", "none", "nil"}:
            continue
        if not quoted and wordy(raw) and PROSE.match(text, begin + len(raw)):
            continue  # "Passwort: sag ich dir nachher"
        if family == "key" and not quoted and match.group("op") != "=":
            if not token_like(value):
                continue
        elif family == "key" and len(value) < 3:
            continue
        yield begin, end, KINDS.get(family, "password")
