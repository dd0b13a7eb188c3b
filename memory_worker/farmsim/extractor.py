"""The simulator's deterministic rule-based memory extractor (§10 shape).

The farm simulator answers extraction and merge prompts with this module
instead of a model, so the demo and the end-to-end tests exercise the whole
memory pipeline deterministically. Everything here is a pure function of the
request payload.

Extraction (``"task": "memory_extraction"``):

- Each message is cut into sentences (questions are skipped) and clauses
  (``;`` and conjunctions followed by a first-person start). First-person
  patterns in English, Russian, German and Spanish (:data:`RULES`) turn a
  clause into facts: likes, dislikes, preferences, name, home, work,
  allergies, and the group's decisions and meetings. Where patterns overlap,
  the earliest match wins, then the more specific rule.
- User facts have the speaker as subject (``sender_name``, scope ``user``,
  ``user_id`` = the author); group facts have the chat as subject (scope
  ``chat``). ``fact_text`` is a short sentence in the language of the rule
  that matched; every card cites the messages it came from.
- Within a batch, a later statement replaces an earlier one of a
  single-valued predicate (home, work, name, next meeting) or a negated one.
- Against ``existing_cards``: a restatement → ``reinforce`` (no new card);
  a change of mind ("I moved to Y", "now I prefer Y", "I don't like X
  anymore", a new value of a single-valued predicate) → new card plus
  ``supersede`` and a ``supersedes`` link; a contradiction without a change
  marker ("I hate X" after "likes X") → new card plus ``competing`` and a
  ``contradicts`` link.
- ``episode_summary``, ``topics`` and ``participants`` are always filled.

Merge (``"task": "memory_merge"``): cards whose normalised facts are equal or
where one contains the other are clustered; the survivor is the card with the
highest salience, then the first in input order.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from memory_worker.consolidation.json_text import outside_strings

EXTRACTION_TASK = "memory_extraction"
MERGE_TASK = "memory_merge"


class Change(StrEnum):
    """How a rule's fact relates to earlier facts of the same subject."""

    NONE = "none"
    REPLACE = "replace"  # same predicate, new object: the old object is superseded
    NEGATE = "negate"  # the old (positive) fact with the same object is superseded


@dataclass(frozen=True, slots=True)
class Predicate:
    """What a predicate's cards look like."""

    card_type: str
    scope: str
    durability: str
    confidence: float
    salience: float
    topic: str
    single_valued: bool = False


PREDICATES: dict[str, Predicate] = {
    "likes": Predicate("preference", "user", "long", 0.8, 0.6, "preferences"),
    "dislikes": Predicate("preference", "user", "long", 0.8, 0.6, "preferences"),
    "no_longer_likes": Predicate("preference", "user", "long", 0.85, 0.6, "preferences"),
    "prefers": Predicate("preference", "user", "long", 0.8, 0.65, "preferences"),
    "name": Predicate("identity", "user", "permanent", 0.95, 0.9, "introductions", True),
    "lives_in": Predicate("profile", "user", "long", 0.9, 0.8, "home", True),
    "no_longer_lives_in": Predicate("profile", "user", "long", 0.85, 0.6, "home"),
    "works_at": Predicate("profile", "user", "long", 0.85, 0.75, "work", True),
    "works_as": Predicate("profile", "user", "long", 0.85, 0.75, "work", True),
    "allergic_to": Predicate("health", "user", "permanent", 0.9, 0.9, "health"),
    "decided": Predicate("decision", "chat", "short", 0.8, 0.7, "decisions"),
    "meeting": Predicate("event", "chat", "ephemeral", 0.75, 0.6, "meetings", True),
}

#: Existing predicates a new fact with the same object contradicts (→ competing).
CONTRADICTS: dict[str, frozenset[str]] = {
    "likes": frozenset({"dislikes"}),
    "prefers": frozenset({"dislikes"}),
    "dislikes": frozenset({"likes", "prefers"}),
}


@dataclass(frozen=True, slots=True)
class Rule:
    """One first-person pattern family: its predicate, language and fact sentence."""

    name: str
    lang: str
    predicate: str
    patterns: tuple[re.Pattern[str], ...]
    template: str
    change: Change = Change.NONE
    negates: frozenset[str] = frozenset()


# Object fragments: up to a comma/colon/bracket; lazy when a suffix must follow;
# names are one to three words that are not a conjunction.
_OBJ = r"(?P<obj>[^,;:()\"«»]+)"
_LAZY = r"(?P<obj>[^,;:()\"«»]+?)"
_NAME_WORD = r"[^\W\d_][\w'\-]*"
_NAME = (
    rf"(?P<obj>{_NAME_WORD}(?:\s+(?!(?:and|y|e|и|а|und|but|pero|но|aber)\b){_NAME_WORD}){{0,2}})"
)
_DONT = r"(?:don't|do\s+not|dont)"


def _p(*patterns: str) -> tuple[re.Pattern[str], ...]:
    return tuple(re.compile(p, re.IGNORECASE) for p in patterns)


_NO_LONGER_LIKES = frozenset({"likes", "prefers"})
_NO_LONGER_LIVES = frozenset({"lives_in"})

