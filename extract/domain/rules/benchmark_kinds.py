"""What kind of thing a benchmark candidate is, read from its own words and its definition.

RULES.md lists as benchmarks the named datasets, suites, environments, simulators and
collections a paper evaluates on. A small model also lists whatever an experiment "runs
on": a problem class ('Traveling Salesman Problem (TSP)'), a formalism ('Markov Decision
Process'), a kind of system ('Energy Harvesting Wireless Sensor Networks (EH-WSNs)') or the
task the paper defines ('the Active Visual Reasoning (AVR) task'). Their names say what
they are in their last word, either as written or in the words an acronym is defined
with, so the rule reads only that word and never a list of particular names.
"""

from __future__ import annotations

import re

from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.extract.domain.rules.context_rules import named_in_parentheses_after_a_resource
from papersift.extract.domain.rules.name_rules import defined_as, lowercase_term_acronym

# A name that says it is a benchmark ('MT-Bench', 'Chatbot Arena', 'Procgen Suite').
BENCHMARK_NAME = re.compile(r"(Bench|Benchmark|Suite|Arena|Gym)\b|-?[Bb]ench\b")
# The last word of a name that makes it a problem, formalism or task (never a method
# either), or a kind of system or model (which may be the paper's method).
_TERM_HEAD = re.compile(
    r"\b(problems?|process(?:es)?|equations?|tasks?|paradigms?|settings?|formulations?)"
    r"((?-i:\s+(with|of|under|for))(\s+[\w-]+){1,4})?$", re.I)  # 'Problem with Time Window'
_SYSTEM_HEAD = re.compile(r"\b(networks?|models?|frameworks?)$", re.I)
# Right after a mention, in its sentence: the text calls the name a task or problem
# ('the AVR task', 'the Active Visual Reasoning (AVR) problem').
_KIND_NOUN_AFTER = re.compile(
    r"^[*_}]*\)?(\s*\([^()]{1,16}\))?\s+(task|problem|setting|paradigm)\b(?!s)", re.I)
# 'a new NL-FOL translation dataset': the name is a modifier inside an unnamed description.
_INDEFINITE_BEFORE = re.compile(
    r"\b(an?|[Aa]nother)\s+((new|novel)\s+)?([a-z][\w-]*\s+){0,2}[*_{]*$")
_DESCRIBED_KIND_AFTER = re.compile(
    r"^[*_}]*\s+([a-z][\w-]*\s+){0,3}(dataset|benchmark|corpus|suite|collection)\b")
# 'Mamba2 is an improved version of the original Mamba': a model's version
_VERSION_OF_AFTER = re.compile(
    r"^[*_}]*\s+is\s+(an?|the)\s+([\w-]+\s+){0,2}(version|variant|extension|successor)\s+of\b")

# A list that a noun for something other than data heads: 'three competition platforms,
# Leetcode, Atcoder, and Codeforces', 'libraries such as NumPy'.
_NAME_WORDS = r"[A-Z0-9][\w.+-]*(\s+[A-Z0-9][\w.+-]*){0,3}"
_OTHER_THING_LIST_BEFORE = re.compile(
    r"\b(platforms?|websites?|sites|apps|applications?|software|tools|librar(y|ies)|problems|"
    r"programming languages?|compan(y|ies)|organi[sz]ations?|services|search engines?|"
    r"operating systems?)\s*(,|:|\()?\s*(including|such as|like|namely|e\.g\.)?\s*,?\s*"
    rf"((the\s+)?({_NAME_WORDS})(\s*\([^()]{{1,12}}\))?\s*(,\s*(and|or)?|and|or|&)\s*){{0,8}}"
    r"(the\s+)?$")
# 'Architectures such as Linformer and Mamba', 'vision transformers, such as Google's ViT
# and DINOv2': a list that a plural noun for models or methods heads.
_SYSTEM_LIST_BEFORE = re.compile(
    r"\b((?i:architectures|models|transformers|networks|methods|baselines|algorithms|"
    r"approaches|encoders|backbones|detectors|optimi[sz]ers)|LLMs|VLMs|MLLMs)\s*,?\s*"
    r"(\(|such as|like|including|e\.g\.,?|namely)\s*,?\s*"
    r"((the\s+)?[A-Z0-9][\w.+'’-]*(\s+[A-Z0-9][\w.+'’-]*){0,3}(\s*\([^()]{1,12}\))?"
    r"\s*(,\s*(and|or)?|and|or|&)\s*){0,8}(the\s+)?$")
