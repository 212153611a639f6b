"""Rules, read off the abstract's own wording, for whether a name is the paper's own method.

Small models list whatever is capitalised: baselines ("methods such as SimHash"),
building blocks ("Transformer-based"), fragments of descriptions ("Rashomon ensemble of
near-optimal trees" trimmed to "Rashomon"), acronyms of lowercase terms of art ("optimal
transport (OT)"), authors ("Karagodin et al."), problem classes ("we formalise the
problem as X") and named findings ("we uncover a Substitution Paradox"). They also miss
the paper's headline name when it sits right after "we propose". The rules here look
only at the words around a mention, never at particular names, so they carry over to
abstracts nobody tuned them on.
"""

from __future__ import annotations

import re
from functools import lru_cache

from papersift.extract.domain.lookup.assemble_spans import looks_like_acronym
from papersift.extract.domain.rules.context_rules import (
    a_count_of_things,
    a_kind_of_benchmarks,
    a_size,
    listed_as_data,
    named_in_parentheses_after_a_resource,
    names_a_kind,
    names_a_setting,
    trained_by_the_paper,
)
from papersift.extract.domain.rules.established import (
    a_class_of_models,
    eponyms,
    established_method,
    known_metric,
    never_a_benchmark,
    task_phrase,
)
from papersift.extract.domain.rules.resource_cues import named_as_resource

# A sentence presents something as the paper's own ("we propose", "this paper introduces").
# ('namely' and 'in terms of' name nothing)
PROPOSAL_VERB = re.compile(
    r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|develop|design|"
    r"call|dub|nam(?!ely)|term(?!s\b)|build|devis|formulat|creat|offer|instantiat|implement)"
    r"\w*|\bcalled\b|\bdubbed\b|\bnamed\b|\btermed\b|\bcoined\b|\breferred to as\b|\(ours\)",
    re.I)
# Words between the proposal verb and a name that make the name something else: what the
# proposed thing uses, extends, or is compared with ("we propose X, which uses Y").
_BLOCKING_GAP = re.compile(
    r"\b(that|which|who|whose|using|uses|use|via|with|than|such as|including|like|against|"
    r"based|built|on top of|leverag\w*|utiliz\w*|employ\w*|adopt\w*|apply\w*|applying|"
    r"extend\w*|from|over|into|upon|in|on|to|by|under|"
    r"follow\w*|for|"
    r"and (?:evaluate|compare|test)\w*)\b|[;:]", re.I)
_MAX_GAP = 90
# Right before a name: a new thing of a method's kind names it ('resulting in a novel
# framework, PIECE', 'a new algorithm called X').
_NEW_KIND_BEFORE = re.compile(
    r"\b(?:a|an|our)\s+(?:new|novel)\s+(?:[\w-]+\s+){0,3}?(?:framework|method|model|approach|"
    r"algorithm|system|architecture|technique|pipeline|agent)\s*(?:,|:|called|named|dubbed|"
    r"termed)\s*[*_{]*$", re.I)
# Right after a name: it is presented as new ("X, a novel ...", "X (ours)").
_NEW_AFTER = re.compile(r"^[*_}\s]*(\([^()]{1,40}\))?[*_}\s]*(,|:|—|--|-{3})?\s*"
                        r"(a|an|the|our)?\s*(new|novel|first|proposed)\b|^\s*\(ours\)", re.I)

# Just before a name: it is an example of existing work, a baseline, or what is compared.
_BASELINE_BEFORE = re.compile(
    r"\b(such as|including|like|e\.g\.,?|i\.e\.,?|compared (with|to)|comparison (with|to)|"
    r"than|outperform\w*|surpass\w*|beat\w*|over|against|versus|vs\.?|baselines?|prior|"
    r"existing|previous|standard|vanilla|conventional|popular|classic(al)?|off-the-shelf|"
    r"pretrained|pre-trained|fine-tun\w*|backbones?|built on|based on|on top of|"
    r"extend\w*|generali[sz]\w*|adapt\w*|apply\w*|applied to|using|uses|employ\w*|"
    r"leverag\w*|follow(s|ing|ed)?)"
    r"\s*(\*|_|\\textbf\{|\\emph\{|\\textit\{)*$", re.I)