#: Every rule; where matches start at the same place, the earlier rule wins.
RULES: tuple[Rule, ...] = (
    # --- changes of mind first: they contain the plain patterns' words ---
    Rule(
        "no_longer_likes_en",
        "en",
        "no_longer_likes",
        _p(
            rf"\bI\s+{_DONT}\s+(?:like|love|enjoy)\s+{_LAZY}\s+any\s?more\b",
            rf"\bI\s+no\s+longer\s+(?:like|love|enjoy)\s+{_OBJ}",
        ),
        "{subject} no longer likes {object}.",
        Change.NEGATE,
        _NO_LONGER_LIKES,
    ),
    Rule(
        "no_longer_likes_ru",
        "ru",
        "no_longer_likes",
        _p(
            rf"\bя\s+больше\s+не\s+(?:люблю|обожаю)\s+{_OBJ}",
            rf"\bя\s+разлюбил[аи]?\s+{_OBJ}",
        ),
        "{subject} больше не любит {object}.",
        Change.NEGATE,
        _NO_LONGER_LIKES,
    ),
    Rule(  # "мне больше не нравится X": X stays in the nominative, so does the card
        "no_longer_likes_ru_dative",
        "ru",
        "no_longer_likes",
        _p(rf"\bмне\s+больше\s+не\s+(?P<verb>нрав(?:ится|ятся))\s+{_OBJ}"),
        "{subject_dat} больше не {verb} {object}.",
        Change.NEGATE,
        _NO_LONGER_LIKES,
    ),
    Rule(
        "no_longer_likes_de",
        "de",
        "no_longer_likes",
        _p(rf"\bich\s+(?:mag|liebe)\s+{_LAZY}\s+nicht\s+mehr\b"),
        "{subject} mag {object} nicht mehr.",
        Change.NEGATE,
        _NO_LONGER_LIKES,
    ),
    Rule(
        "no_longer_likes_es",
        "es",
        "no_longer_likes",
        _p(rf"\bya\s+no\s+me\s+(?:gusta|gustan|encanta|encantan)\s+{_OBJ}"),
        "A {subject} ya no le gusta {object}.",
        Change.NEGATE,
        _NO_LONGER_LIKES,
    ),
    Rule(
        "no_longer_lives_en",
        "en",
        "no_longer_lives_in",
        _p(
            rf"\bI\s+no\s+longer\s+live\s+in\s+{_OBJ}",
            rf"\bI\s+{_DONT}\s+live\s+in\s+{_LAZY}\s+any\s?more\b",
        ),
        "{subject} no longer lives in {object}.",
        Change.NEGATE,
        _NO_LONGER_LIVES,
    ),
    Rule(
        "no_longer_lives_ru",
        "ru",
        "no_longer_lives_in",
        _p(rf"\bя\s+больше\s+не\s+живу\s+(?:в|во)\s+{_OBJ}"),
        "{subject} больше не живёт в {object}.",
        Change.NEGATE,
        _NO_LONGER_LIVES,
    ),
    Rule(
        "no_longer_lives_de",
        "de",
        "no_longer_lives_in",
        _p(rf"\bich\s+(?:wohne|lebe)\s+nicht\s+mehr\s+in\s+{_OBJ}"),
        "{subject} wohnt nicht mehr in {object}.",
        Change.NEGATE,
        _NO_LONGER_LIVES,
    ),
    Rule(
        "no_longer_lives_es",
        "es",
        "no_longer_lives_in",
        _p(rf"\bya\s+no\s+vivo\s+en\s+{_OBJ}"),
        "{subject} ya no vive en {object}.",
        Change.NEGATE,
        _NO_LONGER_LIVES,
    ),
    Rule(
        "moved_en",
        "en",
        "lives_in",
        _p(rf"\bI(?:\s+have|'ve)?\s+(?:just\s+|recently\s+)?moved\s+to\s+{_OBJ}"),
        "{subject} moved to {object}.",
        Change.REPLACE,
    ),
    Rule(
        "moved_ru",
        "ru",
        "lives_in",
        _p(rf"\bя\s+(?:недавно\s+)?переехал(?P<form>[аи]?)\s+(?P<prep>в|во)\s+{_OBJ}"),
        "{subject} {moved} {prep} {object}.",
        Change.REPLACE,
    ),
    Rule(
        "moved_de",
        "de",
        "lives_in",
        _p(rf"\bich\s+bin\s+nach\s+{_LAZY}\s+(?:um)?gezogen\b"),
        "{subject} ist nach {object} gezogen.",
        Change.REPLACE,
    ),
    Rule(
        "moved_es",
        "es",
        "lives_in",
        _p(rf"\bme\s+(?:mudé|mude|he\s+mudado)\s+a\s+{_OBJ}"),
        "{subject} se mudó a {object}.",
        Change.REPLACE,
    ),
    Rule(
        "prefers_now_en",
        "en",
        "prefers",
        _p(
            rf"\b(?:now|nowadays|these\s+days),?\s+I\s+prefer\s+{_OBJ}",
            rf"\bI\s+now\s+prefer\s+{_OBJ}",
            rf"\bI\s+prefer\s+{_LAZY}\s+now\b",
        ),
        "{subject} prefers {object}.",
        Change.REPLACE,
    ),
    Rule(
        "prefers_now_ru",
        "ru",
        "prefers",
        _p(
            rf"\b(?:теперь|сейчас)\s+я\s+предпочитаю\s+{_OBJ}",
            rf"\bя\s+(?:теперь|сейчас)\s+предпочитаю\s+{_OBJ}",
        ),
        "{subject} предпочитает {object}.",
        Change.REPLACE,
    ),
    Rule(
        "prefers_now_de",
        "de",
        "prefers",
        _p(
            rf"\bjetzt\s+bevorzuge\s+ich\s+{_OBJ}",
            rf"\bich\s+bevorzuge\s+jetzt\s+{_OBJ}",
        ),
        "{subject} bevorzugt {object}.",
        Change.REPLACE,
    ),
    Rule(
        "prefers_now_es",
        "es",
        "prefers",
        _p(rf"\bahora\s+prefiero\s+{_OBJ}"),
        "{subject} prefiere {object}.",
        Change.REPLACE,
    ),
    # --- dislikes before likes: "no me gusta" contains "me gusta" ---
    Rule(
        "dislikes_en",
        "en",
        "dislikes",
        _p(
            rf"\bI\s+(?:really\s+)?(?:hate|dislike|detest|can't\s+stand|cannot\s+stand)\s+{_OBJ}",
            rf"\bI\s+{_DONT}\s+(?:like|love|enjoy)\s+{_OBJ}",
        ),
        "{subject} dislikes {object}.",
    ),
    Rule(
        "dislikes_ru",
        "ru",
        "dislikes",
        _p(
            rf"\bя\s+(?:не\s+люблю|ненавижу|терпеть\s+не\s+могу)\s+{_OBJ}",
        ),
        "{subject} не любит {object}.",
    ),
    Rule(
        "dislikes_ru_dative",
        "ru",
        "dislikes",
        _p(rf"\bмне\s+не\s+(?P<verb>нрав(?:ится|ятся))\s+{_OBJ}"),
        "{subject_dat} не {verb} {object}.",
    ),
    Rule(
        "dislikes_de",
        "de",
        "dislikes",
        _p(
            rf"\bich\s+hasse\s+{_OBJ}",
            rf"\bich\s+mag\s+kein(?:e|en|er|es)?\s+{_OBJ}",
            rf"\bich\s+mag\s+{_LAZY}\s+nicht\b",
        ),
        "{subject} mag {object} nicht.",
    ),
    Rule(
        "dislikes_es",
        "es",
        "dislikes",
        _p(
            rf"\bno\s+me\s+(?:gusta|gustan)\s+{_OBJ}",
            rf"\bodio\s+{_OBJ}",
        ),
        "A {subject} no le gusta {object}.",
    ),
    Rule(
        "likes_en",
        "en",
        "likes",
        _p(rf"\bI\s+(?:really\s+|absolutely\s+|just\s+)?(?:love|like|enjoy|adore)\s+{_OBJ}"),
        "{subject} likes {object}.",
    ),
    Rule(
        "likes_ru",
        "ru",
        "likes",
        _p(
            rf"\bя\s+(?:очень\s+)?(?:люблю|обожаю)\s+{_OBJ}",
        ),
        "{subject} любит {object}.",
    ),
    Rule(
        "likes_ru_dative",
        "ru",
        "likes",
        _p(rf"\bмне\s+(?:очень\s+)?(?P<verb>нрав(?:ится|ятся))\s+{_OBJ}"),
        "{subject_dat} {verb} {object}.",
    ),
    Rule(
        "likes_de",
        "de",
        "likes",
        _p(rf"\bich\s+(?:liebe|mag)\s+{_OBJ}"),
        "{subject} mag {object}.",
    ),
    Rule(
        "likes_es",
        "es",
        "likes",
        _p(rf"\bme\s+(?:encanta|encantan|gusta|gustan)\s+{_OBJ}"),
        "A {subject} le gusta {object}.",
    ),
    Rule(
        "prefers_en",
        "en",
        "prefers",
        _p(rf"\bI\s+prefer\s+{_OBJ}"),
        "{subject} prefers {object}.",
    ),
    Rule(
        "prefers_ru",
        "ru",
        "prefers",
        _p(rf"\bя\s+предпочитаю\s+{_OBJ}"),
        "{subject} предпочитает {object}.",
    ),
    Rule(
        "prefers_de",
        "de",
        "prefers",
        _p(rf"\bich\s+bevorzuge\s+{_OBJ}"),
        "{subject} bevorzugt {object}.",
    ),
    Rule(
        "prefers_es",
        "es",
        "prefers",
        _p(rf"\bprefiero\s+{_OBJ}"),
        "{subject} prefiere {object}.",
    ),
    Rule(
        "name_en",
        "en",
        "name",
        _p(rf"\bmy\s+name\s+is\s+{_NAME}"),
        "{subject}'s name is {object}.",
    ),
    Rule(
        "goes_by_en",
        "en",
        "name",
        _p(rf"\bcall\s+me\s+{_NAME}"),
        "{subject} goes by {object}.",
    ),
    Rule(
        "name_ru",
        "ru",
        "name",
        _p(rf"\bменя\s+зовут\s+{_NAME}", rf"\bмо[её]\s+имя\s+{_NAME}"),
        "{subject_acc} зовут {object}.",
    ),
    Rule(
        "name_de",
        "de",
        "name",
        _p(rf"\bich\s+hei(?:ß|ss)e\s+{_NAME}", rf"\bmein\s+name\s+ist\s+{_NAME}"),
        "{subject} heißt {object}.",
    ),
    Rule(
        "name_es",
        "es",
        "name",
        _p(rf"\bme\s+llamo\s+{_NAME}", rf"\bmi\s+nombre\s+es\s+{_NAME}"),
        "{subject} se llama {object}.",
    ),
    Rule(
        "lives_en",
        "en",
        "lives_in",
        _p(rf"\bI\s+(?:currently\s+)?live\s+in\s+{_OBJ}", rf"\bI'm\s+based\s+in\s+{_OBJ}"),
        "{subject} lives in {object}.",
    ),
    Rule(
        "lives_ru",
        "ru",
        "lives_in",
        _p(rf"\bя\s+(?:сейчас\s+)?живу\s+(?:в|во)\s+{_OBJ}"),
        "{subject} живёт в {object}.",
    ),
    Rule(
        "lives_de",
        "de",
        "lives_in",
        _p(rf"\bich\s+(?:wohne|lebe)\s+in\s+{_OBJ}"),
        "{subject} wohnt in {object}.",
    ),
    Rule(
        "lives_es",
        "es",
        "lives_in",
        _p(rf"\bvivo\s+en\s+{_OBJ}"),
        "{subject} vive en {object}.",
    ),
    Rule(
        "works_as_en",
        "en",
        "works_as",
        _p(rf"\bI\s+work\s+as\s+(?P<art>an?\s+)?{_OBJ}"),
        "{subject} works as {art}{object}.",
    ),
    Rule(
        "works_at_en",
        "en",
        "works_at",
        _p(rf"\bI\s+work\s+(?:at|for)\s+{_OBJ}"),
        "{subject} works at {object}.",
    ),
    Rule(
        "works_at_ru",
        "ru",
        "works_at",
        _p(rf"\bя\s+работаю\s+(?P<prep>в|во|на)\s+{_OBJ}"),
        "{subject} работает {prep} {object}.",
    ),
    Rule(
        "works_as_ru",
        "ru",
        "works_as",
        _p(rf"\bя\s+работаю\s+(?!(?:в|во|на|с|у|над|по|из|дома|удал[её]нно)\b){_OBJ}"),
        "{subject} работает {object}.",
    ),
    Rule(
        "works_as_de",
        "de",
        "works_as",
        _p(rf"\bich\s+arbeite\s+als\s+{_OBJ}"),
        "{subject} arbeitet als {object}.",
    ),
    Rule(
        "works_at_de",
        "de",
        "works_at",
        _p(rf"\bich\s+arbeite\s+(?:bei|für)\s+{_OBJ}"),
        "{subject} arbeitet bei {object}.",
    ),
    Rule(
        "works_as_es",
        "es",
        "works_as",
        _p(rf"\btrabajo\s+(?:como|de)\s+{_OBJ}"),
        "{subject} trabaja como {object}.",
    ),
    Rule(
        "works_at_es",
        "es",
        "works_at",
        _p(rf"\btrabajo\s+en\s+{_OBJ}"),
        "{subject} trabaja en {object}.",
    ),
    Rule(
        "allergic_en",
        "en",
        "allergic_to",
        _p(rf"\bI(?:\s+am|'m)\s+(?:very\s+|severely\s+)?allergic\s+to\s+{_OBJ}"),
        "{subject} is allergic to {object}.",
    ),
    Rule(
        "allergic_ru",
        "ru",
        "allergic_to",
        _p(rf"\bу\s+меня\s+аллергия\s+на\s+{_OBJ}"),
        "У {subject_gen} аллергия на {object}.",
    ),
    Rule(
        "allergic_de",
        "de",
        "allergic_to",
        _p(rf"\bich\s+bin\s+allergisch\s+gegen\s+{_OBJ}"),
        "{subject} ist allergisch gegen {object}.",
    ),
    Rule(
        "allergic_es",
        "es",
        "allergic_to",
        _p(rf"\bsoy\s+al[ée]rgic[oa]\s+a\s+{_OBJ}", rf"\btengo\s+alergia\s+a\s+{_OBJ}"),
        "{subject} tiene alergia a {object}.",
    ),
    # --- the group's decisions and meetings (chat scope) ---
    Rule(
        "decided_en",
        "en",
        "decided",
        _p(rf"\bwe(?:\s+have|'ve)?\s+(?:decided|agreed)\s+(?=to\b|on\b|that\b){_OBJ}"),
        "The group decided {object}.",
    ),
    Rule(
        "decided_ru",
        "ru",
        "decided",
        _p(rf"\bмы\s+(?:решили|договорились)\s+{_OBJ}"),
        "Группа решила {object}.",
    ),
    Rule(
        "decided_de",
        "de",
        "decided",
        _p(rf"\bwir\s+haben\s+(?:beschlossen|entschieden),?\s+{_OBJ}"),
        "Die Gruppe hat beschlossen, {object}.",
    ),
    Rule(
        "decided_es",
        "es",
        "decided",
        _p(rf"\b(?:decidimos|hemos\s+decidido)\s+{_OBJ}"),
        "El grupo decidió {object}.",
    ),
    Rule(
        "meeting_en",
        "en",
        "meeting",
        _p(rf"\blet'?s\s+meet\s+{_OBJ}", rf"\bwe(?:'ll|\s+will)\s+meet\s+{_OBJ}"),
        "The group plans to meet {object}.",
    ),
    Rule(
        "meeting_ru",
        "ru",
        "meeting",
        _p(rf"\bдавай(?:те)?\s+встретимся\s+{_OBJ}", rf"\bвстречаемся\s+{_OBJ}"),
        "Группа договорилась встретиться {object}.",
    ),
    Rule(
        "meeting_de",
        "de",
        "meeting",
        _p(rf"\blass(?:t)?\s+uns\s+{_LAZY}\s+treffen\b", rf"\btreffen\s+wir\s+uns\s+{_OBJ}"),
        "Die Gruppe will sich {object} treffen.",
    ),
    Rule(
        "meeting_es",
        "es",
        "meeting",
        _p(
            rf"\bnos\s+vemos\s+{_OBJ}",
            r"\bquedamos\s+(?P<obj>(?:el|la|a|en|este|esta|mañana|hoy)\b[^,;:()\"«»]*)",
        ),
        "El grupo quedó en verse {object}.",
    ),
)

