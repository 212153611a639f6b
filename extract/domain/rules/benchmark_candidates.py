"""Named datasets and benchmarks the model left out, found by the abstract's own wording.

A small model lists the first dataset of a sentence and drops the rest ("on Yelp, Amazon
and MovieLens datasets"), or misses a benchmark named only in a comparison ("3x tighter
than MT-Bench"). Code adds a name when the words next to it call it a dataset or
benchmark: the kind word right after it or after the list it ends ("the KuaiRand
dataset", "on A, B and C benchmarks"), or a list the kind word heads ("datasets such as
A and B", "benchmarks: A, B"). A candidate still passes every benchmark rule of
assembly, so a model, a metric or a task named this way is refused there.
"""

from __future__ import annotations

import re
from functools import lru_cache

from papersift.extract.domain.lookup.assemble_spans import name_key
from papersift.extract.domain.rules.context_rules import a_kind_of_benchmarks

# One proper name: starts with a capital or digit and has a capital beyond its first
# letter or a digit ('KuaiRand', 'CIFAR-10', 'nuScenes' is caught by the inner capital),
# or a capitalised word ('Yelp'); at most four words.
_CHARS = r"(?:[\w+-]|\.(?=\w))*"  # a dot only inside a word ('SQuAD v1.1', not 'EuroSAT.')
_NAME = rf"(?:[A-Z0-9]{_CHARS}|[a-z]+[A-Z]{_CHARS})(?:\s(?:[A-Z0-9]{_CHARS}|v\d{_CHARS})){{0,3}}"
_KINDS = (r"(?:datasets?|benchmarks?|corpus|corpora|suites?|environments?|testbeds?|"
          r"leaderboards?|collections?|databases?|simulators?)")
_SEP = r"\s*(?:,\s*(?:and\s+|or\s+)?|\s(?:and|or|&)\s)\s*"
# 'A, B and C datasets': a list of names the kind word closes.
_LIST_THEN_KIND = re.compile(  # bold or italic markup may close the name ('**X** dataset')
    rf"(?<![\w.+-])((?:{_NAME}{_SEP}){{0,6}}{_NAME})(?:\*\*|\*|__|_)?\s+{_KINDS}\b")
# 'datasets such as A, B and C', 'benchmarks (A and B)', 'benchmarks: A, B'
_KIND_THEN_LIST = re.compile(
    rf"\b{_KINDS}\s*(?:,\s*)?(?:\(|:|such as|including|like|namely|e\.g\.,?|i\.e\.,?)\s*"
    rf"(?<![\w.+-])((?:{_NAME}{_SEP}){{0,6}}{_NAME})(?![\w+-]|\s[A-Z])")  # whole names only
_SPLIT = re.compile(_SEP)
# 'the multimodal retrieval benchmark M-BEIR', 'a new dataset named SSR-CoT': a singular
# kind noun (not the verb 'we benchmark X', not part of 'full-dataset') right before one
# name with an inner capital or digit. Not a plural acronym ('benchmark ODEs') and not a
# modifier of another noun ('benchmark SSR datasets').
_STRONG_WORD = r"(?:[A-Z0-9][\w+-]*[A-Z0-9][\w+-]*(?:\.\w+)*|[a-z]+[A-Z][\w+-]*)"
_KIND_THEN_NAME = re.compile(
    r"(?<![Ww]e\s)(?<!\bto\s)(?<!\balso\s)(?<!further\s)(?<![\w-])"
    r"(?:benchmark|dataset|corpus|suite|environment)\s+(?:called\s+|named\s+)?"
    rf"(?P<name>{_STRONG_WORD}(?:\s(?:{_STRONG_WORD}|v\d[\w.]*))?)"
    r"(?![\w+/-])(?!\s+(?:datasets?|benchmarks?|baselines?|tasks?|models?|services?|"
    r"[Dd]ataset|[Bb]enchmark)\b)")
_PLURAL_ACRONYM = re.compile(r"[A-Z]{2,}s$")
# 'the Scientists' First Exam (SFE) benchmark': a resource named by the acronym of its
# capitalised expansion, the kind word after the parenthesis.
# One capitalised word of an expansion, with a small joining word after it ('Panel
# Understanding and Operation').
EXPANSION_WORD = r"[A-Z][\w'’-]*\s+(?:(?:and|of|for|the|in|on|to|&)\s+)?"
_DEFINED_RESOURCE = re.compile(
    rf"(?:{EXPANSION_WORD}){{1,8}}"
    r"\((?P<name>[A-Za-z0-9][\w-]{1,20})\)\s+(?:benchmark|dataset|corpus|suite)\b")
