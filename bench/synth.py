"""Synthetic corpora of any size, derived from the bundled abstracts, for scale benchmarks.

Abstract ``i`` is built from bundled abstract ``i mod B``: for every pass after the first
over the B sources, its middle sentences are reordered and its decimal and percentage
numbers scaled (the same number gets the same new value throughout the abstract); every
abstract ends with a sentence naming it synthetic variant ``i``, so all N differ from each
other and from the bundled ones. Deterministic for a seed; written as a stream, one
abstract at a time, so N can exceed memory.

    python -m bench.synth --papers 100000 --out /tmp/synth --files 4 --format jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
from collections.abc import Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from papersift.extract.domain.assembly.assemble import sentence_spans
from papersift.extract.runs.ingest_files import ingest

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO_ROOT / "examples" / "neurips-2026"
FORMATS = ("jsonl", "txt")
COLLECTION = "Synthetic corpus {seed} derived from NeurIPS 2026 Papers"

# A decimal, or a whole number written as a percentage; not glued to a name ('CIFAR-10').
_VARIABLE_NUMBER = re.compile(r"(?<![\w.^_@-])(\d+\.\d+|\d+(?=\s*\\?%))(?![\w.])")


@dataclass(frozen=True)
class SynthPaper:
    """One synthetic abstract and the fields written with it."""

    index: int
    id: str
    title: str
    abstract: str
    source: int  # index of the bundled abstract it derives from


def source_abstracts(source: Path = DEFAULT_SOURCE) -> list[str]:
    """The bundled abstracts (a few dozen) read through papersift's own ingest."""
    result = ingest([source])
    if not result.papers:
        raise ValueError(f"{source}: no abstracts to derive a corpus from")
    return [" ".join(paper.text.split()) for paper in result.papers]


def _scaled(number: str, rng: random.Random) -> str:
    decimals = len(number.partition(".")[2])
    value = float(number) * rng.uniform(0.8, 1.25)
    floor = 10.0 ** -decimals
    return f"{max(value, floor):.{decimals}f}"


def derive(text: str, index: int, variant: int, seed: int) -> str:
    """Abstract ``index``: ``text`` reordered and renumbered for ``variant`` > 0, plus the
    sentence that marks it synthetic."""
    rng = random.Random(f"{seed}:{index}")
    if variant > 0:
        sentences = [text[start:end] for start, end in sentence_spans(text)]
        if len(sentences) > 3:
            middle = sentences[1:-1]
            rng.shuffle(middle)
            sentences = [sentences[0], *middle, sentences[-1]]
        text = " ".join(sentences)
        new_values: dict[str, str] = {}

        def replace(match: re.Match[str]) -> str:
            return new_values.setdefault(match.group(1), _scaled(match.group(1), rng))

        text = _VARIABLE_NUMBER.sub(replace, text)
    return f"{text} This synthetic abstract is variant {index} of the corpus."


def synth_papers(count: int, seed: int = 0, sources: Sequence[str] | None = None) -> Iterator[
        SynthPaper]:
    """``count`` distinct synthetic abstracts, one at a time."""
    bases = list(sources) if sources is not None else source_abstracts()
    for index in range(count):
        source = index % len(bases)
        abstract = derive(bases[source], index, index // len(bases), seed)
        yield SynthPaper(index, f"synth-{seed}-{index:07d}",
                         f"Synthetic paper {index} (seed {seed}, from bundled abstract "
                         f"{source})", abstract, source)


def write_corpus(out: Path, count: int, *, files: int = 1, fmt: str = "jsonl",
                 seed: int = 0) -> list[Path]:
    """Write ``count`` synthetic abstracts into ``files`` files under ``out``, streaming.

    JSONL rows carry ``id``, ``title`` (saying synthetic), ``venue``, ``year`` and
    ``abstract``; a .txt file starts with a collection title saying synthetic, then one
    abstract per paragraph. Returns the paths written."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    if count < 1 or files < 1:
        raise ValueError("--papers and --files must be at least 1")
    files = min(files, count)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / f"synth-{seed}-{part:03d}.{fmt}" for part in range(files)]
    with ExitStack() as stack:
        handles = [stack.enter_context(path.open("w", encoding="utf-8")) for path in paths]
        if fmt == "txt":
            for handle in handles:
                handle.write(COLLECTION.format(seed=seed) + "\n")
        for paper in synth_papers(count, seed):
            handle = handles[paper.index * files // count]
            if fmt == "txt":
                handle.write("\n" + paper.abstract + "\n")
            else:
                handle.write(json.dumps({
                    "id": paper.id, "title": paper.title, "venue": "SynthConf", "year": 2026,
                    "abstract": paper.abstract}) + "\n")
    return paths


def main(argv: list[str] | None = None) -> int:
    """Write a synthetic corpus of N abstracts derived from the bundled ones."""
    parser = argparse.ArgumentParser(description=main.__doc__)
    parser.add_argument("--papers", type=int, required=True, help="how many abstracts")
    parser.add_argument("--out", type=Path, required=True, help="folder to write into")
    parser.add_argument("--files", type=int, default=1, help="split into this many files")
    parser.add_argument("--format", choices=FORMATS, default="jsonl")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        paths = write_corpus(args.out, args.papers, files=args.files, fmt=args.format,
                             seed=args.seed)
    except ValueError as problem:
        parser.error(str(problem))
    total = sum(path.stat().st_size for path in paths)
    print(f"wrote {args.papers:,} synthetic abstracts in {len(paths)} file(s) under "
          f"{args.out} ({total / 1e6:.1f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
