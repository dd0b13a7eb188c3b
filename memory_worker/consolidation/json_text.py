"""Scanning JSON text that may be cut off or malformed (no parse needed).

The extraction's salvage of a truncated answer and the farm simulator's
``truncated_json`` fault both walk a JSON text bracket by bracket; this is
the one walk that skips what stands inside strings (escapes included).
"""

from __future__ import annotations

from collections.abc import Iterator


def outside_strings(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """Each character of ``text`` from ``start`` on that is not part of a JSON string, with its index.

    The quotes themselves are left out too, so a caller sees only brackets,
    commas, colons, literals and white space.
    """
    in_string = escaped = False
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        else:
            yield index, char
