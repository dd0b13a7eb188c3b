"""What an error value says: its human text and the farm error code it carries.

The farm and its backends report failures in many shapes: a bare string, an
object with ``message``/``error``/``detail``/``code``, an error nested under
``error``, an HTTP body that is JSON or plain text, a string that starts with a
farm code (``"UPSTREAM_ERROR: …"``). These pure helpers read any of them into
short, clipped text and an optional code; :mod:`llm_client._transport.envelope` decides
what the text and code mean. Text read here is capped (:data:`MAX_TEXT_CHARS`)
and never longer than what the farm sent.
"""

from __future__ import annotations

import re
from typing import Final

from llm_client._edge import NOT_JSON, loads_or_missing

#: Longest piece of farm- or backend-supplied text kept in an error message.
MAX_TEXT_CHARS: Final = 500
#: How deep error-text extraction looks into nested objects.
MAX_DEPTH: Final = 6

#: A farm error code at the start of an error given as a string:
#: ``"UPSTREAM_ERROR: [Errno -3] …"`` → ``("UPSTREAM_ERROR", "[Errno -3] …")``. Codes are
#: upper-case words joined by underscores, so ordinary prose is never read as a code.
LEADING_CODE: Final = re.compile(r"\s*([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s*(?::\s*(.*))?", re.DOTALL)

#: Keys searched, in order, for the human text of an error object.
ERROR_TEXT_KEYS: Final = ("message", "error", "detail", "code")
#: Keys of an error object that carry its farm code, in order (``error_code`` included).
ERROR_CODE_KEYS: Final = ("code", "error_code")


def clip(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Trim whitespace and cap the length of farm-supplied text."""
    text = text.strip()
    return text if len(text) <= limit else text[:limit] + "…"


def scalar_text(value: object) -> str | None:
    """A non-blank string or integer as text; anything else is ``None``."""
    if isinstance(value, str):
        return value.strip() or None
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


def blank(value: object) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return not value.strip()
    if isinstance(value, dict | list):
        return not value
    return False


def compact_json(value: object, limit: int = MAX_TEXT_CHARS) -> str:
    """Render any JSON value as short text, safely for arbitrarily deep values."""
    parts: list[str] = []
    size = 0

    def emit(text: str) -> bool:
        nonlocal size
        parts.append(text)
        size += len(text)
        return size < limit

    def walk(item: object, depth: int) -> bool:
        if depth > MAX_DEPTH:
            return emit("…")
        if isinstance(item, dict):
            if not emit("{"):
                return False
            for index, (key, child) in enumerate(item.items()):
                if (index and not emit(",")) or not emit(f"{key!s}:") or not walk(child, depth + 1):
                    return False
            return emit("}")
        if isinstance(item, list):
            if not emit("["):
                return False
            for index, child in enumerate(item):
                if (index and not emit(",")) or not walk(child, depth + 1):
                    return False
            return emit("]")
        if isinstance(item, str):
            return emit(item)
        if item is None:
            return emit("null")
        if isinstance(item, bool):
            return emit("true" if item else "false")
        return emit(str(item))

    walk(value, 0)
    return clip("".join(parts), limit)


def error_text(value: object, depth: int = 0) -> str | None:
    """The human text of an error value: a trimmed string, or the first usable text under
    ``message``/``error``/``detail``/``code`` (recursing into nested objects), else the
    value rendered compactly; ``None`` when blank."""
    if blank(value):
        return None
    if isinstance(value, str):
        return clip(value)
    if isinstance(value, dict) and depth < MAX_DEPTH:
        for key in ERROR_TEXT_KEYS:
            found = error_text(value.get(key), depth + 1)
            if found:
                return found
    return compact_json(value)


def leading_code(text: str) -> tuple[str | None, str | None]:
    """``(code, rest)`` of a text that starts with a farm error code, else ``(None, text)``."""
    match = LEADING_CODE.fullmatch(text)
    if match is None:
        return None, text
    rest = (match.group(2) or "").strip()
    return match.group(1), rest or None


def error_parts(value: object, depth: int = 0) -> tuple[str | None, str | None]:
    """``(code, message)`` of an error value (``{code, message}``, a string, nested ``error``).

    Without an explicit ``code`` (or ``error_code``), a message that starts with one
    (``"UPSTREAM_ERROR: …"``) is read for it.
    """
    code, message = structured_error_parts(value, depth)
    if code is None and message is not None:
        code, message = leading_code(message)
    return code, message


def structured_error_parts(value: object, depth: int = 0) -> tuple[str | None, str | None]:
    """``(code, message)`` of an error value as given: the code only from an explicit
    ``code``/``error_code`` field (never read out of the message text)."""
    if blank(value):
        return None, None
    if not isinstance(value, dict):
        return None, error_text(value)
    code = next((found for key in ERROR_CODE_KEYS if (found := scalar_text(value.get(key)))), None)
    nested = value.get("error")
    if code is None and isinstance(nested, dict) and depth < MAX_DEPTH:
        return structured_error_parts(nested, depth + 1)
    for key in ("message", "error", "detail"):
        message = error_text(value.get(key), depth + 1)
        if message:
            return (clip(code, 100) if code else None), message
    if code is not None:
        return clip(code, 100), None
    return None, compact_json(value)


def farm_code(value: object) -> str | None:
    """A farm error code given as a field (``error_code``), clipped; ``None`` when blank or
    a bare number (an HTTP-ish status, not a farm code)."""
    code = scalar_text(value)
    if code is None or code.isdigit():
        return None
    return clip(code, 100)


def body_error_parts(body: bytes) -> tuple[str | None, str | None]:
    """``(code, message)`` of an HTTP error body: JSON error fields if JSON, else its text."""
    if not body.strip():
        return None, None
    parsed = loads_or_missing(body)
    if parsed is NOT_JSON:
        return error_parts(body.decode("utf-8", errors="replace"))
    return error_parts(parsed)


def body_error_text(body: bytes) -> str | None:
    """The error text of an HTTP body: JSON error fields if JSON, else the text itself."""
    if not body.strip():
        return None
    parsed = loads_or_missing(body)
    if parsed is NOT_JSON:
        return clip(body.decode("utf-8", errors="replace")) or None
    return error_text(parsed)