# Words that start a sentence or a clause in title case; never a name on their own.
_NOT_NAMES = frozenset({"The", "A", "An", "Our", "We", "This", "These", "Both", "All", "Each",
                        "Several", "Many", "Most", "Some", "Two", "Three", "Four", "Five",
                        "Public", "Real", "Standard", "Popular", "Existing", "New", "Novel",
                        "Large", "Extensive", "Experiments", "Results", "Synthetic", "Other",
                        "Multiple", "Various", "Benchmark", "Dataset", "Datasets",
                        "Benchmarks", "In", "On", "For", "And", "Or", "With", "Across"})


def missed_benchmarks(text: str, drafted: set[str]) -> list[str]:
    """Names the abstract calls datasets or benchmarks that are not in ``drafted``
    (normalised keys of the names the model gave), in text order."""
    return [name for name in named_resources(text) if name_key(name) not in drafted]


@lru_cache(maxsize=64)
def named_resources(text: str) -> tuple[str, ...]:
    """Every name the abstract's wording calls a dataset or benchmark, in text order."""
    found: dict[str, None] = {}
    for match in _DEFINED_RESOURCE.finditer(text):
        found.setdefault(match.group("name"), None)
    for match in _KIND_THEN_NAME.finditer(text):
        name = match.group("name")
        if _plausible(name) and not _PLURAL_ACRONYM.search(name):
            found.setdefault(name, None)
    for pattern in (_LIST_THEN_KIND, _KIND_THEN_LIST):
        for match in pattern.finditer(text):
            if pattern is _LIST_THEN_KIND and a_kind_of_benchmarks(text, *match.span(1)):
                continue  # 'on diverse ODQA benchmarks': a kind, not a name
            for part in _SPLIT.split(match.group(1)):
                name = _without_determiner(part.strip(" .,;:()"))
                if _plausible(name):
                    found.setdefault(name, None)
    return tuple(found)


_DETERMINERS = frozenset({"The", "This", "Our", "These"})


def _without_determiner(name: str) -> str:
    """'The FVELER' (a sentence's first word before the name) -> 'FVELER'."""
    first, _, rest = name.partition(" ")
    return rest if first in _DETERMINERS and rest[:1].isupper() else name


def _plausible(name: str) -> bool:
    words = name.split()
    if not words or words[0] in _NOT_NAMES or len(name) < 2:
        return False
    return not name.isdigit()


# The kind word the model's answer puts after a name it measured a result on ('the MGSM
# benchmark', 'BABILong task', 'X-AlpacaEval leaderboard').
_MEASURED_ON = re.compile(
    r"^(?:the\s+|an?\s+)?(?P<name>.{3,80}?)\s+(?:benchmarks?|datasets?|tasks?|leaderboards?|"
    r"test\s+sets?|suites?|splits?|subsets?)$", re.I)
_STRONG_NAME = re.compile(rf"^{_STRONG_WORD}$")


def measured_on(places: list[str], text: str, drafted: set[str]) -> list[str]:
    """Names the model's gains say a result was measured on ('on': 'MGSM benchmark'), as
    the abstract writes them, when it wrote the kind word itself and the name has a word
    with an inner capital or a digit: 'in BABILong and RULER' has no cue word of its
    own, and the model often leaves such names out of its benchmark list. Not a name in
    ``drafted`` (normalised keys)."""
    found: dict[str, None] = {}
    for place in places:
        match = _MEASURED_ON.match(place.strip())
        if match is None or len(match.group("name").split()) > 4:
            continue
        name = re.escape(match.group("name"))
        written = re.search(rf"(?<![\w-]){name}(?![\w-])", text, re.I)
        if written is None:
            continue
        surface = written.group(0)
        if any(_STRONG_NAME.match(word) for word in surface.split()) \
                and name_key(surface) not in drafted:
            found.setdefault(surface, None)
    return list(found)


# A name built on 'Bench' ('LiveCodeBench', 'MT-Bench+', 'NAS-Bench-201', 'SCBENCH'): in
# conference abstracts such a name is a benchmark wherever it stands, cue word or not.
_BENCH_SHAPED = re.compile(
    r"(?<![\w-])([A-Z][\w.+-]*?(?:Bench|BENCH)(?:-[A-Z]\w*|-?v?\d[\w.]*)?\+?"
    r"(?:\s+v\d+(?:\.\d+)*)?)(?![\w+-])")  # 'GeoBench v1.1' with its version


def bench_shaped(text: str, drafted: set[str]) -> list[str]:
    """Names built on 'Bench' that the abstract writes and ``drafted`` (normalised keys)
    lacks, in text order, each once."""
    found: dict[str, None] = {}
    for match in _BENCH_SHAPED.finditer(text):
        if name_key(match.group(1)) not in drafted:
            found.setdefault(match.group(1), None)
    return list(found)
