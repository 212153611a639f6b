"""Split the random1 gold into tune and held-out halves by a seeded shuffle.

Usage (from the repository root):

    PYTHONPATH=$PWD .venv/bin/python bench/gold/random1/split.py GOLD_FILE [GOLD_FILE ...]

Pools the papers of the given gold files (all of which must annotate
``bench/gold/random1/abstracts.jsonl``), maps each to its record id (``random1-NNN``, the
JSONL row = ``paragraph``), shuffles the sorted ids with ``random.Random(SPLIT_SEED)`` from
``draw.py`` and cuts them in half: the first half is ``tune``, the second ``heldout``. Writes
``tune.gold.json`` and ``heldout.gold.json`` beside this script, papers in id order. Running
it on its own output (``split.py tune.gold.json heldout.gold.json``) reproduces the same files.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from draw import HERE, REPO, split_ids

CORPUS = "bench/gold/random1/abstracts.jsonl"
HEADER = {
    "format": "papersift-gold/1",
    "corpus": CORPUS,
    "rules": "bench/gold/RULES.md",
    "annotated_by": "hand, by reading each abstract and its title (no model output consulted)",
}


def main(argv: list[str]) -> int:
    papers: dict[str, dict[str, object]] = {}
    rows = [json.loads(line) for line in (REPO / CORPUS).read_text(encoding="utf-8").splitlines()]
    for path in argv:
        gold = json.loads(Path(path).read_text(encoding="utf-8"))
        if gold.get("corpus") != CORPUS:
            raise SystemExit(f"{path}: corpus is {gold.get('corpus')!r}, not {CORPUS}")
        for paper in gold["papers"]:
            record_id = rows[int(paper["paragraph"]) - 1]["id"]
            if record_id in papers:
                raise SystemExit(f"{path}: {record_id} is annotated twice")
            papers[record_id] = paper
    tune, heldout = split_ids(list(papers))
    for name, ids in (("tune", tune), ("heldout", heldout)):
        out = {**HEADER, "split": name, "papers": [papers[i] for i in ids]}
        (HERE / f"{name}.gold.json").write_text(
            json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8"
        )
        print(f"{name}: {len(ids)} papers")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
