"""Secrets in a list of credentials: under a heading that names accounts, logins or passwords,
each line names a service and gives its value ("accounts for the new intern:\n- gmail:
Daisy1981\n- jira: M2^IV7…", "Zugangsdaten:\nNAS: Xk2…\nRouter: …").

A line of the list is a bullet (or none), a short name, ``:`` or ``=``, and one value that no
sentence would hold (:func:`.values.strong`: letters mixed with digits or symbols); a line
naming who logs in (``user:``, ``login:``, ``email:``), an address, a link, a date, a version
or a path is kept. Only the lines right under the heading count (blank lines end the list).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits
from memory_worker.privacy.masking.ordinary import USER_LABELS
from memory_worker.privacy.masking.shapes import Span
from memory_worker.privacy.masking.values import TRAILING, address, not_a_value, strong

#: Words of a heading over a list of credentials, per language (casefolded, found inside a
#: line; the last word of each alternative may take an ending).
_HEADING = re.compile(
    r"(?i)(?<!\w)(?:accounts|logins|credentials|creds|passwords|pws|passes|"
    r"zugänge|zugangsdaten|passwörter|kennwörter|logindaten|identifiants|comptes|mots de passe|"
    r"accès|cuentas|contraseñas|credenciales|accesos|credenziali|accessi|contas|senhas|"
    r"acessos|credenciais|inloggegevens|wachtwoorden|accounts|konton|lösenorden|inloggningar|"
    r"konta|hasła|dane logowania|dostępy|доступы|пароли|аккаунты|учётки|учетки|логины|"
    r"hesaplar|şifreler|giriş bilgileri)(?!\w)"
    r"|アカウント|パスワード一覧|ログイン情報|계정|비번들|비밀번호들|로그인 정보|账号|帐号|账户|密码们|"
    r"登录信息|الحسابات|كلمات السر|كلمات المرور"
)
#: Needles of the headings (one trie scan finds them; every heading holds one).
_LIST_NEEDLE_WORDS = """
    account logins credential creds passwords pws passes access zugänge zugangsdaten
    passwörter kennwörter logindaten identifiants comptes mots accès cuentas contraseñas
    credenciales accesos credenziali accessi contas senhas acessos credenciais inloggegevens
    wachtwoorden konton lösenorden inloggningar konta hasła logowania dostępy доступы пароли
    аккаунты учётки учетки логины hesaplar şifreler giriş アカウント パスワード ログイン 계정
    비번들 비밀번호들 로그인 账号 帐号 账户 密码们 登录 الحسابات كلمات
    """
LIST_NEEDLES = frozenset(_LIST_NEEDLE_WORDS.split())
_ITEM = re.compile(
    r"[ \t]*(?:[-*•·▪◦>]+|\d{1,2}[.)])?[ \t]*(?P<k>[^\s:=：][^\n:=：]{0,23}?)[ \t]*[:=：][ \t]*"
    r"(?P<v>\S+)[ \t]*"
)
_ANY_ITEM = re.compile(r"[ \t]*(?:[-*•·▪◦>]+|\d{1,2}[.)])?[ \t]*[^\n:=：]{1,24}[:=：][^\n]*")
_MAX_ITEMS = 12
_VALUE_AFTER = re.compile(r"[:=：][ \t]*\S")
#: An e-mail address, a version, a date, a time, a path or a host: no secret.
_NOT_SECRET = re.compile(
    r"^[@#]|@[\w-]+\.\w|^[A-Z]{2}\d{2}[A-Z0-9]{10,30}$|^v?\d+(?:\.\d+)+\b|^\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$|^\d{1,2}:\d{2}|^[~/.]|"
    r"^[\w-]+(?:\.[\w-]+)+\.(?:com|org|net|io|de|fr|es|it|ru|local|lan)$",
    re.IGNORECASE,
)


def _user_key(key: str) -> bool:
    words = key.casefold().replace("-", " ").split()
    return any(w in USER_LABELS or w in ("email", "e-mail", "mail", "name", "host") for w in words)


def credential_lists(text: str, hits: Hits) -> Iterator[Span]:
    """Spans of the values in a list of credentials under its heading."""
    if "\n" not in text:
        return
    for heading in _HEADING.finditer(text):
        at = text.find("\n", heading.end())
        if at < 0 or _VALUE_AFTER.search(text, heading.end(), at):
            continue  # "access: room B12" is an item, not a heading
        items = 0
        while at >= 0 and items < _MAX_ITEMS:
            end = text.find("\n", at + 1)
            end = len(text) if end < 0 else end
            line = _ITEM.fullmatch(text, at + 1, end)
            items += 1
            if line is None:
                if _ANY_ITEM.fullmatch(text, at + 1, end) is None:
                    break  # the list ends: "- slack: same as gmail" is still in it
                at = end if end < len(text) else -1
                continue
            value = line.group("v").rstrip(TRAILING)
            if (
                strong(value)
                and not _user_key(line.group("k"))
                and not not_a_value(value)
                and not address(value)
                and not _NOT_SECRET.search(value)
            ):
                yield line.start("v"), line.start("v") + len(value), "password"
            at = end if end < len(text) else -1
