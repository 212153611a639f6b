"""Draw one of the later random gold samples (random3 onward), seeded and reproducible.

Usage (from the repository root):

    PYTHONPATH=$PWD .venv/bin/python bench/gold/draw_random.py NAME [CONFERENCES_DIR]

Each is drawn as random2 is (bench/gold/random2/draw.py: 15 records from each of the same
four conference files, with its own seed), leaving out every abstract of dev*, random1,
the earlier random samples and the bundled corpus, and written to
``bench/gold/NAME/abstracts.jsonl``. What each is for (tune or held-out) is in its README.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

# random2's draw (it imports random1's as `draw`, so it is loaded under another name)
_SPEC = importlib.util.spec_from_file_location(
    "random2_draw", Path(__file__).resolve().parent / "random2" / "draw.py")
assert _SPEC is not None and _SPEC.loader is not None
random2 = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(random2)

HERE = Path(__file__).resolve().parent
PER_FILE = 15
# name -> the earlier samples it leaves out (besides dev*, random1 and the corpus)
SAMPLES: dict[str, tuple[str, ...]] = {
    "random3": ("random2",),
    "random4": ("random2", "random3"),  # the clean held-out test
    "random5": ("random2", "random3", "random4"),
    "random6": ("random2", "random3", "random4", "random5"),
    "random7": ("random2", "random3", "random4", "random5", "random6"),
    # a second clean held-out test, drawn with random7 and never read
    "random8": ("random2", "random3", "random4", "random5", "random6", "random7"),
    "random9": ("random2", "random3", "random4", "random5", "random6", "random7", "random8"),
    "random10": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9"),
    # a third clean held-out test, drawn in stop 36 and never read
    "random11": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10"),
    # a tune set drawn with it, for the gain decision
    "random12": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11"),
    # a fourth clean held-out test, drawn in stop 37 and never read
    "random13": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12"),
    # two tune sets drawn with it, to read fresh errors off (benchmarks above all)
    "random14": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13"),
    "random15": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13", "random14"),
    # a fifth clean held-out test, drawn in stop 38 and never read
    "random16": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13", "random14",
                 "random15"),
    # a tune set drawn with it
    "random17": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13", "random14",
                 "random15", "random16"),
    # two tune sets drawn in stop 39, to read fresh errors off
    "random18": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13", "random14",
                 "random15", "random16", "random17"),
    "random19": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13", "random14",
                 "random15", "random16", "random17", "random18"),
    # a tune set drawn in stop 40, to read fresh benchmark errors off
    "random20": ("random2", "random3", "random4", "random5", "random6", "random7", "random8",
                 "random9", "random10", "random11", "random12", "random13", "random14",
                 "random15", "random16", "random17", "random18", "random19"),
}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in SAMPLES:
        print(f"usage: draw_random.py {{{','.join(SAMPLES)}}} [CONFERENCES_DIR]",
              file=sys.stderr)
        return 2
    name = argv[0]
    source = Path(argv[1]) if len(argv) > 1 else random2.DEFAULT_SOURCE
    records, excluded = random2.draw(source, f"papersift-{name}-2026", PER_FILE, name,
                                     also=SAMPLES[name])
    random2.write_sample(records, excluded, HERE / name / "abstracts.jsonl",
                         "already in a gold set or the corpus")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
