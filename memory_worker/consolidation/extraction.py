"""What the extractor and the merge model answer, decoded tolerantly (§10).

The answer is an assistant message that *should* be one JSON object. Models
wrap it in code fences, prefix reasoning (``<think>…</think>``), add prose
after it, or get cut off by the output-token cap. Decoding:

1. strip reasoning blocks and fences; take the first complete JSON value
   starting at the first ``{`` (trailing prose is ignored);
2. if there is none, **salvage** a truncated answer: cut at the last point
   where every element so far was complete and close the open brackets;
3. validate each item on its own: a malformed card is dropped (counted),
   never the whole answer; numbers given as strings are coerced,
   percentages scaled, scores clamped to [0, 1].

Unusable output — empty, plain prose, no JSON object, an object with none of
the expected fields — raises :class:`llm_client._errors.DecodeError` whose
text says "decode memory extractor response": a protocol error, so the
walker tries the next target. "Nothing to extract" is a valid answer with
empty arrays, and is the only way to say it: an LLM failure never turns
into "no facts" (mem0's silent ``[]``).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import (
    AliasChoices,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
)

from llm_client import DecodeError
from memory_worker.consolidation.json_text import outside_strings

DECODE_PHRASE = "decode memory extractor response"

EXTRACTION_KEYS = frozenset(
    {
        "episode_summary",
        "topics",
        "participants",
        "candidate_cards",
        "cards",
        "resolutions",
        "supersessions",
        "links",
    }
)
MERGE_KEYS = frozenset({"clusters", "demote_ids", "keep_ids"})

_THINK = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[a-zA-Z]*")
_MAX_SALVAGE_TRIES = 64


def _score(value: Any) -> float:
    """Scores as numbers in [0, 1]; 0–100 read as percentages; junk → 0.5."""
    if value is None or isinstance(value, bool):
        return 0.5
    if isinstance(value, str):
        text = value.strip().rstrip("%")
        try:
            value = float(text)
        except ValueError:
            return 0.5
    if not isinstance(value, int | float) or not math.isfinite(value):
        return 0.5
    number = float(value)
    if 1.0 < number <= 100.0:
        number /= 100.0
    return min(1.0, max(0.0, number))


def _keyword(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


#: A model's 0–1 score, read tolerantly (see ``_score``).
Score = Annotated[float, BeforeValidator(_score)]
#: A word the decoder compares case-insensitively (scope, type, decision, relation…).
Keyword = Annotated[str, BeforeValidator(_keyword)]


class _Item(BaseModel):
    model_config = ConfigDict(
        extra="ignore", populate_by_name=True, coerce_numbers_to_str=True, frozen=True
    )


class CandidateCard(_Item):
    """A fact the extractor proposes; :mod:`memory_worker.consolidation.validation` decides if it is kept."""

    scope: Keyword = Field("chat", validation_alias=AliasChoices("scope", "scope_type"))
    card_type: Keyword = Field("", validation_alias=AliasChoices("card_type", "type"))
    subject: str = ""
    predicate: str = ""
    object: str = ""
    fact_text: str = Field(validation_alias=AliasChoices("fact_text", "fact", "text"))
    confidence: Score = 0.5
    salience: Score = 0.5
    source_message_ids: list[int] = Field(
        default_factory=list,
        validation_alias=AliasChoices("source_message_ids", "source_ids", "sources", "message_ids"),
    )
    user_id: int | None = None
    durability: Keyword | None = None

    @field_validator("source_message_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if isinstance(value, int | str):
            value = [value]
        if not isinstance(value, list):
            return []
        ids: list[int] = []
        for item in value:
            try:
                ids.append(int(str(item).strip().lstrip("#")))
            except ValueError:
                continue
        return ids

    @field_validator("user_id", mode="before")
    @classmethod
    def _user(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return None
        try:
            number = int(str(value).strip())
        except ValueError:
            return None
        return number or None

    @field_validator("subject", "predicate", "object", "fact_text", mode="before")
    @classmethod
    def _text(cls, value: Any) -> Any:
        if value is None:
            return ""
        return value.strip() if isinstance(value, str) else value


class ResolutionCandidate(_Item):
    """A decision about an existing card the prompt showed."""

    old_card_id: str = Field(validation_alias=AliasChoices("old_card_id", "card_id", "id"))
    decision: Keyword
    into_card_id: str | None = None
    new_fact_text: str | None = None
    reason: str | None = None

    @field_validator("into_card_id", "new_fact_text", mode="before")
    @classmethod
    def _blank(cls, value: Any) -> Any:
        if isinstance(value, str) and not value.strip():
            return None
        return value.strip() if isinstance(value, str) else value


class LinkCandidate(_Item):
    from_fact_text: str
    to_fact_text: str
    relation: Keyword
    confidence: Score = 0.5


@dataclass(frozen=True, slots=True)
class ExtractionOutput:
    """One extraction answer: episode facts, candidate cards, resolutions, links."""

    episode_summary: str = ""
    topics: tuple[str, ...] = ()
    participants: tuple[str, ...] = ()
    candidate_cards: tuple[CandidateCard, ...] = ()
    resolutions: tuple[ResolutionCandidate, ...] = ()
    links: tuple[LinkCandidate, ...] = ()
    #: Items dropped because they did not match the schema.
    malformed: int = 0
    #: The answer was truncated and salvaged.
    salvaged: bool = False


class MergeCluster(_Item):
    survivor_id: str
    absorbed_ids: list[str] = Field(default_factory=list)
    merged_fact_text: str = ""

    @field_validator("absorbed_ids", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if not isinstance(value, list):
            return []
        return [str(item) for item in value if isinstance(item, str | int)]


@dataclass(frozen=True, slots=True)
class MergeOutput:
    clusters: tuple[MergeCluster, ...] = ()
    demote_ids: tuple[str, ...] = ()
    keep_ids: tuple[str, ...] = ()
    malformed: int = 0
    salvaged: bool = False


# --- JSON recovery -----------------------------------------------------------------------


def _fail(detail: str) -> DecodeError:
    return DecodeError(f"{DECODE_PHRASE}: {detail}", code="extraction_decode")


def salvage_truncated(text: str) -> Any | None:
    """Recover a JSON value cut off mid-way, or None.

    ``text`` starts at the opening bracket. Cut points are the places where
    everything before is complete: just after an opening bracket, just after
    a closing one, and just before a separating comma. The latest cut that
    parses once the still-open brackets are closed wins.
    """
    stack: list[str] = []
    cuts: list[tuple[int, str]] = []
    for index, char in outside_strings(text):
        if char in "{[":
            stack.append("}" if char == "{" else "]")
            cuts.append((index + 1, "".join(reversed(stack))))
        elif char in "}]":
            if not stack or stack[-1] != char:
                return None  # malformed, not truncated
            stack.pop()
            if not stack:
                cuts.append((index + 1, ""))
                break
            cuts.append((index + 1, "".join(reversed(stack))))
        elif char == ",":
            cuts.append((index, "".join(reversed(stack))))
    for end, closers in reversed(cuts[-_MAX_SALVAGE_TRIES:]):
        candidate = text[:end].rstrip().rstrip(",") + closers
        try:
            return json.loads(candidate)
        except ValueError:
            continue
    return None


def _json_object(content: str | None, known: frozenset[str]) -> tuple[dict[str, Any], bool]:
    """The answer's JSON object and whether it was salvaged; DecodeError when unusable."""
    if content is None or not content.strip():
        raise _fail("empty content")
    text = _FENCE.sub("", _THINK.sub("", content.lstrip("\ufeff")))
    start = text.find("{")
    if start < 0:
        raise _fail("no JSON object in the answer")
    salvaged = False
    try:
        value, _ = json.JSONDecoder().raw_decode(text, start)
    except ValueError:
        value = salvage_truncated(text[start:])
        salvaged = True
        if value is None:
            raise _fail("malformed JSON that cannot be salvaged") from None
    if not isinstance(value, dict):
        raise _fail("the answer is not a JSON object")
    if not known & value.keys():
        nested = [v for v in value.values() if isinstance(v, dict) and known & v.keys()]
        if len(nested) != 1:
            raise _fail("no expected field in the answer")
        value = nested[0]
    return value, salvaged


