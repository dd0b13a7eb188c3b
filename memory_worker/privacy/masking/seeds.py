"""BIP-39 seed phrases: 12 to 24 words of the public BIP-39 English list in a row.

A wallet's seed phrase is its money: whoever reads it owns the wallet. The words come
from one list of 2048 (``memory_worker/data/bip39_english.txt``, MIT, see its ``.LICENSE``),
and ordinary sentences break a run of them within a few words ("the", "is", "my", "and"
are not on it). A run of at least :data:`LEAST_WORDS` list words is a seed phrase when its
words stand apart as a phrase does — separated by spaces or line breaks only, or numbered
(``1. abandon 2. ability …``) — or when its checksum holds, or when the text calls it one
("seed", "mnemonic", "recovery phrase", "wallet", in the languages of the lexicon). A
shopping list of list words ("milk, bread, egg, …") is none of these and is kept.
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
_CONTEXT = re.compile(
    r"(?i)seed|mnemonic|recovery|wallet|metamask|ledger|trezor|bip-?39|12\s+words|24\s+words|"
    r"сид|мнемон|кошел|гаманц|semilla|semente|frase|phrase|wiederherstellung|herstel|"
    r"återställ|kurtarma|cüzdan|obnov|pemulihan|助记词|钱包|シード|ニーモニック|시드|니모닉|"
    r"عبارة|محفظة"
)


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
        if word.casefold() in table and word.islower() or (word.istitle() and not run):
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


def seed_phrases(text: str, hits: Hits | None = None) -> Iterator[Span]:
    """Spans of BIP-39 seed phrases (see the module doc)."""
    if len(text) < LEAST_WORDS * 4 or text.count(" ") + text.count("\n") < LEAST_WORDS - 1:
        return
    context: bool | None = None
    for run, spaced in _runs(text):
        if len(run) < LEAST_WORDS:
            continue
        phrase = [m.group(0).casefold() for m in run]
        if not spaced and not checksum_ok(phrase[:24]):
            if context is None:
                context = _CONTEXT.search(text) is not None
            if not context:
                continue
        yield run[0].start(), run[-1].end(), "token"