# Just after a name: a building block ("Transformer-based", "(NWC)-based" after the acronym
# a parenthesis defines), or others' work ("X et al.").
_BUILDING_BLOCK_AFTER = re.compile(
    r"^[*_})]*-(based|style|like|inspired|driven|guided|type|family|variant|backbone)\b", re.I)
_AUTHOR_AFTER = re.compile(r"^[*_}]*,?\s*et\s+al\b")
# Right after a name: a citation marks it as earlier work ('Gaussian Splatting [22]').
_CITATION_AFTER = re.compile(
    r"^[*_}]*\s*(\[\d+(?:\s*[,–-]\s*\d+)*\]|\([A-Z][\w-]+(?:\s+et\s+al\.?|\s+and\s+[A-Z][\w-]+)?"
    r",?\s+\d{4}[a-z]?\))")
# 'MLLMs', 'PTFs': a class of things, not the one method a paper proposes.
_PLURAL_ACRONYM = re.compile(r"^[A-Z][A-Z0-9-]*[A-Z]s$")
# 'VITS-based TTS': a description built around another method.
_BUILDING_BLOCK_INSIDE = re.compile(r"\S-(based|style|like|driven|guided|inspired)\s", re.I)
_URL = re.compile(r"(https?://|www\.)\S+")
_WORD_BEFORE = re.compile(r"([\w-]+)\W*$")


_EXPANSION_BEFORE = re.compile(r"(?:[A-Z0-9][\w-]*\s+){1,6}\(\s*$")


def baseline_before(text: str, start: int) -> bool:
    """Whether the words right before ``start`` mark what follows as existing work."""
    return bool(_BASELINE_BEFORE.search(text[max(0, start - 60):start]))


# Capitalised words and the parenthesis after them: where an abstract defines an acronym.
_DEFINITION = re.compile(r"((?:[A-Z][\w-]*\s+){1,6})\(\s*([^()\s][^()]*?)\s*\)")
# The same with joining words inside ('Traveling Salesman Problem with Time Window (TSPTW)').
_JOINED_DEFINITION = re.compile(
    r"((?:[A-Z][\w-]*\s+(?:(?:with|of|for|under|on|in|and)\s+(?=[A-Z]))?){1,8})"
    r"\(\s*([^()\s][^()]*?)\s*\)")


def defined_as(text: str, acronym: str, joined: bool = False) -> str:
    """The capitalised words the abstract first defines an acronym with ('Graph Transformer
    (GT)' for GT), or '' (one pattern for every name: no compiling per mention);
    ``joined``: joining words may stand between them ('Problem with Time Window')."""
    if not acronym or " " in acronym:
        return ""
    pattern = _JOINED_DEFINITION if joined else _DEFINITION
    match = next((m for m in pattern.finditer(text) if m.group(2) == acronym), None)
    return match.group(1).strip() if match else ""


def inside_url(text: str, start: int, end: int) -> bool:
    """Whether [start, end) lies inside a URL the abstract prints."""
    return any(url.start() <= start and end <= url.end() for url in _URL.finditer(text))


def lowercase_term_acronym(text: str, acronym: str) -> bool:
    """Whether the abstract defines this acronym for lowercase words ('federated learning
    (FL)', 'Molecular dynamics (MD)' at a sentence start): a term of art or a field, not
    a coined name."""
    letters = sum(c.isupper() for c in acronym)
    if letters < 2 or not re.fullmatch(r"[A-Z0-9][A-Za-z0-9-]*", acronym):
        return False
    for match in re.finditer(r"\(\s*" + re.escape(acronym) + r"\s*\)", text):
        offset = max(0, match.start() - 120)
        words = list(re.finditer(r"[A-Za-z][\w-]*", text[offset:match.start()]))
        words = _spelling(words[-8:], acronym)
        if len(words) < 2 and not (words and "-" in words[0].group()):
            continue  # one hyphenated word spells two letters ('Spatio-temporal (ST)')
        first = words[0]
        lead = text[max(0, offset + first.start() - 3):offset + first.start()]
        at_sentence_start = offset + first.start() == 0 or bool(re.search(r"[.!?:]\s*$", lead))
        rest = words[1:] if at_sentence_start else words
        # a person's name inside the term keeps it lowercase ('a hidden Markov model')
        if all(not w.group()[:1].isupper() or w.group() in eponyms() for w in rest):
            return True
    return False


