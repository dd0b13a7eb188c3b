"""The last guard of :func:`~.detect.mask`: a line that talks about a credential and still
holds a word shaped like a value once every detector has run is withheld whole.

:func:`~.detect.contains_secret` flags a text for three reasons: a secret the detectors found
(``mask`` takes each one out, every occurrence), a placeholder left where one was masked, or
words about a credential (:data:`SECRET_MARKERS`). The third carries no span, so a value the
detectors did not recognise ("Meadow2024! is my password" in a phrasing no rule knows) would
reach the farm next to words that got the card refused. This module closes that gap: on each
line where a marker stands and a value-shaped word (:func:`value_like`) is left, the line is
replaced by the placeholder, and the line under a marker line that ends on its label
("password:" then the value below, or "パスワードです。" / "비밀번호입니다": a copula or a polite
ending closing the line) too. A word of letters alone is value-shaped when capitals stand
inside it three times ("hGNxHsASs"). Every other occurrence of a withheld word goes with
it. Lines that only talk ("I forgot my password", "password reset link sent", "the password
is wrong") hold no value-shaped word and are kept as written.
"""

from __future__ import annotations

import re

from memory_worker.privacy.masking.needles import trie_pattern
from memory_worker.privacy.masking.normalise import fold

#: Words that make a text *about* a credential (a card holding one is dropped even without a
#: value, §10; on the farm's side a line holding one and a value-shaped word is withheld).
SECRET_MARKERS = re.compile(
    r"(?i)(api[\s_-]?key|apikey|passw(?:or)?d|парол[ьяюеі]|passwort|kennwort|mot de passe|"
    r"contrase[ñn]a|senha|has(?:ło|ła|łem|le)\b|гасло|密码|密碼|口令|密钥|"
    r"token\s*=|secret\s*=|access[\s_-]?token|client[\s_-]?secret|private[\s_-]?key|"
    r"\bbearer\s+\S|wachtwoord|lösenord|şifre|parola|heslo|kata\s+sandi|パスワード|暗証番号|"
    r"비밀번호|كلمة\s+(?:المرور|السر)|seed\s+phrase|mnemonic|助记词)"
)

#: Literal strings every :data:`SECRET_MARKERS` match holds once casefolded: one trie search
#: spares ordinary text the marker alternation (a property test checks it never hides one).
MARKER_NEEDLES = frozenset(
    [
        "api",
        "passw",
        "парол",
        "kennwort",
        "mot",
        "contrase",
        "senha",
        "has",
        "гасло",
        "密码",
        "密碼",
        "口令",
        "密钥",
        "token",
        "secret",
        "access",
        "client",
        "private",
        "bearer",
        "wachtwoord",
        "lösenord",
        "ş",
        "parola",
        "heslo",
        "kata",
        "パスワード",
        "暗証番号",
        "비밀번호",
        "كلمة",
        "seed",
        "mnemonic",
        "助记词",
    ]
)
_MARKER_SCAN = re.compile(trie_pattern(MARKER_NEEDLES))


def talks_about_a_credential(text: str) -> bool:
    """Whether a :data:`SECRET_MARKERS` word stands in ``text`` (a trie scan first)."""
    return _MARKER_SCAN.search(text.casefold()) is not None and bool(SECRET_MARKERS.search(text))