def _items(raw: Any, model: type[_Item]) -> tuple[list[Any], int]:
    if raw is None:
        return [], 0
    if not isinstance(raw, list):
        return [], 1
    good: list[Any] = []
    bad = 0
    for item in raw:
        try:
            good.append(model.model_validate(item))
        except ValidationError:
            bad += 1
    return good, bad


def _strings(raw: Any, limit: int = 50) -> tuple[str, ...]:
    if isinstance(raw, str):
        raw = [raw]
    if not isinstance(raw, list):
        return ()
    out: list[str] = []
    for item in raw:
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            text = str(item).strip()
            if text:
                out.append(text)
    return tuple(out[:limit])


def decode_extraction(content: str | None) -> ExtractionOutput:
    """Decode an extraction answer (see the module doc); DecodeError when unusable."""
    data, salvaged = _json_object(content, EXTRACTION_KEYS)
    cards, bad_cards = _items(data.get("candidate_cards", data.get("cards")), CandidateCard)
    resolutions, bad_res = _items(data.get("resolutions"), ResolutionCandidate)
    legacy_raw = data.get("supersessions")
    if isinstance(legacy_raw, list):
        legacy_raw = [
            {**item, "decision": item.get("decision", "supersede")}
            for item in legacy_raw
            if isinstance(item, dict)
        ]
    legacy, bad_legacy = _items(legacy_raw, ResolutionCandidate)
    links, bad_links = _items(data.get("links"), LinkCandidate)
    summary = data.get("episode_summary")
    return ExtractionOutput(
        episode_summary=summary.strip() if isinstance(summary, str) else "",
        topics=_strings(data.get("topics")),
        participants=_strings(data.get("participants")),
        candidate_cards=tuple(cards),
        resolutions=tuple(resolutions + legacy),
        links=tuple(links),
        malformed=bad_cards + bad_res + bad_legacy + bad_links,
        salvaged=salvaged,
    )


def decode_merge(content: str | None) -> MergeOutput:
    """Decode a merge-pass answer; DecodeError when unusable."""
    data, salvaged = _json_object(content, MERGE_KEYS)
    clusters, bad = _items(data.get("clusters"), MergeCluster)
    return MergeOutput(
        clusters=tuple(clusters),
        demote_ids=_strings(data.get("demote_ids"), limit=1000),
        keep_ids=_strings(data.get("keep_ids"), limit=1000),
        malformed=bad,
        salvaged=salvaged,
    )
