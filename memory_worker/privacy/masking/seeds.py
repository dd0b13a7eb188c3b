"""BIP-39 seed phrases: 12 to 24 words of the public BIP-39 English list in a row.

A wallet's seed phrase is its money: whoever reads it owns the wallet. The words come
from one list of 2048 (``memory_worker/data/bip39_english.txt``, MIT, see its ``.LICENSE``),
and ordinary sentences break a run of them within a few words ("the", "is", "my", "and"
are not on it). A run of list words (separated by spaces, line breaks, commas or numbers: ``1. abandon
2. ability …``) holds a seed phrase when 12, 15, 18, 21 or 24 of its words in a row pass
the phrase's checksum (SHA-256 of the entropy; a wallet never writes a phrase that fails
it). A list of list words that fails it — "milk bread egg cheese …", a word game's
list — is kept: one in sixteen random 12-word lists passes by chance, one in 256 of 24.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from functools import cache
from importlib import resources

from memory_worker.privacy.masking.needles import Hits

Span = tuple[int, int, str]
LEAST_WORDS = 12
_WORD = re.compile(r"[A-Za-z]+")
#: What may stand between two words of a phrase: spaces, line breaks, a number "3." or "3)".
_SPACING = re.compile(r"(?:\s*\d{1,2}[.):]?)?\s+|\s*\d{1,2}[.):]\s*")
_COMMA_SPACING = re.compile(r"\s*[,;·•|-]\s*(?:\d{1,2}[.):]?\s*)?")


@cache
def words() -> dict[str, int]:
    """The BIP-39 English list: word → its index."""
    text = resources.files("memory_worker").joinpath("data", "bip39_english.txt").read_text("utf-8")
    return {word: i for i, word in enumerate(text.split())}


def checksum_ok(phrase: list[str]) -> bool:
    """Whether a 12/15/18/21/24-word phrase's last bits are the SHA-256 checksum of the rest."""
    table = words()
    if len(phrase) not in (12, 15, 18, 21, 24):
        return False
    bits = "".join(f"{table[w]:011b}" for w in phrase)
    cut = len(bits) * 32 // 33
    entropy = int(bits[:cut], 2).to_bytes(cut // 8, "big")
    digest = hashlib.sha256(entropy).digest()
    return bits[cut:] == f"{digest[0]:08b}"[: len(bits) - cut]


def _runs(text: str) -> Iterator[tuple[list[re.Match[str]], bool]]:
    """Runs of list words, each with whether only spaces and numbers stood between them."""
    table = words()
    run: list[re.Match[str]] = []
    spaced = True
    for match in _WORD.finditer(text):
        word = match.group(0)
        if (word.casefold() in table and word.islower()) or (word.istitle() and not run):
            if run:
                gap = text[run[-1].end() : match.start()]
                if _SPACING.fullmatch(gap):
                    run.append(match)
                    continue
                if _COMMA_SPACING.fullmatch(gap):
                    run.append(match)
                    spaced = False
                    continue
                yield run, spaced
            run, spaced = ([match], True) if word.casefold() in table else ([], True)
            continue
        if run:
            yield run, spaced
        run, spaced = [], True
    if run:
        yield run, spaced


def _phrase_in(words_of_run: list[str]) -> tuple[int, int] | None:
    """The longest window of a run (12, 15, 18, 21 or 24 words) whose checksum holds."""
    for size in (24, 21, 18, 15, 12):
        for first in range(len(words_of_run) - size + 1):
            if checksum_ok(words_of_run[first : first + size]):
                return first, first + size
    return None


def seed_phrases(text: str, hits: Hits | None = None) -> Iterator[Span]:
    """Spans of BIP-39 seed phrases (see the module doc)."""
    if len(text) < LEAST_WORDS * 4 or text.count(" ") + text.count("\n") < LEAST_WORDS - 1:
        return
    for run, _spaced in _runs(text):
        if len(run) < LEAST_WORDS:
            continue
        window = _phrase_in([m.group(0).casefold() for m in run])
        if window is not None:
            yield run[window[0]].start(), run[window[1] - 1].end(), "token"
