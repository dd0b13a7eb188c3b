"""Numbers that are secrets or contacts: payment card numbers (Luhn), e-mail addresses, phones.

A payment card number is 13–19 digits that pass the Luhn check and start like a
card of that length (Mir, Visa, Mastercard, Amex, Diners, Discover, JCB, UnionPay,
Maestro, Troy: ``_PREFIXES``), typed as one run or in groups of 4–6 digits (4-4-4-4,
4-6-5, 4-4-4-4-3) separated by spaces (also NBSP, narrow and figure spaces, two of
them), dots, dashes or slashes. What is *not* a card, on purpose: a run glued to
letters (``DE89 3704…`` IBANs, ``SKU12345…`` codes), a number whose first digits no
card of its length has (ISBN-13s start 978/979, an IMEI is 15 Luhn-valid digits
starting 35/86/01/49, phones with a country code start 1/7/8/9 or follow ``+``),
groups of 1–3 digits (phone numbers, dates, lottery rows), a card-shaped window that
the run's own grouping continues for a few more digits (one longer number) — unless
it is a 16-digit card followed by a 3–4 digit group, a card typed with its CVV
(``4111 1111 1111 1111 123``) — and numbers that fail Luhn (order and tracking numbers,
nine in ten of them). What is written right after a card number on its line — an
expiry ``MM/YY`` and a 3–4 digit CVV — goes with it.

US Social Security numbers: ``AAA-GG-SSSS`` with the ranges the SSA never issues left
out (area 000, 666, 9xx; group 00; serial 0000), anywhere; nine digits without dashes
only a few words after ``SSN``, "social security number" (in the lexicon's languages too:
"Sozialversicherungsnummer", "número de seguro social") or "my social is".

E-mail addresses and phone numbers are contacts, not secrets: they are found
only when asked (``MEMORY_REDACT_CONTACTS``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from memory_worker.privacy.masking.needles import Hits

Span = tuple[int, int, str]

_SPACE = "[ \u00a0\u2007\u202f\t]"
#: A digit run: groups joined by one separator (up to two spaces, around an optional . - /).
_DIGIT_RUN = re.compile(
    rf"(?<![+0-9A-Za-z])[0-9]+(?:(?:{_SPACE}{{1,2}}[-./]?{_SPACE}{{0,2}}|[-./]{_SPACE}{{0,2}})[0-9]+)*"
)
_GROUP = re.compile(r"[0-9]+")
_EMAIL = re.compile(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
_PHONE = re.compile(r"(?<![\w+/.,:])\+?\(?[0-9](?:[ .()-]{0,2}[0-9]){6,16}(?![\w/])")
_DATE_LIKE = re.compile(
    r"^(?:19|20)\d\d[-./]\d\d?[-./]\d\d?\b|^\d\d?[-./]\d\d?[-./](?:19|20)?\d\d\b"
)


def luhn_valid(digits: str) -> bool:
    """Whether a string of digits passes the Luhn check (payment card numbers do)."""
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = ord(char) - 48
        if i % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


#: The first digits a card number of each length may start with: Visa 13; Diners 14;
#: Amex 15 (an IMEI is 15 Luhn-valid digits too, starting 35/86/01/49); the rest 16–19.
_PREFIXES = {
    13: ("4",),
    14: ("30", "36", "38", "39"),
    15: ("34", "37"),
    16: ("2", "3", "4", "5", "6", "9792"),
    17: ("4", "5", "6"),
    18: ("4", "5", "6"),
    19: ("22", "4", "5", "6"),
}


def _is_card(groups: list[str]) -> bool:
    digits = "".join(groups)
    if not digits.startswith(_PREFIXES.get(len(digits), ())):
        return False
    if len(groups) == 1:
        return True
    return all(4 <= len(g) <= 6 for g in groups[:-1]) and len(groups[-1]) <= 6


def _card_spans(run: str, offset: int) -> Iterator[Span]:
    """Card numbers within one digit run: from each group start, the longest window of
    whole groups that is a card (a longer number is never masked in part; a 16-digit card
    followed by a 3–4 digit group in its own grouping is a card and its CVV, and so is an
    Amex grouped 4-6-5 followed by its CID)."""
    groups = [(m.start(), m.end()) for m in _GROUP.finditer(run)]
    i = 0
    while i < len(groups):
        best = None
        for j in range(i, min(len(groups), i + 5)):
            window = [run[a:b] for a, b in groups[i : j + 1]]
            if sum(map(len, window)) > 19:
                break
            if _is_card(window) and luhn_valid("".join(window)):
                best = j
        if best is None:
            i += 1
            continue
        if _continues(run, groups, i, best):
            last = groups[best + 1]
            size = sum(b - a for a, b in groups[i : best + 1])
            amex = size == 15 and best - i == 2  # 4-6-5: an Amex's own grouping, then its CID
            if (size == 16 or amex) and 3 <= last[1] - last[0] <= 4:
                yield offset + groups[i][0], offset + last[1], "card_number"
            i = best + 2
            continue
        yield offset + groups[i][0], offset + groups[best][1], "card_number"
        i = best + 1


def _continues(run: str, groups: list[tuple[int, int]], first: int, last: int) -> bool:
    """Whether the window's number goes on: one more group, the run's last, joined by the
    window's own separator and still within 19 digits (``6567 9773 5381 8199 336`` is one
    19-digit number that fails Luhn, not a card followed by 336)."""
    if last + 2 != len(groups) or last == first:
        return False
    inner = run[groups[first][1] : groups[first + 1][0]]
    after = run[groups[last][1] : groups[last + 1][0]]
    digits = sum(b - a for a, b in groups[first:])
    return after == inner and digits <= 19


#: What follows a card number on its line: its expiry (MM/YY) and a CVV, with or without
#: words between ("4111… 09/27 123", "4111…, exp 09/27, 123").
_EXPIRY = re.compile(r"(?<![\d/.-])(?:0[1-9]|1[0-2])[ \t]?[/.-][ \t]?(?:20)?\d{2}(?![\d/.-])")
_CVV_AFTER = re.compile(r"[ \t]*[,;|]?[ \t]*(?P<v>\d{3,4})(?![\d/.:,-]\d|\d)")
_AFTER_CARD_REACH = 40
#: A CVV named a little after a card, on its line or the next ("код на обороте 938",
#: "الرمز 601", "security code 123"): a word of a code, a few words, 3–4 digits.
_CVV_NAMED = re.compile(
    r"(?i)(?:cvv2?|cvc2?|cvn|csc|cid|code|c[oó]digo|codice|kod|kód|kode|koodi|код|رمز|الرمز|"
    r"コード|코드|码|碼|prüf\w*|crypto\w*|security|sicherheit\w*|s[ée]curit[ée]|seguridad|"
    r"sicurezza|segurança|bezpiecze\w*|безопасност\w*|безпеки|güvenlik|beveiliging\w*|"
    r"säkerhet\w*|verifica\w*|verifi\w*)"
    r"[^\d\n]{0,25}?(?<!\d)(?P<v>\d{3,4})(?!\d)"
)
_NAMED_REACH = 80


#: An expiry and a CVV each alone on the lines under a card ("4539…\n12/28\n331").
_STACKED = re.compile(
    r"[ \t]*\r?\n[ \t]*(?:(?P<e>(?:0[1-9]|1[0-2])[ \t]?[/.-][ \t]?(?:20)?\d{2})[ \t]*(?=\r?\n|$)"
    r"(?:\r?\n[ \t]*(?P<v>\d{3,4})[ \t]*(?=\r?\n|$))?|(?P<c>\d{3,4})[ \t]*(?=\r?\n|$))"
)


def _after_card(text: str, end: int) -> Iterator[Span]:
    """The expiry and the CVV written right after a card number (on its line, or each alone
    on the lines under it)."""
    stacked = _STACKED.match(text, end)
    if stacked is not None:
        for group in ("e", "v", "c"):
            if stacked.group(group):
                yield stacked.start(group), stacked.end(group), "pin"
        if stacked.group("v") or stacked.group("c"):
            return
    limit = min(len(text), end + _AFTER_CARD_REACH)
    line_end = text.find("\n", end, limit)
    limit = line_end if line_end >= 0 else limit
    expiry = _EXPIRY.search(text, end, limit)
    at = end
    if expiry is not None:
        yield expiry.start(), expiry.end(), "pin"
        at = expiry.end()
    cvv = _CVV_AFTER.match(text, at, limit)
    if cvv is not None:
        yield cvv.start("v"), cvv.end("v"), "pin"
        return
    second = text.find("\n", at, min(len(text), end + _NAMED_REACH))
    reach = text.find("\n", second + 1) if second >= 0 else -1
    named = _CVV_NAMED.search(text, at, reach if reach >= 0 else min(len(text), end + _NAMED_REACH))
    if named is not None:
        yield named.start("v"), named.end("v"), "pin"


def card_numbers(text: str, hits: Hits | None = None) -> Iterator[Span]:
    """Spans of Luhn-valid payment card numbers in ``text``, with the expiry and CVV
    written right after one."""
    for match in _DIGIT_RUN.finditer(text):
        if match.end() - match.start() >= 13:
            for span in _card_spans(match.group(0), match.start()):
                yield span
                yield from _after_card(text, span[1])


#: A US Social Security number: AAA-GG-SSSS (never area 000, 666 or 9xx, group 00 or
#: serial 0000); without dashes only after its label.
_SSN_DASHED = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")
_SSN_LABELLED = re.compile(
    r"(?i:(?<![A-Za-z])ssn(?![A-Za-z])|\bsocial\s+security(?:\s+(?:number|no\.?|num|#))?|"
    r"\bsocial\b(?=(?:[\s,:#=.-]|['’]s|it['’]?s|is|was|no|number|num|here['’]?s?)*"
    r"\d{3}[ .-]?\d{2}[ .-]?\d{4}(?!\d))|sozialversicherungs\w*|seguro\s+social|"
    r"s[ée]curit[ée]\s+sociale|previdenza\s+sociale|seguran[çc]a\s+social|"
    r"ubezpieczenia\s+spo[łl]ecznego|социального\s+страхования|соціального\s+страхування|"
    r"sosyal\s+g[üu]venlik|社会安全|社会保障|사회\s*보장|الضمان\s+الاجتماعي)"
    r"[^\d\n]{0,40}?(?<!\d)(?P<v>(?!000|666|9\d\d)\d{3}[ .-]?\d{2}[ .-]?\d{4})(?!\d)"
)


#: Needles of the SSN's labels, searched in the casefolded text.
_SSN_NEEDLE = re.compile("ss|so[cz]i|sosy|previdenza|ubezpiecz|социальн|соціальн|社会|사회|الضمان")


def ssn_numbers(text: str, hits: Hits | None = None) -> Iterator[Span]:
    """Spans of US Social Security numbers."""
    if "-" in text:
        for match in _SSN_DASHED.finditer(text):
            yield match.start(), match.end(), "pin"
    if _SSN_NEEDLE.search(text.casefold()) is not None:
        for match in _SSN_LABELLED.finditer(text):
            yield match.start("v"), match.end("v"), "pin"


def contacts(text: str) -> Iterator[Span]:
    """Spans of e-mail addresses and phone numbers (7–15 digits after ``+``, else 9–12)."""
    for match in _EMAIL.finditer(text):
        yield match.start(), match.end(), "email"
    for match in _PHONE.finditer(text):
        candidate = match.group(0)
        digits = sum(c.isdigit() for c in candidate)
        least, most = (7, 15) if candidate.startswith("+") else (9, 12)
        if least <= digits <= most and not _DATE_LIKE.match(candidate):
            yield match.start(), match.end(), "phone"
