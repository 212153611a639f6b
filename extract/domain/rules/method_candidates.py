"""Where names that may be the paper's own method come from, besides the model: acronyms
a proposal sentence defines, the named parts of the paper's method, and how strongly the
abstract presents a name as the paper's own."""

from __future__ import annotations

import re

from papersift.extract.domain.lookup.assemble_spans import looks_like_acronym, name_key, sentence_of
from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.extract.domain.rules.established import established_method, known_metric
from papersift.extract.domain.rules.name_rules import baseline_before, strictly_proposed
from papersift.extract.domain.rules.presentation_cues import (
    acronym_letters,
    spelled_by_lowercase_words,
)
from papersift.schemas import Method

_PROPOSAL = re.compile(
    r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|develop|design|"
    r"call|dub|nam|term|build|devis|formulat|creat|offer)\w*|\bcalled\b|\bdubbed\b|"
    r"\bnamed\b|\btermed\b|\bcoined\b|\(ours\)", re.I)


def proposal_mention(surface: str, text: str, spans: list[tuple[int, int]],
                      first: tuple[int, int]) -> tuple[int, tuple[int, int] | None]:
    """How strongly the abstract presents a name as the paper's own (2: a proposal verb
    introduces it, see name_rules.strictly_proposed; 1: it sits in a proposal sentence;
    0: neither), and the first mention that does so."""
    loose: tuple[int, int] | None = None
    mentions = [(m.start(), m.end()) for m in whole_word(surface).finditer(text)
                if not _in_a_compound(text, m.start(), m.end())] or [first]
    for start, end in mentions:
        sentence = sentence_of(spans, start, end)
        if strictly_proposed(text, sentence, start, end):
            return 2, (start, end)
        if loose is None and _PROPOSAL.search(text[sentence[0]:sentence[1]]):
            loose = (start, end)
    return (1, loose) if loose is not None else (0, None)


def _in_a_compound(text: str, start: int, end: int) -> bool:
    """A mention that a hyphen joins to a longer name ('LoRA' in 'LoRA-Pro', 'JPEG' in
    'JPEG-DL'): proposing the longer name does not propose this one."""
    return re.match(r"-[A-Za-z0-9]", text[end:end + 2]) is not None or \
        re.search(r"[A-Za-z0-9]-$", text[max(0, start - 2):start]) is not None


# A sentence that lists what the paper's method is made of ('PURE consists of three core
# components: a Review Extractor ...', 'H-DenseFormer integrates a ... (MPE) module').
_COMPOSITION = re.compile(r"\b(consists? of|compris\w*|(is |are )?composed of|integrat\w*|"
                          r"incorporat\w*|contains?|equipped with|components?|modules?|"
                          r"central to|at the (?:core|heart) of)\b", re.I)
# 'Central to our approach is ...': the sentence speaks of the paper's own method unnamed
_OUR_METHOD = re.compile(r"\bour (?:proposed )?(approach|method|framework|model|system|"
                         r"algorithm|pipeline|architecture)\b", re.I)


def listed_as_part(text: str, spans: list[tuple[int, int]], start: int,
                   own: list[Method]) -> bool:
    """Whether the mention at ``start`` sits in a sentence that describes what one of the
    paper's own methods is made of ('X consists of three components: ...'), and no words
    before it mark it as existing work."""
    before = text[sentence_of(spans, start, start)[0]:start]
    return bool(_COMPOSITION.search(before)) and any(
        whole_word(form).search(before) for m in own for form in (m.name, m.expansion or "")
        if form) and not baseline_before(text, start)


def spelled_out(acronym: str, text: str) -> str | None:
    """The words an abstract defines an acronym with: 'Nested Causal Thompson Sampling'
    for 'NCTS' in '... Nested Causal Thompson Sampling (NCTS) ...'."""
    for match in _DEFINED_ACRONYM.finditer(text):
        if match.group(2) == acronym:
            return match.group(1).strip()
    return None


def part_of_another(method: Method, others: list[Method], text: str = "") -> bool:
    """'Thompson' when 'Nested Causal Thompson Sampling (NCTS)' is also a method."""
    words = f" {name_key(method.name)} "
    for other in others:
        if other is method:
            continue
        for form in (other.name, other.expansion or "", *other.aliases):
            longer = f" {name_key(form)} "
            # 'DCMA' and 'Box-DCMA' are two names: a hyphen joins a variant, not a part
            if len(longer) > len(words) and words in longer and (
                    f" {method.name} " in f" {form} " or not _stands_alone(method.name, text)):
                return True
    return False


