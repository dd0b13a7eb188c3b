"""The evidence tier of a retraction (§10): the same messages processed again, with e5.

Each line of ``tests/data/retraction/evidence.jsonl`` is one message that stated two facts
or more: the **withdrawn** one (learned from it, then retracted) and the **kept** ones
(learned from it too, still held). A replay of that message (the same message id) makes
the **candidates**: the withdrawn fact restated — reworded, re-scoped to the chat,
translated, one half of a split — which must be refused, and the kept facts as the model
gives them again — word for word, reworded, re-scoped, translated — which must be learned.
Every card is embedded as the pipeline embeds cards (e5 ``passage:``; stored cards int8)
and decided by :func:`memory_worker.cards.withdrawn.refusals`, all three tiers.

Three situations are measured:

- **replay**: the chat holds the kept facts (the message's siblings) — one write holding
  every candidate of the message, the adversary's whole answer;
- **alone**: the first pass learned only the withdrawn fact from the message (no sibling
  held) — the withdrawn fact's candidates;
- **unlearned**: a kept fact the first pass did not learn (its candidates alone, the
  other kept facts held, when there are any) — what the tier risks when the chat does
  not know what else the message said.

The thresholds are chosen on ``dev`` (the fewest misses in the replay and alone with at
most :data:`FALSE_BLOCK_CAP` false blocks in the replay and unlearned; ties: fewer false
blocks, then the lower thresholds, then the margin nearest 0) and reported on ``test``. Also measured, not shipped: the tier without
siblings (one threshold), and a relative rule among the write's candidates (refused only
when within ``delta`` of the closest candidate sharing the evidence).

    python bench/retraction_evidence.py

``tests/cards/test_retraction_evidence.py`` imports :func:`load_groups`, :func:`embed_groups`,
:func:`replay`, :func:`alone` and :func:`unlearned`.
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.retraction import E5, FALSE_BLOCK_CAP, Rates, _stored  # noqa: E402
from memory_worker.cards.model import dedup_hash  # noqa: E402
from memory_worker.cards.withdrawn import (  # noqa: E402
    Candidate,
    Sibling,
    Statement,
    Thresholds,
    WithdrawnFact,
    cosine,
    refusals,
    same_subject,
)

EVIDENCE = ROOT / "tests" / "data" / "retraction" / "evidence.jsonl"
#: The message's id in every group (one chat each), and the times: seen before the withdrawal.
MESSAGE, SEEN_MS, WITHDRAWN_MS = 1, 1_000, 2_000
EV_GRID = [round(0.80 + 0.005 * i, 3) for i in range(37)]  # 0.800 … 0.980
SIB_GRID = [round(0.75 + 0.01 * i, 2) for i in range(21)]  # 0.75 … 0.95
MARGINS = [round(-0.04 + 0.01 * i, 2) for i in range(9)]  # -0.04 … 0.04


@dataclass(frozen=True, slots=True)
class Card:
    """One card of a group: whose fact (``withdrawn``, ``kept:<i>``), the disguise, the
    language, and the card as the model gives it."""

    of: str
    kind: str
    lang: str
    scope: str
    subject: str
    predicate: str
    object: str
    fact: str

    @property
    def expect(self) -> str:
        return "block" if self.of == "withdrawn" else "learn"


@dataclass(frozen=True, slots=True)
class Group:
    group: str
    split: str
    lang: str
    message: str
    user_id: int
    name: str
    withdrawn: Card
    kept: tuple[Card, ...]
    candidates: tuple[Card, ...]


def _stored_card(of: str, lang: str, fields: Sequence[str]) -> Card:
    subject, predicate, obj, fact = fields
    return Card(of, "learned", lang, "user", subject, predicate, obj, fact)


def load_groups(split: str | None = None, path: Path = EVIDENCE) -> list[Group]:
    """The messages of one split (None: all)."""
    groups = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        data = json.loads(line)
        lang = data["lang"]
        groups.append(
            Group(
                group=data["group"],
                split=data["split"],
                lang=lang,
                message=data["message"],
                user_id=data["user_id"],
                name=data["name"],
                withdrawn=_stored_card("withdrawn", lang, data["withdrawn"]),
                kept=tuple(_stored_card(f"kept:{i}", lang, k) for i, k in enumerate(data["kept"])),
                candidates=tuple(Card(*c) for c in data["candidates"]),
            )
        )
    return [g for g in groups if split is None or g.split == split]


def _texts(groups: Iterable[Group]) -> list[str]:
    return sorted(
        {c.fact for g in groups for c in (g.withdrawn, *g.kept, *g.candidates)},
    )


def embed_groups(groups: Iterable[Group]) -> dict[str, list[float]]:
    """Every fact text of ``groups`` as e5 embeds a card (a passage)."""
    from llm_client import load_model

    texts = _texts(groups)
    rows = load_model(E5).encode(texts, is_query=False)
    return {text: [float(x) for x in row] for text, row in zip(texts, rows, strict=True)}


def statement(group: Group, card: Card) -> Statement:
    user = group.user_id if card.scope == "user" else None
    sk = f"user:{user}" if user is not None else "chat"
    h = dedup_hash(sk, card.subject, card.predicate, card.object, card.fact)
    return Statement(card.subject, card.object, card.fact, user, h)


@dataclass(frozen=True, slots=True)
class Decided:
    """One candidate's decision in one situation."""

    group: Group
    card: Card
    refused: bool
    situation: str


