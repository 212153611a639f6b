"""Check a papersift gold file against its corpus and its own rules; print what it holds.

Usage: python bench/gold/check_gold.py [GOLD_FILE ...]   (default: the NeurIPS 2026 gold set)

Every paper must point at a real abstract (file, paragraph, opening, and an id recomputed
with the project's own ``paper_id_for``); every evidence must be an exact substring of that
abstract; every gain value must be a number its evidence states. Exits 1 on any problem.

A gold file's ``corpus`` may be a folder of text files or a single JSONL/CSV file (the dev set
in ``bench/gold/dev`` is one JSONL file; ``paragraph`` is then the row number). Given several
gold files (``bench/gold/dev/*.gold.json``), it also reports an abstract that two of them
annotate, so a tuning split and a held-out split cannot share a paper.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.runs.ingest_files import ingest

REPO = Path(__file__).resolve().parents[2]

DEFAULT_GOLD = REPO / "bench" / "gold" / "neurips-2026.gold.json"
FORMAT = "papersift-gold/1"
CONTRIBUTION_TYPES = frozenset(
    {"method", "benchmark", "dataset", "theory", "empirical_analysis", "position", "system"}
)
UNITS = frozenset({"%", "pp", "x", "points", "absolute", "other"})
QUALIFIERS = frozenset({"up to", "over", "about"})
MAX_EVIDENCE_CHARS = 400  # the extraction schema's limit on one quote
MIN_OPENING_CHARS = 20
MAX_TASKS = 2

PAPER_KEYS = frozenset(
    {"paper_id", "file", "paragraph", "opening", "contribution_types", "tasks", "methods",
     "benchmarks", "gains", "notes"}
)
METHOD_KEYS = frozenset({"name", "aliases", "evidence"})
BENCHMARK_KEYS = frozenset({"name", "aliases", "introduced", "evidence"})
GAIN_KEYS = frozenset(
    {"metric", "value", "value_high", "unit", "qualifier", "baseline", "dataset", "evidence"}
)

# 1,234.5 or 12.5 or .5 (a thousands separator only in groups of three), plus number words.
_NUMBER = re.compile(r"(?<![\d.])(\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)")
_NUMBER_WORDS = {
    "zero": 0.0, "one": 1.0, "two": 2.0, "three": 3.0, "four": 4.0, "five": 5.0, "six": 6.0,
    "seven": 7.0, "eight": 8.0, "nine": 9.0, "ten": 10.0, "twice": 2.0, "double": 2.0,
    "half": 0.5, "hundred": 100.0, "thousand": 1000.0, "twenty": 20.0, "thirty": 30.0,
    "fifty": 50.0,
}


def numbers_stated(text: str) -> list[float]:
    """Every unsigned number the text writes in digits or as a common number word."""
    found = [float(match.replace(",", "")) for match in _NUMBER.findall(text)]
    found.extend(
        _NUMBER_WORDS[word] for word in re.findall(r"[a-z]+", text.lower()) if word in _NUMBER_WORDS
    )
    return found


def states_number(value: float, text: str) -> bool:
    """True when the text states ``|value|`` (to floating-point tolerance)."""
    return any(math.isclose(abs(value), n, rel_tol=1e-9) for n in numbers_stated(text))


@dataclass
class Report:
    """Problems found, and counts of what the gold set holds."""

    problems: list[str] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    types: Counter[str] = field(default_factory=Counter)
    units: Counter[str] = field(default_factory=Counter)
    files: Counter[str] = field(default_factory=Counter)

    def add(self, where: str, message: str) -> None:
        self.problems.append(f"{where}: {message}")


_MARKUP = re.compile(r"<[^>]+>|\\[A-Za-z]+|[$^{}*_~]")


def _plain(text: str) -> str:
    """Text without LaTeX commands, math and emphasis marks or HTML tags, lower-cased
    (``R$^2$AG`` -> ``r2ag``, ``CRR<sup>+</sup>`` -> ``crr+``), for matching names."""
    return _MARKUP.sub("", text).lower()


def _text(value: Any) -> bool:
    return isinstance(value, str) and bool(value.strip())


def _number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _keys(item: dict[str, Any], allowed: frozenset[str], optional: frozenset[str],
          where: str, report: Report) -> bool:
    missing = sorted(allowed - optional - item.keys())
    unknown = sorted(item.keys() - allowed)
    if missing:
        report.add(where, f"missing keys {missing}")
    if unknown:
        report.add(where, f"unknown keys {unknown}")
    return not missing


def _evidence(item: dict[str, Any], abstract: str, where: str, report: Report) -> str | None:
    evidence = item.get("evidence")
    if not _text(evidence):
        report.add(where, "evidence must be a non-empty string")
        return None
    assert isinstance(evidence, str)
    if len(evidence) > MAX_EVIDENCE_CHARS:
        report.add(where, f"evidence is {len(evidence)} characters (limit {MAX_EVIDENCE_CHARS})")
    if evidence not in abstract:
        report.add(where, f"evidence is not an exact substring of the abstract: {evidence!r}")
        return None
    return evidence


def _named_item(item: Any, keys: frozenset[str], abstract: str, where: str,
                report: Report) -> bool:
    """Shared checks for a method or benchmark; True if it is well formed."""
    if not isinstance(item, dict):
        report.add(where, "must be an object")
        return False
    if not _keys(item, keys, frozenset(), where, report):
        return False
    name, aliases = item["name"], item["aliases"]
    if not _text(name):
        report.add(where, "name must be a non-empty string")
        return False
    if not isinstance(aliases, list) or not all(_text(alias) for alias in aliases):
        report.add(where, "aliases must be a list of non-empty strings")
        return False
    evidence = _evidence(item, abstract, where, report)
    forms = [name, *aliases]
    if evidence is not None and not any(form.lower() in evidence.lower()
                                        or _plain(form) in _plain(evidence) for form in forms):
        report.add(where, f"neither {name!r} nor an alias occurs in its evidence")
    return True


def _check_gain(gain: Any, abstract: str, where: str, report: Report) -> None:
    if not isinstance(gain, dict):
        report.add(where, "must be an object")
        return
    if not _keys(gain, GAIN_KEYS, frozenset(), where, report):
        return
    if not _text(gain["metric"]):
        report.add(where, "metric must be a non-empty string")
    value, high = gain["value"], gain["value_high"]
    if not _number(value):
        report.add(where, f"value must be a number, not {value!r}")
        return
    if high is not None and (not _number(high) or high <= value):
        report.add(where, f"value_high must be null or a number above value, not {high!r}")
        high = None
    if gain["unit"] not in UNITS:
        report.add(where, f"unit {gain['unit']!r} is not one of {sorted(UNITS)}")
    if gain["qualifier"] is not None and gain["qualifier"] not in QUALIFIERS:
        report.add(where, f"qualifier {gain['qualifier']!r} is not null or one of "
                          f"{sorted(QUALIFIERS)}")
    for key in ("baseline", "dataset"):
        if gain[key] is not None and not _text(gain[key]):
            report.add(where, f"{key} must be null or a non-empty string")
    evidence = _evidence(gain, abstract, where, report)
    if evidence is None:
        return
    for number in (value, high):
        if number is not None and not states_number(number, evidence):
            report.add(where, f"the number {number:g} does not occur in its evidence "
                              f"{evidence!r}")
    report.units[str(gain["unit"])] += 1
    report.counts["gains"] += 1
    report.counts["ranges"] += high is not None


def _check_paper(paper: Any, index: int, places: dict[tuple[str, int], str],
                 first: dict[str, tuple[str, int]], seen: dict[str, str],
                 report: Report) -> None:
    where = f"papers[{index}]"
    if not isinstance(paper, dict):
        report.add(where, "must be an object")
        return
    if not _keys(paper, PAPER_KEYS, frozenset({"notes"}), where, report):
        return
    file, paragraph = paper["file"], paper["paragraph"]
    where = f"papers[{index}] ({file}, abstract {paragraph})"
    if not isinstance(file, str) or not isinstance(paragraph, int) or isinstance(paragraph, bool):
        report.add(where, "file must be a string and paragraph an integer")
        return
    abstract = places.get((file, paragraph))
    if abstract is None:
        report.add(where, "no such abstract in the corpus")
        return
    paper_id = paper_id_for(abstract)
    if paper["paper_id"] != paper_id:
        report.add(where, f"paper_id {paper['paper_id']!r} should be {paper_id!r}")
    if first[paper_id] != (file, paragraph):
        report.add(where, "this abstract appears earlier in the corpus; cite its first "
                          f"occurrence, {first[paper_id][0]} abstract {first[paper_id][1]}")
    if paper_id in seen:
        report.add(where, f"the same abstract is annotated twice (also at {seen[paper_id]})")
    seen[paper_id] = where
    opening = paper["opening"]
    if not isinstance(opening, str) or len(opening) < MIN_OPENING_CHARS \
            or not abstract.startswith(opening):
        report.add(where, f"opening {opening!r} is not the start of the abstract")
    report.files[file] += 1

    types = paper["contribution_types"]
    if not isinstance(types, list) or not types:
        report.add(where, "contribution_types must be a non-empty list")
        types = []
    for kind in types:
        if kind not in CONTRIBUTION_TYPES:
            report.add(where, f"contribution type {kind!r} is not one of "
                              f"{sorted(CONTRIBUTION_TYPES)}")
        report.types[str(kind)] += 1
    if len(set(map(str, types))) != len(types):
        report.add(where, "contribution_types repeats a value")

    tasks = paper["tasks"]
    if not isinstance(tasks, list) or not 1 <= len(tasks) <= MAX_TASKS \
            or not all(_text(task) for task in tasks):
        report.add(where, f"tasks must be a list of 1 to {MAX_TASKS} non-empty strings")
    else:
        report.counts["tasks"] += len(tasks)

    for key in ("methods", "benchmarks", "gains"):
        if not isinstance(paper[key], list):
            report.add(where, f"{key} must be a list")
            return
    methods: list[Any] = paper["methods"]
    benchmarks: list[Any] = paper["benchmarks"]
    for number, method in enumerate(methods):
        if _named_item(method, METHOD_KEYS, abstract, f"{where} methods[{number}]", report):
            report.counts["methods"] += 1
    introduced = 0
    for number, bench in enumerate(benchmarks):
        spot = f"{where} benchmarks[{number}]"
        if _named_item(bench, BENCHMARK_KEYS, abstract, spot, report):
            if not isinstance(bench["introduced"], bool):
                report.add(spot, "introduced must be true or false")
            introduced += bench["introduced"] is True
            report.counts["benchmarks"] += 1
    report.counts["benchmarks introduced"] += introduced
    for number, gain in enumerate(paper["gains"]):
        _check_gain(gain, abstract, f"{where} gains[{number}]", report)

    if methods and "method" not in types:
        report.add(where, "names a proposed method but 'method' is not a contribution type")
    if introduced and not {"benchmark", "dataset"} & set(types):
        report.add(where, "introduces a benchmark but neither 'benchmark' nor 'dataset' is a "
                          "contribution type")
    report.counts["papers with no gains"] += not paper["gains"]
    report.counts["papers"] += 1


def check(gold_path: Path) -> Report:
    """Every check on one gold file; the report holds the problems and the counts."""
    report = Report()
    try:
        gold = json.loads(gold_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        report.add(str(gold_path), f"cannot be read as JSON: {error}")
        return report
    if not isinstance(gold, dict) or gold.get("format") != FORMAT:
        report.add(str(gold_path), f"not a {FORMAT} file")
        return report
    for key in ("corpus", "rules", "annotated_by"):
        if not _text(gold.get(key)):
            report.add(str(gold_path), f"{key!r} must be a non-empty string")
    rules = REPO / str(gold.get("rules"))
    if not rules.is_file():
        report.add(str(gold_path), f"the rules file {gold.get('rules')!r} does not exist")
    corpus = REPO / str(gold.get("corpus"))
    result = ingest([corpus])
    for problem in result.problems:
        report.add(problem.file, f"corpus problem: {problem.message}")
    places: dict[tuple[str, int], str] = {}
    first: dict[str, tuple[str, int]] = {}
    for paper in result.papers:
        for place in paper.occurrences:
            relative = Path(place.file).resolve().relative_to(REPO).as_posix()
            places[(relative, place.position)] = paper.text
            first.setdefault(paper.paper_id, (relative, place.position))
    report.counts["distinct abstracts in corpus"] = len(result.papers)
    papers = gold.get("papers")
    if not isinstance(papers, list) or not papers:
        report.add(str(gold_path), "'papers' must be a non-empty list")
        return report
    seen: dict[str, str] = {}
    for index, paper in enumerate(papers):
        _check_paper(paper, index, places, first, seen, report)
    return report


def _papers_of(gold_path: Path) -> set[str]:
    try:
        gold = json.loads(gold_path.read_text(encoding="utf-8"))
        return {str(paper.get("paper_id")) for paper in gold.get("papers", [])
                if isinstance(paper, dict)}
    except (OSError, ValueError, AttributeError):
        return set()


def main(argv: list[str]) -> int:
    """Check the gold files named on the command line (or the default); 1 on any problem."""
    paths = [Path(arg) for arg in argv] or [DEFAULT_GOLD]
    status = max(_main_one(path) for path in paths)
    seen: dict[str, Path] = {}
    for path in paths:
        for paper_id in sorted(_papers_of(path)):
            if paper_id in seen and seen[paper_id] != path:
                print(f"{path}: {paper_id} is also annotated in {seen[paper_id]}",
                      file=sys.stderr)
                status = 1
            seen.setdefault(paper_id, path)
    return status


def _main_one(gold_path: Path) -> int:
    """Check one gold file and print what it holds; 1 on any problem."""
    report = check(gold_path)
    order = ("papers", "distinct abstracts in corpus", "tasks", "methods", "benchmarks",
             "benchmarks introduced", "gains", "ranges", "papers with no gains")
    print(f"gold: {gold_path}")
    for name in order:
        print(f"  {name:30} {report.counts[name]}")
    print("  per file:          " + ", ".join(
        f"{Path(name).name[:3]}={count}" for name, count in sorted(report.files.items())))
    print("  contribution types: " + ", ".join(
        f"{name}={count}" for name, count in report.types.most_common()))
    print("  gain units:         " + ", ".join(
        f"{name}={count}" for name, count in report.units.most_common()))
    if report.problems:
        print(f"{len(report.problems)} problem(s):", file=sys.stderr)
        for problem in report.problems:
            print(f"  {problem}", file=sys.stderr)
        return 1
    print("OK: no problems")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