_RULES_BY_NAME: dict[str, Rule] = {rule.name: rule for rule in RULES}

# Sentences end at . ! ? followed by space, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|\n+")
_CLAUSE_SPLIT = re.compile(
    r"\s*;\s*|\s+(?:and|but|и|но|а|und|aber|y|e|pero)\s+"
    r"(?=(?:i|we|my|я|мы|меня|мне|мой|моё|ich|wir|mein|yo|me|mi|nos|vivo|trabajo|soy"
    r"|tengo|prefiero|odio|ya|no|decidimos|quedamos)\b)",
    re.IGNORECASE,
)
_TRAILING_FILLERS: tuple[str, ...] = (
    "any more",
    "anymore",
    "now",
    "too",
    "a lot",
    "very much",
    "so much",
    "lately",
    "these days",
    "nowadays",
    "though",
    "теперь",
    "сейчас",
    "очень",
    "тоже",
    "больше",
    "jetzt",
    "sehr",
    "auch",
    "gerne",
    "gern",
    "ahora",
    "mucho",
    "también",
)
_PRONOUNS = frozenset(
    {
        "it",
        "that",
        "this",
        "you",
        "him",
        "her",
        "them",
        "me",
        "us",
        "everyone",
        "everything",
        "тебя",
        "вас",
        "его",
        "её",
        "ее",
        "их",
        "это",
        "всех",
        "всё",
        "все",
        "dich",
        "euch",
        "es",
        "ihn",
        "sie",
        "das",
        "alle",
        "eso",
        "esto",
        "todo",
        "te",
        "lo",
    }
)
_ARTICLES = frozenset(
    {"the", "a", "an", "el", "la", "los", "las", "un", "una", "der", "die", "das", "den", "dem"}
    | {"ein", "eine", "einen"}
)
_STRIP_CHARS = " \t'\"«»“”„`-–—*_"
MAX_OBJECT_WORDS = 8
MAX_OBJECT_CHARS = 80