def _world(
    group: Group, vectors: dict[str, list[float]], held: Sequence[Card]
) -> tuple[WithdrawnFact, list[Sibling]]:
    sources = frozenset({MESSAGE})
    fact = WithdrawnFact(
        "w",
        WITHDRAWN_MS,
        statement(group, group.withdrawn),
        _stored(vectors[group.withdrawn.fact]),
        sources,
    )
    siblings = [Sibling(k.of, sources, _stored(vectors[k.fact])) for k in held]
    return fact, siblings


def _candidate(group: Group, card: Card, vectors: dict[str, list[float]]) -> Candidate:
    return Candidate(statement(group, card), SEEN_MS, vectors[card.fact], frozenset({MESSAGE}))


Rule = Callable[[Sequence[Candidate], WithdrawnFact, list[Sibling]], list[bool]]


def shipped(thresholds: Thresholds) -> Rule:
    """The store's decision (:func:`refusals`, all three tiers)."""

    def rule(cands: Sequence[Candidate], fact: WithdrawnFact, sibs: list[Sibling]) -> list[bool]:
        return [r is not None for r in refusals(cands, [fact], thresholds, sibs)]

    return rule


def without_siblings(thresholds: Thresholds) -> Rule:
    """The tier with one threshold, what else the message taught unknown."""
    inner = shipped(thresholds)
    return lambda cands, fact, sibs: inner(cands, fact, [])


def relative(inner: Rule, delta: float) -> Rule:
    """Not shipped: ``inner``'s refusals kept only within ``delta`` of the closest candidate
    of the write (the write's candidates sharing the evidence are the restatements'
    rivals: the closest are the restatements, two for a split)."""

    def rule(cands: Sequence[Candidate], fact: WithdrawnFact, sibs: list[Sibling]) -> list[bool]:
        scores = [cosine(c.vector or [], fact.vector or []) for c in cands]
        best = max(scores, default=0.0)
        base = inner(cands, fact, sibs)
        return [r and s >= best - delta for r, s in zip(base, scores, strict=True)]

    return rule


def replay(groups: Iterable[Group], vectors: dict[str, list[float]], rule: Rule) -> list[Decided]:
    """Each message processed again, the chat holding its kept facts: one write a message."""
    out = []
    for g in groups:
        fact, sibs = _world(g, vectors, g.kept)
        cands = [_candidate(g, c, vectors) for c in g.candidates]
        for card, refused in zip(g.candidates, rule(cands, fact, sibs), strict=True):
            out.append(Decided(g, card, refused, "replay"))
    return out


def alone(groups: Iterable[Group], vectors: dict[str, list[float]], rule: Rule) -> list[Decided]:
    """Each message processed again, the chat holding nothing else it taught: the withdrawn
    fact's candidates."""
    out = []
    for g in groups:
        fact, sibs = _world(g, vectors, [])
        mine = [c for c in g.candidates if c.of == "withdrawn"]
        cands = [_candidate(g, c, vectors) for c in mine]
        for card, refused in zip(mine, rule(cands, fact, sibs), strict=True):
            out.append(Decided(g, card, refused, "alone"))
    return out


def unlearned(
    groups: Iterable[Group], vectors: dict[str, list[float]], rule: Rule
) -> list[Decided]:
    """Each kept fact as if the first pass had not learned it: its candidates alone, the
    other kept facts held."""
    out = []
    for g in groups:
        for kept in g.kept:
            fact, sibs = _world(g, vectors, [k for k in g.kept if k is not kept])
            mine = [c for c in g.candidates if c.of == kept.of]
            cands = [_candidate(g, c, vectors) for c in mine]
            for card, refused in zip(mine, rule(cands, fact, sibs), strict=True):
                out.append(Decided(g, card, refused, "unlearned"))
    return out


