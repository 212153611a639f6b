"""What conference-wide evidence does to the `introduced` flag, on the random gold sets.

    python -m bench.introductions [--heldout] [--conferences DIR]

For each random gold set, the saved 1.5B drafts are grounded as papersift grounds them;
every benchmark marked introduced is then looked up in the other abstracts of the
paper's own conference file (``../shared/conferences``, the collection it was drawn
from), and judged as `papersift run` judges it (extract/domain/rules/used_elsewhere.py).
Prints, per set, the `introduced` accuracy on benchmarks matched to gold before and after,
and each flag the evidence changed, right or wrong. The tune sets are random1's tune half,
random3, random5, random6, random7, random9 and random10; ``--heldout`` scores random1's
held-out half, random2, random4 and random8.
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from bench.decision.regrade import assembled, read_drafts
from papersift.extract.domain.evaluation.evaluate_gold import load_gold
from papersift.extract.domain.lookup.assemble_spans import name_key
from papersift.extract.domain.rules.used_elsewhere import MentionIndex, judge

REPO = Path(__file__).resolve().parents[1]
GOLD = REPO / "bench" / "gold"
DRAFTS = "drafts.qwen2.5-coder-1.5b.jsonl"
TUNE = (("random1 tune", "random1", "tune"), ("random3 tune", "random3", "tune"),
        ("random5 tune", "random5", "tune"), ("random6 tune", "random6", "tune"),
        ("random7 tune", "random7", "tune"), ("random9 tune", "random9", "tune"),
        ("random10 tune", "random10", "tune"))
HELDOUT = (("random1 held-out", "random1", "heldout"), ("random2", "random2", "heldout"),
           ("random4", "random4", "heldout"), ("random8", "random8", "heldout"))


def _source_files(folder: Path) -> dict[str, str]:
    """The conference file each abstract of a gold folder was drawn from, by its text."""
    found = {}
    for line in (folder / "abstracts.jsonl").read_text(encoding="utf-8").splitlines():
        if line.strip():
            row = json.loads(line)
            found[row["abstract"]] = row["source_file"]
    return found


def _indexes(conferences: Path, files: set[str]) -> dict[str, MentionIndex]:
    indexes = {}
    for name in sorted(files):
        texts = {}
        for number, line in enumerate((conferences / name).read_text(
                encoding="utf-8").splitlines(), start=1):
            if line.strip():
                texts[f"{name}:{number}"] = json.loads(line)["abstract"]
        indexes[name] = MentionIndex(texts)
    return indexes


def score(label: str, folder: str, split: str, conferences: Path) -> dict[str, object]:
    gold = {p.paper_id: p for p in load_gold(GOLD / folder / f"{split}.gold.json").papers}
    sources = _source_files(GOLD / folder)
    drafts = [p for p in read_drafts(GOLD / folder / DRAFTS) if p["paper_id"] in gold]
    indexes = _indexes(conferences, {sources[p["text"]] for p in drafts})
    counts: dict[str, int] = defaultdict(int)
    changes = []
    for paper in drafts:
        truth = {name_key(form): item.introduced for item in gold[paper["paper_id"]].benchmarks
                 for form in item.forms}
        index = indexes[sources[paper["text"]]]
        for bench in assembled(paper).extraction.benchmarks:
            if name_key(bench.name) not in truth:
                continue
            flag = bench.introduced
            after = flag
            if flag:
                users = index.mentions(bench.name, exclude=())
                users = tuple(u for u in users
                              if index_text_differs(index, u, paper["text"]))
                verdict = judge(bench.name, bench.evidence, users)
                after = verdict.keep
                if not verdict.keep or users:
                    changes.append((paper["paper_id"][7:19], bench.name, flag, after,
                                    truth[name_key(bench.name)], len(users)))
            counts["matched"] += 1
            counts["right before"] += flag == truth[name_key(bench.name)]
            counts["right after"] += after == truth[name_key(bench.name)]
    return {"set": label, **counts, "changes": changes}


def index_text_differs(index: MentionIndex, paper: str, text: str) -> bool:
    """The collection's copy of the paper itself is not evidence about it."""
    return index.text(paper) != text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--heldout", action="store_true")
    parser.add_argument("--conferences", type=Path, default=REPO.parent / "shared" / "conferences")
    args = parser.parse_args()
    for label, folder, split in (HELDOUT if args.heldout else TUNE):
        result = score(label, folder, split, args.conferences)
        matched = int(result.get("matched", 0))  # type: ignore[call-overload]
        print(f"{label:18} introduced right: {result.get('right before', 0)} -> "
              f"{result.get('right after', 0)} of {matched} matched benchmarks")
        for change in [] if args.heldout else result["changes"]:  # type: ignore[attr-defined]
            pid, name, before, after, truth, users = change
            mark = "" if before == after else ("  fixed" if after == truth else "  BROKE")
            print(f"   {pid} {name!r}: {before} -> {after} (gold {truth}; named by {users} "
                  f"other abstracts){mark}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