def _spelling(words: list[re.Match[str]], acronym: str) -> list[re.Match[str]]:
    """The last words before '(ACR)' that spell the acronym: the shortest run that starts
    with its first letter and holds its letters in order ('an evaluation framework
    (EVADE)' spells nothing: EVADE is a coined name, not this term's acronym)."""
    wanted = [c.lower() for c in acronym if c.isalpha()]
    for size in range(1, min(len(words), len(wanted) + 2) + 1):
        run = words[-size:]
        if run[0].group()[:1].lower() != wanted[0]:
            continue
        letters = iter("".join(w.group() for w in run).lower())
        if all(c in letters for c in wanted):
            return run
    return []


# Before a name: the paper studies a problem, setting or finding under that name.
_PROBLEM_BEFORE = re.compile(
    r"\b(formali[sz]\w*|problem( class)?|setting|phenomenon|regime|conjecture|"
    r"uncover\w*|discover\w*|observe\w*|reveal\w*|identif\w*|evidence (for|of)|dub this|"
    r"call this (phenomenon|effect|failure|problem))\b[^.;:]{0,40}$", re.I)
# A name whose head word says it is a result or a finding, not a method.
_FINDING_HEAD = re.compile(
    r"\b(paradox|gap|theorem|lemma|conjecture|law|effect|phenomenon|hypothesis|problem|"
    r"principle|bound|dilemma|curse|trap|fallacy|illusion|inequality|identity|"
    r"decomposition|hierarchy)$", re.I)
# Words a trimmed description may lose at its end without being a description.
_KIND_WORDS = frozenset({
    "framework", "method", "model", "models", "algorithm", "approach", "architecture",
    "system", "pipeline", "network", "networks", "module", "technique", "estimator",
    "benchmark", "dataset", "suite", "library", "toolkit", "agent", "policy", "loss",
    "objective", "metric", "score", "family", "strategy", "procedure", "mechanism",
})


# Words a name may lose before it ('the', 'our new') or after it ('X with Y' keeps X).
_LEADING_WORDS = frozenset({"the", "a", "an", "our", "new", "novel", "proposed", "this",
                            "its", "their", "we", "call", "called", "named", "dubbed"})
_JOINING_WORDS = frozenset({"with", "for", "of", "in", "and", "on", "via", "to", "as"})


def strictly_proposed(text: str, sentence: tuple[int, int], start: int, end: int) -> bool:
    """Whether this mention is what the sentence presents as the paper's own: it follows
    a proposal verb with nothing between them that makes it a tool, a part or a baseline
    ('we propose X' yes; 'we propose X, which builds on Y': Y no), or it is presented as
    new right after it ('X, a novel ...', 'X (ours)')."""
    if _NEW_AFTER.search(text[end:min(sentence[1], end + 60)]) or _NEW_KIND_BEFORE.search(
            text[max(sentence[0], start - 80):start]):
        return True
    verbs = [m for m in PROPOSAL_VERB.finditer(text, sentence[0], start)]
    if not verbs:
        return False
    gap = text[verbs[-1].end():start]
    gap = re.sub(r"^\w*", "", gap)  # the rest of the verb ('propos|es')
    # an apposition after a comma names what the verb introduces ('a method for X, Y')
    return len(gap) <= _MAX_GAP and not _BLOCKING_GAP.search(gap.rsplit(",", 1)[-1])