@dataclass(frozen=True, slots=True)
class Fact:
    """One first-person statement found in a text."""

    rule: str
    predicate: str
    object: str
    lang: str
    #: Other named groups of the match (a Russian verb's gender ending, a preposition).
    forms: tuple[tuple[str, str], ...] = ()


def sentences(text: str) -> list[str]:
    """The declarative sentences of ``text`` (questions dropped), terminators stripped."""
    found: list[str] = []
    for raw in _SENTENCE_END.split(text.replace("’", "'")):
        sentence = raw.strip()
        if not sentence or sentence.endswith("?") or sentence.startswith("¿"):
            continue
        found.append(sentence.rstrip(".!…").strip())
    return [s for s in found if s]


def clauses(sentence: str) -> list[str]:
    """The clauses of one sentence (``;`` and conjunction + first-person start)."""
    return [part for part in _CLAUSE_SPLIT.split(sentence) if part.strip()]


def clean_object(raw: str) -> str | None:
    """The object as it will be stored, or None when it is not a usable object."""
    value = " ".join(raw.split()).strip(_STRIP_CHARS)
    changed = True
    while changed and value:
        changed = False
        lowered = value.casefold()
        for filler in _TRAILING_FILLERS:
            if lowered == filler:
                return None
            if lowered.endswith(" " + filler):
                value = value[: -len(filler) - 1].rstrip(_STRIP_CHARS)
                changed = True
                break
    words = value.split()
    if not words or len(words) > MAX_OBJECT_WORDS or len(value) > MAX_OBJECT_CHARS:
        return None
    if words[0].casefold() in _PRONOUNS:
        return None
    if not any(ch.isalnum() for ch in value):
        return None
    return value


