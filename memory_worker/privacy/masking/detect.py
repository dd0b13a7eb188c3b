"""Finding secrets in a text and masking them: the detectors of the package run here, their
spans are merged, and each merged span is replaced by one placeholder.

Placeholders name what was there without saying what it was: ``[redacted]``
(credentials, tokens, keys), ``[card number]``, and with contacts ``[email]``
and ``[phone]``; operator outputs use ``[Filtered]`` for all of them. A
placeholder is never taken for a secret again, so masking is idempotent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memory_worker.privacy.masking.access import ACCESS_NEEDLES, access_values, slashed_pairs
from memory_worker.privacy.masking.around import (
    answers_below_questions,
    answers_beside_questions,
    keys_near_labels,
    values_above_labels,
    values_before_labels,
    values_named_after,
)
from memory_worker.privacy.masking.assign import assigned_values
from memory_worker.privacy.masking.backup import BACKUP_NEEDLES, backup_codes
from memory_worker.privacy.masking.contaminate import contaminated
from memory_worker.privacy.masking.labels import labelled_values
from memory_worker.privacy.masking.lexicon import LABEL_NEEDLES, NAME_NEEDLES
from memory_worker.privacy.masking.lists import LIST_NEEDLES, credential_lists
from memory_worker.privacy.masking.locks import (
    LOCK_NEEDLES,
    entry_numbers,
    keypad_codes,
    lock_numbers,
)
from memory_worker.privacy.masking.needles import Hits, Needles
from memory_worker.privacy.masking.normalise import fold
from memory_worker.privacy.masking.numbers import card_numbers, contacts, ssn_numbers
from memory_worker.privacy.masking.questions import QUESTION_NEEDLES, security_answers
from memory_worker.privacy.masking.replies import MESSAGE_NEEDLES, message_codes
from memory_worker.privacy.masking.seeds import seed_phrases
from memory_worker.privacy.masking.shapes import (
    PEM_NEEDLES,
    TOKEN_NEEDLES,
    URL_NEEDLES,
    WIFI_NEEDLES,
    Span,
    private_key_blocks,
    token_shapes,
    unmarked_tokens,
    url_credentials,
    wifi_qr,
)
from memory_worker.privacy.masking.withhold import (
    talks_about_a_credential,
    withhold,
)

REDACTED = "[redacted]"
CARD_NUMBER = "[card number]"
EMAIL = "[email]"
PHONE = "[phone]"
_PLACEHOLDERS = {"card_number": CARD_NUMBER, "email": EMAIL, "phone": PHONE}
_MAX_PASSES = 3
#: Kinds that are not secrets (masked only when contacts are asked for): no contamination.
_CONTACTS = frozenset({"email", "phone"})

Detector = Callable[[str, Hits], Iterable[Span]]
DETECTORS: tuple[Detector, ...] = (
    private_key_blocks,
    token_shapes,
    url_credentials,
    labelled_values,
    values_before_labels,
    values_named_after,
    values_above_labels,
    answers_below_questions,
    answers_beside_questions,
    message_codes,
    security_answers,
    lock_numbers,
    entry_numbers,
    keypad_codes,
    access_values,
    slashed_pairs,
    keys_near_labels,
    credential_lists,
    assigned_values,
    card_numbers,
    ssn_numbers,
    unmarked_tokens,
    seed_phrases,
    backup_codes,
    wifi_qr,
)
#: The detectors of shapes that hold no needle (run on every text).
NEEDLELESS: tuple[Detector, ...] = (
    card_numbers,
    ssn_numbers,
    unmarked_tokens,
    seed_phrases,
    entry_numbers,
    keypad_codes,
    slashed_pairs,
)

NEEDLES = Needles(
    TOKEN_NEEDLES
    | PEM_NEEDLES
    | URL_NEEDLES
    | LABEL_NEEDLES
    | NAME_NEEDLES
    | BACKUP_NEEDLES
    | WIFI_NEEDLES
    | LIST_NEEDLES
    | QUESTION_NEEDLES
    | LOCK_NEEDLES
    | ACCESS_NEEDLES
    | MESSAGE_NEEDLES
)


@dataclass(frozen=True, slots=True)
class Found:
    """One secret in a text: ``text[start:end]``, and what kind of secret it is
    (``token``, ``password``, ``pin``, ``private_key``, ``auth_header``, ``webhook``,
    ``url_credential``, ``card_number``, ``email``, ``phone``)."""

    start: int
    end: int
    kind: str


def _merged(spans: Iterable[Span]) -> list[Found]:
    """Overlapping or touching spans as one (the first-starting span's kind)."""
    out: list[Found] = []
    for start, end, kind in sorted(spans):
        if end <= start:
            continue
        if out and start <= out[-1].end:
            last = out[-1]
            out[-1] = Found(last.start, max(last.end, end), last.kind)
        else:
            out.append(Found(start, end, kind))
    return out


def find_secrets(text: str, *, contacts_too: bool = False) -> list[Found]:
    """Every secret in ``text``, in order, overlaps merged (with ``contacts_too``, e-mail
    addresses and phone numbers as well). The detectors read :func:`.normalise.fold`'s text;
    the spans are the original's."""
    folded = fold(text)
    read = folded.text
    hits = NEEDLES.find(read)
    if hits.present:
        spans = [span for detector in DETECTORS for span in detector(read, hits)]
    else:  # no needle: only the shapes that carry none can be there
        spans = [span for detector in NEEDLELESS for span in detector(read, hits)]
    if contacts_too:
        spans.extend(contacts(read))
    if folded.starts is not None:
        spans = [(*folded.span(start, end), kind) for start, end, kind in spans]
    if spans and "EXAMPLE" in text and _DOCS.search(text):
        spans = [s for s in spans if not _DOC_EXAMPLE.search(text, s[0], s[1])]
    return _merged(_with_repeats(text, _merged(spans)))


#: A documentation's example key (AWS's ``AKIAIOSFODNN7EXAMPLE``, ``…EXAMPLEKEY``), kept when
#: the text says it quotes documentation or an example; anywhere else it is taken for a key.
_DOC_EXAMPLE = re.compile(r"EXAMPLE(?:KEY)?(?![A-Za-z0-9])")
_DOCS = re.compile(
    r"(?i)\b(?:docs?|documentation|example|sample|dokumentation|doku|beispiel|exemple|ejemplo|"
    r"esempio|exemplo|przykład|voorbeeld|exempel|örnek|документац\w*|пример\w*|приклад\w*)\b"
    r"|例|예시|示例|مثال"
)


#: A value found this long or longer is taken out wherever else it stands in the text.
REPEAT_MIN_CHARS = 4


def _with_repeats(text: str, found: list[Found]) -> list[Span]:
    """The spans found, and every other place the same values stand ("password: Xk2… — yes,
    Xk2…"): what is flagged as a secret leaves the text whole."""
    spans: list[Span] = [(f.start, f.end, f.kind) for f in found]
    for item in found:
        value = text[item.start : item.end]
        if len(value) < REPEAT_MIN_CHARS or item.kind in ("email", "phone"):
            continue
        at = text.find(value)
        while at >= 0:
            if at != item.start:
                spans.append((at, at + len(value), item.kind))
            at = text.find(value, at + 1)
    return spans


def _replace(text: str, found: list[Found], placeholder: str | None) -> str:
    out: list[str] = []
    at = 0
    for item in found:
        out += [text[at : item.start], placeholder or _PLACEHOLDERS.get(item.kind, REDACTED)]
        at = item.end
    out.append(text[at:])
    return "".join(out)


def mask(
    text: str, *, contacts: bool = False, placeholder: str | None = None, others: bool = True
) -> str:
    """``text`` with every secret replaced by its placeholder (``placeholder`` for all, when
    given); with ``contacts``, e-mail addresses and phone numbers too.

    Last, a line that talks about a credential (:data:`SECRET_MARKERS`) and still holds a
    word shaped like a value is withheld whole (:func:`.withhold.withhold`): whatever
    :func:`contains_secret` flags, the farm never receives its value.

    A text in which a secret was found (a detector's span, or a line withheld) keeps none of
    its other values: every other word shaped like one is masked too
    (:func:`.contaminate.contaminated`); ``others=False`` skips that (operator outputs,
    :func:`.outputs.scrub`, keep the status codes and ids of an error).

    Pure and idempotent (a masked text masks to itself): every prompt, embedder
    input and recall query passes through it, and a retried request is sent the same.
    """
    for _ in range(_MAX_PASSES):
        found = find_secrets(text, contacts_too=contacts)
        masked = _replace(text, found, placeholder) if found else text
        held = withhold(text, masked, placeholder or REDACTED)
        if others and (held != masked or any(f.kind not in _CONTACTS for f in found)):
            held = contaminated(held, placeholder or REDACTED)
        masked = held
        if masked == text:
            return text
        text = masked
    return text


#: A placeholder left where a secret was (the extractor saw a masked text).
_MASKED = re.compile(r"\[(?:redacted|card number|Filtered)\]")


def contains_secret(text: str) -> bool:
    """Whether ``text`` carries a secret, a placeholder where one was masked, or talks about
    a credential: a card like that is never stored (§10).

    One decision with :func:`mask`: a secret here is a span of :func:`find_secrets`, the
    very spans ``mask`` takes out (every occurrence of their values), so a text this flags
    for its value never reaches the farm with that value in it. The other two reasons carry
    no span: a placeholder, or words about a credential (``SECRET_MARKERS``, read in the folded
    text as the detectors and the last guard read it: ``ｐａｓｓｗｏｒｄ``, ``pass\u200bword``); for the last,
    ``mask`` withholds the line whole when a word shaped like a value is still on it
    (:mod:`.withhold`), so no value flagged that way reaches the farm either."""
    return bool(
        _MASKED.search(text) or talks_about_a_credential(fold(text).text) or find_secrets(text)
    )
