"""The masking module (§14) on its corpus: recall, false masks and throughput.

Reads ``tests/data/secrets/corpus.jsonl`` (realistic secrets and look-alike
non-secrets in EN, RU, DE, ES, FR, UK, PT, IT, PL, ZH) and prints:

- recall on the secrets (a secret counts as caught when none of its values is
  left in the masked text) and the false-mask rate on the look-alikes (any
  change to the text), overall, per language, per kind, and per corpus batch
  (``tuned``: the rules were written against it; ``held_out`` and ``third``:
  written later, each measured once before the rules were fixed for it — the
  first-run figures are in the README);
- throughput of ``mask`` over the corpus and over ordinary chat text (every
  card, query and distractor of the meaning suite), as a ratio against two
  baselines measured in the same run: a ``str.casefold()`` pass over the same
  texts (the floor of touching every character once) and one ``re.sub`` of a
  single token shape (the cheapest masking there is); ``scrub`` (logs, Sentry)
  and ``mask_error`` (the run error log) over the corpus, against the same.

    python bench/masking.py [--rounds 5] [--misses]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_worker.privacy.masking import mask, mask_error, scrub  # noqa: E402

CORPUS = ROOT / "tests" / "data" / "secrets" / "corpus.jsonl"
MEANING = ROOT / "tests" / "data" / "meaning" / "cases.jsonl"
ONE_SHAPE = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")


def load(path: Path) -> list[dict[str, object]]:
    return [orjson.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def ordinary_texts() -> list[str]:
    texts: list[str] = []
    for case in load(MEANING):
        texts += [str(case["card"]), str(case["query"]), *map(str, case["distractors"])]  # type: ignore[call-overload]
    return texts


def caught(row: dict[str, object]) -> bool:
    masked = mask(str(row["text"]))
    return not any(str(v) in masked for v in row["values"])  # type: ignore[attr-defined]


def table(
    title: str, rows: Sequence[dict[str, object]], key: Callable[[dict[str, object]], str]
) -> None:
    groups: dict[str, list[dict[str, object]]] = defaultdict(list)
    for row in rows:
        groups[key(row)].append(row)
    print(f"\n{title:<22} {'secrets':>8} {'recall':>8} {'look-alikes':>12} {'false':>7}")
    for name in sorted(groups):
        members = groups[name]
        secrets = [r for r in members if r["secret"]]
        others = [r for r in members if not r["secret"]]
        hit = sum(caught(r) for r in secrets)
        false = sum(mask(str(r["text"])) != r["text"] for r in others)
        recall = f"{hit / len(secrets):.3f}" if secrets else "-"
        rate = f"{false / len(others):.1%}" if others else "-"
        print(f"{name:<22} {len(secrets):>8} {recall:>8} {len(others):>12} {rate:>7}")


def timed(texts: Sequence[str], fn: Callable[[str], object], rounds: int) -> float:
    """Best of ``rounds`` passes over ``texts``, in seconds."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        best = min(best, time.perf_counter() - start)
    return best


def throughput(name: str, texts: Sequence[str], fn: Callable[[str], object], rounds: int) -> None:
    floor = timed(texts, str.casefold, rounds)
    one = timed(texts, lambda t: ONE_SHAPE.sub("[redacted]", t), rounds)
    took = timed(texts, fn, rounds)
    chars = sum(map(len, texts))
    print(
        f"{name:<30} {len(texts):>5} texts {took / len(texts) * 1e6:>8.1f} µs/text "
        f"{chars / took / 1e6:>6.2f} MB/s   ×{took / floor:>6.0f} casefold   ×{took / one:>5.1f} one re.sub"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--misses", action="store_true", help="list every miss and false mask")
    args = parser.parse_args()
    rows = load(CORPUS)
    secrets = [r for r in rows if r["secret"]]
    others = [r for r in rows if not r["secret"]]
    hits = sum(caught(r) for r in secrets)
    false = [r for r in others if mask(str(r["text"])) != r["text"]]
    print(f"corpus: {len(secrets)} secrets, {len(others)} look-alikes")
    print(
        f"recall {hits / len(secrets):.4f} (bar ≥ 0.99)   false masks {len(false) / len(others):.2%} (bar ≤ 2 %)"
    )
    table("language", rows, lambda r: str(r["lang"]))
    table("kind", rows, lambda r: str(r["kind"]))
    table("batch", rows, lambda r: str(r.get("batch", "tuned")))
    if args.misses:
        for row in secrets:
            if not caught(row):
                print("MISS ", row["id"], repr(row["text"]))
        for row in false:
            print("FALSE", row["id"], repr(row["text"]), "->", repr(mask(str(row["text"]))))
    print("\nthroughput (best of", args.rounds, "rounds; ratios against baselines of the same run)")
    corpus = [str(r["text"]) for r in rows]
    throughput("mask, ordinary chat text", ordinary_texts(), mask, args.rounds)
    throughput("mask, corpus", corpus, mask, args.rounds)
    throughput("scrub (logs, Sentry), corpus", corpus, scrub, args.rounds)
    throughput("mask_error, corpus", corpus, lambda t: mask_error(t, limit=500), args.rounds)


if __name__ == "__main__":
    main()
