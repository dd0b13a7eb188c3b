"""The chat requests the worker sends: extraction (workflow ``memory_extraction``) and merge.

Both are OpenAI-style chat requests: a system message with our prompt
(``prompts/*.txt``) and a user message whose content is one compact JSON
object (the contract the farm simulator's rule-based extractor reads):

- extraction: ``{"task": "memory_extraction", "run": {...}, "messages": [...],
  "existing_cards": [...]}``;
- merge: ``{"task": "memory_merge", "subject": ..., "cards": [...]}``.

Existing cards are shown under short aliases (``c1``, ``c2``…), never under
their storage ids, so a model cannot address a card it was not shown (the
alias map is the caller's), and with their *age relative to the slice* —
the messages' time is the model's only clock.

Every text field of a payload (message text and sender name, card subject,
predicate, object and fact) passes through
:func:`~memory_worker.privacy.masking.mask` on its way into the
request (:func:`farm_payload`): the farm never sees a credential or a payment
card number, nor — with ``MEMORY_REDACT_CONTACTS`` — an e-mail address or a
phone number (§14).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from functools import cache
from typing import Any

import orjson

from memory_worker.cards import Card, CardStatus
from memory_worker.consolidation.batching import PromptMessage, estimate_tokens
from memory_worker.errors import ConsolidationError
from memory_worker.models import RunRequest
from memory_worker.privacy.masking import mask
from memory_worker.settings import Settings
from memory_worker.settings.checks import EXTRACTION_PROMPTS, prompt_file

MERGE_PROMPT = "merge_v1.txt"
#: Tokens of chat framing and JSON envelope on top of the system prompt.
FRAME_TOKENS = 256

_SCORE = {"type": "number", "minimum": 0, "maximum": 1}
EXTRACTION_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "episode_summary": {"type": "string"},
        "topics": {"type": "array", "items": {"type": "string"}},
        "participants": {"type": "array", "items": {"type": "string"}},
        "candidate_cards": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "scope": {"type": "string", "enum": ["chat", "thread", "user"]},
                    "card_type": {"type": "string"},
                    "subject": {"type": "string"},
                    "predicate": {"type": "string"},
                    "object": {"type": "string"},
                    "fact_text": {"type": "string"},
                    "confidence": _SCORE,
                    "salience": _SCORE,
                    "source_message_ids": {"type": "array", "items": {"type": "integer"}},
                    "user_id": {"type": ["integer", "null"]},
                    "durability": {
                        "type": "string",
                        "enum": ["permanent", "long", "short", "ephemeral"],
                    },
                },
                "required": [
                    "scope",
                    "card_type",
                    "subject",
                    "predicate",
                    "object",
                    "fact_text",
                    "confidence",
                    "salience",
                    "source_message_ids",
                ],
            },
        },
        "resolutions": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "old_card_id": {"type": "string"},
                    "decision": {
                        "type": "string",
                        "enum": [
                            "supersede",
                            "competing",
                            "update",
                            "merge",
                            "reinforce",
                            "demote",
                        ],
                    },
                    "into_card_id": {"type": ["string", "null"]},
                    "new_fact_text": {"type": ["string", "null"]},
                    "reason": {"type": "string"},
                },
                "required": ["old_card_id", "decision"],
            },
        },
        "links": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "from_fact_text": {"type": "string"},
                    "to_fact_text": {"type": "string"},
                    "relation": {
                        "type": "string",
                        "enum": [
                            "supports",
                            "contradicts",
                            "same_topic",
                            "supersedes",
                            "mentions_same_entity",
                        ],
                    },
                    "confidence": _SCORE,
                },
                "required": ["from_fact_text", "to_fact_text", "relation"],
            },
        },
    },
    "required": [
        "episode_summary",
        "topics",
        "participants",
        "candidate_cards",
        "resolutions",
        "links",
    ],
}
MERGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "clusters": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "survivor_id": {"type": "string"},
                    "absorbed_ids": {"type": "array", "items": {"type": "string"}},
                    "merged_fact_text": {"type": "string"},
                },
                "required": ["survivor_id", "absorbed_ids", "merged_fact_text"],
            },
        },
        "demote_ids": {"type": "array", "items": {"type": "string"}},
        "keep_ids": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["clusters", "demote_ids", "keep_ids"],
}


@cache
def load_prompt(name: str) -> str:
    """A prompt file shipped in ``memory_worker/consolidation/prompts``."""
    return prompt_file(name).read_text("utf-8")


def extraction_prompt(prompt_version: str) -> str:
    name = EXTRACTION_PROMPTS.get(prompt_version)
    if name is None:
        raise ConsolidationError(f"no extraction prompt for prompt version {prompt_version!r}")
    return load_prompt(name)


def overhead_tokens(prompt_version: str) -> int:
    """Tokens every extraction request spends before messages and cards."""
    return estimate_tokens(extraction_prompt(prompt_version)) + FRAME_TOKENS


def _rfc3339(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def card_age(observed_at: datetime, reference: datetime) -> str:
    """How old a card was at ``reference``: today, 3d, 2w, 5mo, old."""
    days = (reference - observed_at).total_seconds() / 86400
    if days < 1:
        return "today"
    if days < 14:
        return f"{int(days)}d"
    if days < 60:
        return f"{int(days // 7)}w"
    if days < 365:
        return f"{int(days // 30)}mo"
    return "old"


def existing_card_payload(alias: str, card: Card, reference: datetime) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": alias,
        "scope": card.scope.value,
        "card_type": card.card_type,
        "subject": card.subject,
        "predicate": card.predicate,
        "object": card.object,
        "fact": card.fact_text,
        "conf": round(card.confidence, 2),
        "age": card_age(card.observed_at, reference),
    }
    if card.user_id is not None:
        data["user_id"] = card.user_id
    if card.status == CardStatus.COMPETING:
        data["disputed"] = True
    return data


def extraction_payload(
    run_id: str,
    request: RunRequest,
    messages: Sequence[PromptMessage],
    existing: Sequence[tuple[str, Card]],
) -> dict[str, Any]:
    """The user-message JSON of one extraction batch (cards grouped by subject)."""
    grouped = sorted(existing, key=lambda item: (item[1].subject.casefold(), item[0]))
    return {
        "task": "memory_extraction",
        "run": {
            "id": run_id,
            "chat_id": request.chat_id,
            "thread_id": request.thread_id,
            "range_start": _rfc3339(request.range_start),
            "range_end": _rfc3339(request.range_end),
        },
        "messages": [m.payload() for m in messages],
        "existing_cards": [
            existing_card_payload(alias, card, request.range_end) for alias, card in grouped
        ],
    }


#: The text fields of the items of a payload's lists (the rest are ids, numbers, times, enums).
_MESSAGE_TEXTS = ("text", "sender_name")
_CARD_TEXTS = ("subject", "predicate", "object", "fact")


def _masked_items(
    items: Sequence[Mapping[str, Any]], fields: Sequence[str], contacts: bool
) -> list[dict[str, Any]]:
    return [
        {
            key: mask(value, contacts=contacts)
            if key in fields and isinstance(value, str)
            else value
            for key, value in item.items()
        }
        for item in items
    ]


def farm_payload(payload: Mapping[str, Any], *, contacts: bool) -> dict[str, Any]:
    """``payload`` with every text field masked for the farm (ids, times and scores kept)."""
    masked = dict(payload)
    if isinstance(masked.get("messages"), list):
        masked["messages"] = _masked_items(masked["messages"], _MESSAGE_TEXTS, contacts)
    for name in ("existing_cards", "cards"):
        if isinstance(masked.get(name), list):
            masked[name] = _masked_items(masked[name], _CARD_TEXTS, contacts)
    if isinstance(masked.get("subject"), str):
        masked["subject"] = mask(masked["subject"], contacts=contacts)
    return masked


def _chat_request(
    system: str,
    payload: Mapping[str, Any],
    schema_name: str,
    schema: dict[str, Any],
    settings: Settings,
) -> dict[str, Any]:
    return {
        "model": settings.extraction_model,
        "messages": [
            {"role": "system", "content": system},
            {
                "role": "user",
                "content": orjson.dumps(
                    farm_payload(payload, contacts=settings.redact_contacts)
                ).decode(),
            },
        ],
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": schema_name, "schema": schema, "strict": False},
        },
        "temperature": settings.extraction_temperature,
        "max_tokens": settings.extraction_max_output_tokens,
        "stream": False,
    }


def build_extraction_request(
    payload: Mapping[str, Any], *, prompt_version: str, settings: Settings
) -> dict[str, Any]:
    """The chat request of one extraction batch."""
    return _chat_request(
        extraction_prompt(prompt_version),
        payload,
        "memory_extraction",
        EXTRACTION_SCHEMA,
        settings,
    )


def merge_payload(subject: str, cards: Sequence[Card], reference: datetime) -> dict[str, Any]:
    return {
        "task": "memory_merge",
        "subject": subject,
        "cards": [
            {
                "id": card.id,
                "card_type": card.card_type,
                "predicate": card.predicate,
                "fact": card.fact_text,
                "salience": round(card.salience, 2),
                "obs": card.observation_count,
                "age": card_age(card.observed_at, reference),
            }
            for card in cards
        ],
    }


def build_merge_request(payload: Mapping[str, Any], *, settings: Settings) -> dict[str, Any]:
    """The chat request of one merge-pass group."""
    return _chat_request(
        load_prompt(MERGE_PROMPT), payload, "memory_subject_merge", MERGE_SCHEMA, settings
    )
