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

from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.shapes import Span
from memory_worker.privacy.masking.values import TRAILING, generated, not_a_value


def _words(text: str) -> frozenset[str]:
    """The whitespace-separated words of a block of text (a word list kept readable)."""
    return frozenset(text.split())


#: Needles: a text holding none of them names no access or credentials.
ACCESS_NEEDLES = _words(
    """
    cred access zugang accès acces acceso accesso acesso toegang inloggning dostęp dostep доступ
    giriş giris ログイン情報 로그인 정보 登录信息 登入資訊 بيانات
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