# What each rule about a method mention says, by its id: the calibrated decision
# (method_decision.py) reads the ids as features, and the reasons explain a refusal.
METHOD_RULES: dict[str, str] = {
    "acronym_in_parenthesis": "the acronym of a lowercase term, not a coined name",
    "cut_from_description": "part of a description, not a name",
    "common_word": "one common capitalised word, not a coined name",
    "author": "an author's name",
    "url": "part of a URL, not a name the text gives",
    "building_block_inside": "a description around a building block ('X-based Y')",
    "citation": "cited prior work ('X [12]')",
    "plural_acronym": "a class of things (a plural acronym), not one method",
    "lowercase_term_acronym": "the acronym of a lowercase term, not a coined name",
    "established": "an established method or model, not the paper's own",
    "listed_among_models": "one of a list of models or methods it evaluates, not its own",
    "building_block_after": "a building block ('-based'), not the paper's method",
    "kind_of_method": "the kind of the paper's method ('a novel X algorithm'), not its name",
    "setting": "a setting, problem or phenomenon ('the X setting'), not a method",
    "finding": "names a result, finding or structure, not a method",
    "problem_before": "a problem, setting or finding the paper studies",
    "baseline_before": "a baseline, example or building block, by the words before it",
}


def method_rule_hits(text: str, sentence: tuple[int, int], drafted: tuple[int, int],
                     start: int, end: int, proposed: bool) -> list[str]:
    """The ids of every METHOD_RULES rule that speaks against a mention ([start, end),
    trimmed from the model's [drafted]) being a method of the paper's own, in the order
    they used to be tried. ``proposed``: some mention of it is strictly proposed."""
    mention = text[start:end]
    bare = mention.strip("*_ ")
    hits: list[str] = []
    if mention.startswith("("):
        hits.append("acronym_in_parenthesis")
    cut_before = re.findall(r"[A-Za-z]+", text[drafted[0]:start])
    cut_after = re.findall(r"[A-Za-z]+", text[end:drafted[1]])
    if not proposed and (set(w.lower() for w in cut_before) - _LEADING_WORDS or (
            cut_after and cut_after[0].islower() and cut_after[0] not in _KIND_WORDS
            and cut_after[0] not in _JOINING_WORDS)):
        hits.append("cut_from_description")
    if " " not in mention.strip() and mention[:1].isupper() and mention[1:].islower() \
            and not proposed:
        hits.append("common_word")
    checks = (
        ("author", bool(_AUTHOR_AFTER.match(text[end:end + 12]))),
        ("url", inside_url(text, start, end)),
        ("building_block_inside", bool(_BUILDING_BLOCK_INSIDE.search(f"{mention} "))),
        ("citation", not proposed and bool(_CITATION_AFTER.match(text[end:end + 40]))),
        ("plural_acronym", not proposed and bool(_PLURAL_ACRONYM.match(bare))),
        ("lowercase_term_acronym", not proposed and lowercase_term_acronym(text, bare)),
        ("established", (not proposed and (established_method(bare)
                                           or established_method(defined_as(text, bare))))
         or a_class_of_models(bare)),
        ("listed_among_models", not proposed and listed_among_models(text, start, end)),
        ("building_block_after", bool(_BUILDING_BLOCK_AFTER.match(text[end:end + 14]))),
        ("kind_of_method", names_a_kind(text, start, end)),
        ("setting", names_a_setting(text, end)),
        ("finding", bool(_FINDING_HEAD.search(mention.rstrip("*_} "))) and not proposed),
    )
    hits += [rule for rule, fired in checks if fired]
    if not proposed:
        before = text[max(sentence[0], start - 60):start]
        # an acronym's own expansion before it ('Novel Object Discovery (3D-NOD)') is no cue
        before = _EXPANSION_BEFORE.sub("", before)
        if _PROBLEM_BEFORE.search(before):
            hits.append("problem_before")
        elif _BASELINE_BEFORE.search(before):
            hits.append("baseline_before")
    return hits


