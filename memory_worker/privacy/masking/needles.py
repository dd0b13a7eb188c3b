"""Needles: the literal strings a detector's matches always contain, found in one pass.

Every detector runs only when one of its needles is in the (casefolded) text, so an
ordinary sentence costs one scan instead of dozens. :meth:`Needles.find` finds all
needles at once with a trie-shaped regular expression searched again from the character after
each needle found (so needles may overlap: ``sk_live_`` holds both ``sk`` and ``k_live_``;
the search skips in C to a needle's first character), adds the needles
that are substrings of those found (``sk-`` holds ``sk``), and keeps where each was
found, so a detector can try its pattern only near them. A property test checks that
every pattern's matches hold one of its rule's needles.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

Trie = dict[str, "Trie"]


def words(text: str) -> frozenset[str]:
    """The whitespace-separated words of a block of text (a word list kept readable)."""
    return frozenset(text.split())


def trie_pattern(words: Iterable[str]) -> str:
    """``words`` as one regular expression shaped like a trie (a shared prefix is tried once)."""
    trie: Trie = {}
    for word in words:
        node = trie
        for char in word:
            node = node.setdefault(char, {})
        node[""] = {}

    def build(node: Trie) -> str:
        branches = [re.escape(char) + build(sub) for char, sub in sorted(node.items()) if char]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        return f"(?:{body})?" if "" in node else body

    return build(trie)


@dataclass(frozen=True, slots=True)
class Hits:
    """The needles a text holds, and where (None when casefolding changed the text's length,
    so positions in the folded text are not positions in the text)."""

    present: frozenset[str]
    at: tuple[tuple[int, str], ...] | None

    def positions(self, needles: frozenset[str]) -> list[int] | None:
        """Where any of ``needles`` starts (None: unknown, try everywhere)."""
        if self.at is None:
            return None
        return [pos for pos, needle in self.at if needle in needles]


class Needles:
    """A set of needles and the one scan that finds which of them a text holds."""

    def __init__(self, needles: Iterable[str]) -> None:
        self.all = frozenset(needles)
        self._scan = re.compile(trie_pattern(self.all))
        self._inside = {
            needle: frozenset(other for other in self.all if other in needle) for needle in self.all
        }

    def find(self, text: str) -> Hits:
        """The needles ``text`` holds (``text`` casefolded here) and their positions."""
        folded = text.casefold()
        present: set[str] = set()
        at: list[tuple[int, str]] = []
        match = self._scan.search(folded)
        while match is not None:  # a search from each needle's next character: they overlap
            needle = match.group(0)
            for inner in self._inside[needle]:
                present.add(inner)
                at.append((match.start() + needle.find(inner), inner))
            match = self._scan.search(folded, match.start() + 1)
        return Hits(frozenset(present), tuple(at) if len(folded) == len(text) else None)
