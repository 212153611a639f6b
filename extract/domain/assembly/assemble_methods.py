"""Grounding the paper's own methods: every candidate name is found in the abstract by
code, described by features, and kept, flagged or refused by one calibrated decision
(method_decision.py) rather than by the first rule that objects."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from papersift.extract.domain.lookup.assemble_spans import (
    TRAILING_PARENTHESIS,
    Found,
    as_written,
    evidence_window,
    find_name,
    how_it_reads,
    locate_method,
    looks_like_acronym,
    name_key,
    parenthetical_after,
    sentence_of,
)
from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.extract.domain.rules.benchmark_kinds import called_a_task, named_as_a_problem
from papersift.extract.domain.rules.context_rules import background_end
from papersift.extract.domain.rules.established import established_method
from papersift.extract.domain.rules.known_terms import common_in_field
from papersift.extract.domain.rules.method_candidates import (
    in_proposal_sentences,
    listed_as_part,
    part_of_another,
    parts_defined_after,
    parts_of_own,
    proposal_mention,
    spelled_out,
    variants_of_own,
)
from papersift.extract.domain.rules.method_decision import Decision, Weights, decide, load_weights
from papersift.extract.domain.rules.name_rules import (
    coined_proposals,
    method_rule_hits,
    strictly_proposed,
)
from papersift.extract.domain.rules.presentation_cues import (
    coined_for_lowercase_words,
    presented_as_new,
)
from papersift.extract.domain.rules.resource_cues import named_as_resource
from papersift.schemas import Method, PaperDraft


@dataclass
class _Candidate:
    method: Method
    where: Found
    level: int  # 2: a proposal verb introduces it; 1: a proposal sentence; 0: neither
    keys: set[str]
    features: dict[str, float] = field(default_factory=dict)


def _named_forms(surface: str, text: str, end: int) -> tuple[str | None, list[str]]:
    """The expansion of an acronym, or the acronym given in parentheses after a name."""
    other = parenthetical_after(text, end)
    if other and looks_like_acronym(other) and not looks_like_acronym(surface):
        return None, [other]
    if other and looks_like_acronym(surface):
        return other, []
    return (spelled_out(surface, text) if looks_like_acronym(surface) else None), []


@dataclass(frozen=True)
class Taken:
    """Names that are something other than a method: the stored benchmarks' keys, and the
    names the benchmark rules found to be a task, problem or term (key -> why)."""

    benchmarks: frozenset[str] = frozenset()
    terms: Mapping[str, str] = field(default_factory=dict)

    def why(self, name: str, keys: set[str]) -> str | None:
        """Why a candidate named ``name`` (with all its ``keys``) is something else, or
        None: a stored benchmark under any of its forms, or a task or term under its own
        name."""
        if keys & self.benchmarks:
            return "also listed as a benchmark"
        return self.terms.get(name_key(name))


def _keys(surface: str, expansion: str | None, aliases: list[str]) -> set[str]:
    return {name_key(surface), name_key(expansion or ""), *map(name_key, aliases)} - {""}


# Words that may stand right before a name without making it part of a phrase.
_FREE_BEFORE = frozenset({"the", "a", "an", "our", "we", "propose", "proposes", "introduce",
                          "introduces", "present", "presents", "called", "named", "dubbed",
                          "termed", "and", "or", "of", "with", "by", "to", "in", "on", "for",
                          "from", "as", "is", "are", "that", "which", "via", "using", "new",
                          "novel", "proposed", "this", "its", "their"})


def _inside_a_phrase(text: str, start: int, end: int) -> bool:
    """A capitalised word in the middle of a lowercase phrase: 'Shapley' in
    'counterfactual Shapley values', 'Bayesian' in 'a generalized Bayesian framework'."""
    before = re.search(r"([A-Za-z-]+)[*_\s]*$", text[max(0, start - 30):start])
    after = re.match(r"[*_}\s]*([A-Za-z-]+)", text[end:end + 30])
    return " " not in text[start:end].strip() and before is not None and after is not None \
        and before.group(1).islower() and before.group(1) not in _FREE_BEFORE \
        and after.group(1).islower() and after.group(1) not in _FREE_BEFORE


def _described(text: str, spans: list[tuple[int, int]], start: int, end: int,
               level: int, hits: list[str], reads: str, title: str | None) -> dict[str, float]:
    """The features of a mention that do not depend on the other candidates."""
    surface = text[start:end]
    mentions = [m.start() for m in whole_word(surface).finditer(text)] or [start]
    background = background_end(text, spans)
    in_title = bool(title) and whole_word(surface).search(title or "") is not None
    flags = {
        "strictly_proposed": level == 2, "proposal_sentence": level == 1,
        "in_title_words": in_title, "repeated": len(mentions) > 1,
        "background_only": background > 0 and all(m < background for m in mentions),
        "reads_as_name": reads == "named", "one_word": reads == "one_word",
        "description": reads == "description", "acronym": looks_like_acronym(surface),
        "long": len(surface.split()) > 4,
        "inside_a_phrase": _inside_a_phrase(text, start, end),
        # 'a novel X algorithm': the novelty word is the kind's, not the name's
        "presented_as_new": reads != "description" and "kind_of_method" not in hits
        and presented_as_new(text, start),
        "coined_for_lowercase_words": coined_for_lowercase_words(text, start, end),
        "no_objection": not hits,
        **{f"rule:{rule}": True for rule in hits},
    }
    return {name: 1.0 for name, on in flags.items() if on}


def _drafted(draft: PaperDraft, text: str, spans: list[tuple[int, int]], rejected: list[str],
             headline: str | None, title: str | None) -> list[_Candidate]:
    candidates: list[_Candidate] = []
    for drafted_name in draft.methods:
        name = as_written(drafted_name, text)
        drafted = find_name(name, text)
        defines = TRAILING_PARENTHESIS.match(name)
        if drafted and defines and looks_like_acronym(defines.group(2)):
            acronym = find_name(defines.group(2), text)
            if acronym:  # 'Combined ... planning (CURE)': the acronym is the name
                name, drafted = defines.group(2), acronym
        located = locate_method(name, text, rejected)
        if located is None or drafted is None:
            continue
        status, start, end, reads = located
        defined = TRAILING_PARENTHESIS.match(text[start:end])
        if defined and looks_like_acronym(defined.group(2)):
            start, end = start + defined.start(2), start + defined.end(2)  # 'X (ACR)' -> ACR
            reads = how_it_reads(text, start, end)  # the acronym is the name, not the phrase
        elif defined and looks_like_acronym(defined.group(1)):
            end = start + defined.end(1)  # 'ACR (Its Expansion)' -> ACR, expanded below
        surface = text[start:end]
        level, proposal = proposal_mention(surface, text, spans, (start, end))
        titled = headline is not None and name == headline
        level = 2 if titled else level
        hits = method_rule_hits(text, sentence_of(spans, start, end), drafted[1:], start, end,
                                proposed=level == 2)
        if "url" in hits:  # not a name the text gives: nothing to weigh
            rejected.append(f"method {name!r}: part of a URL, not a name the text gives")
            continue
        features = _described(text, spans, start, end, level, hits, reads, title)
        if proposal is not None:
            start, end = proposal
        expansion, aliases = _named_forms(surface, text, end)
        keys = _keys(surface, expansion, aliases)
        if any(keys & other.keys for other in candidates):
            continue  # the same method under another of its names
        features.update({"from_model": 1.0, **({"named_in_title": 1.0} if titled else {})})
        low, high = evidence_window(text, sentence_of(spans, start, end), (start, end))
        method = Method(name=surface[:120], expansion=expansion, aliases=aliases,
                        evidence=text[low:high])
        candidates.append(_Candidate(method, Found(status, start, end, (low, high)), level,
                                     keys, features))
    return candidates


def _add_found(candidates: list[_Candidate], text: str, spans: list[tuple[int, int]],
               taken: Taken, title: str | None, start: int, end: int,
               feature: str, level: int, expansion: str | None = None) -> None:
    """Add a name code found (with ``feature`` saying how), or give the feature to the
    candidate that already holds it."""
    surface = text[start:end]
    if established_method(surface):
        return  # 'a Chain-of-Thought driven architecture': code proposes no known name
    aliases: list[str] = []
    if expansion is None:
        expansion, aliases = _named_forms(surface, text, end)
    keys = _keys(surface, expansion, aliases)
    if taken.why(surface, keys):
        return
    same = next((c for c in candidates if keys & c.keys), None)
    if same is not None:  # the model's name: a definition in passing still defines it
        same.features["defined_in_proposal" if feature == "defined_in_passing" else feature] = 1.0
        return
    sentence = sentence_of(spans, start, end)
    hits = method_rule_hits(text, sentence, (start, end), start, end, proposed=level == 2)
    if "url" in hits:
        return
    features = _described(text, spans, start, end, level, hits,
                          how_it_reads(text, start, end), title)
    features.update({"from_code": 1.0, feature: 1.0})
    if feature == "listed_part":
        features["part_of_own"] = 1.0
    low, high = evidence_window(text, sentence, (start, end))
    candidates.append(_Candidate(
        Method(name=surface, expansion=expansion, aliases=aliases, evidence=text[low:high]),
        Found("exact", start, end, (low, high)), level, keys, features))


def _found_by_code(candidates: list[_Candidate], text: str, spans: list[tuple[int, int]],
                   taken: Taken, title: str | None) -> None:
    """Add what code finds besides the model: coined names after a proposal verb,
    acronyms a proposal sentence defines, then the named parts of the paper's own method
    and its sizes and variants (the model often leaves those out)."""
    for start, end in coined_proposals(text, spans):
        if not named_as_resource(text, start, end):
            _add_found(candidates, text, spans, taken, title, start, end,
                       "coined_after_verb", 2)
    defined = in_proposal_sentences(text, spans)
    for _, start, end, spelled in defined:
        level = _definition_level(text, spans, start, end, spelled)
        _add_found(candidates, text, spans, taken, title, start, end,
                   "defined_in_proposal" if level == 2 else "defined_in_passing", level,
                   spelled or None)
    # 'Specifically, Adaptive Center Regression (ACR) widens ...': the parts of the method
    for _, start, end, spelled in parts_defined_after(text, spans, {a for a, *_ in defined}):
        _add_found(candidates, text, spans, taken, title, start, end,
                   "listed_part", 1, spelled or None)
    own = [form for c in candidates if c.level == 2
           for form in (c.method.name, c.method.expansion or "") if form]
    if not own:
        return
    for start, end in parts_of_own(text, spans, own):
        _add_found(candidates, text, spans, taken, title, start, end, "listed_part", 1)
    for start, end in variants_of_own(text, own):
        _add_found(candidates, text, spans, taken, title, start, end,
                   "variant_of_own", 2)


def _definition_level(text: str, spans: list[tuple[int, int]], start: int, end: int,
                      spelled: str) -> int:
    """How strongly the abstract presents an acronym a proposal sentence defines: 2 when a
    proposal verb introduces it or its expansion ('we present Fast Feature Conformal
    Prediction (FFCP)'), else 1 ('we introduce X, a framework grounded in Pearl's Causal
    Hierarchy (PCH)'). Being defined in a proposal sentence is not by itself being
    proposed."""
    level, _ = proposal_mention(text[start:end], text, spans, (start, end))
    at = text.rfind(spelled, 0, start) if spelled and level < 2 else -1
    if at >= 0 and strictly_proposed(text, sentence_of(spans, at, at + len(spelled)), at,
                                     at + len(spelled)):
        return 2
    return max(level, 1)


def _relations(candidates: list[_Candidate], text: str, spans: list[tuple[int, int]]) -> None:
    """The features that depend on the other candidates: a part of the paper's method, a
    name weaker than the paper's own."""
    own = [c.method for c in candidates if c.level == 2]
    for candidate in candidates:
        if own and candidate.level == 0 and listed_as_part(text, spans, candidate.where.start, own):
            candidate.level = 1
            candidate.features.pop("proposal_sentence", None)
            candidate.features["part_of_own"] = 1.0
    strongest = max((c.level for c in candidates), default=0)
    for candidate in candidates:
        if common_in_field(candidate.method.name, candidate.method.expansion):
            candidate.features["common_in_field"] = 1.0
        if candidate.level < min(strongest, 1):
            candidate.features["weaker_than_own"] = 1.0
        objections = {"description", "one_word", "weaker_than_own"} | {
            name for name in candidate.features if name.startswith("rule:")}
        if not objections & set(candidate.features):
            candidate.features["rules_keep"] = 1.0


def _a_problem(text: str, where: Found) -> str | None:
    problem = named_as_a_problem(text, where.start, where.end) or called_a_task(
        text, where.start, where.end)
    return f"{problem}, not a method" if problem else None


def _merged(candidates: list[_Candidate], text: str, rejected: list[str],
            taken: Taken) -> list[_Candidate]:
    """Candidates that are not another item under a part of its name: a fragment of a
    longer candidate's name ('Thompson' beside 'Nested Causal Thompson Sampling'), a
    name already stored as a benchmark, or one the benchmark rules found to be a task or
    term (``taken``). These are the same thing named twice, not a
    judgement of what kind of name it is, so they are merged here rather than weighed."""
    kept = []
    for candidate in candidates:
        name = candidate.method.name
        # 'DeepStack' is not a part of its own size 'DeepStack 7B'
        longer = [c.method for c in candidates
                  if not ("variant_of_own" in c.features and c.method.name.startswith(name))]
        why = taken.why(name, candidate.keys) or _a_problem(text, candidate.where)
        if why:
            rejected.append(f"method {name!r}: {why}")
        elif part_of_another(candidate.method, longer, text):
            rejected.append(f"method {name!r}: part of a longer name")
        else:
            kept.append(candidate)
    return kept


def method_candidates(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
                      rejected: list[str], taken: Taken,
                      headline: str | None = None, title: str | None = None
                      ) -> list[_Candidate]:
    """Every grounded name that may be the paper's own method, with its features."""
    candidates = _drafted(draft, text, spans, rejected, headline, title)
    _found_by_code(candidates, text, spans, taken, title)
    candidates = _merged(candidates, text, rejected, taken)
    _relations(candidates, text, spans)
    return candidates


def ground_methods(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
                   rejected: list[str], taken: Taken,
                   headline: str | None = None, title: str | None = None,
                   decisions: list[Decision] | None = None,
                   weights: Weights | None = None) -> tuple[list[Method], list[Found | None]]:
    """The paper's own named methods: the candidates the decision keeps, in order. Flagged
    and refused ones are noted in ``rejected`` with their score; every decision is
    appended to ``decisions`` when given."""
    weights = weights or load_weights()
    methods: list[Method] = []
    found: list[Found | None] = []
    for candidate in method_candidates(draft, text, spans, rejected, taken,
                                       headline, title):
        where = candidate.where
        method = candidate.method
        decision = decide(method.name, where.start, where.end, candidate.features, weights,
                          tuple(form for form in (method.expansion, *method.aliases) if form))
        if decisions is not None:
            decisions.append(decision)
        if decision.outcome != "kept":
            rejected.append(decision.note(weights))
        else:  # assemble trims to the stored limit, noting the rest
            methods.append(candidate.method)
            found.append(where)
    return methods, found
