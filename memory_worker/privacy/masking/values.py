"""What a value after a label may be: the shapes of generated secrets (letters mixed with
digits or symbols, random case, long hex or base64, a keypad's code) and what is never a
value (ordinary words, templates and placeholders in every label language, code, URLs,
public keys and fingerprints, an address).

Shared by the readers of :mod:`.labels`, :mod:`.around` and :mod:`.assign`.
"""

from __future__ import annotations

import re

from memory_worker.privacy.masking.ordinary import NOT_VALUES as _NOT_VALUES_FIRST
from memory_worker.privacy.masking.ordinary import (
    NOT_VALUES_MORE,
    PHRASE_STOPS,
    PLACEHOLDER_PIECES,
    PLACEHOLDER_WORDS,
)
from memory_worker.privacy.masking.shapes import placeholder

NOT_VALUES = _NOT_VALUES_FIRST | NOT_VALUES_MORE
TRAILING = ".,;:!?)]}»\"'”’…"
PROSE = re.compile(r"[ \t]+[^\W_]+[ \t]+[^\W\d_]+")
_TEMPLATE = re.compile(
    r"^(?:\$\{[\w.]+\}?|\$[A-Z_][A-Z0-9_]*|\$\(|`|!\w+|(?:env|vault|arn|ssm|secret):|"
    r"(?i:(?:your|my|the|some|enter|insert|paste|put|example|sample|dummy|fake|change)[-_]?"
    r"[\w-]*?(?:password|passwd|pass|pwd|key|token|secret|here|me|value|pin)(?:[-_]?here)?)|"
    r"(?i:\w+[-_]here|changeme|change_me|tbd|todo)|"
    r"%\(?\w*\)?[sd]|\{\{?[^{}]*\}\}?|<[^<>]+>|"
    r"[*•●xX.·_-]{3,}(?:[(（\[【].*)?|…|\?+"  # a mask, a note in brackets glued after it
    r"|[A-Z]+(?:[_-][A-Z]+)+)$"  # a placeholder name: YOUR_API_KEY, CHANGE-ME
)
#: Code, not a value: a call or an index (``getToken()``, ``os.environ['X']``) or a dotted
#: name (``request.form``).
#: A part of a dotted name: snake or camel case (each hump a capital and 2+ lower-case letters,
#: or capitals at its end), or upper case; ``QA2z8Y.zpSUCL`` or ``ncvSq.TGhZhs`` is a value.
_IDENT = r"(?:[A-Za-z_$][a-z_$]*(?:[A-Z][a-z_$]{2,}|[A-Z]+(?![a-z]))*\d*|[A-Z_]+\d*)"
_CODE = re.compile(rf"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*[(\[]|^{_IDENT}(?:\.{_IDENT})+$")


#: Words joined by dots that end in digits: a password people make ("fragola.micio13",
#: "crumble.crunch.nice.35"), not an attribute or a file name.
_DOTTED_WORDS = re.compile(r"^[A-Za-z]{3,}(?:\.[A-Za-z]{3,})*\.[A-Za-z]*\d{2,4}$")


#: What is public about a key: an SSH public key's type or body, a fingerprint
#: (``SHA256:…``, ``MD5:…``).
_PUBLIC = re.compile(
    r"^(?:ssh-(?:rsa|dss|ed25519|ed448)(?:-cert-v01@openssh\.com)?|ecdsa-sha2-\S+|"
    r"sk-(?:ssh|ecdsa)-\S+@openssh\.com|AAAA[BCE][0-9A-Za-z+/]+=*|(?:SHA256|SHA1|MD5):\S+)$"
)


_PARTS = re.compile(r"[_\-.…]+")
#: A path in lower case ("pwd=/home/anna", "~/.ssh/config"): where, not a secret.
_PATH = re.compile(r"^(?:~|\.\.?)?/[a-z0-9_.-]+(?:/[a-z0-9_.-]*)*$")