def find_facts(text: str) -> list[Fact]:
    """Every first-person fact stated in ``text``, in order of appearance."""
    found: list[Fact] = []
    for sentence in sentences(text):
        for clause in clauses(sentence):
            found.extend(_clause_facts(clause))
    return found


def _clause_facts(clause: str) -> Iterator[Fact]:
    hits: list[tuple[int, int, int, Rule, re.Match[str]]] = []
    for order, rule in enumerate(RULES):
        for pattern in rule.patterns:
            for match in pattern.finditer(clause):
                hits.append((match.start(), order, match.end(), rule, match))
    hits.sort(key=lambda hit: (hit[0], hit[1]))
    taken_until = -1
    for start, _order, end, rule, match in hits:
        if start < taken_until:
            continue
        obj = clean_object(match.group("obj"))
        if obj is None:
            continue
        taken_until = end
        forms = tuple(
            sorted((k, v) for k, v in match.groupdict().items() if k != "obj" and v is not None)
        )
        yield Fact(
            rule=rule.name, predicate=rule.predicate, object=obj, lang=rule.lang, forms=forms
        )


def normalize(text: str) -> str:
    """Case-, punctuation- and article-insensitive form used to compare texts."""
    words = re.findall(r"\w+", text.casefold().replace("ё", "е"))
    while words and words[0] in _ARTICLES and len(words) > 1:
        words = words[1:]
    return " ".join(words)


# --------------------------------------------------------------------------- card sentences

#: Russian male names that end like feminine ones (-а/-я).
_RU_MALE_IN_A = frozenset(
    {"никита", "илья", "лука", "фома", "кузьма", "савва", "миша", "саша", "женя", "ваня"}
    | {"дима", "вова", "петя", "коля", "толя", "федя", "гоша", "паша", "лёша", "леша"}
)
#: Russian women's names on a soft sign.
_RU_FEMALE_SOFT = frozenset({"любовь", "нинель", "адель", "эсфирь", "рахиль"})
_CYRILLIC_WORD = re.compile(r"^[А-Яа-яЁё][а-яё\-]*$")
_HUSHING = "гкхжшщч"
_VOWELS = "аеёиоуыэюя"


def ru_feminine(name: str, form: str | None = None) -> bool:
    """Whether a Russian card about ``name`` takes feminine forms.

    The speaker's own verb decides when it showed one ("переехала" → yes,
    "переехал" → no); otherwise the name: -а/-я are feminine except a few
    male names (Никита, Илья, Саша…). Not a linguist — a plausible guess.
    """
    if form == "а":
        return True
    if form == "":
        return False
    word = name.strip().split()[0].casefold() if name.strip() else ""
    if word in _RU_FEMALE_SOFT:
        return True
    return word.endswith(("а", "я")) and word not in _RU_MALE_IN_A


