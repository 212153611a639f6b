"""Draw the random2 gold sample: a fresh held-out set of 40 abstracts, seeded, reproducible.

Usage (from the repository root):

    PYTHONPATH=$PWD .venv/bin/python bench/gold/random2/draw.py [CONFERENCES_DIR]

random1's held-out half was looked at while issue 26 was worked on, so it is no longer a
clean test. random2 is drawn the same way as random1 (see bench/gold/random1/draw.py) with
its own seed, 10 records from each of the same four conference files, and every record
that is already in a papersift gold set or the bundled corpus is left out first: the
abstracts of ``bench/gold/dev*``, ``bench/gold/random1`` and ``examples/neurips-2026``,
matched by the abstract's key (``paper_id_for``) or by the normalised title. All 40 are
held-out: no rule or weight is tuned on them.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "random1"))
from draw import DEFAULT_SOURCE, FILES, REPO, title_key, write_sample

from papersift.extract.domain.reading.ingest import paper_id_for

HERE = Path(__file__).resolve().parent
SEED = "papersift-random2-2026"
PER_FILE = 10


def known_keys(also: tuple[str, ...] = ()) -> tuple[set[str], set[str]]:
    """Paper ids and title keys of every abstract papersift already has gold or a corpus
    for: bench/gold/dev*, random1 (and the gold folders ``also`` names), and the bundled
    corpus (text files, no titles)."""
    ids: set[str] = set()
    titles: set[str] = set()
    gold = REPO / "bench" / "gold"
    for path in [*sorted(gold.glob("dev*/abstracts.jsonl")), gold / "random1/abstracts.jsonl",
                 *(gold / name / "abstracts.jsonl" for name in also)]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                ids.add(paper_id_for(row["abstract"]))
                titles.add(title_key(row.get("title", "")))
    for path in sorted((REPO / "examples" / "neurips-2026").glob("*.txt")):
        text = path.read_text(encoding="utf-8")
        ids |= {paper_id_for(part) for part in [text, *text.split("\n\n")] if part.strip()}
    titles.discard("")
    return ids, titles


def draw(source: Path, seed: str = SEED, per_file: int = PER_FILE, prefix: str = "random2",
         also: tuple[str, ...] = ()) -> tuple[list[dict[str, object]], dict[str, int]]:
    """The sampled records, in output order, and the number excluded per file; ``also``:
    more gold folders whose abstracts are left out."""
    ids, titles = known_keys(also)
    sampled: list[tuple[int, int, dict[str, object]]] = []
    excluded: dict[str, int] = {}
    for order, (name, (venue, year)) in enumerate(FILES.items()):
        rows = [json.loads(line) for line in
                (source / name).read_text(encoding="utf-8").splitlines() if line.strip()]
        keep = [(line_no, row) for line_no, row in enumerate(rows, start=1)
                if paper_id_for(row["abstract"]) not in ids
                and title_key(row["title"]) not in titles]
        excluded[name] = len(rows) - len(keep)
        keep.sort(key=lambda pair: str(pair[1]["id"]))
        for line_no, row in random.Random(f"{seed}:{name}").sample(keep, per_file):
            sampled.append((order, line_no, {
                "source_id": row["id"], "title": row["title"], "venue": venue, "year": year,
                "source_file": name, "source_line": line_no, "abstract": row["abstract"]}))
    sampled.sort(key=lambda item: (item[0], item[1]))
    return [{"id": f"{prefix}-{n:03d}", **record}
            for n, (_, _, record) in enumerate(sampled, start=1)], excluded


def main(argv: list[str]) -> int:
    records, excluded = draw(Path(argv[0]) if argv else DEFAULT_SOURCE)
    write_sample(records, excluded, HERE / "abstracts.jsonl",
                 "already in a gold set or the corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
