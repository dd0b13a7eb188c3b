"""The one ``rows()`` of the generated batches (``families.py``, ``families2.py``,
``families3.py``): their secret and look-alike lines as rows of the split's format
(``README.md``), numbered by ``next_id(lang, secret)`` after the earlier batches' rows."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence

#: A secret line: (category, lang, text, its secret values in order).
Secret = tuple[str, str, str, Sequence[str]]
#: A look-alike line: (category, lang, text).
Look = tuple[str, str, str]


def batch_rows(
    batch: str,
    next_id: Callable[[str, bool], str],
    secrets: Iterable[Secret],
    looks: Iterable[Look],
) -> Iterator[dict[str, object]]:
    """Every row of ``batch``: its secret lines, then its look-alikes."""
    for category, lang, text, values in secrets:
        yield {
            "id": next_id(lang, True),
            "lang": lang,
            "kind": "secret",
            "category": category,
            "text": text,
            "secrets": list(values),
            "batch": batch,
        }
    for category, lang, text in looks:
        yield {
            "id": next_id(lang, False),
            "lang": lang,
            "kind": "lookalike",
            "category": category,
            "text": text,
            "secrets": [],
            "batch": batch,
        }
