"""From the model's draft to a stored, grounded extraction: code does the looking up.

The model writes names, task phrases and numbers. Here each one is found in the abstract:
the item's evidence is the sentence that contains it (offsets computed here), a number's
value and unit are read from the abstract's own characters, and acronyms are paired with
their spelled-out forms. What cannot be found is not stored as fact: names and numbers
the abstract does not contain are dropped (and counted), a task phrase with no matching
sentence is kept with alignment ``none``. Repeats are merged.

The shared lookups live in assemble_spans, the names in assemble_names and the numbers in
assemble_gains; this module puts a draft through them and holds the result.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import annotated_types

from papersift.extract.domain.assembly.assemble_gains import (
    decide_gains,
    ground_gains,
    is_condition,
    not_a_result,
    result_numbers,
    unit_at,
)
from papersift.extract.domain.assembly.assemble_methods import Taken, ground_methods
from papersift.extract.domain.assembly.assemble_names import ground_benchmarks, ground_tasks
from papersift.extract.domain.assembly.attributes import GainAttributes
from papersift.extract.domain.lookup.assemble_spans import (
    TRAILING_PARENTHESIS,
    Found,
    ends_in_a_method_kind,
    find_name,
    name_key,
    sentence_of,
    sentence_spans,
)
from papersift.extract.domain.lookup.grounding import Alignment
from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.extract.domain.rules.benchmark_candidates import (
    bench_shaped,
    measured_on,
    missed_benchmarks,
)
from papersift.extract.domain.rules.benchmark_kinds import BENCHMARK_NAME, a_task_or_term
from papersift.extract.domain.rules.context_rules import (
    background_end,
    made_resources,
    resources_in_apposition,
)
from papersift.extract.domain.rules.gain_candidates import missed_results
from papersift.extract.domain.rules.gain_decision import GainDecision, load_gain_weights
from papersift.extract.domain.rules.gain_numbers import is_count_or_name
from papersift.extract.domain.rules.known_benchmarks import known_benchmarks_in
from papersift.extract.domain.rules.method_decision import Decision, Weights, load_weights
from papersift.extract.domain.rules.name_rules import (
    coined_proposals,
    named_as_method,
    strictly_proposed,
    title_name,
)
from papersift.extract.domain.rules.resource_cues import called_a_tool, named_as_resource
from papersift.schemas import (
    Benchmark,
    ClaimedGain,
    DraftBenchmark,
    PaperDraft,
    PaperExtraction,
)
from papersift.schemas.draft import with_latex_backslashes
from papersift.schemas.numbers import numbers_in
from papersift.schemas.paper import ContributionType

# Bump when assembly changes what it stores for the same draft; part of the extraction id,
# with the content hashes of the method and gain decisions' weights (retrained weights
# store anew).
ASSEMBLY_VERSION = (f"assemble/50+{load_weights().version.removeprefix('sha256:')[:12]}"
                    f"+{load_gain_weights().version.removeprefix('sha256:')[:12]}")

_Item = TypeVar("_Item")

__all__ = ["ASSEMBLY_VERSION", "Assembled", "Found", "assemble", "find_name", "result_numbers",
           "sentence_spans", "stored_cap"]


@dataclass
class Assembled:
    """The stored extraction, how each item was found (parallel to its lists), and what
    the draft proposed that the abstract does not contain."""

    extraction: PaperExtraction
    found: dict[str, list[Found | None]]
    rejected: list[str] = field(default_factory=list)
    gain_attributes: list[GainAttributes] = field(default_factory=list)  # parallel to gains
    decisions: list[Decision] = field(default_factory=list)  # one per method candidate
    # what code stored that the model did not give, and why (methods: see decisions)
    added: list[str] = field(default_factory=list)
    gain_decisions: list[GainDecision] = field(default_factory=list)  # one per grounded gain

    def alignment(self, field_name: str, index: int) -> Alignment:
        """The evidence sentence's span with the status of the item's own match."""
        spot = self.found[field_name][index]
        if spot is None:
            return Alignment("none", None, None, 0.0)
        return Alignment(spot.status, spot.sentence[0], spot.sentence[1], 1.0)


# --------------------------------------------------------------------------- types


_CREATES_RESOURCE = re.compile(
    r"\b(introduc\w*|releas\w*|construct\w*|curat\w*|creat\w*|collect\w*|build|built|"
    r"present\w*)\b[^.]{0,80}\b(benchmark|dataset|corpus|suite|environment|testbed)", re.I)


_THEORY = re.compile(
    r"\b(we (prove|derive|establish|characteri[sz]e)|theorem|lemma|(upper|lower|regret|"
    r"generali[sz]ation|error) bounds?|minimax|convergence (rate|guarantee)s?|sample complexity|"
    r"identifiab\w+|provabl[ey]|closed[- ]form)\b", re.I)
_SYSTEM = re.compile(r"\b(system|platform|toolkit|library|open-source|deployed|deployment)\b",
                     re.I)


def _types(draft: PaperDraft, benchmarks: list[Benchmark], text: str) -> list[ContributionType]:
    """The draft's contribution types, checked against the text: 'benchmark' and 'dataset'
    only when the paper creates one, 'system' only when the abstract speaks of one, and
    'theory' added when it proves or bounds something."""
    creates = any(b.introduced for b in benchmarks) or bool(_CREATES_RESOURCE.search(text))
    kept: list[ContributionType] = [
        t for t in dict.fromkeys(draft.types)
        if (creates or t not in ("benchmark", "dataset"))
        and (t != "system" or _SYSTEM.search(text))
    ]
    if "theory" not in kept and _THEORY.search(text):
        kept.append("theory")
    fallback: list[ContributionType] = ["method"]
    return kept or fallback


# --------------------------------------------------------------------------- the whole


def _name_in_phrase(phrase: str) -> str:
    """The name a drafted phrase ends with ('a large-scale corpus called Libri-Dys' ->
    'Libri-Dys'), or the phrase itself."""
    match = re.search(r"\b(?:called|named|dubbed|termed)\s+([^\s,;]+)\s*$", phrase)
    return match.group(1) if match else phrase


def _called(name: str, text: str, test: Callable[[str, int, int], bool]) -> bool:
    """Whether some mention of the name, as the abstract writes it, passes ``test``:
    called a benchmark or dataset (named_as_resource), or software (called_a_tool)."""
    spot = find_name(name, text)
    return spot is not None and _some_mention(text[spot[1]:spot[2]], text, test)


def _some_mention(surface: str, text: str, test: Callable[[str, int, int], bool]) -> bool:
    return any(test(text, m.start(), m.end()) for m in whole_word(surface, re.I).finditer(text))


# A URL the model copied into a name, with footnote digits glued before it
# ('HLV-1K 111https://...'): the name is what comes before it.
_URL_TAIL = re.compile(r"\s*\d*(?:https?://|www\.)")


def _without_urls(draft: PaperDraft) -> PaperDraft:
    def cut(name: str) -> str:
        return _URL_TAIL.split(name)[0].strip() or name

    if not any(_URL_TAIL.search(n) for n in [*draft.methods, *(b.name for b in draft.benchmarks)]):
        return draft
    return draft.model_copy(update={
        "methods": [cut(m) for m in draft.methods],
        "benchmarks": [b.model_copy(update={"name": cut(b.name)}) for b in draft.benchmarks]})


def _presented_as_method(name: str, text: str, spans: list[tuple[int, int]]) -> bool:
    """A proposal verb introduces the name and nothing calls it a benchmark or dataset."""
    spot = find_name(name, text)
    if spot is None or BENCHMARK_NAME.search(name) or _any_mention_a_resource(
            text[spot[1]:spot[2]], text):
        return False
    return any(strictly_proposed(text, sentence_of(spans, m.start(), m.end()), m.start(), m.end())
               for m in whole_word(text[spot[1]:spot[2]]).finditer(text))




def _forms_of(name: str) -> set[str]:
    """A drafted name and, for 'Expansion (ACR)', each of its two parts."""
    match = TRAILING_PARENTHESIS.match(name.strip())
    return {name, *match.groups()} if match else {name}


def _called_a_method(name: str, text: str) -> bool:
    """Some mention calls it a method or model, none a benchmark, and its name is no
    benchmark's ('X-Bench')."""
    return not BENCHMARK_NAME.search(name) and _called(name, text, named_as_method) \
        and not _called(name, text, named_as_resource)