def refused_method(text: str, sentence: tuple[int, int], drafted: tuple[int, int],
                   start: int, end: int, proposed: bool) -> str | None:
    """Why a mention is not a method of the paper's own by the first rule that fires, or
    None (see method_rule_hits)."""
    hits = method_rule_hits(text, sentence, drafted, start, end, proposed)
    return METHOD_RULES[hits[0]] if hits else None


# A coined name right after a proposal verb: 'we introduce Voyager, ...', 'we propose
# **FLASH**', 'we present the StruBI algorithm', 'a framework called MedNet'.
_COINED_AFTER_VERB = re.compile(  # used with match(text, pos): anchored there
    r"\w*\s+(?:(?:a|an|the)\s+)?(?:(?:new|novel|simple|unified|general)\s+)?"
    r"(?:(?:framework|method|model|algorithm|approach|system|agent|architecture|pipeline),?\s+)?"
    r"(?:called\s+|named\s+|dubbed\s+|as\s+)?"
    r"(\*\*|\*|\\textbf\{|\\textsc\{|\\emph\{|\\textit\{)?"
    r"([A-Z0-9][A-Za-z0-9]*(?:[-+](?!(?:based|driven|style)\b)[A-Za-z0-9]+)*\+*)"
    r"(\*\*|\*|\})?"
    r"(?=\s*(,|:|\(|—|--|\.(?:\s|$)|\s+(?:a|an|the|which|that|to|for|as|algorithm|framework|method|"
    r"model|system|agent)\b)|-(?:based|driven|style)\b)")  # 'our DEST-based method': DEST


def _coined(name: str, emphasised: bool) -> bool:
    """A coined name: mixed case or digits ('StruBI', 'DoAtlas-1'), an acronym, or a
    capitalised word the abstract sets off by emphasis ('**Voyager**')."""
    letters = [c for c in name if c.isalpha()]
    if len(name) < 2 or not letters:
        return False
    inner_caps = any(c.isupper() for c in name[1:]) or any(c.isdigit() for c in name)
    return inner_caps or emphasised