def _stands_alone(name: str, text: str) -> bool:
    """Whether some mention of ``name`` is not glued to a hyphen ('(VAP)-Diffusion' is not)."""
    return any(not re.match(r"\)?-\w", text[m.end():m.end() + 3])
               and text[max(0, m.start() - 1):m.start()] != "-"
               for m in whole_word(name).finditer(text))


_DEFINED_ACRONYM = re.compile(r"((?:[A-Z][\w-]*\s+){1,6})\(([A-Z][A-Za-z0-9-]{1,12})\)")
# A part the paper names after presenting its method: 'Specifically, Decoupled Attribute
# Regression (DAR) is ...', 'the proposed 3D Novel Object Discovery (3D-NOD) strategy'.
_DEFINED_PART = re.compile(r"((?:[A-Z0-9][\w-]*\s+){2,6})\(([A-Z0-9][A-Za-z0-9-]{1,12})\)")
# Expansions that name a resource, a measure or a class of models rather than a part.
_NOT_A_PART = re.compile(
    r"\b(datasets?|benchmarks?|corpus|corpora|suite|challenge|error|score|accuracy|rate|ratio|"
    r"distance|index|metric|divergence|models|networks|learning|task)\s*$", re.I)
_PLURAL = re.compile(r"^[A-Z0-9-]*[A-Z]s$")
_EXISTING_WORK = re.compile(r"\b(existing|prior|previous|standard|popular|conventional|"
                            r"such as|e\.g\.|baselines?|compared|outperform\w*|than|unlike|"
                            r"instead of|in contrast|whereas)\b", re.I)


def _known_name(acronym: str) -> bool:
    """An acronym the field already has ('CNN', 'BLEU'): defined, but not coined here."""
    return established_method(acronym) or known_metric(acronym)


def _established_expansion(words: str, acronym: str) -> bool:
    """The acronym spells an established name that ends the words before its parenthesis
    ('the Kullback-Leibler (KL)', 'Personalized PageRank (PPR)'), not a new name built on
    one ('Adaptive Proximal Policy Optimization (APPO)' spells more than PPO)."""
    parts = words.split()
    letters = acronym_letters(acronym)
    for count in range(1, len(parts) + 1):
        tail = " ".join(parts[-count:])
        if _initials(tail) == letters:
            return established_method(tail)
    return False


def _initials(words: str) -> str:
    """First letters of each word and hyphen part, and inner capitals ('PageRank': pr)."""
    return "".join(re.sub(r"[^A-Z]", "", part[0].upper() + part[1:])
                   for part in re.split(r"[\s-]+", words) if part).lower()


def in_proposal_sentences(text: str, spans: list[tuple[int, int]]) -> list[
        tuple[str, int, int, str]]:
    """Acronyms a proposal sentence defines ('we introduce Conformal Severity Control
    (CSC)', or in passing: 'a framework grounded in Pearl's Causal Hierarchy (PCH)'):
    (acronym, start, end, spelled-out form). The model misses some of these; the named
    parts defined after the proposal are parts_defined_after's."""
    found: list[tuple[str, int, int, str]] = []
    for begin, end in spans:
        sentence = text[begin:end]
        if "(" not in sentence or not _PROPOSAL.search(sentence):
            continue  # every definition below is 'words (ACRONYM)'
        for match in _DEFINED_ACRONYM.finditer(sentence):
            acronym = match.group(2)
            if not looks_like_acronym(acronym) or _PLURAL.match(acronym) \
                    or _known_name(acronym) or baseline_before(text, begin + match.start(1)) \
                    or not _spelled_from(match.group(1), acronym) \
                    or _established_expansion(match.group(1), acronym):
                continue
            found.append((acronym, begin + match.start(2), begin + match.end(2),
                          match.group(1).strip()))
        found.extend(_lowercase_definitions(text, (begin, end), {a for a, *_ in found}))
    return found


def _spelled_from(words: str, acronym: str) -> bool:
    """The words before the parenthesis can spell the acronym: not one acronym alone
    ('open-domain QA (ODQA)' gives only 'QA', an acronym inside a lowercase term), unless
    the acronym starts with it ('VQA (VQA-X)')."""
    parts = words.split()
    return not (len(parts) == 1 and parts[0].isupper() and parts[0] != acronym[:len(parts[0])])


_LOWER_DEFINED = re.compile(r"((?:[a-z][\w-]*\s+){1,8})\(([A-Z][A-Za-z0-9-]{1,12})\)")


