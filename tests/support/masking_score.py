"""Scoring a masking corpus (§14): recall on its secrets and the false-mask rate on its
look-alikes, overall and per language and category.

A corpus is JSON lines, each ``{"id", "lang", "kind", "category", "text", "secrets"}``:
``kind`` is ``secret`` or ``lookalike``; ``secrets`` lists the exact substrings of ``text``
that are secret (empty for a look-alike). The train part (``tests/data/masking/train.jsonl``),
the dev parts (``tests/data/masking/dev.jsonl``, ``dev2.jsonl`` and the dev3 part
``tests/data/masking_test3/test.jsonl``) share the format.

Both sides are compared normalised (:func:`norm`: NFKC, zero-width characters and soft
hyphens removed), as the parts' READMEs say, so a masker is neither helped nor penalised
by how a value was typed.

- A secret line is **caught** when no run of :data:`RUN` characters of any listed secret
  survives in the masked text; a secret shorter than that is caught when it no longer
  appears at all.
- A look-alike is **falsely masked** when the masked text differs from the original.

``bench/masking.py --corpus PATH`` prints the tables; ``tests/privacy/test_masking_split.py``
holds the bars.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import orjson

#: A secret counts as leaked when this many of its characters in a row survive.
RUN = 6

_DATA = Path(__file__).parent.parent / "data"
#: The corpus parts the rules may be read against, in the order they became readable: the
#: train part, the first two dev parts, then each held-out set once it was scored (test3 as
#: dev3, …, test9 as dev9). A held-out set that has not been scored is never listed here.
READ_PARTS: tuple[Path, ...] = (
    _DATA / "masking" / "train.jsonl",
    _DATA / "masking" / "dev.jsonl",
    _DATA / "masking" / "dev2.jsonl",
    *(_DATA / f"masking_test{n}" / "test.jsonl" for n in range(3, 10)),
)
_ZERO_WIDTH = re.compile("[\u200b-\u200f\u2060\ufeff\u00ad]")


def norm(text: str) -> str:
    """``text`` as the scoring compares it: NFKC, zero-width characters and soft hyphens gone."""
    return _ZERO_WIDTH.sub("", unicodedata.normalize("NFKC", text))


KINDS = ("secret", "lookalike")


class CorpusError(ValueError):
    """A corpus line is not in the format (names the line and the field, never its text)."""


@dataclass(frozen=True, slots=True)
class Row:
    id: str
    lang: str
    kind: str
    category: str
    text: str
    secrets: tuple[str, ...]


def _row(number: int, line: str) -> Row:
    try:
        raw = orjson.loads(line)
    except orjson.JSONDecodeError as exc:
        raise CorpusError(f"line {number}: not JSON") from exc
    if not isinstance(raw, dict):
        raise CorpusError(f"line {number}: not an object")
    for name in ("id", "lang", "kind", "category", "text"):
        if not isinstance(raw.get(name), str) or not raw[name]:
            raise CorpusError(f"line {number}: {name!r} is not a non-empty string")
    secrets = raw.get("secrets", [])
    if not isinstance(secrets, list) or not all(isinstance(s, str) and s for s in secrets):
        raise CorpusError(f"line {number}: 'secrets' is not a list of non-empty strings")
    if raw["kind"] not in KINDS:
        raise CorpusError(f"line {number}: 'kind' is not one of {KINDS}")
    if (raw["kind"] == "secret") != bool(secrets):
        raise CorpusError(f"line {number}: a secret lists secrets, a look-alike none")
    if any(s not in raw["text"] for s in secrets):
        raise CorpusError(f"line {number}: a listed secret is not in the text")
    return Row(raw["id"], raw["lang"], raw["kind"], raw["category"], raw["text"], tuple(secrets))


def load(path: Path) -> list[Row]:
    """The rows of a corpus file (:class:`CorpusError` on the first malformed line)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [_row(i, line) for i, line in enumerate(lines, 1) if line.strip()]


def leaked(secret: str, masked: str) -> bool:
    """Whether ``secret`` survives masking (a run of :data:`RUN` of its characters, or all
    of a shorter one)."""
    secret, masked = norm(secret), norm(masked)
    if len(secret) < RUN:
        return secret in masked
    return any(secret[i : i + RUN] in masked for i in range(len(secret) - RUN + 1))


def caught(row: Row, masked: str) -> bool:
    return not any(leaked(secret, masked) for secret in row.secrets)


@dataclass(slots=True)
class Tally:
    secrets: int = 0
    caught: int = 0
    lookalikes: int = 0
    false: int = 0

    @property
    def recall(self) -> float:
        return self.caught / self.secrets if self.secrets else 1.0

    @property
    def false_rate(self) -> float:
        return self.false / self.lookalikes if self.lookalikes else 0.0


@dataclass(slots=True)
class Score:
    total: Tally = field(default_factory=Tally)
    by_lang: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    by_category: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    missed: list[str] = field(default_factory=list)
    falsely_masked: list[str] = field(default_factory=list)


def score(rows: Iterable[Row], masker: Callable[[str], str]) -> Score:
    """Every row masked with ``masker`` and counted (ids of misses and false masks kept)."""
    out = Score()
    for row in rows:
        masked = masker(row.text)
        tallies = (out.total, out.by_lang[row.lang], out.by_category[row.category])
        if row.kind == "secret":
            hit = caught(row, masked)
            for tally in tallies:
                tally.secrets += 1
                tally.caught += hit
            if not hit:
                out.missed.append(row.id)
        else:
            false = norm(masked) != norm(row.text)
            for tally in tallies:
                tally.lookalikes += 1
                tally.false += false
            if false:
                out.falsely_masked.append(row.id)
    return out


def _line(name: str, tally: Tally) -> str:
    recall = f"{tally.recall:.3f}" if tally.secrets else "-"
    rate = f"{tally.false_rate:.1%}" if tally.lookalikes else "-"
    return (
        f"{name:<26} {tally.secrets:>7} {tally.caught:>6} {recall:>7} "
        f"{tally.lookalikes:>10} {tally.false:>6} {rate:>7}"
    )


def render(result: Score, *, sections: Sequence[str] = ("language", "category")) -> str:
    """The tables: overall, then per language and per category (counts, never texts)."""
    head = f"{'':<26} {'secrets':>7} {'caught':>6} {'recall':>7} {'lookalikes':>10} {'false':>6} {'rate':>7}"
    out = [head, _line("all", result.total)]
    tables = {"language": result.by_lang, "category": result.by_category}
    for section in sections:
        out += ["", f"per {section}", head]
        out += [_line(name, tally) for name, tally in sorted(tables[section].items())]
    return "\n".join(out)
