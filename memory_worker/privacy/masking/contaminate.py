"""A message that held one secret keeps none of its others: the contamination rule of
:func:`~.detect.mask` (§14).

People hand over credentials in bunches: a shift handover ("safe 08908, till PIN 5025, admin
ops / kuqx8p#GQMCL"), a card number and then "the three digits on the back are 749", a PIN and
then its PUK. The detectors find the first value by its label; the others are often written
with a label no table knows, or none at all. Once a detector has found a secret in a text
(strong evidence: not merely :func:`~.detect.contains_secret`, which also flags talk about
credentials), every other word of that text shaped like a value is masked too
(:func:`contaminated`):

- a number of three digits or more (``749``, ``484 852`` as two groups, ``08908``);
- a word of six characters or more that mixes letters with digits or with symbols inside it
  (``kuqx8p#GQMCL``, ``Belti_rudor395``, ``belpa-miti-paqui-lokamo32``; not an identifier,
  ``INVALID_ARGUMENT``), or letters only with capitals inside (``hGNxHsASs``);
- the part after the slash of a ``user / pass`` pair, and after the colon of ``user:pass``.

The cost falls only on texts that held a secret: a date, a time with seconds, a price or a
version in such a text may be masked too. A text in which nothing was found is untouched, so
this rule adds no false mask where there was none. Words are runs of ASCII (a value is typed
in ASCII; CJK text runs words together with no space).
"""

from __future__ import annotations

import re

#: A candidate word: a run of printable ASCII.
_WORD = re.compile(r"[!-~]+")
#: What wraps a word in prose, not part of a value.
_WRAP = "\"'`()[]{}<>,;.!?"
_PLACEHOLDER = re.compile(r"\[(?:redacted|card number|Filtered|email|phone)\]")
#: Three digits in a row.
_DIGITS = re.compile(r"\d{3,}")
#: A symbol between two word characters: inside the value, not punctuation around it.
_INNER_SYMBOL = re.compile(r"[A-Za-z0-9][!@#$%^&*+=?~|\\_.:/-]+[A-Za-z0-9]")
#: Capitals inside a word of letters: a lower-case letter, then a capital; this many times
#: is random case ("hGNxHsASs"), fewer a name ("iPhone", "McDonald", "iPhoneXS").
_INNER_CAPITAL = re.compile(r"[a-z][A-Z]")
_RANDOM_CASE = 3
#: ``user / pass``: the part after the slash.
_PAIR = re.compile(
    r"(?<![^\s:：(])[\w.@-]{1,64}(?:[ \t]+/[ \t]+|/|:)(?P<v>[^\s/:]{4,})(?![^\s,;.!?)])"
)
#: The shortest word with letters taken for a value.
_MIN_MIXED = 6


def value_shaped(word: str) -> bool:
    """Whether ``word`` (a run of ASCII) is shaped like a value in a text that held a secret
    (see the module doc)."""
    core = word.strip(_WRAP)
    if not core or _PLACEHOLDER.search(core):
        return False
    letters = sum(c.isalpha() for c in core)
    digits = sum(c.isdigit() for c in core)
    if not letters:
        return _DIGITS.search(core) is not None
    if len(core) < _MIN_MIXED:
        return False
    if digits:
        return True
    if _INNER_SYMBOL.search(core) and any(c in "!@#$%^&*+=?~|\\" for c in core):
        return True  # not "INVALID_ARGUMENT" or "hf_hub_download": identifiers
    return core.isalpha() and len(_INNER_CAPITAL.findall(core)) >= _RANDOM_CASE


def contaminated(masked: str, placeholder: str) -> str:
    """``masked`` (a text in which a secret was found, after the detectors) with every other
    value-shaped word replaced by ``placeholder``."""
    spans: list[tuple[int, int]] = []
    for match in _PAIR.finditer(masked):
        if not _PLACEHOLDER.search(match.group("v")):
            spans.append(match.span("v"))
    for match in _WORD.finditer(masked):
        word = match.group()
        if _PLACEHOLDER.search(word):
            continue
        if value_shaped(word):
            left = len(word) - len(word.lstrip(_WRAP))
            right = len(word.rstrip(_WRAP))
            spans.append((match.start() + left, match.start() + right))
    if not spans:
        return masked
    out: list[str] = []
    at = 0
    for start, end in sorted(spans):
        if start < at:  # overlapping: one placeholder for both
            at = max(at, end)
            continue
        out += [masked[at:start], placeholder]
        at = end
    out.append(masked[at:])
    return "".join(out)