#: A version ("v1.2.3"): what was released, not a value.
_VERSION = re.compile(r"^[vV]\d+(?:\.\d+){1,3}$")


def _placeholder_phrase(value: str) -> bool:
    """Words joined by ``_``, ``-`` or dots that say what to put there ("tu_contraseña_aquí",
    "sk-...your-key-here..."), or a value in a script without spaces that names the secret
    or the place to put it, with no ASCII letter or digit ("ここにパスワード")."""
    parts = [part for part in _PARTS.split(value.strip("\"'`").casefold()) if part]
    if (
        len(parts) >= 2
        and all(part.isalpha() for part in parts)
        and any(part in PLACEHOLDER_WORDS for part in parts)
    ):
        return True
    return (
        not value.isascii()
        and not any(c.isascii() and c.isalnum() for c in value)
        and any(piece in value for piece in PLACEHOLDER_PIECES)
    )


def not_a_value(value: str) -> bool:
    """Whether ``value`` (after a label) is an ordinary word, a template, code, a URL, a
    public key or fingerprint, a mask, or a version."""
    folded = value.casefold()
    return (
        folded in NOT_VALUES
        or _PUBLIC.match(value) is not None
        or _placeholder_phrase(value)
        or placeholder(value)
        or value.startswith(("[", "<", "{", "("))
        or bool(_TEMPLATE.match(value) or (_CODE.match(value) and not _dotted_value(value)))
        or "://" in value
        or folded.startswith("www.")
        or _PATH.match(value) is not None
        or _VERSION.match(value) is not None
    )


_RANDOM_PART = re.compile(r"[a-z][A-Z](?:$|\.)|[a-z][A-Z]{2,}[a-z]")


def _dotted_value(value: str) -> bool:
    """A dotted name that is a value: words ending in digits ("fragola.micio13"), or two parts
    in random case ("mbKCIM.HgpnzD", "WxrYQP.nftCsh": capitals in a run inside lower case, as
    no attribute is named; ``document.getElementById``, ``element.innerHTML`` stay code)."""
    if _DOTTED_WORDS.match(value) is not None or _random_case(value):
        return True
    # a digit, and a part in random case ("Ql8.vPnrtX": capitals inside and at its end)
    return any(c.isdigit() for c in value) and _RANDOM_PART.search(value) is not None


def wordy(value: str) -> bool:
    """A plain word, an elided one too ("i'll", "c'est")."""
    return value.replace("'", "").replace("’", "").isalpha()


def strong(value: str) -> bool:
    """A value no sentence would hold in that place: letters mixed with digits or symbols,
    or letters in random case ("mICTuMBsyl"); a question mark counts inside the value only
    ("VAEkq?vgzo", not "really?")."""
    return len(value) >= 6 and (
        (
            any(c.isalpha() for c in value)
            and (any(c.isdigit() or c in "!@#$%^&*_+=~" for c in value) or "?" in value.strip("?"))
        )
        or _random_case(value)
    )


_CAPITAL_RUNS = re.compile(r"[A-Z]+")
_INNER_CAPITALS = re.compile(r"[a-z][A-Z]{2,}[a-z]")


def _random_case(value: str) -> bool:
    """Letters in random case: two runs of capitals or more, one of them inside lower case
    (``mICTuMBsyl``, one dot among them too: ``Rnn.etmCAjAe``; not ``MacBookPro``,
    ``iPhoneXS`` or ``GitHub``)."""
    letters = value.replace(".", "") if value.count(".") == 1 else value  # "Rnn.etmCAjAe"
    return (
        len(letters) >= 8
        and letters.isalpha()
        and len(_CAPITAL_RUNS.findall(letters)) >= 2
        and _INNER_CAPITALS.search(letters) is not None
    )


