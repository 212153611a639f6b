"""Draw the random6 gold sample: 60 more random abstracts to tune on, seeded.

Usage (from the repository root):

    PYTHONPATH=$PWD .venv/bin/python bench/gold/random6/draw.py [CONFERENCES_DIR]

Drawn as random2 is (bench/gold/random2/draw.py), with its own seed, 15 records from each
of the same four conference files, leaving out every abstract of dev*, random1 to random5
and the bundled corpus. random6 is a **tune** set: rules may be read off its errors and
the decisions trained on it; random4 stays the clean held-out test.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# random2's draw (it imports random1's as `draw`, so it is loaded under another name)
_SPEC = importlib.util.spec_from_file_location(
    "random2_draw", Path(__file__).resolve().parents[1] / "random2" / "draw.py")
assert _SPEC is not None and _SPEC.loader is not None
random2 = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(random2)

HERE = Path(__file__).resolve().parent
SEED = "papersift-random6-2026"
PER_FILE = 15


def main(argv: list[str]) -> int:
    records, excluded = random2.draw(Path(argv[0]) if argv else random2.DEFAULT_SOURCE, SEED,
                                     PER_FILE, "random6", also=("random2", "random3", "random4", "random5"))
    random2.write_sample(records, excluded, HERE / "abstracts.jsonl",
                 "already in a gold set or the corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
