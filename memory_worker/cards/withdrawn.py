"""A retraction means the fact, not the string (§10): which new card states a withdrawn fact.

A fact is **withdrawn** when its card is retracted, or corrected away by hand. The card keeps
its vector row, marked withdrawn (``vecmask`` byte 2, see :mod:`memory_worker.cards.store`),
and the time of the withdrawal (its ``retracted`` stamp). A card about to be written — a
run's new card or rewritten fact, a correction, an imported card — is **refused** when it
states a withdrawn fact and every message it comes from (``seen``: the newest) was sent
before that withdrawal; a message sent after it can teach the fact again.

It states the fact — three tiers, any one suffices — when

- **hash**: its dedup hash is the withdrawn card's (word for word, in the same scope — the
  check the write's own script makes too);
- **meaning**, whatever its scope, wording or language: the same subject where both
  name one (:func:`same_subject`: the same user when both are user cards, else the same
  name in any script), and a cosine of the two vectors — the chat's embedder's, one space —
  of at least :attr:`Thresholds.shared` when the new card names the withdrawn card's
  value (:func:`shares_value`: a word of its object in any form, "Lisbon" / "Lissabon" /
  "Лиссабон", "guitarra" / "guitarrista", "photographie" / "фотография"), else at least
  :attr:`Thresholds.plain`; both :attr:`Thresholds.cross` lower when the two cards are
  surely in two languages (:func:`translated`: two scripts, or two languages guessed by
  :func:`memory_worker.cards.language.card_language`) — an embedder's cosine of a
  translation sits lower than of a restatement in one language, and a value update in one
  language sits as high as a translation;
- **evidence** (:func:`evidence_states`): it comes from a message the withdrawn card came
  from (its ``sources``: the same message ids, one chat), the same subject, and a much lower
  cosine. This is how a withdrawn fact really comes back from messages sent before its
  withdrawal: the *same* messages processed again (a replay, an overlapping window, a
  re-enqueued slice, an older file imported). What else that message may teach is another
  fact stated in it ("I live in Lisbon and love green tea": the tea withdrawn, Lisbon must
  still be learned), and the chat holds what the message taught the first time: its
  **siblings**, the cards not withdrawn that come from one of the new card's messages. A
  new card at least as close to a sibling as to the withdrawn card (within
  :attr:`Thresholds.margin`) restates the sibling: this tier does not refuse it. Otherwise
  it is refused from :attr:`Thresholds.sibling` when siblings were found, from
  :attr:`Thresholds.evidence` when none were (the message taught only the withdrawn fact,
  as far as the chat knows).

The thresholds are settings; their defaults were chosen on the development halves of the
retraction pairs (``tests/data/retraction/``: ``pairs.jsonl`` for the meaning tier,
``evidence.jsonl`` for the evidence tier) and the held-out halves' miss and false-block
rates are in the benchmarks page. :func:`refusals` is the one decision every write path
calls (the pipeline's card write through :meth:`CardStore.apply_run
<memory_worker.cards.store.CardStore.apply_run>`, ``correct()``, import). Pure: no Redis,
no clock.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from memory_worker.cards.language import other_languages
from memory_worker.cards.recall.tokens import is_stop, latin, skeleton, words

if TYPE_CHECKING:
    from memory_worker.settings import Settings

#: Shortest word compared as a value (shorter ones are articles and particles).
VALUE_WORD_MIN = 3
#: Two value words are one when they share this long a beginning ("guitarr-a", "-ista")…
SHARED_PREFIX = 5
#: …or when this share of the longer one survives the edit distance ("lisbon", "lissabon").
SIMILAR_SHARE = 0.7


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The cosines from which a new card states a withdrawn fact (see the module doc), and
    how far the shell looks for siblings."""

    #: The new card does not name the withdrawn card's value.
    plain: float = 0.99
    #: The new card names the withdrawn card's value.
    shared: float = 0.94
    #: How much lower both are when the two cards are in two languages (:func:`other_languages`):
    #: the embedder's cosine of a translation sits lower than of a same-language restatement.
    cross: float = 0.075
    #: The new card comes from a message the withdrawn card came from; no sibling was found.
    evidence: float = 0.905
    #: The same, siblings found and the new card closer to the withdrawn card than to each.
    sibling: float = 0.82
    #: How much closer to the withdrawn card than to every sibling the new card must be.
    margin: float = 0.02
    #: The chat's rows nearest a new card among which the shell looks for its siblings
    #: (:func:`memory_worker.cards.withdrawals.near_siblings`; 0: none looked for).
    sibling_reads: int = 32

    @classmethod
    def from_settings(cls, settings: Settings) -> Thresholds:
        return cls(
            plain=settings.retraction_cosine,
            shared=settings.retraction_shared_cosine,
            cross=settings.retraction_cross_language_offset,
            evidence=settings.retraction_evidence_cosine,
            sibling=settings.retraction_sibling_cosine,
            margin=settings.retraction_sibling_margin,
            sibling_reads=settings.retraction_sibling_reads,
        )

    @property
    def floor(self) -> float:
        """No pair below this cosine can match (by meaning or by evidence)."""
        meaning = min(self.plain, self.shared) - max(self.cross, 0.0)
        return min(meaning, self.evidence, self.sibling)