#: A long generated key: hex of 32+ digits (``0x`` too), or 24+ characters of base64 or
#: base64url mixing letters and digits.
_GENERATED = re.compile(
    r"^(?:0x)?[0-9a-fA-F]{32,}$|^(?=[^\s]*\d)(?=[^\s]*[a-z])(?=[^\s]*[A-Z])[A-Za-z0-9+/_-]{24,}={0,2}$"
)


#: A passphrase: three to seven lower-case words, the last ending in two digits or more
#: ("tiger lemon garden rocket27"), closing its clause, none of them a word that binds prose
#: (an article, a preposition, a pronoun: "check the fridge note page12" is a sentence).
_PASSPHRASE = re.compile(
    r"[a-z]{2,12}(?:[ ][a-z]{2,12}){1,5}[ ][a-z]{2,12}\d{2,4}(?=[ \t]*(?:[.,;!?)\n]|$))"
)


class _Phrase:
    """:data:`_PASSPHRASE` with its stop words (``match`` as a pattern's)."""

    def match(self, text: str, at: int = 0) -> re.Match[str] | None:
        found = _PASSPHRASE.match(text, at)
        if found is None or any(word in PHRASE_STOPS for word in found.group().split()):
            return None
        return found


PASSPHRASE = _Phrase()

#: A passphrase ending where a label's joining word follows ("maple orbit candle fjord42 is
#: the passphrase …"): the same words, closing at the end of the searched span.
_PHRASE_BEFORE = re.compile(r"(?<![\w-])[a-z]{2,12}(?:[ ][a-z]{2,12}){1,5}[ ][a-z]{2,12}\d{2,4}$")


def phrase_before(text: str, start: int, end: int) -> int | None:
    """Where a passphrase ending at ``end`` (and starting at or after ``start``) begins, if
    one does and none of its words binds prose."""
    found = _PHRASE_BEFORE.search(text, start, end)
    if found is None or any(word in PHRASE_STOPS for word in found.group().split()):
        return None
    return found.start()


def generated(value: str) -> bool:
    return _GENERATED.match(value) is not None


#: Not a generated value after "the key is": a key combination or a musical key.
KEYS_NOT_SECRET = re.compile(
    r"(?i)^(?:(?:ctrl|control|alt|shift|cmd|command|option|opt|fn|win|super|meta)[+-].*|"
    r"[A-G][#b♯♭]?(?:m|min|minor|maj|major|dur|moll)?)$"
)


#: A date: a year, month and day joined by dashes (a code read in groups has no year first).
_DATE = re.compile(r"^(?:19|20)\d\d-[01]\d-[0-3]\d$")
#: A keypad's code: digits, with at most one of the keypad's letters ("digicode 98A43").
_KEYPAD = re.compile(r"^(?=(?:\D*\d){3})[A-D]?[0-9]+[A-DК#*]?[0-9]*$")


def code_digits(family: str, value: str, *, connector: bool) -> bool:
    """A code's digits: a PIN 3–8 (4–8 without a connector), a CVV 3–4 (a security code of
    something else up to 8), a code 4–8; a keypad's ``#`` or ``*`` around them, or one of
    its letters (A–D, К) or a ``#`` among or after them (a door's keypad, not a bare "code"),
    is part of the value."""
    keys = value.strip("#*[](){}")
    if _DATE.match(keys):
        return False  # "enabled on 2024-05-01"
    digits = keys.replace("-", "")
    if not digits.isdigit():
        keypad = family == "pin" and _KEYPAD.match(keys) is not None
        return keypad and 4 <= len(keys) <= 8
    if family == "cvv":
        return 3 <= len(digits) <= 8
    least = 3 if connector and family == "pin" else 4
    return least <= len(digits) <= 8


#: A lowercase ``user@host`` (an ssh target, a key comment): who, not a password.
_USER_AT_HOST = re.compile(r"^[\"'`(]?[a-z][a-z0-9._-]+@[a-z][a-z0-9.-]+[\"'`)]?$")


def address(value: str) -> bool:
    return _USER_AT_HOST.match(value) is not None
