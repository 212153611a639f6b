"""Rebuild papersift/extract/domain/rules/known_benchmarks.txt from real conference abstracts.

    PYTHONPATH=$PWD .venv/bin/python tools/known_benchmarks.py [CONFERENCES_DIR]

A name goes on the list when the wording of at least MIN_CUED papers calls it a dataset or
benchmark ("the X dataset", "on A, B and C benchmarks", "datasets such as X": the same
cues as the grounding's own search for missed names) or lists it beside a name already on
the list ("on CIFAR-10, CIFAR-100 and SVHN", added in rounds), and when those papers are at least
MIN_SHARE of all papers that mention it at all, so a word that is mostly something else
("QA", "3D", "While") stays off. Names the grounding refuses as benchmarks anyway
(established models, organisations, languages, metrics) stay off too. Every abstract of
a gold set (bench/gold) and of the bundled corpus is left out, so no figure measured on
gold is helped by its own abstract. The default folder is ../shared/conferences.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "bench" / "gold" / "random1"))  # random2's draw imports it
_SPEC = importlib.util.spec_from_file_location(
    "random2_draw", REPO / "bench" / "gold" / "random2" / "draw.py")
assert _SPEC is not None and _SPEC.loader is not None
_DRAW = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(_DRAW)

from papersift.extract.domain.reading.ingest import paper_id_for  # noqa: E402
from papersift.extract.domain.rules.benchmark_candidates import named_resources  # noqa: E402
from papersift.extract.domain.rules.established import (  # noqa: E402
    established_method,
    known_metric,
    never_a_benchmark,
    task_phrase,
)

OUT = REPO / "papersift" / "extract" / "domain" / "rules" / "known_benchmarks.txt"
MIN_CUED = 3
MIN_SHARE = 0.3


def gold_keys() -> tuple[set[str], set[str]]:
    """Paper ids and title keys of every gold abstract and the bundled corpus."""
    gold = REPO / "bench" / "gold"
    folders = sorted(path.parent.name for path in gold.glob("random*/abstracts.jsonl")
                     if path.parent.name != "random1")  # random1 is always left out
    ids, titles = _DRAW.known_keys(tuple(folders))
    return ids, titles


def abstracts(source: Path) -> list[str]:
    ids, titles = gold_keys()
    texts = []
    for path in sorted(source.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                if (paper_id_for(row["abstract"]) not in ids
                        and _DRAW.title_key(row.get("title", "")) not in titles):
                    texts.append(row["abstract"])
    return texts


# A coordinated list of names ('on CIFAR-10, CIFAR-100 and Tiny-ImageNet'). When one of
# its members is already known, the paper lists the others as its peers: that is evidence
# too, so names that abstracts list without a cue word ('CIFAR-10') can join.
_NAME = r"[A-Z][\w.+-]*[\w+](?:[\s-](?:v?\d+(?:\.\d+)?|[A-Z][\w-]*\d[\w-]*))?"
_NAME_LIST = re.compile(
    rf"(?<![\w-])({_NAME}(?:\s*,\s*{_NAME})*,?\s+(?:and|or|&)\s+{_NAME})(?![\w-])")
_LIST_SEPARATOR = re.compile(r"\s*,\s*(?:and\s+|or\s+)?|\s+(?:and|or|&)\s+")
ROUNDS = 4


def name_lists(text: str) -> list[list[str]]:
    """The coordinated lists of capitalised names in ``text``, each as its members."""
    return [[name for name in _LIST_SEPARATOR.split(match.group(1)) if name]
            for match in _NAME_LIST.finditer(text)]


def known(texts: list[str]) -> list[tuple[str, int, int]]:
    """(name, papers whose wording calls it a dataset or benchmark or that list it beside
    a known one, papers naming it). Peers are added in rounds until the list is stable."""
    cued: dict[str, set[int]] = defaultdict(set)
    lists: list[tuple[int, list[str]]] = []
    for number, text in enumerate(texts):
        for name in named_resources(text):
            cued[name].add(number)
        lists += [(number, members) for members in name_lists(text)]
    seen = _with_lists(cued, lists, None)
    candidates = sorted((n for n, papers in seen.items() if len(papers) >= MIN_CUED),
                        key=len, reverse=True)
    if not candidates:
        return []
    pattern = re.compile(rf"(?<![\w-])(?:{'|'.join(map(re.escape, candidates))})(?![\w-])")
    named: Counter[str] = Counter()
    for text in texts:
        named.update({match.group(0) for match in pattern.finditer(text)})

    def admitted(evidence: dict[str, set[int]]) -> set[str]:
        return {name for name, papers in evidence.items()
                if len(papers) >= MIN_CUED and len(papers) >= MIN_SHARE * named[name]
                and not (established_method(name) or known_metric(name)
                         or never_a_benchmark(name) or task_phrase(name))}

    evidence: dict[str, set[int]] = cued
    names = admitted(cued)
    for _ in range(ROUNDS):
        evidence = _with_lists(cued, lists, names)
        grown = admitted(evidence)
        if grown == names:
            break
        names = grown
    return sorted((name, len(evidence[name]), named[name]) for name in names)


def _with_lists(cued: dict[str, set[int]], lists: list[tuple[int, list[str]]],
                known: set[str] | None) -> dict[str, set[int]]:
    """The papers that cue each name, plus each list's paper for every member of a list
    that holds a ``known`` name (of every list, when ``known`` is None)."""
    evidence = defaultdict(set, {name: set(papers) for name, papers in cued.items()})
    for number, members in lists:
        if known is None or not known.isdisjoint(members):
            for member in members:
                evidence[member].add(number)
    return evidence


def conference_texts(argv: list[str]) -> list[str]:
    """The abstracts of the folder the command line names (default ../shared/conferences),
    every gold abstract left out."""
    source = Path(argv[0]) if argv else REPO.parent / "shared" / "conferences"
    if not source.is_dir():
        source = Path("/work/shared/conferences")
    return abstracts(source)


def write_list(out: Path, header: str, rows: list[tuple[object, ...]], abstracts: int) -> None:
    """A tab-separated list under its comment header, and a line saying what was written."""
    out.write_text(header + "".join("\t".join(map(str, row)) + "\n" for row in rows),
                   encoding="utf-8")
    print(f"{len(rows)} names from {abstracts} abstracts -> {out.relative_to(REPO)}")


def main(argv: list[str]) -> int:
    texts = conference_texts(argv)
    header = (
        f"# Known datasets and benchmarks: written by tools/known_benchmarks.py from\n"
        f"# {len(texts)} real conference abstracts (gold-set abstracts left out). A name is\n"
        f"# here when at least {MIN_CUED} papers' wording calls it a dataset or benchmark, or\n"
        f"# lists it beside one already here ('CIFAR-10, CIFAR-100 and SVHN'), and those are\n"
        f"# at least {MIN_SHARE:.0%} of the papers naming it. Columns: name, papers calling it\n"
        f"# one or listing it so, papers naming it.\n")
    write_list(OUT, header, list(known(texts)), len(texts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