def _a_task_or_term(name: str, text: str) -> bool:
    """The text names it as a task, problem or term: neither a benchmark nor a method, so
    it is not moved between the two lists (the benchmark rules refuse it, for both)."""
    spot = find_name(name, text)
    return spot is not None and a_task_or_term(text, spot[1], spot[2]) is not None


def _any_mention_a_resource(surface: str, text: str) -> bool:
    return _some_mention(surface, text, named_as_resource)


def _from_title(draft: PaperDraft, text: str, title: str | None) -> tuple[
        PaperDraft, str | None, str | None]:
    """The draft with the name a title gives ('Mamba4Rec: ...') as the paper's method, or
    as a new benchmark when the abstract or title calls it one; only when the abstract
    itself contains the name (it is grounded there, never in the title). Also returns the
    method's or the benchmark's name: the paper presents it as its own."""
    named = title_name(title)
    spot = find_name(named[0], text) if named else None
    if named is None or spot is None:
        return draft, None, None
    surface = text[spot[1]:spot[2]]
    methods = [m for m in draft.methods if name_key(m) != name_key(surface)]
    if named[1] or _any_mention_a_resource(surface, text) or BENCHMARK_NAME.search(surface):
        others = [b for b in draft.benchmarks if name_key(b.name) != name_key(surface)]
        return draft.model_copy(update={
            "methods": methods,
            "benchmarks": [DraftBenchmark(name=surface, new=True), *others]}), None, surface
    return draft.model_copy(update={"methods": [surface, *methods]}), surface, None