def ru_decline(name: str, case: str, feminine: bool | None = None) -> str:
    """``name`` in the genitive, dative or accusative, for one-word Cyrillic names.

    Anything else (Latin names, several words, initials) stays as written, as
    foreign names do in Russian. Covers the common patterns: Мария → Марии /
    Марии / Марию, Анна → Анны / Анне / Анну, Олег → Олега / Олегу / Олега,
    Игорь → Игоря, Андрей → Андрея, Ольга → Ольги.
    """
    if case not in ("gen", "dat", "acc") or not _CYRILLIC_WORD.match(name):
        return name
    low = name.casefold()
    fem = ru_feminine(name) if feminine is None else feminine
    stem = name[:-1]
    if low.endswith("ия"):
        return stem + {"gen": "и", "dat": "и", "acc": "ю"}[case]
    if low.endswith("я"):
        return stem + {"gen": "и", "dat": "е", "acc": "ю"}[case]
    if low.endswith("а"):
        gen = "и" if low[-2:-1] in tuple(_HUSHING) else "ы"
        return stem + {"gen": gen, "dat": "е", "acc": "у"}[case]
    if low.endswith("й"):
        return stem + {"gen": "я", "dat": "ю", "acc": "я"}[case]
    if low.endswith("ь"):
        if fem:  # Любовь, Нинель: feminine soft sign
            return stem + {"gen": "и", "dat": "и", "acc": "ь"}[case]
        return stem + {"gen": "я", "dat": "ю", "acc": "я"}[case]
    if low[-1] in _VOWELS or fem:  # -о/-е/-и/-у names, and women's names on a consonant
        return name
    return name + {"gen": "а", "dat": "у", "acc": "а"}[case]


def render(rule: Rule, subject: str, obj: str, forms: Mapping[str, str]) -> str:
    """The card sentence of ``rule``: the subject declined and verbs agreed where needed."""
    feminine = ru_feminine(subject, forms.get("form")) if rule.lang == "ru" else False
    values = {
        "subject": subject,
        "object": obj,
        "subject_gen": ru_decline(subject, "gen", feminine),
        "subject_dat": ru_decline(subject, "dat", feminine),
        "subject_acc": ru_decline(subject, "acc", feminine),
        "moved": "переехала" if feminine else "переехал",
        "prep": forms.get("prep", "в").casefold(),
        "verb": forms.get("verb", "нравится").casefold(),
        "art": " ".join(forms.get("art", "").split()).casefold() + " " if forms.get("art") else "",
    }
    return rule.template.format(**values)


def is_tautology(fact: Fact, sender_name: str) -> bool:
    """A name fact that only repeats the name the sender already goes by."""
    return fact.predicate == "name" and normalize(fact.object) == normalize(sender_name)


# --------------------------------------------------------------------------- extraction


@dataclass(slots=True)
class _Candidate:
    rule: Rule
    scope: str
    subject: str
    subject_key: tuple[str, object]
    object: str
    user_id: int | None
    source_ids: list[int] = field(default_factory=list)
    forms: tuple[tuple[str, str], ...] = ()

    @property
    def predicate(self) -> str:
        return self.rule.predicate

    @property
    def norm_object(self) -> str:
        return normalize(self.object)

    @property
    def fact_text(self) -> str:
        return render(self.rule, self.subject, self.object, dict(self.forms))

    def to_card(self) -> dict[str, Any]:
        info = PREDICATES[self.predicate]
        confidence = min(0.99, info.confidence + 0.05 * (len(self.source_ids) - 1))
        return {
            "scope": self.scope,
            "card_type": info.card_type,
            "subject": self.subject,
            "predicate": self.predicate,
            "object": self.object,
            "fact_text": self.fact_text,
            "confidence": round(confidence, 2),
            "salience": info.salience,
            "source_message_ids": list(self.source_ids),
            "user_id": self.user_id,
            "durability": info.durability,
        }


@dataclass(frozen=True, slots=True)
class _Message:
    message_id: int
    user_id: int | None
    sender_name: str
    text: str


@dataclass(frozen=True, slots=True)
class _Existing:
    id: str
    scope: str
    subject: str
    predicate: str
    object: str
    fact: str
    user_id: int | None