def rates(decided: Iterable[Decided]) -> Rates:
    misses = blocks = false_blocks = learns = 0
    for d in decided:
        if d.card.expect == "block":
            blocks += 1
            misses += not d.refused
        else:
            learns += 1
            false_blocks += d.refused
    return Rates(misses, blocks, false_blocks, learns)


@dataclass(frozen=True, slots=True)
class Feature:
    """What the evidence tier's thresholds decide of one candidate in one situation."""

    expect: str
    situation: str
    #: Refused by hash or by meaning (the evidence thresholds aside).
    early: bool
    same_subject: bool
    score: float
    #: The closest sibling's cosine (None: no sibling from the candidate's messages).
    sibling: float | None

    def refused(self, t: Thresholds) -> bool:
        if self.early:
            return True
        if not self.same_subject:
            return False
        if self.sibling is None:
            return self.score >= t.evidence
        return self.score >= t.sibling and self.score > self.sibling + t.margin


def features(groups: Iterable[Group], vectors: dict[str, list[float]]) -> list[Feature]:
    """Each candidate of ``groups`` in both situations, computed once."""
    no_evidence = replace(Thresholds(), evidence=2.0, sibling=2.0)
    out = []
    for g in groups:
        withdrawn = [c for c in g.candidates if c.of == "withdrawn"]
        situations = [("replay", g.kept, g.candidates), ("alone", [], withdrawn)] + [
            (
                "unlearned",
                [k for k in g.kept if k is not kept],
                [c for c in g.candidates if c.of == kept.of],
            )
            for kept in g.kept
        ]
        for situation, held, cards in situations:
            fact, sibs = _world(g, vectors, held)
            for card in cards:
                cand = _candidate(g, card, vectors)
                early = refusals([cand], [fact], no_evidence, sibs)[0] is not None
                near = [cosine(cand.vector or [], s.vector) for s in sibs]
                out.append(
                    Feature(
                        card.expect,
                        situation,
                        early,
                        same_subject(fact.statement, cand.statement),
                        cosine(cand.vector or [], fact.vector or []),
                        max(near) if near else None,
                    )
                )
    return out


def _rates(feats: Iterable[Feature], t: Thresholds) -> Rates:
    misses = blocks = false_blocks = learns = 0
    for f in feats:
        refused = f.refused(t)
        if f.expect == "block":
            blocks, misses = blocks + 1, misses + (not refused)
        else:
            learns, false_blocks = learns + 1, false_blocks + refused
    return Rates(misses, blocks, false_blocks, learns)


def choose(dev: Sequence[Group], vectors: dict[str, list[float]]) -> Thresholds:
    """The evidence thresholds with the fewest dev replay misses among those with at most
    FALSE_BLOCK_CAP false blocks in the replay and in the unlearned situation (ties: fewer
    false blocks, then the lower thresholds, then the margin nearest 0); the meaning tier's
    at their defaults. Features are computed once; :func:`shipped` decides the reported
    figures."""
    feats = features(dev, vectors)
    again = [f for f in feats if f.situation == "replay"]
    lone = [f for f in feats if f.situation == "alone"]
    fresh = [f for f in feats if f.situation == "unlearned"]
    base = Thresholds()
    best: tuple[float, float, float, float, float, float] | None = None
    for evidence in EV_GRID:
        for sibling in SIB_GRID:
            for margin in MARGINS:
                t = replace(base, evidence=evidence, sibling=sibling, margin=margin)
                a, b = _rates(again, t), _rates(fresh, t)
                if max(a.false_block_rate, b.false_block_rate) > FALSE_BLOCK_CAP:
                    continue
                misses = _rates(again + lone, t)
                key = (
                    misses.miss_rate,
                    a.false_block_rate + b.false_block_rate,
                    evidence,
                    sibling,
                    abs(margin),
                    margin,
                )
                if best is None or key < best:
                    best = key
    assert best is not None
    return replace(base, evidence=best[2], sibling=best[3], margin=best[5])


def breakdown(decided: Sequence[Decided], field: Callable[[Decided], str]) -> str:
    groups: dict[str, list[Decided]] = defaultdict(list)
    for d in decided:
        groups[field(d)].append(d)
    out = []
    for name in sorted(groups):
        r = rates(groups[name])
        share = r.miss_rate if r.blocks else r.false_block_rate
        what = "missed" if r.blocks else "false blocks"
        out.append(f"    {name:<26} {len(groups[name]):>3} cards, {what} {share:.0%}")
    return "\n".join(out)


