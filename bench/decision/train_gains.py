"""Train the gain decision on hand-annotated gold and the models' saved drafts.

    python -m bench.decision.train_gains [--write] [--ablation] [--without SET ...]

Every grounded gain of every tune paper (each saved drafts file of the tune sets: 1.5B
and 0.5B, titled and untitled; the famous sets' tune halves; the bundled corpus) gets the
features of rules/gain_decision.py and is labelled by whether its value matches a gold
gain, one to one, as `papersift eval` scores gains. A logistic regression (train.py's
fit, with the signs gain_decision.FOR fixes) is fitted; its strength is chosen by
leave-one-set-out cross-validation (all drafts of one gold set form one group, so a
paper is never scored by a model that saw it). Keep at the best out-of-fold F1 of the gains field
(see best_threshold), with precision at least --min-precision; flag down to where the
band is still right --flag-precision of the time (train.flag_band).
Training never reads the held-out sets; --ablation scores them (pooled gains P/R/F1 of
the random held-out sets with each feature group left out, scores only). --write stores
gain_decision.json.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import numpy as np

from bench.decision.regrade import assembled, read_drafts, regrade
from bench.decision.sets import HELDOUT
from bench.decision.train import (
    Example,
    _fit,
    field_figures,
    flag_band,
    out_of_fold,
    write_weights,
)
from papersift.extract.domain.evaluation.evaluate import match_one_to_one
from papersift.extract.domain.evaluation.evaluate_gold import load_gold, value_agrees
from papersift.extract.domain.rules.gain_decision import (
    AGAINST,
    FEATURE_GROUPS,
    FEATURES,
    FOR,
    WEIGHTS_FILE,
)
from papersift.extract.domain.rules.method_decision import Weights

GOLD = Path(__file__).resolve().parents[1] / "gold"
# the tune sets, by folder; each folder's saved drafts files (every model, with and
# without the title) are all read, the held-out splits' drafts never
TUNE_SETS = ("random1", "random3", "random5", "random6", "random7", "random9", "random10",
             "random12", "random14", "random15", "random17", "random18", "random19", "random20",
             "dev", "dev2", "dev3")
BUNDLED = (GOLD / "neurips-2026.drafts.qwen2.5-coder-1.5b.jsonl",
           GOLD / "neurips-2026.gold.json")
# every grounded gain kept, so that each one is scored
KEEP_ALL = Weights(bias=50.0, weights={}, keep_at=0.0, flag_at=0.0, version="keep-all")
SIGNS = (FOR, AGAINST)


def drafts_files(folder: Path) -> list[Path]:
    """A tune set's drafts files (not the held-out halves' own drafts)."""
    return [path for path in sorted(folder.glob("drafts.*.jsonl"))
            if "heldout" not in path.name]


def examples(drafts: Path, gold_path: Path, group: str) -> tuple[list[Example], int]:
    """Labelled grounded gains of one drafts file, and how many gold gains its papers
    hold (with a value)."""
    gold = {p.paper_id: p for p in load_gold(gold_path).papers}
    found: list[Example] = []
    gold_total = 0
    for paper in read_drafts(drafts):
        wanted = gold.get(paper["paper_id"])
        if wanted is None:
            continue
        numeric = [g for g in wanted.gains if g.value is not None]
        gold_total += len(numeric)
        result = assembled(paper, gain_weights=KEEP_ALL)
        decisions = result.gain_decisions
        pairs = match_one_to_one([d.value for d in decisions], numeric, value_agrees)
        right = {i for i, _ in pairs}
        found += [Example(group, paper["paper_id"], d.features, i in right)
                  for i, d in enumerate(decisions)]
    return found, gold_total


def all_examples(without: tuple[str, ...] = ()) -> tuple[list[Example], int]:
    found: list[Example] = []
    gold_total = 0
    for name in TUNE_SETS:
        if name in without:
            continue
        folder = GOLD / name
        for drafts in drafts_files(folder):
            more, total = examples(drafts, folder / "tune.gold.json", name)
            found += more
            gold_total += total
    if "bundled" not in without:
        more, total = examples(*BUNDLED, "bundled")
        found += more
        gold_total += total
    return found, gold_total


def best_threshold(found: list[Example], scores: np.ndarray, gold_total: int,
                   min_precision: float) -> float:
    """The lowest threshold with the best out-of-fold F1 of the gains field whose precision
    reaches min_precision. Not half the best F1, as the method decision takes: nine in ten
    grounded gains are right, so every out-of-fold score lies above that (0.45) and such
    a threshold refuses nothing."""
    grid = [i / 100 for i in range(5, 96)]
    figures = [(field_figures(found, scores, t, gold_total), t) for t in grid]
    best = max(f1 for (precision, _, f1), _ in figures if precision >= min_precision)
    return min(t for (precision, _, f1), t in figures
               if f1 >= best - 1e-9 and precision >= min_precision)


def train(names: tuple[str, ...], found: list[Example], gold_total: int,
          min_precision: float, flag_precision: float) -> tuple[Weights, dict[str, Any]]:
    labels = np.array([e.right for e in found], dtype=float)
    best: tuple[float, float, np.ndarray] | None = None
    for strength in (0.1, 0.3, 1.0, 3.0, 10.0):
        scores = out_of_fold(found, names, strength, 0.0, SIGNS)
        loss = float(-np.mean(labels * np.log(scores + 1e-9)
                              + (1 - labels) * np.log(1 - scores + 1e-9)))
        if best is None or loss < best[0]:
            best = (loss, strength, scores)
    assert best is not None
    loss, strength, scores = best
    keep_at = best_threshold(found, scores, gold_total, min_precision)
    flag_at = flag_band(found, scores, keep_at, flag_precision)
    model = _fit(found, names, strength, 0.0, SIGNS)
    precision, recall, f1 = field_figures(found, scores, keep_at, gold_total)
    kept_all = field_figures(found, np.ones(len(found)), 0.5, gold_total)
    report = {"strength": strength, "cv_log_loss": round(loss, 4),
              "cv_precision": round(precision, 3), "cv_recall": round(recall, 3),
              "cv_f1": round(f1, 3),
              "keep_all_precision": round(kept_all[0], 3),
              "keep_all_recall": round(kept_all[1], 3), "keep_all_f1": round(kept_all[2], 3),
              "candidates": len(found), "right": int(labels.sum()), "gold_gains": gold_total,
              "groups": sorted({e.group for e in found})}
    weights = {n: round(float(w), 4) for n, w in zip(names, model.weights, strict=True)
               if abs(w) > 1e-6}
    return Weights(bias=round(model.bias, 4), weights=weights, keep_at=keep_at,
                   flag_at=flag_at, version="trained"), report


# the random held-out sets (1.5B), pooled, for the ablation: scores only
HELDOUT_POOL = ("random8, 1.5B", "random4, 1.5B", "random2, 1.5B", "random1 held-out, 1.5B")


def heldout_gains(weights: Weights) -> str:
    """Pooled P/R/F1 of gains on HELDOUT_POOL with these gain weights."""
    sets = {label: (drafts, gold) for label, drafts, gold in HELDOUT}
    tp = fp = fn = 0
    for label in HELDOUT_POOL:
        drafts, gold = sets[label]
        counts = regrade(GOLD / drafts, GOLD / gold, gain_weights=weights)["gains_value"]
        tp, fp, fn = tp + counts["tp"], fp + counts["fp"], fn + counts["fn"]
    precision, recall = tp / max(1, tp + fp), tp / max(1, tp + fn)
    f1 = 2 * precision * recall / max(1e-9, precision + recall)
    return f"{precision:.3f}/{recall:.3f}/{f1:.3f} ({tp},{fp},{fn})"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--min-precision", type=float, default=0.80)
    parser.add_argument("--flag-precision", type=float, default=0.35)
    parser.add_argument("--write", action="store_true", help="store the weights")
    parser.add_argument("--ablation", action="store_true",
                        help="the cross-validated figures without each feature group")
    parser.add_argument("--without", nargs="*", default=[], metavar="SET",
                        help="tune sets to leave out (to check the decision on them)")
    args = parser.parse_args()
    found, gold_total = all_examples(tuple(args.without))
    weights, report = train(FEATURES, found, gold_total, args.min_precision,
                            args.flag_precision)
    print(json.dumps(report, indent=1))
    print(f"keep at {weights.keep_at}, flag at {weights.flag_at}")
    for name, value in sorted(weights.weights.items(), key=lambda item: item[1]):
        print(f"  {name:16} {value:+.3f}")
    if args.ablation:
        print("held-out gains P/R/F1 (" + ", ".join(HELDOUT_POOL) + "):")
        print(f"  keep every grounded gain: {heldout_gains(KEEP_ALL)}")
        print(f"  all features:             {heldout_gains(weights)}")
        for group, members in FEATURE_GROUPS.items():
            kept = tuple(n for n in FEATURES if n not in members)
            less, figures = train(kept, found, gold_total, args.min_precision,
                                  args.flag_precision)
            print(f"  without {group:11}       {heldout_gains(less)}   (cv F1 "
                  f"{figures['cv_f1']}, log loss {figures['cv_log_loss']})")
    if args.write:
        write_weights(WEIGHTS_FILE, weights, {
            "by": "bench/decision/train_gains.py", **report, "without": args.without,
            "min_precision": args.min_precision, "flag_precision": args.flag_precision})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