@dataclass(frozen=True, slots=True)
class Statement:
    """What is compared of a card: who it is about and what it says."""

    subject: str
    object: str
    fact: str
    #: The user of a user card (None: a chat or thread card).
    user_id: int | None = None
    dedup_hash: str = ""


@dataclass(frozen=True, slots=True)
class WithdrawnFact:
    """A withdrawn card: its fact, when it was withdrawn, its vector (unit; None: none) and
    the ids of the messages it came from (the chat's)."""

    card_id: str
    at_ms: int
    statement: Statement
    vector: Sequence[float] | None = None
    sources: frozenset[int] = frozenset()


@dataclass(frozen=True, slots=True)
class Candidate:
    """A card about to be written: its fact, its newest message's time, its vector and the
    ids of the messages it comes from (none: a rewrite, a hand-made card); its id when it
    has one already (an imported card: never its own sibling)."""

    statement: Statement
    seen_ms: int
    vector: Sequence[float] | None = None
    sources: frozenset[int] = frozenset()
    card_id: str = ""


@dataclass(frozen=True, slots=True)
class Sibling:
    """A card the chat holds, not withdrawn, that comes from some of a candidate's messages:
    what another fact stated in them looks like (its vector unit, as stored)."""

    card_id: str
    sources: frozenset[int]
    vector: Sequence[float]


def name_words(subject: str) -> frozenset[str]:
    """A subject's words as script-free skeletons ("Алиса", "Alice" → ``alis``)."""
    return frozenset(s for s in (skeleton(w) for w in words(subject)) if s)


def same_subject(a: Statement, b: Statement) -> bool:
    """Whether two cards are about the same one: the same user when both are user cards;
    else a name word in common in any script ("Brian" / "Брайан": one word in two forms);
    a card that names no subject matches any."""
    if a.user_id is not None and b.user_id is not None:
        return a.user_id == b.user_id
    left, right = name_words(a.subject), name_words(b.subject)
    if not left or not right:
        return True
    return _any_similar(left, right)


def value_words(text: str, subject: str = "") -> frozenset[str]:
    """The words of ``text`` that can carry a value: in Latin letters, no stop words, none of
    the subject's."""
    named = {latin(w) for w in words(subject)}
    return frozenset(
        form
        for w in words(text)
        if len(w) >= VALUE_WORD_MIN and not is_stop(w)
        for form in (latin(w),)
        if form not in named
    )


def value_skeletons(text: str, subject: str = "") -> frozenset[str]:
    """The same words as script-free skeletons (:func:`skeleton`: "фотографией",
    "photographie" → ``fotograf``), none of the subject's in either form."""
    found = words(subject)
    named = {latin(w) for w in found} | {skeleton(w) for w in found}
    return frozenset(
        form
        for w in words(text)
        if len(w) >= VALUE_WORD_MIN and not is_stop(w) and latin(w) not in named
        for form in (skeleton(w) or latin(w),)
        if form not in named
    )


@lru_cache(maxsize=65_536)
def similar_word(a: str, b: str) -> bool:
    """One value word in two forms: equal, a long common beginning, or a small edit."""
    if a == b:
        return True
    prefix = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        prefix += 1
    if prefix >= SHARED_PREFIX:
        return True
    longer = max(len(a), len(b))
    if min(len(a), len(b)) < 4:
        return False
    return 1 - _edits(a, b) / longer >= SIMILAR_SHARE


def _edits(a: str, b: str) -> int:
    """Levenshtein distance."""
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i]
        for j, y in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def _any_similar(left: frozenset[str], right: frozenset[str]) -> bool:
    return any(similar_word(a, b) for a in left for b in right)


ValueForms = Callable[[str, str], frozenset[str]]


def shares_value_as(withdrawn: Statement, new: Statement, forms: ValueForms) -> bool:
    """Whether the new card names the withdrawn card's value, or the other way round, its
    words compared in ``forms``: a word of one's object (its fact when it has none) in the
    other's fact."""
    old_value = forms(withdrawn.object, withdrawn.subject) or forms(
        withdrawn.fact, withdrawn.subject
    )
    new_value = forms(new.object, new.subject) or forms(new.fact, new.subject)
    return _any_similar(old_value, forms(new.fact, new.subject)) or _any_similar(
        new_value, forms(withdrawn.fact, withdrawn.subject)
    )