# 'on NLU and generation tasks': coordinated with a lowercase kind of task.
_TASK_LIST_AFTER = re.compile(r"^[*_}]*\s+(and|or)\s+([a-z][\w-]*\s+){1,2}tasks?\b")
# Right before a name: the paper takes data from it ('a small subset of Wiki-40B-en').
_DATA_OF_BEFORE = re.compile(
    r"\b(subsets?|splits?|portions?|parts?|samples|examples|documents|sentences|images)\s+"
    r"(of|from)\s+(the\s+)?[*_{]*$"
    r"|\b(data|dataset|corpus)\s+[*_{]*$")  # 'our newly introduced large-scale data Time-300B'


def used_as_data(text: str, start: int) -> bool:
    """The words right before a mention take data from it: a dataset, whatever its name
    looks like (a size in 'Wiki-40B-en' does not make it a model)."""
    return bool(_DATA_OF_BEFORE.search(text[max(0, start - 40):start]))


def _singular(word: str) -> str:
    word = word.lower()
    if word.endswith("sses"):
        return word[:-2]
    return word[:-1] if word.endswith("s") and not word.endswith("ss") else word


def _named_by_head(pattern: re.Pattern[str], text: str, form: str) -> str | None:
    """'named as a WORD (...)' when ``form``, or the words its acronym is defined with,
    ends in a word of ``pattern``; else None."""
    for spelled in (form, defined_as(text, form, joined=True)) if form else ():
        head = pattern.search(spelled) if spelled else None
        if head:
            return f"named as a {_singular(head.group(1))} ('{spelled}')"
    return None


def named_as_a_problem(text: str, start: int, end: int) -> str | None:
    """Why the mention [start, end) names a problem, formalism or task by its own last word,
    as written or in the words its acronym is defined with ('Traveling Salesman Problem
    with Time Window (TSPTW)'), or None. Such a name is neither a benchmark nor a method."""
    return _named_by_head(_TERM_HEAD, text, text[start:end].strip(" *_()"))


def called_a_task(text: str, start: int, end: int) -> str | None:
    """Why the text calls the mention's name a task or problem right after some mention
    ('the Active Visual Reasoning (AVR) task', '... (PORL) problem'), or None."""
    form = text[start:end].strip(" *_()")
    if form and any(_KIND_NOUN_AFTER.match(text[m.end():m.end() + 24])
                    for m in whole_word(form).finditer(text)):
        return f"called a task or problem in the text ('{form} task')"
    return None


def a_task_or_term(text: str, start: int, end: int) -> str | None:
    """Why the mention [start, end) is a problem, formalism, task or term of art ('Traveling
    Salesman Problem', 'the AVR task', 'named entity recognition (NER)'), or None. The
    reason says what it is; the caller adds what it therefore is not (a benchmark, a
    method)."""
    form = text[start:end].strip(" *_()")
    if not form:
        return None
    problem = named_as_a_problem(text, start, end)
    if problem:
        return problem
    called = called_a_task(text, start, end)
    if called:
        return called
    if lowercase_term_acronym(text, form) and not named_in_parentheses_after_a_resource(
            text, start):
        return "the acronym of a lowercase term (a task or field)"
    if _TASK_LIST_AFTER.match(text[end:end + 60]):
        return f"one of a list of kinds of task ('{form} and ... tasks')"
    return None


def not_a_resource(text: str, start: int, end: int) -> str | None:
    """Why the mention [start, end) is a kind of system or model, a modifier in a
    description or one of a list of platforms, rather than a named dataset or benchmark,
    or None."""
    surface = text[start:end]
    form = surface.strip(" *_()")
    if _INDEFINITE_BEFORE.search(text[max(0, start - 40):start]) and \
            _DESCRIBED_KIND_AFTER.match(text[end:end + 60]):
        return f"a modifier in an unnamed description ('a {form} ... dataset'), not a name"
    if not BENCHMARK_NAME.search(surface) and \
            _OTHER_THING_LIST_BEFORE.search(text[max(0, start - 200):start]):
        return "one of a list of platforms, tools or organisations, not a benchmark"
    if not BENCHMARK_NAME.search(surface) and \
            _SYSTEM_LIST_BEFORE.search(text[max(0, start - 200):start]):
        return "one of a list of models or methods ('architectures such as X'), not a benchmark"
    if any(_VERSION_OF_AFTER.match(text[m.end():m.end() + 60])
           for m in whole_word(form).finditer(text)):
        return f"a version of a model ('{form} is an improved version of ...'), not a benchmark"
    system = _named_by_head(_SYSTEM_HEAD, text, form)
    return f"{system}, not a named benchmark" if system else None