def _drafted_keys(draft: PaperDraft) -> set[str]:
    """The normalised keys of every method and benchmark name the draft holds."""
    return {name_key(n) for n in [*draft.methods, *(b.name for b in draft.benchmarks)]}


def stored_cap(field_name: str) -> int:
    """The stored schema's limit on a list field (PaperExtraction's max_length)."""
    for rule in PaperExtraction.model_fields[field_name].metadata:
        if isinstance(rule, annotated_types.MaxLen):
            return int(rule.max_length)
    return sys.maxsize


def _capped(field_name: str, items: list[_Item], found: list[Found | None],
            rejected: list[str]) -> tuple[list[_Item], list[Found | None]]:
    """At most the stored schema's number of items, the model's own first (code's additions
    come after them); each grounded item beyond the limit is listed in ``rejected``, so a
    paper that states many results is stored, not lost to a validation error."""
    cap = stored_cap(field_name)
    for item in items[cap:]:
        label = (f"gain {item.value!r} ({item.metric})" if isinstance(item, ClaimedGain)
                 else str(getattr(item, "name", item)))
        rejected.append(f"{label}: over the stored limit of {cap} {field_name}")
    return items[:cap], found[:cap]


def assemble(draft: PaperDraft, text: str, title: str | None = None,
             weights: Weights | None = None, gain_weights: Weights | None = None
             ) -> Assembled:
    """Ground a draft in its abstract: the stored extraction plus how each item was found.
    ``title``, when the input has one, may name the paper's method (see _from_title).
    ``weights`` and ``gain_weights``: the method and gain decisions', when not the shipped
    ones (for training)."""
    spans = sentence_spans(text) or [(0, len(text))]
    rejected: list[str] = []
    decisions: list[Decision] = []
    draft = _without_urls(with_latex_backslashes(draft))
    given = _word_sets(draft)  # what the model named, before code adds anything
    why_added: dict[str, str] = {}
    draft, headline, titled_benchmark = _from_title(draft, text, title)
    if titled_benchmark:
        why_added[name_key(titled_benchmark)] = "the title names it and the abstract writes it"
    tools = [b.name for b in draft.benchmarks if _called(b.name, text, called_a_tool)]
    if tools:  # 'BenchBench, a python package': the paper's tool, not a benchmark
        draft = draft.model_copy(update={
            "benchmarks": [b for b in draft.benchmarks if b.name not in tools],
            "methods": [*draft.methods, *(t for t in tools if t not in draft.methods)]})
    method_keys = {name_key(form) for m in draft.methods for form in _forms_of(m)}
    both = [b.name for b in draft.benchmarks if ((
        method_keys & {name_key(form) for form in _forms_of(b.name)}
        and _presented_as_method(b.name, text, spans))
        or _called_a_method(b.name, text) or ends_in_a_method_kind(b.name))
        and not _a_task_or_term(b.name, text)]
    if both:  # a name presented as a method ('FOCUS, a novel algorithm'), or drafted as a
        # benchmark with a method's kind word ('SS2D module'), is weighed as a method
        draft = draft.model_copy(update={
            "benchmarks": [b for b in draft.benchmarks if b.name not in both],
            "methods": [*draft.methods, *(n for n in both if n not in draft.methods)]})
    cores = {m: _name_in_phrase(m) for m in draft.methods}
    named_benchmarks = [m for m in draft.methods
                        if (BENCHMARK_NAME.search(cores[m])
                            or _called(cores[m], text, named_as_resource))
                        and not _called(cores[m], text, called_a_tool)]
    # resources a proposal verb introduces by name, which the model may have missed
    introduced = [text[a:b] for a, b in coined_proposals(text, spans)
                  if (named_as_resource(text, a, b) or BENCHMARK_NAME.search(text[a:b]))
                  and not called_a_tool(text, a, b)]
    drafted = _drafted_keys(draft)
    spans_named = [*resources_in_apposition(text),
                   *((a, b) for a, b in made_resources(text) if named_as_resource(text, a, b))]
    introduced += [name for name in dict.fromkeys(text[a:b] for a, b in spans_named)
                   if name_key(name) not in drafted and name not in introduced]
    why_added.update({name_key(n): "a proposal verb or an apposition presents it as a dataset "
                      "or benchmark" for n in introduced})
    if named_benchmarks or introduced:  # 'CellularS2-Bench' as a method is a benchmark
        draft = draft.model_copy(update={
            "methods": [m for m in draft.methods if m not in named_benchmarks],
            "benchmarks": [*draft.benchmarks,
                           *(DraftBenchmark(name=m, new=True)
                             for m in [*(cores[n] for n in named_benchmarks), *introduced])],
        })
    # names the model left out, each finder's once, with the reason explain gives
    listed = _drafted_keys(draft)
    missed_names: list[str] = []
    for found, why in (
            (missed_benchmarks(text, listed), "the abstract's words call it a dataset or "
             "benchmark"),
            (known_benchmarks_in(text, listed), "a known dataset (rules/known_benchmarks.txt) "
             "the abstract names"),
            (measured_on([g.on for g in draft.gains if g.on], text, listed),
             "the model's answer measures a result on it ('the X benchmark')"),
            (bench_shaped(text, listed), "its name is built on 'Bench' ('LiveCodeBench')")):
        new = [n for n in found if n not in missed_names]
        why_added.update({name_key(n): why for n in new})
        missed_names += new
    if missed_names:  # 'on Yelp, Amazon and MovieLens datasets': the model wrote only Yelp
        draft = draft.model_copy(update={"benchmarks": [
            *draft.benchmarks, *(DraftBenchmark(name=n, new=False) for n in missed_names)]})
    tasks, task_found = ground_tasks(draft, text, spans)
    terms: dict[str, str] = {}
    benchmarks, bench_found = ground_benchmarks(draft, text, spans, rejected, titled_benchmark,
                                                terms)
    taken = Taken(frozenset(name_key(b.name) for b in benchmarks), terms)
    methods, method_found = ground_methods(draft, text, spans, rejected, taken, headline,
                                           title, decisions, weights)
    background = background_end(text, spans)
    missed = missed_results(text, spans, {g.value for g in draft.gains}, unit_at,
                            lambda t, n, a, b: a >= background and not not_a_result(t, n, a, b)
                            and not is_condition(t, a, b) and not is_count_or_name(t, n, a, b))
    found_values: set[float] = set()  # the numbers code added, as ground_gains reads them
    if missed and len(draft.gains) + len(missed) <= 12:
        found_values = {v for g in missed for v in numbers_in(g.value)[:1]} - {
            v for g in draft.gains for v in numbers_in(g.value)[:1]}
        draft = draft.model_copy(update={"gains": [*draft.gains, *missed]})
    gains, gain_found, gain_attributes = ground_gains(draft, text, spans, rejected)
    gain_decisions: list[GainDecision] = []
    gains, gain_found, gain_attributes = decide_gains(
        gains, gain_found, gain_attributes, text, spans, found_values, rejected,
        gain_decisions, gain_weights)
    tasks, task_found = _capped("tasks", tasks, task_found, rejected)
    methods, method_found = _capped("methods", methods, method_found, rejected)
    benchmarks, bench_found = _capped("benchmarks", benchmarks, bench_found, rejected)
    gains, gain_found = _capped("claimed_gains", gains, gain_found, rejected)
    gain_attributes = gain_attributes[:len(gains)]
    extraction = PaperExtraction(
        contribution_types=_types(draft, benchmarks, text),
        tasks=tasks, methods=methods, benchmarks=benchmarks, claimed_gains=gains,
    )
    added = [f"benchmark {b.name!r}: {why_added[name_key(b.name)]}" for b in benchmarks
             if name_key(b.name) in why_added and not _among(b.name, given)]
    added += [f"gain {g.value:g}: a result number the model left out, in a sentence that "
              "reports results" for g in gains if g.value in found_values]
    return Assembled(
        extraction,
        {"tasks": task_found, "methods": method_found, "benchmarks": bench_found,
         "claimed_gains": gain_found},
        rejected,
        gain_attributes,
        decisions,
        added,
        gain_decisions,
    )


def _word_sets(draft: PaperDraft) -> list[frozenset[str]]:
    """The words of every method and benchmark name the draft holds."""
    return [frozenset(re.findall(r"\w+", name.lower()))
            for name in [*draft.methods, *(b.name for b in draft.benchmarks)]]


def _among(name: str, given: list[frozenset[str]]) -> bool:
    """Whether a stored name is one the model gave, whole or trimmed ('da Vinci Surgical
    System' -> 'Vinci Surgical System', 'FineAction-CGR benchmark' -> 'FineAction-CGR')."""
    words = frozenset(re.findall(r"\w+", name.lower()))
    return bool(words) and any(words <= other for other in given)