#: The placeholders of masking (a word holding one is not a value).
_PLACEHOLDER = re.compile(r"\[(?:redacted|card number|Filtered|email|phone)\]")
#: A candidate word: a run of printable ASCII other than the separators of prose and of
#: assignments (a value is typed in ASCII; CJK text runs words together with no space).
_WORD = re.compile(r"[!-~]+")
_SPLIT = re.compile(r"[=,;]+|(?<![^\W\d_])'|'(?![^\W\d_])")
#: What wraps a word in prose (quotes, brackets, trailing punctuation), not part of a value.
_WRAP = "\"'`()[]{}<>,;:.!?-="
_INNER_SYMBOL = re.compile(r"[A-Za-z0-9].*[!@#$%^&*+=?~|\\].*[A-Za-z0-9]", re.S)
#: Shapes that are not values: dates, times, versions, amounts, years, ordinals, sizes,
#: fractions, ports, hashes and ids in hex, identifiers in capitals, a ticket's or a seat's
#: number (one or two capitals, a dash, three digits at most).
_NOT_VALUE = re.compile(
    r"(?i:\d{1,4}[./-]\d{1,2}[./-]\d{1,4}|\d{1,2}(?::\d{2}(?::\d{2})?)?(?:am|pm)?"
    r"|v?\d+(?:\.\d+){1,3}(?:-[a-z0-9.]+)?|(?:19|20)\d{2}s?|\d+(?:st|nd|rd|th|h|min|s|x|gb|mb|kb"
    r"|tb|px|ms|%|k)|\d+[+]|[$€£¥]\d[\d,.]*|\d[\d,.]*[$€£¥]|\d+/\d+|\d+:\d+|[a-z][\w.-]*:\d+"
    r"|\d+[x×]\d+|[0-9a-f]{7,64})|[A-Z0-9]+(?:_[A-Z0-9]+)+"
    r"|[A-Z]{1,2}-\d{1,3}"  # a queue's ticket, a seat, a gate: "A-60", "B-42"
)
_TEMPLATE = re.compile(r"^(?:\$\(?\{?\w+\}?\)?|\{\{.*\}\}|%\w+%|x{4,}|\*{4,}|\.{4,})$", re.I)
#: user@host, an e-mail address: the host is a name or an address, not digits.
_AT_HOST = re.compile(r"^[\w.+-]+@(?:[a-z][\w-]*|[\w-]+(?:\.[\w-]+)+)(?::\S*)?$")
_URL = re.compile(r"^(?:[a-z][a-z0-9+.-]*)://[^:@/]*(?:[/?#]|$)", re.I)
#: A path: rooted, home-relative, or made of lower-case segments.
_PATH = re.compile(r"^(?:~?/|\.\.?/|[a-z0-9_.-]+(?:/[a-z0-9_.-]*)+$)")
#: A number right after a port option is a port.
_PORT = re.compile(r"(?i)(?:-p|--port|port|порт)\s*$")
#: A word that names what follows as a name or a public number, right before it.
_NAMED = re.compile(
    r"(?i)(?<![^\W\d_])(?:ssid|network|netzwerk|netz|r[ée]seau|red|rete|rede|netwerk|n[äa]tverk"
    r"|sie[ćc]|сеть|мережа|ağ|rfc|iso|ieee|room|raum|salle|sala|kamer|rum|pok[óo]j|flight"
    r"|flug|vol|vuelo|volo|voo|vlucht|рейс|uçuş|page|seite|step|issue|ticket|bug|order"
    r"|model|modell|mod[eè]le|modelo|modello|called|named|hei(?:ß|ss)t|appel[ée]e?|s['’]appelle"
    r"|llamad[ao]|se\s+llama|si\s+chiama|chiamat[ao]|se\s+chama|chamad[ao]|heet|genaamd|heter"
    r"|kallas|nazywa\s+si[ęe]|называется|adl[ıi]|ad[ıi]nda"
    # a user's name after its word ("invalid password for user 'crew'")
    r"|user|username|usuario|utilisateur|benutzer|utente|usu[áa]rio|gebruiker|anv[äa]ndare"
    r"|u[żz]ytkownik|пользователь|користувач|kullan[ıi]c[ıi])[ \t]*[:=#]?[ \t]*[\"'«“(]?$"
    r"|(?:名称|이름|名前|الشبكة|叫做?|名为|という)[ \t]*[:：]?[ \t]*$"
)
#: A label at the end of a line: the value is on the line below.
_LABEL_AT_END = re.compile(r"[:：=\-–—>]\s*$")
#: A lower-case letter, then a capital: a capital inside a word.
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
#: What may close a line that ends on its label: a copula or a polite ending ("パスワードです。",
#: "비밀번호입니다", "密码是", "كلمة المرور هي", "das Passwort ist", "the password is"), then
#: punctuation. The value stands on the line below.
_COPULA_END = re.compile(
    r"(?i)^[\s:：]*(?:です|でございます|だよ|だ|は|입니다|이에요|예요|는|은|是|为|如下|هو|هي|ist|lautet|is|are|es|est|"
    r"c['’]est|é|è|jest|är|is\s+als\s+volgt|это|это\s+вот|—\s*это)?[\s。．.!！:：,，、…~〜]*$"
)


#: A phone number in international form (a ``+``, the country's code, groups of digits): whom
#: to call, never a password's value ("never send passwords in the chat, call +30 796 669 4844").
_PHONE = re.compile(r"(?<![A-Za-z0-9+])\+\d{1,3}(?:[ \t.-]?\(?\d{1,4}\)?){2,6}(?![\w])")