def _lowercase_definitions(text: str, sentence: tuple[int, int], seen: set[str]) -> list[
        tuple[str, int, int, str]]:
    """'we propose proximal action replacement (PAR)': an acronym the paper coins for
    lowercase words right after its proposal verb, when their initials spell it."""
    found = []
    for match in _LOWER_DEFINED.finditer(text, sentence[0], sentence[1]):
        acronym = match.group(2)
        tail = spelled_by_lowercase_words(match.group(1), acronym)
        if tail is None or acronym in seen or _known_name(acronym):
            continue
        start = match.start(1) + tail
        if strictly_proposed(text, sentence, start, match.end(2)):
            found.append((acronym, match.start(2), match.end(2),
                          text[start:match.start(1) + len(match.group(1).rstrip())]))
    return found


def parts_defined_after(text: str, spans: list[tuple[int, int]], seen: set[str]) -> list[
        tuple[str, int, int, str]]:
    """Title-case acronym definitions after the sentence that presents the paper's method:
    the named parts of that method. Not resources, measures or model classes, and not in a
    sentence that speaks of existing work or baselines."""
    first = next((i for i, (b, e) in enumerate(spans) if _PROPOSAL.search(text[b:e])), None)
    if first is None:
        return []
    parts = []
    for begin, end in spans[first + 1:]:
        sentence = text[begin:end]
        if "(" not in sentence or _EXISTING_WORK.search(sentence):
            continue
        for match in _DEFINED_PART.finditer(sentence):
            acronym, expansion = match.group(2), match.group(1).strip()
            if acronym in seen or not looks_like_acronym(acronym) or _PLURAL.match(acronym) \
                    or _NOT_A_PART.search(expansion) or _known_name(acronym) \
                    or _established_expansion(expansion, acronym) \
                    or baseline_before(text, begin + match.start(1)):
                continue
            seen.add(acronym)
            parts.append((acronym, begin + match.start(2), begin + match.end(2), expansion))
    return parts




# A name in a list of parts: title-case words ('Review Extractor'), a coined word with
# inner capitals or digits ('GraphMixer'), or an acronym; at most five words.
_PART_NAME = re.compile(
    r"(?<![\w-])((?:[A-Z][a-z0-9]+[-\s]){1,4}[A-Z][a-z0-9]+|[A-Za-z]*[A-Z][a-z]+[A-Z][\w-]*|"
    r"[A-Z][A-Z0-9-]{1,10}[A-Za-z0-9]*)(?![\w-])")
# Right after one of the paper's own names: a size or a variant ('X-7B', 'X-Large', 'X v2').
_VARIANT_AFTER = re.compile(
    r"^(?:-|\s)(\d+(?:\.\d+)?[BMK]|Large|Base|Small|Tiny|Lite|Mini|Pro|Plus|Max|Ultra|"
    r"XL|XXL|[LSMBHT]|[vV]\d+(?:\.\d+)?|\d+"
    r"|[A-Z][A-Za-z]*\d*(?:\.\d+)?-\d+(?:\.\d+)?[BMK])(?![\w])")  # 'SciAgent-Llama3-8B'


def parts_of_own(text: str, spans: list[tuple[int, int]], own: list[str]) -> list[
        tuple[int, int]]:
    """Names listed in a sentence that says what one of the paper's own methods is made
    of, after its cue ('X consists of three components: a Review Extractor, ...'); not
    the own names, established methods or metrics, and not after words that mark
    existing work."""
    found = []
    for begin, end in spans:
        sentence = text[begin:end]
        cue = _COMPOSITION.search(sentence)
        if cue is None or not (any(whole_word(n).search(sentence) for n in own if n)
                               or _OUR_METHOD.search(sentence)):
            continue
        for match in _PART_NAME.finditer(text, begin + cue.end(), end):
            name = match.group(1)
            if name in own or established_method(name) or known_metric(name) \
                    or baseline_before(text, match.start(1)) or len(name) < 3:
                continue
            found.append((match.start(1), match.end(1)))
    return found


def variants_of_own(text: str, own: list[str]) -> list[tuple[int, int]]:
    """The sizes and variants the abstract names of one of the paper's own methods
    ('PathFormer-L', 'Kraken-7B'): the whole name, own name and suffix."""
    found = []
    for name in own:
        for match in whole_word(name).finditer(text):
            suffix = _VARIANT_AFTER.match(text[match.end():match.end() + 24])
            if suffix is not None:
                found.append((match.start(), match.end() + suffix.end()))
    return found
