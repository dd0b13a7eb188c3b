"""The masking module (§14) on its corpora: recall, false masks and cost per message.

Reads one or more corpora in the split's format (``tests/support/masking_score.py``:
the train part ``tests/data/masking/train.jsonl`` by default; the dev parts
``tests/data/masking/dev.jsonl`` and ``dev2.jsonl`` or the dev3 part
``tests/data/masking_test3/test.jsonl`` when given) and prints, for each:

- recall on the secrets (caught: no 6-character run of a listed secret left in the
  masked text, a shorter secret not left at all) and the false-mask rate on the
  look-alikes (any change), overall, per language and per category;
- the same figures for the rules of a baseline git revision (``--baseline``, default
  ``main``), loaded from git into a private package in the same run.

Then the cost: µs per message of ``mask`` over ordinary chat text (every card, query and
distractor of the meaning suite) and over the corpus, for today's rules and for the
baseline's, printed as a ratio measured in the same run; ``scrub`` and ``mask_error``
over the corpus too.

    python bench/masking.py [--corpus PATH …] [--baseline main] [--rounds 5] [--ids]
"""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from memory_worker.privacy import masking  # noqa: E402
from tests.support.masking_score import load, render, score  # noqa: E402

TRAIN = ROOT / "tests" / "data" / "masking" / "train.jsonl"
MEANING = ROOT / "tests" / "data" / "meaning" / "cases.jsonl"
PACKAGE = "memory_worker/privacy/masking"


def baseline_rules(ref: str, into: Path) -> ModuleType | None:
    """The masking package as it was at ``ref``, importable as ``baseline_masking`` (None
    when git cannot give it)."""
    try:
        names = subprocess.run(
            ["git", "-C", str(ROOT), "ls-tree", "--name-only", f"{ref}:{PACKAGE}"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        return None
    folder = into / "baseline_masking"
    folder.mkdir()
    for name in names:
        blob = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{PACKAGE}/{name}"],
            check=True,
            capture_output=True,
        ).stdout
        text = blob.replace(b"memory_worker.privacy.masking", b"baseline_masking")
        (folder / name).write_bytes(text)
    sys.path.insert(0, str(into))
    return importlib.import_module("baseline_masking")


def ordinary_texts() -> list[str]:
    texts: list[str] = []
    for line in MEANING.read_text(encoding="utf-8").splitlines():
        case = orjson.loads(line)
        texts += [str(case["card"]), str(case["query"]), *map(str, case["distractors"])]
    return texts


def timed(texts: Sequence[str], fn: Callable[[str], object], rounds: int) -> float:
    """Best of ``rounds`` passes over ``texts``, in seconds a text."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for text in texts:
            fn(text)
        best = min(best, time.perf_counter() - start)
    return best / len(texts)


def cost(
    name: str, texts: Sequence[str], fns: dict[str, Callable[[str], object]], rounds: int
) -> None:
    """µs a text for each function, alternating rounds so load hits both alike."""
    best = dict.fromkeys(fns, float("inf"))
    for _ in range(rounds):
        for label, fn in fns.items():
            best[label] = min(best[label], timed(texts, fn, 1))
    parts = [f"{label} {secs * 1e6:7.1f} µs" for label, secs in best.items()]
    ratio = ""
    if "baseline" in best:
        ratio = f"   ×{best['now'] / best['baseline']:.2f} the baseline"
    print(f"{name:<32} {len(texts):>5} texts   " + "   ".join(parts) + ratio)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--corpus", type=Path, action="append", help="a corpus file (repeat)")
    parser.add_argument("--baseline", default="main", help="git revision of the old rules")
    parser.add_argument("--no-baseline", action="store_true")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ids", action="store_true", help="print the ids of misses")
    args = parser.parse_args()
    corpora: list[Path] = args.corpus or [TRAIN]
    with tempfile.TemporaryDirectory() as tmp:
        old = None if args.no_baseline else baseline_rules(args.baseline, Path(tmp))
        for path in corpora:
            rows = load(path)
            result = score(rows, masking.mask)
            print(f"\n== {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
            print(render(result))
            if args.ids:
                print("missed:", " ".join(result.missed))
                print("falsely masked:", " ".join(result.falsely_masked))
            if old is not None:
                before = score(rows, old.mask).total
                print(
                    f"\nbaseline {args.baseline}: recall {before.recall:.3f} "
                    f"({before.caught}/{before.secrets}), false masks {before.false_rate:.1%} "
                    f"({before.false}/{before.lookalikes})"
                )
        print(f"\ncost per message (best of {args.rounds} rounds, alternating)")
        corpus_texts = [row.text for path in corpora for row in load(path)]
        for name, texts in (
            ("mask, ordinary chat text", ordinary_texts()),
            ("mask, corpus", corpus_texts),
        ):
            fns: dict[str, Callable[[str], object]] = {"now": masking.mask}
            if old is not None:
                fns["baseline"] = old.mask
            cost(name, texts, fns, args.rounds)
        scrubs: dict[str, Callable[[str], object]] = {"now": masking.scrub}
        if old is not None:
            scrubs["baseline"] = old.scrub
        cost("scrub (logs, Sentry), corpus", corpus_texts, scrubs, args.rounds)


if __name__ == "__main__":
    main()