def _as_int(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None


def _messages(payload: Mapping[str, Any]) -> list[_Message]:
    found: list[_Message] = []
    for raw in payload.get("messages") or []:
        if not isinstance(raw, Mapping):
            continue
        message_id = _as_int(raw.get("message_id"))
        text = raw.get("text")
        if message_id is None or not isinstance(text, str):
            continue
        user_id = _as_int(raw.get("user_id"))
        name = str(raw.get("sender_name") or "").strip()
        if not name:
            name = f"user {user_id}" if user_id is not None else "someone"
        found.append(_Message(message_id, user_id, name, text))
    return found


def _existing_cards(payload: Mapping[str, Any]) -> list[_Existing]:
    found: list[_Existing] = []
    for raw in payload.get("existing_cards") or []:
        if not isinstance(raw, Mapping) or raw.get("id") is None:
            continue
        found.append(
            _Existing(
                id=str(raw["id"]),
                scope=str(raw.get("scope") or ""),
                subject=str(raw.get("subject") or ""),
                predicate=str(raw.get("predicate") or ""),
                object=str(raw.get("object") or ""),
                fact=str(raw.get("fact") or raw.get("fact_text") or ""),
                user_id=_as_int(raw.get("user_id")),
            )
        )
    return found


def chat_subject(chat_id: object) -> str:
    """The subject of a chat's group facts."""
    return f"chat:{chat_id}" if chat_id is not None else "chat"


def _candidates(messages: Sequence[_Message], group: str) -> list[_Candidate]:
    """The batch's facts, merged by slot; later changes replace earlier statements."""
    found: list[_Candidate] = []
    for message in messages:
        for fact in find_facts(message.text):
            rule = _RULES_BY_NAME[fact.rule]
            info = PREDICATES[fact.predicate]
            if info.scope == "user":
                key: tuple[str, object] = (
                    "user",
                    message.user_id
                    if message.user_id is not None
                    else normalize(message.sender_name),
                )
                if is_tautology(fact, message.sender_name):
                    continue  # "my name is Alice" from Alice: nothing to remember
                new = _Candidate(
                    rule, "user", message.sender_name, key, fact.object, message.user_id
                )
            else:
                new = _Candidate(rule, "chat", group, ("chat", group), fact.object, None)
            new.forms = fact.forms
            new.source_ids.append(message.message_id)
            _add_candidate(found, new)
    return found


def _add_candidate(found: list[_Candidate], new: _Candidate) -> None:
    for old in found:
        if (
            old.subject_key == new.subject_key
            and old.predicate == new.predicate
            and old.norm_object == new.norm_object
        ):
            if new.source_ids[0] not in old.source_ids:
                old.source_ids.append(new.source_ids[0])
            return
    replaces = new.rule.change is Change.REPLACE or PREDICATES[new.predicate].single_valued
    found[:] = [
        old
        for old in found
        if not (
            old.subject_key == new.subject_key
            and (
                (replaces and old.predicate == new.predicate)
                or (
                    new.rule.change is Change.NEGATE
                    and old.predicate in new.rule.negates
                    and old.norm_object == new.norm_object
                )
            )
        )
    ]
    found.append(new)


def _same_subject(new: _Candidate, card: _Existing) -> bool:
    if new.scope == "user":
        if card.scope != "user":
            return False
        if card.user_id is not None and new.user_id is not None:
            return card.user_id == new.user_id
        return normalize(card.subject) == normalize(new.subject)
    return card.scope in ("chat", "thread") and normalize(card.subject) == normalize(new.subject)


def decide(
    predicate: str,
    norm_object: str,
    change: Change,
    negates: frozenset[str],
    old_predicate: str,
    old_norm_object: str,
) -> str | None:
    """The resolution a new fact implies for one existing card of the same subject."""
    same_object = norm_object == old_norm_object
    if predicate == old_predicate and same_object:
        return "reinforce"
    if change is Change.NEGATE and old_predicate in negates and same_object:
        return "supersede"
    replaces = change is Change.REPLACE or PREDICATES[predicate].single_valued
    if replaces and predicate == old_predicate and not same_object:
        return "supersede"
    if old_predicate in CONTRADICTS.get(predicate, frozenset()) and same_object:
        return "competing"
    return None


_REASONS = {
    "reinforce": "restated",
    "supersede": "changed",
    "competing": "contradicts",
}
_LINK_RELATIONS = {"supersede": "supersedes", "competing": "contradicts"}


def _resolve(
    candidates: Sequence[_Candidate], existing: Sequence[_Existing]
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Cards to emit, resolutions and links, from the batch against existing cards."""
    cards: list[dict[str, Any]] = []
    resolutions: list[dict[str, Any]] = []
    links: list[dict[str, Any]] = []
    resolved: set[str] = set()
    for new in candidates:
        card = new.to_card()
        reinforced = False
        for old in existing:
            if old.id in resolved or not _same_subject(new, old):
                continue
            decision = decide(
                new.predicate,
                new.norm_object,
                new.rule.change,
                new.rule.negates,
                old.predicate,
                normalize(old.object),
            )
            if decision is None:
                continue
            resolved.add(old.id)
            reinforced = reinforced or decision == "reinforce"
            resolutions.append(
                {
                    "old_card_id": old.id,
                    "decision": decision,
                    "into_card_id": None,
                    "new_fact_text": None if decision == "reinforce" else card["fact_text"],
                    "reason": _REASONS[decision],
                }
            )
            relation = _LINK_RELATIONS.get(decision)
            if relation is not None and old.fact:
                links.append(
                    {
                        "from_fact_text": card["fact_text"],
                        "to_fact_text": old.fact,
                        "relation": relation,
                        "confidence": card["confidence"],
                    }
                )
        if not reinforced:
            cards.append(card)
    return cards, resolutions, links


_KEYWORD = re.compile(r"[^\W\d_]{5,}")
_STOPWORDS = frozenset(
    {"about", "there", "their", "would", "could", "should", "which", "where", "these"}
    | {"think", "really", "because", "today", "tomorrow", "after", "before", "still"}
    | {"который", "потому", "сегодня", "завтра", "очень", "может", "когда", "только"}
    | {"nicht", "heute", "morgen", "schon", "wirklich", "porque", "también", "mañana"}
    | {"hello", "привет", "hallo", "gracias", "thanks", "спасибо", "danke", "okay"}
    | {"decided", "agreed", "prefer", "moved", "allergic", "enjoy", "anymore", "longer"}
    | {"решили", "предпочитаю", "переехал", "переехала", "больше", "beschlossen", "entschieden"}
    | {"bevorzuge", "gezogen", "allergisch", "decidimos", "prefiero", "encanta", "gusta"}
)
MAX_TOPICS = 5


def topics(messages: Sequence[str], predicates: Sequence[str]) -> list[str]:
    """Deterministic topics: the facts' categories, then the most frequent long words."""
    found: list[str] = []
    for predicate in predicates:
        topic = PREDICATES[predicate].topic
        if topic not in found:
            found.append(topic)
    counts: Counter[str] = Counter()
    first_seen: dict[str, int] = {}
    for text in messages:
        for word in _KEYWORD.findall(text.casefold()):
            if word in _STOPWORDS:
                continue
            counts[word] += 1
            first_seen.setdefault(word, len(first_seen))
    ranked = sorted(counts, key=lambda w: (-counts[w], first_seen[w]))
    for word in ranked:
        if len(found) >= MAX_TOPICS:
            break
        if word not in found:
            found.append(word)
    return found[:MAX_TOPICS]


def participants(sender_names: Sequence[str]) -> list[str]:
    """Distinct sender names in order of first appearance."""
    names: list[str] = []
    for name in sender_names:
        if name not in names:
            names.append(name)
    return names


def summary(names: Sequence[str], message_count: int, topic_list: Sequence[str], facts: int) -> str:
    """A one-line deterministic episode summary."""
    if message_count == 0:
        return "No messages."
    who = ", ".join(names) if names else "Nobody"
    text = f"{who} exchanged {message_count} message{'s' if message_count != 1 else ''}"
    if topic_list:
        text += " about " + ", ".join(topic_list[:3])
    text += "."
    if facts:
        text += f" {facts} durable fact{'s' if facts != 1 else ''} noted."
    else:
        text += " Nothing durable was said."
    return text


def extract(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Answer a ``memory_extraction`` request with the §10 JSON object."""
    run = payload.get("run")
    chat_id = run.get("chat_id") if isinstance(run, Mapping) else None
    messages = _messages(payload)
    candidates = _candidates(messages, chat_subject(chat_id))
    cards, resolutions, links = _resolve(candidates, _existing_cards(payload))
    topic_list = topics([m.text for m in messages], [c.predicate for c in candidates])
    names = participants([m.sender_name for m in messages])
    return {
        "episode_summary": summary(names, len(messages), topic_list, len(candidates)),
        "topics": topic_list,
        "participants": names,
        "candidate_cards": cards,
        "resolutions": resolutions,
        "links": links,
    }


# --------------------------------------------------------------------------- merge


#: Words that turn a fact into its negation or its end ("no longer", "nicht mehr", "больше не").
_NEGATION_WORDS = frozenset(
    {"not", "no", "never", "longer", "anymore", "nicht", "kein", "keine", "keinen", "mehr"}
    | {"nie", "ya", "nunca", "ne", "plus", "jamais", "не", "больше", "нет", "ні", "більше"}
)


def _contains(outer: str, inner: str) -> bool:
    """Whether ``outer`` restates ``inner`` with more words — not when the extra words negate it
    ("Olaf mag Fußball nicht mehr" is no duplicate of "Olaf mag Fußball")."""
    if f" {inner} " not in f" {outer} ":
        return False
    extra = set(outer.split()) - set(inner.split())
    return not extra & _NEGATION_WORDS


def merge(payload: Mapping[str, Any]) -> dict[str, Any]:
    """Answer a ``memory_merge`` request: cluster equal or contained facts."""
    cards: list[tuple[str, str, float]] = []
    for raw in payload.get("cards") or []:
        if not isinstance(raw, Mapping) or raw.get("id") is None:
            continue
        salience = raw.get("salience")
        value = float(salience) if isinstance(salience, int | float) else 0.0
        cards.append((str(raw["id"]), str(raw.get("fact") or ""), value))
    norms = [normalize(fact) for _, fact, _ in cards]
    parent = list(range(len(cards)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(len(cards)):
        for j in range(i + 1, len(cards)):
            a, b = norms[i], norms[j]
            if a and b and (a == b or _contains(a, b) or _contains(b, a)):
                parent[root(j)] = root(i)
    groups: dict[int, list[int]] = {}
    for i in range(len(cards)):
        groups.setdefault(root(i), []).append(i)
    clusters: list[dict[str, Any]] = []
    keep: list[str] = []
    for members in sorted(groups.values(), key=lambda m: m[0]):
        if len(members) == 1:
            keep.append(cards[members[0]][0])
            continue
        survivor = min(members, key=lambda i: (-cards[i][2], i))
        longest = max(members, key=lambda i: (len(norms[i]), i == survivor, -i))
        clusters.append(
            {
                "survivor_id": cards[survivor][0],
                "absorbed_ids": [cards[i][0] for i in members if i != survivor],
                "merged_fact_text": cards[longest][1],
            }
        )
    return {"clusters": clusters, "demote_ids": [], "keep_ids": keep}


# --------------------------------------------------------------------------- dispatch


def parse_task(content: str) -> dict[str, Any] | None:
    """The JSON object in a prompt (tolerating surrounding text), or None."""
    for candidate in (content, _outer_braces(content)):
        if candidate is None:
            continue
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


def _outer_braces(text: str) -> str | None:
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else None


def answer(payload: Mapping[str, Any]) -> dict[str, Any] | None:
    """The answer to a memory task payload, or None for an unknown task."""
    task = payload.get("task")
    if task == EXTRACTION_TASK:
        return extract(payload)
    if task == MERGE_TASK:
        return merge(payload)
    return None


def empty_extraction() -> dict[str, Any]:
    """A valid §10 answer that extracts nothing."""
    return extract({"messages": []})


# --------------------------------------------------------------------------- truncation


def truncate_json(text: str) -> str:
    """``text`` cut in the middle of its ``candidate_cards`` array (or of itself).

    Used by the ``truncated_json`` fault: the result is never valid JSON, but
    the cards before the cut may still be salvaged by a tolerant parser.
    """
    if len(text) < 2:
        return ""
    key = text.find('"candidate_cards"')
    if key >= 0:
        start = text.find("[", key)
        if start >= 0:
            end = _closing_bracket(text, start)
            if end is not None:
                cut = max(start + 1, (start + end) // 2)
                return text[:cut]
    return text[: len(text) // 2]


def _closing_bracket(text: str, start: int) -> int | None:
    depth = 0
    for index, char in outside_strings(text, start):
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
            if depth == 0:
                return index
    return None
