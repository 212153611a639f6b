"""Draw the random1 gold sample: 30 abstracts per conference file, seeded, reproducible.

Usage (from the repository root):

    PYTHONPATH=$PWD .venv/bin/python bench/gold/random1/draw.py [CONFERENCES_DIR]

CONFERENCES_DIR defaults to ``../shared/conferences`` next to the repository (the real
conference files described in that folder's README.md). The script writes
``bench/gold/random1/abstracts.jsonl`` with only the sampled records and prints how many
candidates were excluded because they already appear in ``bench/gold/dev*``.

How the draw works, so that anyone can repeat it:

1. For each file in ``FILES`` (in that order), read every record.
2. Exclude a record when its abstract (whitespace-normalised, the key ``paper_id_for``
   computes) or its title (lower-cased, letters and digits only) equals that of any
   abstract in ``bench/gold/dev/``, ``dev2/`` or ``dev3/``.
3. Sort the remaining records by their source ``id`` and take ``random.Random(seed)``
   ``.sample(records, PER_FILE)`` with the string seed ``f"{SEED}:{file name}"``
   (Python's string seeding is stable across runs and platforms for a given version of
   the algorithm, version 2, the default since Python 3.2).
4. Order the 120 sampled records by (file order, position in the source file) and number
   them ``random1-001`` ... ``random1-120``.

The split into tune and held-out halves is a separate, seeded shuffle (``split_ids``
below), used when the gold files are written.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

from papersift.extract.domain.reading.ingest import paper_id_for

REPO = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
DEFAULT_SOURCE = REPO.parent / "shared" / "conferences"
if not DEFAULT_SOURCE.is_dir():  # a git worktree beside the main checkout
    DEFAULT_SOURCE = Path("/work/shared/conferences")

SEED = "papersift-random1-2026"
SPLIT_SEED = "papersift-random1-split-2026"
PER_FILE = 30
# file name -> (venue, year) written into each sampled record
FILES = {
    "neurips2024.jsonl": ("NeurIPS", 2024),
    "neurips2025.jsonl": ("NeurIPS", 2025),
    "iclr2025.jsonl": ("ICLR", 2025),
    "emnlp2024_main.jsonl": ("EMNLP", 2024),
}


def title_key(title: str) -> str:
    """A title with case, punctuation and spacing removed, for finding the same paper."""
    return re.sub(r"[^a-z0-9]", "", title.lower())


def dev_keys() -> tuple[set[str], set[str]]:
    """The paper ids and title keys of every abstract in bench/gold/dev*/abstracts.jsonl."""
    ids: set[str] = set()
    titles: set[str] = set()
    for path in sorted((REPO / "bench" / "gold").glob("dev*/abstracts.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                ids.add(paper_id_for(row["abstract"]))
                titles.add(title_key(row.get("title", "")))
    titles.discard("")
    return ids, titles


def draw(source: Path) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The sampled records, in output order, and the number excluded per file."""
    ids, titles = dev_keys()
    sampled: list[tuple[int, int, dict[str, object]]] = []
    excluded: dict[str, int] = {}
    for order, (name, (venue, year)) in enumerate(FILES.items()):
        rows = [
            json.loads(line)
            for line in (source / name).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
        keep = []
        for line_no, row in enumerate(rows, start=1):
            if paper_id_for(row["abstract"]) in ids or title_key(row["title"]) in titles:
                continue
            keep.append((line_no, row))
        excluded[name] = len(rows) - len(keep)
        keep.sort(key=lambda pair: str(pair[1]["id"]))
        chosen = random.Random(f"{SEED}:{name}").sample(keep, PER_FILE)
        for line_no, row in chosen:
            sampled.append(
                (
                    order,
                    line_no,
                    {
                        "source_id": row["id"],
                        "title": row["title"],
                        "venue": venue,
                        "year": year,
                        "source_file": name,
                        "source_line": line_no,
                        "abstract": row["abstract"],
                    },
                )
            )
    sampled.sort(key=lambda item: (item[0], item[1]))
    records = []
    for number, (_, _, record) in enumerate(sampled, start=1):
        records.append({"id": f"random1-{number:03d}", **record})
    return records, excluded


def split_ids(ids: list[str]) -> tuple[list[str], list[str]]:
    """Seeded shuffle of the ids, cut in half: (tune, heldout), each in id order."""
    shuffled = sorted(ids)
    random.Random(SPLIT_SEED).shuffle(shuffled)
    half = len(shuffled) // 2
    return sorted(shuffled[:half]), sorted(shuffled[half:])


def main(argv: list[str]) -> int:
    source = Path(argv[0]) if argv else DEFAULT_SOURCE
    records, excluded = draw(source)
    write_sample(records, excluded, HERE / "abstracts.jsonl", "already in bench/gold/dev*")
    return 0


def write_sample(records: list[dict[str, object]], excluded: dict[str, int], out: Path,
                 why: str) -> None:
    """Write the sampled records as JSONL and say how many each file left out, and why."""
    with out.open("w", encoding="utf-8") as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    for name, count in excluded.items():
        print(f"{name}: {count} record(s) excluded as {why}")
    print(f"wrote {len(records)} records to {out.relative_to(REPO)}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
