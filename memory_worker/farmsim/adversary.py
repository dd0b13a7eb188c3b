"""The farm simulator's adversarial model: the rule-based model's facts, disguised.

Under the ``adversarial`` fault a chat service answers as the rule-based model
(:mod:`memory_worker.farmsim.extractor`) would, but every card it proposes comes back in
the disguises a real model gives a fact it rephrases — never word for word:

- ``reword``: other words, the same scope ("Brian enjoys green tea.");
- ``rescope``: put in the chat's scope, no user ("Brian likes green tea." for everyone);
- ``translate:de`` / ``translate:es`` / ``translate:ru``: in another language, the name
  and the value translated where this module knows them ("Brian wohnt in Lissabon.");
- ``split``: a fact about several things as one card each ("green tea and jasmine tea").

It restates every fact it finds in the messages, known or not: it does not look at the
existing cards it is shown (:func:`blind`), so a fact the chat already holds comes back
disguised instead of reinforced — as a model that rephrases freely does.

The fault's ``code`` names the moves (comma-separated; none: all of them). Resolutions that
would write a text and links (they name the original texts) are dropped. Pure data in,
pure data out; the tables are data, small on purpose: a predicate or value not in them is
rescoped and split, and reworded or translated with its object as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

MOVES: tuple[str, ...] = (
    "reword",
    "rescope",
    "translate:de",
    "translate:es",
    "translate:ru",
    "split",
)

REWORD: Mapping[str, str] = {
    "likes": "{s} enjoys {o}.",
    "lives_in": "{s}'s home is in {o}.",
    "works_at": "{s} is employed at {o}.",
    "works_as": "{s} works as {o} by profession.",
    "allergic_to": "{s} has an allergy to {o}.",
}

TRANSLATE: Mapping[str, Mapping[str, str]] = {
    "de": {
        "likes": "{s} mag {o}.",
        "lives_in": "{s} wohnt in {o}.",
        "works_at": "{s} arbeitet bei {o}.",
        "allergic_to": "{s} ist allergisch gegen {o}.",
    },
    "es": {
        "likes": "A {s} le gusta {o}.",
        "lives_in": "{s} vive en {o}.",
        "works_at": "{s} trabaja en {o}.",
        "allergic_to": "{s} es alérgico a {o}.",
    },
    "ru": {
        "likes": "{s} любит {o}.",
        "lives_in": "{s} живёт в {o}.",
        "works_at": "{s} работает в {o}.",
        "allergic_to": "У {s} аллергия на {o}.",
    },
}

#: Values as each language writes them after its template's preposition.
GLOSSARY: Mapping[str, Mapping[str, str]] = {
    "lisbon": {"de": "Lissabon", "es": "Lisboa", "ru": "Лиссабоне"},
    "porto": {"de": "Porto", "es": "Oporto", "ru": "Порту"},
    "green tea": {"de": "grünen Tee", "es": "el té verde", "ru": "зелёный чай"},
    "jasmine tea": {"de": "Jasmintee", "es": "el té de jazmín", "ru": "жасминовый чай"},
    "a bakery": {"de": "einer Bäckerei", "es": "una panadería", "ru": "пекарне"},
    "peanuts": {"de": "Erdnüsse", "es": "los cacahuetes", "ru": "арахис"},
}

NAMES: Mapping[str, Mapping[str, str]] = {
    "brian": {"ru": "Брайан"},
    "alice": {"ru": "Алиса"},
    "bob": {"ru": "Боб"},
}

_PARTS = re.compile(r"\s*(?:,|\band\b|\bund\b|\by\b|\bи\b)\s*", re.IGNORECASE)


def moves_of(code: str | None) -> tuple[str, ...]:
    """The moves a fault's ``code`` names (none or blank: all); unknown names are ignored."""
    if not code or not code.strip():
        return MOVES
    wanted = [m.strip().casefold() for m in code.split(",")]
    return tuple(m for m in MOVES if m in wanted)


_AND: Mapping[str, str] = {"de": " und ", "es": " y ", "ru": " и "}


def _word(table: Mapping[str, Mapping[str, str]], text: str, lang: str) -> str:
    """``text`` in ``lang`` where the table knows it (each part of a list on its own)."""
    parts = [p for p in _PARTS.split(text) if p]
    if len(parts) > 1:
        return _AND[lang].join(_word(table, part, lang) for part in parts)
    return table.get(text.strip().casefold(), {}).get(lang, text)


def _variant(card: Mapping[str, Any], fact: str, **changes: Any) -> dict[str, Any]:
    return {**card, "fact_text": fact, **changes}


def disguise(card: Mapping[str, Any], moves: Sequence[str]) -> list[dict[str, Any]]:
    """The disguises of one proposed card (the card itself is not among them)."""
    subject, obj = str(card.get("subject") or ""), str(card.get("object") or "")
    predicate, fact = str(card.get("predicate") or ""), str(card.get("fact_text") or "")
    out: list[dict[str, Any]] = []
    for move in moves:
        if move == "reword" and predicate in REWORD and obj:
            out.append(_variant(card, REWORD[predicate].format(s=subject, o=obj)))
        elif move == "rescope":
            out.append(_variant(card, fact, scope="chat", user_id=None))
        elif move.startswith("translate:") and obj:
            lang = move.partition(":")[2]
            template = TRANSLATE[lang].get(predicate)
            if template is not None:
                name, value = _word(NAMES, subject, lang), _word(GLOSSARY, obj, lang)
                text = template.format(s=name, o=value)
                out.append(_variant(card, text, subject=name, object=value))
        elif move == "split":
            parts = [p for p in _PARTS.split(obj) if p]
            if len(parts) > 1:
                for part in parts:
                    text = fact.replace(obj, part) if obj in fact else f"{fact} ({part})"
                    out.append(_variant(card, text, object=part))
    return out


def blind(task: Mapping[str, Any]) -> dict[str, Any]:
    """A task payload as the adversary reads it: without the existing cards."""
    return {k: v for k, v in task.items() if k != "existing_cards"}


def disguised(answer: Mapping[str, Any], moves: Sequence[str]) -> dict[str, Any]:
    """An extraction answer with every proposed card replaced by its disguises."""
    cards = answer.get("candidate_cards")
    if not isinstance(cards, list):
        return dict(answer)
    out = [v for card in cards if isinstance(card, Mapping) for v in disguise(card, moves)]
    resolutions = [
        r
        for r in answer.get("resolutions") or []
        if isinstance(r, Mapping) and r.get("new_fact_text") is None
    ]
    return {**answer, "candidate_cards": out, "resolutions": resolutions, "links": []}