def main() -> None:
    groups = load_groups()
    dev = [g for g in groups if g.split == "dev"]
    test = [g for g in groups if g.split == "test"]
    vectors = embed_groups(groups)
    chosen = choose(dev, vectors)
    default = Thresholds()
    cards = sum(len(g.candidates) for g in groups)
    print(
        f"evidence pairs: {len(groups)} messages ({len(dev)} dev, {len(test)} test), "
        f"{cards} candidates, e5 ({E5})"
    )
    print(
        f"chosen on dev: evidence {chosen.evidence}, sibling {chosen.sibling}, "
        f"margin {chosen.margin}"
    )
    if (chosen.evidence, chosen.sibling, chosen.margin) != (
        default.evidence,
        default.sibling,
        default.margin,
    ):
        print(
            f"  (the settings' defaults are {default.evidence} / {default.sibling} / "
            f"{default.margin})"
        )
    meaning_only = replace(default, evidence=2.0, sibling=2.0)
    single = min(
        (t for t in EV_GRID if _fresh_ok(dev, vectors, replace(default, evidence=t))),
        key=lambda t: (
            rates(replay(dev, vectors, without_siblings(replace(default, evidence=t)))).miss_rate
        ),
    )
    rules: list[tuple[str, Rule]] = [
        ("hash + meaning (no evidence tier)", shipped(meaning_only)),
        (
            f"evidence, no siblings, >= {single}",
            without_siblings(replace(default, evidence=single)),
        ),
    ]
    for name, inner in (
        ("no siblings", without_siblings(replace(default, evidence=single))),
        ("siblings", shipped(default)),
    ):
        delta = _best_delta(dev, vectors, inner)
        rules.append((f"  + relative ({name}), delta {delta}", relative(inner, delta)))
    rules.append(("evidence with siblings (the rule)", shipped(default)))
    for name, part in (("dev", dev), ("test", test)):
        print(f"{name}: replay | alone: misses | unlearned contrast: false blocks")
        for label, rule in rules:
            again, fresh = rates(replay(part, vectors, rule)), rates(unlearned(part, vectors, rule))
            lone = rates(alone(part, vectors, rule))
            print(
                f"  {label:<38} {again.line()} | {lone.misses}/{lone.blocks} "
                f"({lone.miss_rate:.1%}) | {fresh.false_blocks}/{fresh.learns} "
                f"({fresh.false_block_rate:.1%})"
            )
    rule = shipped(default)
    decided = replay(test, vectors, rule)
    print("test replay, by kind (withdrawn: missed; kept: false blocks):")
    print(breakdown(decided, lambda d: f"{d.card.of.split(':')[0]} {d.card.kind}"))
    print("test replay, by language of the message:")
    print(breakdown(decided, lambda d: f"{d.group.lang} {d.card.expect}"))
    print("test replay, translations by target language:")
    print(
        breakdown(
            [d for d in decided if d.card.kind == "translate"],
            lambda d: f"{d.card.lang} {d.card.expect}",
        )
    )
    print("test alone, by kind:")
    print(breakdown(alone(test, vectors, rule), lambda d: d.card.kind))
    print("test alone, translations by target language:")
    print(
        breakdown(
            [d for d in alone(test, vectors, rule) if d.card.kind == "translate"],
            lambda d: d.card.lang,
        )
    )
    print("test alone, by language of the message:")
    print(breakdown(alone(test, vectors, rule), lambda d: d.group.lang))
    print("test unlearned contrast, by kind:")
    print(breakdown(unlearned(test, vectors, rule), lambda d: d.card.kind))
    print("test unlearned contrast, by language of the message:")
    print(breakdown(unlearned(test, vectors, rule), lambda d: d.group.lang))


DELTAS = [0.01, 0.02, 0.03, 0.05, 0.08, 0.12, 0.2]


def _best_delta(dev: Sequence[Group], vectors: dict[str, list[float]], inner: Rule) -> float:
    """The relative rule's delta with the fewest dev misses plus false blocks (replay, alone
    and unlearned)."""

    def errors(delta: float) -> int:
        rule = relative(inner, delta)
        decided = replay(dev, vectors, rule) + alone(dev, vectors, rule)
        r = rates(decided + unlearned(dev, vectors, rule))
        return r.misses + r.false_blocks

    return min(DELTAS, key=errors)


def _fresh_ok(dev: Sequence[Group], vectors: dict[str, list[float]], t: Thresholds) -> bool:
    rule = without_siblings(t)
    return (
        max(
            rates(replay(dev, vectors, rule)).false_block_rate,
            rates(unlearned(dev, vectors, rule)).false_block_rate,
        )
        <= FALSE_BLOCK_CAP
    )


if __name__ == "__main__":
    main()
