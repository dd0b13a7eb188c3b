"""A value after a word for access or credentials: a short phrase naming access, a login's
details or credentials in any of the fifteen label languages ("Netflix-Zugang", "acceso del
router", "giriş bilgisi", "ログイン情報", "로그인 정보", "登录信息", "بيانات الدخول", "creds"),
then ``:``, ``=`` or an arrow and **one** value closing the line, shaped as a generated
password: letters, digits and a symbol (``Hopsi#4471``), or a long generated key.

"login: anna.k" names a user, not a password, so a bare "login" is no such word here;
"access: read-only", "Zugang: über den Hintereingang", "access: Room4B" hold no symbol or
more than one word, and are kept.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits, words
from memory_worker.privacy.masking.shapes import Span
from memory_worker.privacy.masking.values import TRAILING, generated, not_a_value

#: Needles: a text holding none of them names no access or credentials.
ACCESS_NEEDLES = words(
    """
    cred access zugang accès acces acceso accesso acesso toegang inloggning dostęp dostep доступ
    giriş giris ログイン情報 로그인 정보 登录信息 登入資訊 بيانات login log-in logon inlog
    логин логін ログイン 로그인 登录 登入
    """
)

_ACCESS = (
    r"creds?|credentials|access|\w*zugang(?:sdaten)?|acc[èe]s|acceso|accesso|acesso"
    r"|toegang(?:sgegevens)?|inloggning(?:suppgifter)?|dost[ęe]p|доступ\w*"
    r"|giri[şs]\s+bilgi(?:si|leri)?|ログイン情報|로그인\s*정보|登录信息|登入資訊|بيانات\s+(?:ال)?دخول"
)
#: The phrase (a few words of what it opens may stand after it), the separator, one value.
_ACCESS_VALUE = re.compile(
    rf"(?i:{_ACCESS})[^\n:：=→]{{0,30}}?[ \t]*(?:[:：=]|->|=>|→)[ \t]*"
    r"(?P<v>[^\s\"'«»“”()\[\]<>]{6,64})[ \t]*[.!]?[ \t]*$",
    re.M,
)
_SYMBOL = re.compile(r"[!#$%^&*+=~?@]")
#: A login's word, what it opens, then a copula or a separator and a generated value ("the new
#: login for the x-ray PC is HM3P_NqK4C6", "the portal login was — it's the same as the
#: library one: Gondel387*"): a login named is a password given when the value is generated.
_LOGIN = r"(?<![^\W\d_])(?:log-?in|logon|inlog|inloggning\w*|логин|логін|ログイン|로그인|登录|登入)"
_LOGIN_VALUE = re.compile(
    rf"(?i:{_LOGIN})[^\n]{{0,80}}?(?:[ \t]+(?i:is|was|ist|war|est|était|es|era|è|é|är|var|"
    r"jest|был|було|これは)|[ \t]*(?:[:：=]|->|=>|→))[ \t]+"
    r"(?P<v>[^\s\"'«»“”()\[\]<>]{6,64})(?=[.,;!?]*(?:\s|$))",
    re.M,
)
_EMAIL_LIKE = re.compile(r"[^@\s]+@[^@\s]+\.[A-Za-z]{2,}")
#: A capital right after a small letter, inside a value: typed in random case ("NqK", "uCa").
_RANDOM_CASE = re.compile(r"[a-z][A-Z]")
_RANDOM_CASE_CHARS = 8


def _login_value(value: str) -> bool:
    """A login's value that is a password: generated, or eight characters or more in random
    case with a digit ("HM3P_NqK4C6"), not an e-mail address or a user's name ("anna.k2024")."""
    if _EMAIL_LIKE.fullmatch(value) is not None or not_a_value(value):
        return False
    random_case = (
        len(value) >= _RANDOM_CASE_CHARS
        and _RANDOM_CASE.search(value) is not None
        and any(c.isdigit() for c in value)
    )
    return random_case or _generated_password(value)


def _generated_password(value: str) -> bool:
    if not_a_value(value) or "://" in value:
        return False
    shaped = (
        any(c.isalpha() for c in value)
        and any(c.isdigit() for c in value)
        and _SYMBOL.search(value.rstrip("?!")) is not None
    )
    return shaped or generated(value)


def access_values(text: str, hits: Hits) -> Iterator[Span]:
    """A generated value closing the line of a word for access or credentials."""
    if not hits.present & ACCESS_NEEDLES:
        return
    for match in _ACCESS_VALUE.finditer(text):
        value = match.group("v").rstrip(TRAILING.replace("!", "").replace("?", ""))
        if _generated_password(value):
            yield match.start("v"), match.start("v") + len(value), "password"
    for match in _LOGIN_VALUE.finditer(text):
        value = match.group("v").rstrip(TRAILING.replace("!", "").replace("?", ""))
        if _login_value(value):
            yield match.start("v"), match.start("v") + len(value), "password"


#: A ``user / password`` pair standing alone in a sentence ("faceit kasse21 / luna665+8lg",
#: "konto trenera ham2 / Pino491+zsN"): a user's word, a slash between spaces, and a value
#: of eight characters or more with letters, digits and a symbol inside it — a generated
#: password, whatever label (or none) names the account. "yes / no", "Ctrl+C / Ctrl+V",
#: "v1.2 / v1.3", "TCP/IP" hold no such value.
_SLASHED_PAIR = re.compile(
    r"(?<![^\s(\[:,;])(?P<user>[A-Za-z][A-Za-z0-9._-]{1,30})[ \t]+/[ \t]+"
    r"(?P<v>[^\s\"'«»“”()\[\]<>/]{8,64})"
)


_VERSIONISH = re.compile(r"[vV]?\d+(?:\.\d+)+")


def slashed_pairs(text: str, hits: Hits) -> Iterator[Span]:
    """The password of a ``user / password`` pair (:data:`_SLASHED_PAIR`); run on every text
    holding a slash between spaces."""
    if " / " not in text:
        return
    for match in _SLASHED_PAIR.finditer(text):
        value = match.group("v").rstrip(TRAILING.replace("!", "").replace("?", ""))
        if _VERSIONISH.match(value) or _VERSIONISH.match(match.group("user")):
            continue  # "v1.2.3-rc1 / v1.2.4+build7": two releases
        if len(value) >= 8 and _SYMBOL.search(value[1:-1]) and _generated_password(value):
            yield match.start("v"), match.start("v") + len(value), "password"