def _blank(match: re.Match[str]) -> str:
    return " " * len(match.group())


def value_like(word: str, before: str = "") -> bool:
    """Whether ``word`` (a run of ASCII of a line; ``before`` is the line up to it) is shaped
    like a secret's value: four characters or more, with digits and letters mixed, a symbol
    inside letters, or four digits and more; never a placeholder, a template, an e-mail
    address or ``user@host``, a link without credentials, a path, a date, a time, a version,
    an amount, a port, a hex id or an identifier in capitals."""
    core = word.strip(_WRAP)
    if len(core) < 4 or _PLACEHOLDER.search(core) or _TEMPLATE.match(core):
        return False
    if _NOT_VALUE.fullmatch(core) or _AT_HOST.match(core) or _URL.match(core):
        return False
    if _PATH.match(core) or _NAMED.search(before):
        return False  # … or a network's name, a standard's number: "SSID: HomeNet_5G", "RFC 8018"
    digits = sum(c.isdigit() for c in core)
    letters = sum(c.isalpha() for c in core)
    if digits and letters:
        return True
    if digits:
        return digits >= 4 and not _PORT.search(before)
    if len(core) >= 6 and core.isalpha() and len(_INNER_CAPITAL.findall(core)) >= 3:
        return True  # "hGNxHsASs": capitals inside three times, not "iPhoneXS" or "MacBook"
    return len(core) >= 6 and _INNER_SYMBOL.search(core) is not None


def _values(line: str) -> list[str]:
    out: list[str] = []
    for match in _WORD.finditer(line):
        at = match.start()
        for part in _SPLIT.split(match.group()):
            if part and value_like(part, line[:at]):
                out.append(part.strip(_WRAP))
            at += len(part) + 1
    return out


def flagged_values(text: str) -> set[str]:
    """The value-shaped words of ``text``'s lines that talk about a credential, and of the
    line under one that ends on its label, when its first word is typed (no CJK or Hangul:
    "密码如下：\n2024年更新" gives none; one trie scan when no marker stands)."""
    if not talks_about_a_credential(text):
        return set()
    lines = text.split("\n")
    values: set[str] = set()
    for i, line in enumerate(lines):
        if not SECRET_MARKERS.search(line):
            continue
        found = _values(_PHONE.sub(_blank, SECRET_MARKERS.sub(" ", line)))
        if found:
            values.update(found)
        elif _LABEL_AT_END.search(line) or _ends_on_marker(line) or _ends_on_copula(line):
            below = _next_line(lines, i)
            if below is not None and not SECRET_MARKERS.search(lines[below]):
                words = lines[below].split()
                typed = not any(ord(c) >= 0x2E80 for c in words[0]) if words else False
                if 0 < len(words) <= 3 and "=" not in words[0] and typed and value_like(words[0]):
                    values.update(_values(lines[below]) or [words[0].strip(_WRAP)])
    return values


def withhold(text: str, masked: str, placeholder: str) -> str:
    """``masked`` (``text`` after the detectors) with every line that still holds one of
    :func:`flagged_values` of ``text`` replaced by ``placeholder``: the decision is taken on
    the text as written, so a marker a detector consumed still counts — read as the detectors
    read it (:func:`.normalise.fold`: a marker spelt in full-width letters or with a
    zero-width character inside is a marker, a full-width value a value)."""
    values = flagged_values(fold(text).text)
    if not values:
        return masked
    alone = re.compile(
        "|".join(
            rf"(?<![A-Za-z0-9]){re.escape(v)}(?![A-Za-z0-9])"
            for v in sorted(values, key=len, reverse=True)
        )
    )
    lines = masked.split("\n")
    return "\n".join(placeholder if alone.search(fold(line).text) else line for line in lines)


def _ends_on_marker(line: str) -> bool:
    ends = [m.end() for m in SECRET_MARKERS.finditer(line)]
    return bool(ends) and not line[ends[-1] :].strip(" \t:：=-–—>()")


def _ends_on_copula(line: str) -> bool:
    """Whether ``line`` ends on its marker and a copula or polite ending (:data:`_COPULA_END`)."""
    ends = [m.end() for m in SECRET_MARKERS.finditer(line)]
    return bool(ends) and _COPULA_END.match(line[ends[-1] :]) is not None


def _next_line(lines: list[str], at: int) -> int | None:
    for j in range(at + 1, min(at + 3, len(lines))):
        if lines[j].strip():
            return j
    return None
