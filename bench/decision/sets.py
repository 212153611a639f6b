"""Today's grounding on the saved drafts of every gold set, one line per set and model.

    python -m bench.decision.sets            # the tune sets (rules may be read off these)
    python -m bench.decision.sets --heldout  # the held-out sets (scores only)
    python -m bench.decision.sets --untitled # the drafts made without the title
    python -m bench.decision.sets --json
    python -m bench.decision.sets --pooled   # the held-out sets pooled (the issue's targets)

Each line is what `bench.decision.regrade` prints for one drafts file and one gold file:
P / R / F1 of methods, benchmarks and gains (by value), with the true positive, false
positive and false negative counts, and the accuracy of the benchmarks' `introduced` flag.
The drafts are the real local models' answers, saved once (see their headers), so a change
to grounding is measured on all sets in a few seconds without running a model. The random
sets' drafts carry the title in the request (as papersift sends it since stop 27); their
``*.untitled.jsonl`` twins hold the answers without it (``--untitled`` scores those);
the famous sets' main drafts were made without it (their held-out halves also have
titled drafts).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from bench.decision.regrade import regrade

GOLD = Path(__file__).resolve().parents[1] / "gold"
_1_5B = "drafts.qwen2.5-coder-1.5b.jsonl"
_0_5B = "drafts.qwen2.5-coder-0.5b.jsonl"
# The famous sets' held-out halves asked again with the title in the request (stop 27);
# their main drafts, which training reads, stay the untitled ones of both halves.
_TITLED = "drafts.qwen2.5-coder-1.5b.titled-heldout.jsonl"
FAMOUS = ("dev", "dev2", "dev3")

TUNE: tuple[tuple[str, str, str], ...] = (
    ("random1 tune, 1.5B", f"random1/{_1_5B}", "random1/tune.gold.json"),
    ("random3 tune, 1.5B", f"random3/{_1_5B}", "random3/tune.gold.json"),
    ("random3 tune, 0.5B", f"random3/{_0_5B}", "random3/tune.gold.json"),
    ("random5 tune, 1.5B", f"random5/{_1_5B}", "random5/tune.gold.json"),
    ("random6 tune, 1.5B", f"random6/{_1_5B}", "random6/tune.gold.json"),
    ("random7 tune, 1.5B", f"random7/{_1_5B}", "random7/tune.gold.json"),
    ("random9 tune, 1.5B", f"random9/{_1_5B}", "random9/tune.gold.json"),
    ("random10 tune, 1.5B", f"random10/{_1_5B}", "random10/tune.gold.json"),
    ("random12 tune, 1.5B", f"random12/{_1_5B}", "random12/tune.gold.json"),
    ("random14 tune, 1.5B", f"random14/{_1_5B}", "random14/tune.gold.json"),
    ("random15 tune, 1.5B", f"random15/{_1_5B}", "random15/tune.gold.json"),
    ("random17 tune, 1.5B", f"random17/{_1_5B}", "random17/tune.gold.json"),
    ("random18 tune, 1.5B", f"random18/{_1_5B}", "random18/tune.gold.json"),
    ("random19 tune, 1.5B", f"random19/{_1_5B}", "random19/tune.gold.json"),
    ("random20 tune, 1.5B", f"random20/{_1_5B}", "random20/tune.gold.json"),
    *((f"{name} tune, 1.5B", f"{name}/{_1_5B}", f"{name}/tune.gold.json") for name in FAMOUS),
    ("bundled corpus, 1.5B", "neurips-2026.drafts.qwen2.5-coder-1.5b.jsonl",
     "neurips-2026.gold.json"),
)
HELDOUT: tuple[tuple[str, str, str], ...] = (
    ("random16, 1.5B", f"random16/{_1_5B}", "random16/heldout.gold.json"),
    ("random16, 0.5B", f"random16/{_0_5B}", "random16/heldout.gold.json"),
    ("random13, 1.5B", f"random13/{_1_5B}", "random13/heldout.gold.json"),
    ("random13, 0.5B", f"random13/{_0_5B}", "random13/heldout.gold.json"),
    ("random11, 1.5B", f"random11/{_1_5B}", "random11/heldout.gold.json"),
    ("random11, 0.5B", f"random11/{_0_5B}", "random11/heldout.gold.json"),
    ("random4, 1.5B", f"random4/{_1_5B}", "random4/heldout.gold.json"),
    ("random4, 0.5B", f"random4/{_0_5B}", "random4/heldout.gold.json"),
    ("random8, 1.5B", f"random8/{_1_5B}", "random8/heldout.gold.json"),
    ("random8, 0.5B", f"random8/{_0_5B}", "random8/heldout.gold.json"),
    ("random2, 1.5B", f"random2/{_1_5B}", "random2/heldout.gold.json"),
    ("random2, 0.5B", f"random2/{_0_5B}", "random2/heldout.gold.json"),
    ("random1 held-out, 1.5B", f"random1/{_1_5B}", "random1/heldout.gold.json"),
    ("random1 held-out, 0.5B", "random1/drafts.qwen2.5-coder-0.5b.heldout.jsonl",
     "random1/heldout.gold.json"),
    *((f"{name} held-out, 1.5B{suffix}", f"{name}/{drafts}", f"{name}/heldout.gold.json")
      for suffix, drafts in (("", _1_5B), (", titled", _TITLED)) for name in FAMOUS),
)
FIELDS = (("methods", "methods"), ("benchmarks", "benchmarks"), ("gains", "gains_value"))


def scores(sets: tuple[tuple[str, str, str], ...], untitled: bool = False
           ) -> dict[str, dict[str, Any]]:
    """Every set's regraded figures, by label (``untitled``: the drafts made without the
    title in the request, where a set has them)."""
    results = {}
    for label, drafts, gold in sets:
        path = GOLD / drafts
        twin = path.with_name(path.name.replace(".jsonl", ".untitled.jsonl"))
        use_twin = untitled and twin.exists()
        results[f"{label}, untitled" if use_twin else label] = regrade(
            twin if use_twin else path, GOLD / gold)
    return results


def line(label: str, metrics: dict[str, Any]) -> str:
    parts = [f"{label:24}"]
    for name, key in FIELDS:
        m = metrics[key]
        parts.append(f"{name} {m['precision']:.3f}/{m['recall']:.3f}/{m['f1']:.3f} "
                     f"({m['tp']},{m['fp']},{m['fn']})")
    parts.append(f"introduced {metrics['benchmark_introduced_accuracy']}")
    return "  ".join(parts)


# Sets pooled into one line each (``--pooled``): the targets are on pooled figures.
# drawn blind, errors never read
_CLEAN = ("random16", "random13", "random11", "random8", "random4")
_RANDOM = (*_CLEAN, "random2", "random1 held-out")
_FAMOUS_TITLED = tuple(f"{name} held-out, 1.5B, titled" for name in FAMOUS)


def _sets(names: tuple[str, ...], model: str) -> tuple[str, ...]:
    return tuple(f"{name}, {model}" for name in names)


POOLS: dict[str, tuple[str, ...]] = {
    f"random held-out ({', '.join(_RANDOM)}), 1.5B": _sets(_RANDOM, "1.5B"),
    f"random held-out ({', '.join(_RANDOM)}), 0.5B": _sets(_RANDOM, "0.5B"),
    f"clean random held-out, never read ({', '.join(_CLEAN)}), 1.5B": _sets(_CLEAN, "1.5B"),
    f"clean random held-out, never read ({', '.join(_CLEAN)}), 0.5B": _sets(_CLEAN, "0.5B"),
    "famous held-out halves, titled (dev, dev2, dev3), 1.5B": _FAMOUS_TITLED,
    "all held-out, 1.5B (the random held-out sets and the famous titled halves)": (
        *_sets(_RANDOM, "1.5B"), *_FAMOUS_TITLED),
    # the pools as they stood before random16 was drawn (stop 37's figures)
    "clean random held-out as of stop 37 (random13, random11, random8, random4), 1.5B": _sets(
        _CLEAN[1:], "1.5B"),
    "random held-out as of stop 37 (without random16), 1.5B": _sets(_RANDOM[1:], "1.5B"),
    "random16 alone (fresh, never read), 1.5B": ("random16, 1.5B",),
    "random16 alone (fresh, never read), 0.5B": ("random16, 0.5B",),
}


def pooled(results: dict[str, dict[str, Any]], labels: tuple[str, ...]) -> dict[str, Any]:
    """Precision, recall and F1 of the summed counts of several sets."""
    figures: dict[str, Any] = {}
    for _, key in FIELDS:
        tp, fp, fn = (sum(results[label][key][part] for label in labels)
                      for part in ("tp", "fp", "fn"))
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        figures[key] = {"precision": round(precision, 3), "recall": round(recall, 3),
                        "f1": round(f1, 3), "tp": tp, "fp": fp, "fn": fn}
    return figures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", action="store_true", help="the held-out sets")
    parser.add_argument("--untitled", action="store_true",
                        help="the drafts made without the title in the request")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--pooled", action="store_true",
                        help="the held-out sets pooled, one line per pool")
    args = parser.parse_args()
    results = scores(HELDOUT if args.heldout or args.pooled else TUNE, args.untitled)
    if args.pooled:
        for label, labels in POOLS.items():
            figures = pooled(results, labels)
            print(label)
            print("   " + "  ".join(
                f"{name} {figures[key]['precision']:.3f}/{figures[key]['recall']:.3f}/"
                f"{figures[key]['f1']:.3f} ({figures[key]['tp']},{figures[key]['fp']},"
                f"{figures[key]['fn']})" for name, key in FIELDS))
        return 0
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        for label, metrics in results.items():
            print(line(label, metrics))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