def shares_value(withdrawn: Statement, new: Statement) -> bool:
    """Whether the new card names the withdrawn card's value (or the other way round), its
    words in Latin letters ("Lisbon" / "Lissabon" / "Лиссабон") or as skeletons, which meet
    across spellings ("photographie" / "фотография")."""
    return shares_value_as(withdrawn, new, value_words) or shares_value_as(
        withdrawn, new, value_skeletons
    )


def translated(withdrawn: Statement, new: Statement) -> bool:
    """Whether the two cards' facts are surely in two languages (:func:`other_languages`)."""
    return other_languages(withdrawn.fact, withdrawn.subject, new.fact, new.subject)


def meaning_threshold(withdrawn: Statement, new: Statement, thresholds: Thresholds) -> float:
    """The cosine from which ``new`` states ``withdrawn`` by meaning: :attr:`Thresholds.shared`
    when it names the value, else :attr:`Thresholds.plain`; :attr:`Thresholds.cross` lower
    when the two are in two languages."""
    base = thresholds.shared if shares_value(withdrawn, new) else thresholds.plain
    return base - thresholds.cross if translated(withdrawn, new) else base


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0 when either is zero or they differ in length)."""
    left = np.asarray(a, dtype=np.float64)
    right = np.asarray(b, dtype=np.float64)
    if left.shape != right.shape:
        return 0.0
    norm = float(np.linalg.norm(left) * np.linalg.norm(right))
    if norm == 0.0 or not np.isfinite(norm):
        return 0.0
    return float(np.dot(left, right) / norm)


def shares_evidence(candidate: Candidate, fact: WithdrawnFact) -> bool:
    """Whether ``candidate`` comes from a message the withdrawn card came from."""
    return not candidate.sources.isdisjoint(fact.sources)


def siblings_of(
    candidate: Candidate, fact: WithdrawnFact, siblings: Sequence[Sibling]
) -> list[Sibling]:
    """The siblings that come from one of ``candidate``'s messages (``fact`` and the
    candidate itself aside)."""
    return [
        s
        for s in siblings
        if s.card_id not in (fact.card_id, candidate.card_id)
        and not candidate.sources.isdisjoint(s.sources)
    ]


def evidence_states(
    candidate: Candidate,
    fact: WithdrawnFact,
    thresholds: Thresholds,
    siblings: Sequence[Sibling] = (),
) -> bool:
    """The evidence tier (see the module doc): ``candidate`` comes from a message ``fact``
    came from, about the same subject, and is no sibling's restatement."""
    if not shares_evidence(candidate, fact):
        return False
    if candidate.vector is None or fact.vector is None:
        return False
    if not same_subject(fact.statement, candidate.statement):
        return False
    score = cosine(candidate.vector, fact.vector)
    near = [cosine(candidate.vector, s.vector) for s in siblings_of(candidate, fact, siblings)]
    if not near:
        return score >= thresholds.evidence
    return score >= thresholds.sibling and score > max(near) + thresholds.margin


def states(
    candidate: Candidate,
    fact: WithdrawnFact,
    thresholds: Thresholds,
    siblings: Sequence[Sibling] = (),
) -> bool:
    """Whether ``candidate`` states the withdrawn ``fact`` (time aside): by hash, by meaning
    or by evidence."""
    new, old = candidate.statement, fact.statement
    if new.dedup_hash and new.dedup_hash == old.dedup_hash:
        return True
    if candidate.vector is None or fact.vector is None or not same_subject(old, new):
        return False
    score = cosine(candidate.vector, fact.vector)
    if score < thresholds.floor:
        return False
    if score >= meaning_threshold(old, new, thresholds):
        return True
    return evidence_states(candidate, fact, thresholds, siblings)


def refused_by(
    candidate: Candidate,
    facts: Sequence[WithdrawnFact],
    thresholds: Thresholds,
    siblings: Sequence[Sibling] = (),
) -> WithdrawnFact | None:
    """The withdrawn fact ``candidate`` may not bring back (the latest withdrawn first), or
    None: it states none withdrawn after every message it comes from."""
    for fact in sorted(facts, key=lambda f: (-f.at_ms, f.card_id)):
        if candidate.seen_ms < fact.at_ms and states(candidate, fact, thresholds, siblings):
            return fact
    return None


def refusals(
    candidates: Sequence[Candidate],
    facts: Sequence[WithdrawnFact],
    thresholds: Thresholds,
    siblings: Sequence[Sibling] = (),
) -> list[WithdrawnFact | None]:
    """:func:`refused_by` for each candidate, in order: the one decision of every write path
    (``siblings``: the chat's cards, not withdrawn, from the candidates' messages — see the
    module doc; the shell reads those near a candidate)."""
    return [refused_by(c, facts, thresholds, siblings) for c in candidates]