def coined_proposals(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of coined names that a proposal verb introduces directly (the model misses
    some of these): candidates for the paper's own method or benchmark."""
    return list(_coined_proposals(text, tuple(spans)))


@lru_cache(maxsize=64)  # assembly asks it twice per abstract
def _coined_proposals(text: str, spans: tuple[tuple[int, int], ...]
                      ) -> tuple[tuple[int, int], ...]:
    found = []
    for begin, end in spans:
        for verb in PROPOSAL_VERB.finditer(text, begin, end):
            match = _COINED_AFTER_VERB.match(text, verb.end(), end)
            if match is None:
                continue
            if _coined(match.group(2), bool(match.group(1))):
                found.append((match.start(2), match.end(2)))
        for our in re.finditer(r"\b[Oo]ur\b", text[begin:end]):
            match = _COINED_AFTER_VERB.match(text, begin + our.end(), end)
            if match is not None and (match.start(2), match.end(2)) not in found and (
                    _coined(match.group(2), bool(match.group(1)))
                    or _spelled_by_parenthesis(match.group(2), text, match.end())):
                found.append((match.start(2), match.end(2)))
    return tuple(found)


def _spelled_by_parenthesis(name: str, text: str, end: int) -> bool:
    """'Leddam (LEarnable Decomposition and Dual Attention Module)': the capitals of the
    words in parentheses after the name spell it."""
    spelled = re.match(r"[*_}]*\s*\(([^()]{4,120})\)", text[end:end + 130])
    if spelled is None:
        return False
    capitals = "".join(c for c in spelled.group(1) if c.isupper()).lower()
    return len(name) >= 3 and capitals == name.lower()


# A name in parentheses right after another name describes it ('Open Images (Multi-Object)').
_DESCRIBING_PARENTHESIS = re.compile(r"[A-Za-z0-9][*_}]*\s*\(\s*$")


def describes_the_name_before(text: str, start: int, end: int) -> bool:
    """Whether the mention fills a parenthesis right after another name and is no acronym,
    no coined name ('BoneMet') and not followed by a kind word ('the Bone Metastasis
    (BoneMet) dataset' names the dataset)."""
    mention = text[start:end]
    return bool(_DESCRIBING_PARENTHESIS.search(text[max(0, start - 4):start])) \
        and text[end:end + 2].lstrip().startswith(")") \
        and not looks_like_acronym(mention) \
        and not re.search(r"[a-z][A-Z]|\d", mention) \
        and not _KIND_AFTER_PARENTHESIS.match(text[end:end + 30])


_KIND_AFTER_PARENTHESIS = re.compile(
    r"^\s*\)\s*(?:benchmark|dataset|corpus|suite|collection|environment)s?\b", re.I)
_RESOURCE_KINDS = frozenset({"benchmark", "dataset", "data", "corpu", "suite", "collection",
                             "environment", "testbed", "leaderboard", "set", "split", "task",
                             "challenge", "study", "cohort", "database", "simulator"})
_LIST_OF_PARTS = re.compile(
    r"\b(tasks?|categor(y|ies)|dimensions?|types?|aspects?|levels?|skills?|axes|settings?|"
    r"subsets?|splits?|domains?|scenarios?)\b[^.;]{0,20}:\s*([^.;:]{0,120})$", re.I)
_NUMBER_WORD = re.compile(r"^(\d[\d,.]*|one|two|three|four|five|six|seven|eight|nine|ten|"
                          r"eleven|twelve|several|many|multiple|various)$", re.I)


# 'Western-centric datasets', 'task-specific benchmarks', '3D datasets': a word that
# describes the data, whatever its capitals.
_DESCRIBING_COMPOUND = re.compile(
    r"-(?:centric|specific|aware|agnostic|oriented|free|friendly|intensive|driven|level|"
    r"grained|scale)$", re.I)
_DIMENSION = re.compile(r"^\d(?:\.\d)?D$")


def refused_benchmark(text: str, drafted: tuple[int, int], start: int, end: int) -> str | None:
    """Why a mention ([start, end), trimmed from the model's [drafted]) is not a named
    benchmark, or None: a described thing around a proper noun ('3GPP specifications',
    'eight U.S. cities'), or one item of a list of task types ('four tasks: Collision,
    Occlusion, ...')."""
    cut_before = re.findall(r"[\w,.]+", text[drafted[0]:start])
    cut_after = re.findall(r"[A-Za-z]+", text[end:drafted[1]])
    if any(_NUMBER_WORD.match(word) for word in cut_before):
        return "a described quantity, not a name"
    kinds = {word.lower().rstrip("s") for word in cut_after} & _RESOURCE_KINDS
    if cut_after and cut_after[0].islower() and not kinds \
            and cut_after[0] not in _JOINING_WORDS:
        return "part of a description, not a name"
    mention = text[start:end]
    if inside_url(text, start, end):
        return "part of a URL, not a name the text gives"
    if trained_by_the_paper(text, start):
        return "a model the paper trains or fine-tunes, not a benchmark"
    if a_kind_of_benchmarks(text, start, end):
        return "a kind of benchmark ('diverse X benchmarks'), not a name"
    if a_size(mention) or a_count_of_things(text, start, end):
        return "a size or count ('a 34.8-hour dataset', '10 GNN benchmark datasets'), not a name"
    if _PLURAL_ACRONYM.match(mention.strip("*_ ")):
        return "a class of things (a plural acronym: 'SCMs'), not a named benchmark"
    if _DESCRIBING_COMPOUND.search(mention.strip("*_ ")) or _DIMENSION.match(mention.strip()):
        return "a describing word ('Western-centric', '3D'), not a name"
    if lowercase_term_acronym(text, mention.strip("*_ ()")) and \
            not named_in_parentheses_after_a_resource(text, start):
        return "the acronym of a lowercase term (a task or field), not a benchmark"
    if (established_method(mention.strip("*_ ")) or known_metric(mention.strip("*_ "))) \
            and not listed_as_data(text, start):
        return "an established method, model or metric, not a benchmark"
    if never_a_benchmark(mention.strip("*_ ")):
        return "an organisation, tool, language or mathematical name, not a benchmark"
    if task_phrase(mention.strip("*_ ")) and not named_as_resource(text, start, end) and \
            not named_in_parentheses_after_a_resource(text, start):
        return "a task, not a benchmark"
    plain_word = " " not in mention.strip() and mention[:1].isupper() and mention[1:].islower()
    if plain_word and _LIST_OF_PARTS.search(text[max(0, start - 160):start]):
        return "one of a list of task types, not a benchmark"
    if _BUILDING_BLOCK_INSIDE.search(text[max(0, start - 30):start]):
        return "a description around a building block ('X-based Y'), not a name"
    if describes_the_name_before(text, start, end) and \
            not named_in_parentheses_after_a_resource(text, start):
        return "a description in parentheses after another name, not a benchmark"
    if in_math(text, start):
        return "inside a formula, not a name"
    if _MODEL_HEAD_AFTER.match(text[end:end + 30]) or listed_among_models(text, start, end):
        return "named as a model or method, not a benchmark"
    return None


# Right after a name: it names a model or a method ('TTS models', 'the DETR detector').
_MODEL_HEAD_AFTER = re.compile(
    r"^[*_}]*(-based|-style)?\s+(models?|LLMs?|MLLMs?|VLMs?|architectures?|backbones?|"
    r"detectors?|encoders?|decoders?|networks?|algorithms?|optimi[sz]ers?|agents?|"
    r"policies|policy|variants?|family|checkpoints?)\b")
# Before a name, in its clause: a list that a model or method noun heads ('multimodal
# models, including GPT-4 and LLaVA-NeXT', 'baselines such as X'), with nothing but names
# between the noun and this one.
_MODEL_LIST_BEFORE = re.compile(
    r"\b(models?|LLMs?|MLLMs?|VLMs?|baselines?|methods?|algorithms?|architectures?|"
    r"approaches|networks?|backbones?|detectors?|agents?|optimi[sz]ers?|systems?|famil(y|ies)|"
    r"competitors?)\s*(,|:|\()?\s*(including|such as|like|e\.g\.|namely|for example|"
    r"for instance)?\s*,?\s*"
    r"((the\s+)?[A-Z0-9][\w.+-]*(\s+[A-Z0-9][\w.+-]*){0,3}\s*(,\s*(and|or)?|and|or|&)\s*){0,12}$")
# After a name: the rest of a list that a model noun closes ('X, Y, and Z VLA models').
_MODEL_LIST_AFTER = re.compile(
    r"^[*_}]*((\s*(,|and|or|&)\s*)+[A-Z0-9][\w.+-]*(\s+[A-Z0-9][\w.+-]*){0,3}){1,12}\s+"
    r"(models?|LLMs?|MLLMs?|VLMs?|baselines?|architectures?|backbones?|detectors?|policies)\b")


def listed_among_models(text: str, start: int, end: int) -> bool:
    """Whether the mention at [start, end) is one item of a list of models or methods."""
    return bool(_MODEL_LIST_BEFORE.search(text[max(0, start - 240):start])
                or _MODEL_LIST_AFTER.match(text[end:end + 240]))


def in_math(text: str, start: int) -> bool:
    """Whether ``start`` lies inside a $...$ formula ('$L^p$ functions')."""
    line_start = text.rfind("\n\n", 0, start) + 1
    return text.count("$", line_start, start) % 2 == 1


# Right after a name: it is presented as a method ('FOCUS, a novel algorithm'), or just
# before it ('a molecule generation method named GFMDiff').
_METHOD_AFTER = re.compile(
    r"^[*_}\s]*(\([^()]{1,40}\))?[*_}\s)]*(,|:|—|--)\s*(a|an|our)\s+([\w-]+\s+){0,4}?"
    r"(framework|method|model|algorithm|approach|architecture|pipeline|technique|network|"
    r"strategy|module|mechanism|estimator|scheme|paradigm|recipe|optimi[sz]er|solver|"
    r"procedure|decoder|encoder|policy)\b", re.I)
_METHOD_BEFORE = re.compile(
    r"\b(framework|method|model|algorithm|approach|architecture|pipeline|technique|network|"
    r"strategy|scheme|paradigm|estimator|detector|encoder|decoder|agent|optimi[sz]er|solver|"
    r"policy|module)\s*,?\s+(called|named|dubbed|termed)\s*"
    r"(\*\*|\*|\\textbf\{|\\emph\{)?$", re.I)


# 'On ChartQA, our approach improves ...': 'our approach' is the subject of the main
# clause (a finite verb follows), not an apposition to the name before the comma.
_MAIN_CLAUSE_AFTER = re.compile(
    r"^\s+(?:\w+ly\s+)?(?:not\s+only\s+)?(?:can|could|may|will|would|is|was|has|also|"
    r"\w+[^s\W]s)\b")


def named_as_method(text: str, start: int, end: int) -> bool:
    """The abstract calls this name a method, model or framework right next to it; not
    'a novel benchmarking framework', which is a benchmark, nor the dataset of a clause
    before the sentence's subject ('Averaging over three splits of Text-KVQA, our
    proposed approach surpasses ...')."""
    after = _METHOD_AFTER.match(text[end:end + 120])
    if after and after.group(3).lower() == "our" and _MAIN_CLAUSE_AFTER.match(
            text[end + after.end():end + after.end() + 40]):
        after = None
    return bool((after and "benchmark" not in after.group(0).lower())
                or _METHOD_BEFORE.search(text[max(0, start - 60):start]))


_TITLE_PREFIX = re.compile(r"^\s*([^:]{1,48}?)\s*:\s+(\S.*)$", re.S)
# The title calls its name a resource: a resource noun that heads its phrase ('A Benchmark
# for ...', 'Multi-News+: Cost-efficient Dataset Cleansing'), not one that modifies another
# noun ('Fair Dataset Distillation', 'Benchmark Reduction') or that a leading gerund takes
# as its object ('Generating Diverse Datasets with ...'): those titles name a method.
_AFTER_A_HEAD = (r"(?:and|or|for|of|with|in|on|to|from|via|by|the|a|an|at|as|across|under|"
                 r"towards?|over|based|using|beyond|without|through|into|frameworks?|study|"
                 r"benchmarks?|datasets?|corpus|corpora|suites?|testbeds?|leaderboards?|"
                 r"arenas?|platforms?|hubs?|library|collections?|[\w-]+(?:ing|ed))")
_TITLE_RESOURCE = re.compile(
    r"\b(benchmark|dataset|corpus|suite|testbed|leaderboard|arena)s?\b"
    rf"(?!\s+(?!{_AFTER_A_HEAD}\b)[A-Za-z])", re.I)
_GERUND_OBJECT = re.compile(r"^[A-Z][a-z]+ing\s+(?:(?!(?:a|an|the|with|for|via|through|to)\b)"
                            r"[\w-]+\s+){0,4}(?:datasets|benchmarks|corpora)\b", re.I)
_TITLE_MARKUP = re.compile(r"\$|\\[A-Za-z]+|[{}*_]")


def title_name(title: str | None) -> tuple[str, bool] | None:
    """The name a title gives before its colon ('Mamba4Rec: Towards Efficient ...'), and
    whether the title calls it a benchmark or dataset; None when the title has no such
    name (a prefix of more than three words, or plain words only)."""
    if not title:
        return None
    match = _TITLE_PREFIX.match(title)
    if match is None:
        return None
    name = _TITLE_MARKUP.sub("", match.group(1)).strip()
    words = name.split()
    if not words or len(words) > 3:
        return None
    coined = any(any(c.isupper() for c in word[1:]) or any(c.isdigit() for c in word)
                 for word in words) or (len(words) == 1 and words[0][:1].isupper())
    if not coined:
        return None
    rest = match.group(2)
    return name, bool(_TITLE_RESOURCE.search(rest)) and not _GERUND_OBJECT.match(rest)
