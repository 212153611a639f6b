"""From the model's draft to a stored, grounded extraction: code does the looking up.

The model writes names, task phrases and numbers. Here each one is found in the abstract:
the item's evidence is the sentence that contains it (offsets computed here), a number's
value and unit are read from the abstract's own characters, and acronyms are paired with
their spelled-out forms. What cannot be found is not stored as fact: names and numbers
the abstract does not contain are dropped (and counted), a task phrase with no matching
sentence is kept with alignment ``none``. Repeats are merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from papersift.extract.domain.attributes import GainAttributes, ground_gain_attributes
from papersift.extract.domain.gain_candidates import missed_results
from papersift.extract.domain.grounding import Alignment, AlignmentStatus, align, normalize
from papersift.extract.domain.name_rules import (
    coined_proposals,
    named_as_resource,
    refused_benchmark,
    refused_method,
    strictly_proposed,
    title_name,
)
from papersift.schemas import (
    Benchmark,
    ClaimedGain,
    DraftBenchmark,
    DraftGain,
    Method,
    PaperDraft,
    PaperExtraction,
    Task,
)
from papersift.schemas.numbers import number_spans, numbers_in
from papersift.schemas.paper import MAX_EVIDENCE_CHARS, ContributionType

MIN_EVIDENCE_CHARS = 3
MAX_METHODS = 4  # the stored schema's cap

# Bump when assembly changes what it stores for the same draft; part of the extraction id.
ASSEMBLY_VERSION = "assemble/14"

_ABBREVIATIONS = ("e.g", "i.e", "et al", "vs", "etc", "cf", "Fig", "Eq", "resp", "approx",
                  "U.S", "U.K", "Dr", "No")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[\"'(\[$\\*A-Z0-9])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset({
    "a", "an", "the", "of", "for", "and", "or", "in", "on", "with", "to", "via", "by", "from",
    "at", "as", "is", "are", "we", "our", "this", "that", "its", "their", "using", "based",
})
_CREATION_VERB = re.compile(
    r"\b(introduc\w*|present\w*|propos\w*|releas\w*|construct\w*|build|built|curat\w*|"
    r"collect\w*|creat\w*|develop\w*|design\w*)\b", re.I)
_CUE_BEFORE = re.compile(
    r"\b(introduce|introduces|introducing|present|presents|release|releases|construct|"
    r"curate|build|create|new|novel|our)\b([^.;,]{0,40})$", re.I)
_CUE_AFTER = re.compile(
    r"^\s*(,|\(|:|--|—)?\s*(a|an)?\s*(new|novel|first)\b|"
    r"^[^.;]{0,30}\b(we|which we)\s+(introduce|release|construct|curate|build|create|collect)",
    re.I)
_UNIT_AFTER = (
    (re.compile(r"^\s*(percentage[- ]points?|pp\b|p\.p\.)", re.I), "pp"),
    (re.compile(r"^\s*(\\?%|percent\b)", re.I), "%"),
    (re.compile(r"^\s*(points?\b|pts\b)", re.I), "points"),
    (re.compile(r"^\s*(\$?\\times\$?|×|x\b|times\b|-?fold\b|-times\b)", re.I), "x"),
)
_REFERENCE_BEFORE = re.compile(
    r"\b(theorem|lemma|conjecture|corollary|proposition|definition|assumption|section|"
    r"figure|fig\.|table|appendix|eq\.|equation|step|stage|level|phase|version|type|"
    r"order|layer|round)\s*~?$", re.I)
_CONDITION_BEFORE = re.compile(r"(\\geq?|\\leq?|\\neq|[<>=≤≥])\s*\{?$")
_NEXT_WORD = re.compile(r"^[\s~]*([a-z][a-z-]{2,})\b")
# Words that may follow a result's number: units, comparisons, connectives.
_RESULT_WORDS = frozenset({
    "points", "point", "percent", "percentage", "pp", "times", "fold", "pts", "and", "the",
    "for", "with",
    "over", "than", "while", "across", "compared", "relative", "absolute", "respectively",
    "vs", "versus", "from", "higher", "lower", "better", "fewer", "less", "more", "faster",
    "slower", "smaller", "larger", "speedup", "reduction", "improvement", "gain", "gains",
    "increase", "decrease", "accuracy", "error", "seconds", "hours", "minutes", "ms", "bits",
})
_TIMES_BEFORE = re.compile(r"(×|\\times\$?|\bx)\s*$")
_MAGNITUDE_AFTER = re.compile(r"^\s*(B|M|K|k|billion|million)\b")
_EFFICIENCY = re.compile(r"speed|faster|latency|throughput|memory|cost|time|compute|flops|"
                         r"cheaper|smaller|fewer|efficien|tokens|energy|parameters", re.I)
_IMPROVEMENT = re.compile(r"improv|outperform|gain|boost|increas|reduc|better|surpass|"
                          r"exceed|lower|higher|over|relative", re.I)
_COMPARISON = re.compile(r"match|comparable|on par|rival|competitive", re.I)


@dataclass(frozen=True)
class Found:
    """Where an item was found: its mention and the sentence used as evidence."""

    status: AlignmentStatus
    start: int
    end: int
    sentence: tuple[int, int]


@dataclass
class Assembled:
    """The stored extraction, how each item was found (parallel to its lists), and what
    the draft proposed that the abstract does not contain."""

    extraction: PaperExtraction
    found: dict[str, list[Found | None]]
    rejected: list[str] = field(default_factory=list)
    gain_attributes: list[GainAttributes] = field(default_factory=list)  # parallel to gains

    def alignment(self, field_name: str, index: int) -> Alignment:
        """The evidence sentence's span with the status of the item's own match."""
        spot = self.found[field_name][index]
        if spot is None:
            return Alignment("none", None, None, 0.0)
        return Alignment(spot.status, spot.sentence[0], spot.sentence[1], 1.0)


# --------------------------------------------------------------------------- sentences


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """[start, end) of each sentence, leading spaces excluded; abbreviations do not end one."""
    return list(_sentence_spans(text))


@lru_cache(maxsize=64)  # assembly and the artifact detector both split each abstract
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    spans = []
    start = 0
    for match in _SENTENCE_END.finditer(text):
        before = text[max(0, match.start() - 6):match.start()]
        if any(before.endswith(abbr) for abbr in _ABBREVIATIONS):
            continue
        spans.append((start, match.end()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    cleaned = []
    for begin, end in spans:
        piece = text[begin:end]
        low = begin + len(piece) - len(piece.lstrip())
        high = begin + len(piece.rstrip())
        if high > low:
            cleaned.append((low, high))
    return tuple(cleaned)


def _sentence_of(spans: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
    """The sentence holding [start, end), or the run of sentences when the mention crosses
    a boundary the splitter saw ('U.S. JTPA-eligible')."""
    for index, (begin, first_stop) in enumerate(spans):
        if begin <= start < first_stop:
            stop = first_stop
            for _, later_stop in spans[index:]:
                stop = max(stop, later_stop)
                if stop >= end:
                    break
            return begin, max(stop, end)
    return start, end


def _evidence(text: str, sentence: tuple[int, int], mention: tuple[int, int]) -> tuple[int, int]:
    """The sentence, or a window of it around the mention when it is too long to quote."""
    begin, end = sentence
    if end - begin < MIN_EVIDENCE_CHARS:  # a fragment: widen it within the abstract
        begin, end = max(0, end - MIN_EVIDENCE_CHARS), min(len(text), begin + MIN_EVIDENCE_CHARS)
    if end - begin <= MAX_EVIDENCE_CHARS:
        return begin, end
    half = (MAX_EVIDENCE_CHARS - (mention[1] - mention[0])) // 2
    low = max(begin, mention[0] - max(half, 0))
    high = min(end, low + MAX_EVIDENCE_CHARS)
    while low > begin and not text[low - 1].isspace():
        low += 1
    while high < end and high > low and not text[high].isspace():
        high -= 1
    return low, high


# --------------------------------------------------------------------------- finding


def _words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalize(text)) if w not in _STOP}


def _bounded(text: str, start: int, end: int) -> bool:
    """The span is not glued to letters or digits on either side."""
    left = text[start - 1] if start > 0 else " "
    right = text[end] if end < len(text) else " "
    return not (left.isalnum() and text[start].isalnum()) and not (
        right.isalnum() and text[end - 1].isalnum())


def _whole_word(name: str, flags: int = 0) -> re.Pattern[str]:
    """A pattern for ``name`` not glued to letters or digits on either side."""
    return re.compile(r"(?<![A-Za-z0-9])" + re.escape(name) + r"(?![A-Za-z0-9])", flags)


def find_name(name: str, text: str) -> tuple[AlignmentStatus, int, int] | None:
    """First whole-word occurrence of a name: exact, then ignoring case, then normalised."""
    name = name.strip()
    if not name:
        return None
    match = _whole_word(name).search(text)
    if match:
        return "exact", match.start(), match.end()
    match = _whole_word(name, re.I).search(text)
    if match:
        return "normalized", match.start(), match.end()
    found = align(name, text)
    if found.status == "normalized" and found.char_start is not None \
            and found.char_end is not None and _bounded(text, found.char_start, found.char_end):
        return "normalized", found.char_start, found.char_end
    return None


def _parenthetical_after(text: str, end: int) -> str | None:
    match = re.match(r"[*_}]*\s*\(([^()]{2,100})\)", text[end:end + 110])  # '*Name* (ACR)'
    return match.group(1).strip() if match else None


def _looks_like_acronym(name: str) -> bool:
    letters = [c for c in name if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) >= max(2, len(letters) // 2) \
        and len(name.split()) == 1


def _is_named(text: str, start: int, end: int, *, strict: bool = False) -> bool:
    """Whether a mention reads as a proper name: a capital beyond its first letter, a digit,
    formatting markup around it, or (unless ``strict``) a capitalised word in mid-sentence
    ('on Yelp and Goodreads'); 'a graph-based retriever' is a description. Strict is for
    method names: one capitalised word ('Transformers', 'Shapley') is rarely a new method."""
    mention = text[start:end]
    if any(c.isdigit() for c in mention) or any(c.isupper() for c in mention[1:]):
        return True
    before = text[max(0, start - 12):start]
    if re.search(r"(\\text\w+\{|\\emph\{|\*\*|\\mathrm\{|\\texttt\{)$", before):
        return True
    if strict and " " not in mention.strip():
        return False
    return mention[:1].isupper() and not re.search(r"(^|[.!?:]\s*)$", text[max(0, start - 3):start])


def _trim_description(text: str, start: int, end: int) -> tuple[int, int]:
    """Cut a name out of a described mention: lowercase words before it go ('the public
    KuaiRand dataset' -> 'KuaiRand dataset'), and so does whatever follows the first
    lowercase word after it ('Semantic Divergence as our core metric' -> 'Semantic
    Divergence'); 'X (ACR)' keeps both parts."""
    words = list(re.finditer(r"\S+", text[start:end]))

    def plain(word: str) -> bool:
        core = word.strip(".,;:()")
        return bool(core) and not any(c.isupper() or c.isdigit() for c in core)

    while len(words) > 1 and plain(words[0].group()):
        words.pop(0)
    for index in range(1, len(words)):
        if plain(words[index].group()) and not words[index].group().startswith("("):
            words = words[:index]
            break
    return start + words[0].start(), start + words[-1].end()


_QUANTITY = re.compile(r"^[\d.,]+\s*[KMBkmb%]?$")


def _find_named(kind: str, name: str, text: str, rejected: list[str]) -> tuple[
        AlignmentStatus, int, int] | None:
    """Where a proper name sits in the abstract, trimmed of descriptive words; a name not
    found, or a description, is noted in ``rejected``."""
    spot = find_name(name, text)
    if spot is None:
        rejected.append(f"{kind} {name!r}: not in the abstract")
        return None
    status, start, end = spot
    if not _is_named(text, start, end, strict=kind == "method"):
        rejected.append(f"{kind} {name!r}: a description, not a name")
        return None
    start, end = _trim_description(text, start, end)
    if _QUANTITY.match(text[start:end]):
        rejected.append(f"{kind} {name!r}: a quantity, not a name")
        return None
    return status, start, end


# --------------------------------------------------------------------------- fields


def _key(name: str) -> str:
    return " ".join(_WORD.findall(normalize(name)))


def _tasks(draft: PaperDraft, text: str, spans: list[tuple[int, int]]) -> tuple[
        list[Task], list[Found | None]]:
    tasks: list[Task] = []
    found: list[Found | None] = []
    seen: set[str] = set()
    for phrase in draft.tasks:
        key = _key(phrase)
        if len(phrase.strip()) < 2 or not key or key in seen:
            continue
        seen.add(key)
        spot = find_name(phrase, text)
        if spot is not None:
            status, start, end = spot
            sentence = _sentence_of(spans, start, end)
        else:  # the sentence sharing most of the phrase's words (spans is never empty)
            wanted = _words(phrase)
            shared = {span: len(wanted & _words(text[span[0]:span[1]])) for span in spans}
            best = max(spans, key=shared.__getitem__)
            share = shared[best] / len(wanted) if wanted else 0.0
            status = "fuzzy" if share >= 0.5 else "none"
            start, end = best
            sentence = best
        low, high = _evidence(text, sentence, (start, end))
        tasks.append(Task(name=phrase[:120], evidence=text[low:high]))
        found.append(Found(status, start, end, (low, high)) if status != "none" else None)
    return tasks, found


_PROPOSAL = re.compile(
    r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|develop|design|"
    r"call|dub|nam|term|build|devis|formulat|creat|offer)\w*|\bcalled\b|\bdubbed\b|"
    r"\bnamed\b|\(ours\)", re.I)


def _proposal_mention(surface: str, text: str, spans: list[tuple[int, int]],
                      first: tuple[int, int]) -> tuple[int, tuple[int, int] | None]:
    """How strongly the abstract presents a name as the paper's own (2: a proposal verb
    introduces it, see name_rules.strictly_proposed; 1: it sits in a proposal sentence;
    0: neither), and the first mention that does so."""
    loose: tuple[int, int] | None = None
    mentions = [(m.start(), m.end()) for m in _whole_word(surface).finditer(text)] or [first]
    for start, end in mentions:
        sentence = _sentence_of(spans, start, end)
        if strictly_proposed(text, sentence, start, end):
            return 2, (start, end)
        if loose is None and _PROPOSAL.search(text[sentence[0]:sentence[1]]):
            loose = (start, end)
    return (1, loose) if loose is not None else (0, None)


def _methods(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
             rejected: list[str], benchmark_keys: set[str],
             headline: str | None = None) -> tuple[list[Method], list[Found | None]]:
    """Named methods; when some are presented as the paper's own ('we propose X'), the
    others (baselines, tools it uses) are dropped."""
    candidates: list[tuple[Method, Found, int]] = []
    forms_seen: set[str] = set()
    for name in draft.methods:
        drafted = find_name(name, text)
        spot = _find_named("method", name, text, rejected)
        if spot is None or drafted is None:
            continue
        status, start, end = spot
        defined = re.match(r"^(.*\S)\s*\(([^()]+)\)$", text[start:end])
        if defined and _looks_like_acronym(defined.group(2)):
            start, end = start + defined.start(2), start + defined.end(2)  # 'X (ACR)' -> ACR
        surface = text[start:end]
        level, proposal = _proposal_mention(surface, text, spans, (start, end))
        if headline is not None and name == headline:
            level = 2  # the title names it
        reason = refused_method(text, _sentence_of(spans, start, end), drafted[1:], start, end,
                                proposed=level == 2)
        if reason is not None:
            rejected.append(f"method {name!r}: {reason}")
            continue
        if proposal is not None:
            start, end = proposal
        other = _parenthetical_after(text, end)
        expansion = None
        aliases: list[str] = []
        if other and _looks_like_acronym(other) and not _looks_like_acronym(surface):
            aliases = [other]
        elif other and _looks_like_acronym(surface):
            expansion = other
        if expansion is None and _looks_like_acronym(surface):
            expansion = _spelled_out(surface, text)
        keys = {_key(surface), *(_key(a) for a in aliases), _key(expansion or "")} - {""}
        if keys & benchmark_keys:
            rejected.append(f"method {name!r}: also listed as a benchmark")
            continue
        if keys & forms_seen:
            continue  # the same method under another of its names
        forms_seen |= keys
        sentence = _sentence_of(spans, start, end)
        low, high = _evidence(text, sentence, (start, end))
        method = Method(name=surface[:120], expansion=expansion, aliases=aliases,
                        evidence=text[low:high])
        candidates.append((method, Found(status, start, end, (low, high)), level))
    for start, end in coined_proposals(text, spans):  # headline names the model missed
        surface = text[start:end]
        if _key(surface) in forms_seen | benchmark_keys or named_as_resource(text, start, end):
            continue
        sentence = _sentence_of(spans, start, end)
        if refused_method(text, sentence, (start, end), start, end, proposed=True):
            continue
        other = _parenthetical_after(text, end)
        expansion = other if other and _looks_like_acronym(surface) else (
            _spelled_out(surface, text) if _looks_like_acronym(surface) else None)
        aliases = [other] if other and _looks_like_acronym(other) and expansion is None else []
        forms_seen |= {_key(surface), _key(expansion or ""), *map(_key, aliases)} - {""}
        low, high = _evidence(text, sentence, (start, end))
        candidates.append((Method(name=surface, expansion=expansion, aliases=aliases,
                                  evidence=text[low:high]),
                           Found("exact", start, end, (low, high)), 2))
    for acronym, start, end, expansion_text in _defined_in_proposals(text, spans):
        keys = {_key(acronym), _key(expansion_text)} - {""}
        if keys & (forms_seen | benchmark_keys):
            continue
        forms_seen |= keys
        sentence = _sentence_of(spans, start, end)
        low, high = _evidence(text, sentence, (start, end))
        method = Method(name=acronym, expansion=expansion_text or None, aliases=[],
                        evidence=text[low:high])
        candidates.append((method, Found("exact", start, end, (low, high)), 2))
    strongest = max((level for _, _, level in candidates), default=0)
    methods: list[Method] = []
    found: list[Found | None] = []
    for method, where, level in candidates:
        if level < min(strongest, 1):
            rejected.append(f"method {method.name!r}: not presented as the paper's own")
            continue
        if _part_of_another(method, [other for other, _, _ in candidates]):
            rejected.append(f"method {method.name!r}: part of a longer name")
            continue
        if len(methods) < MAX_METHODS:
            methods.append(method)
            found.append(where)
    return methods, found


def _spelled_out(acronym: str, text: str) -> str | None:
    """The words an abstract defines an acronym with: 'Nested Causal Thompson Sampling'
    for 'NCTS' in '... Nested Causal Thompson Sampling (NCTS) ...'."""
    for match in _DEFINED_ACRONYM.finditer(text):
        if match.group(2) == acronym:
            return match.group(1).strip()
    return None


def _part_of_another(method: Method, others: list[Method]) -> bool:
    """'Thompson' when 'Nested Causal Thompson Sampling (NCTS)' is also a method."""
    words = f" {_key(method.name)} "
    for other in others:
        if other is method:
            continue
        for form in (other.name, other.expansion or "", *other.aliases):
            longer = f" {_key(form)} "
            if len(longer) > len(words) and words in longer:
                return True
    return False


_DEFINED_ACRONYM = re.compile(r"((?:[A-Z][\w-]*\s+){1,6})\(([A-Z][A-Za-z0-9-]{1,12})\)")


def _defined_in_proposals(text: str, spans: list[tuple[int, int]]) -> list[
        tuple[str, int, int, str]]:
    """Acronyms a proposal sentence defines ('we introduce Conformal Severity Control
    (CSC)'): (acronym, start, end, spelled-out form). The model misses some of these."""
    found = []
    for begin, end in spans:
        sentence = text[begin:end]
        if not _PROPOSAL.search(sentence):
            continue
        for match in _DEFINED_ACRONYM.finditer(sentence):
            acronym = match.group(2)
            if not _looks_like_acronym(acronym):
                continue
            found.append((acronym, begin + match.start(2), begin + match.end(2),
                          match.group(1).strip()))
    return found


_BENCHMARK_NAME = re.compile(r"(Bench|Benchmark|Suite|Arena|Gym)\b|-?[Bb]ench\b")

# Model families and sizes: what a paper evaluates, not what it evaluates on.
_MODEL_NAME = re.compile(
    r"^(GPT|Llama|LLaMA|Qwen|Gemini|Claude|DeepSeek|Mistral|Mixtral|OLMo|Olmo|Phi|Gemma|"
    r"BERT|RoBERTa|T5|ViT|ResNet|CLIP|Falcon|Vicuna|PaLM|o[134])\b|\b\d+(\.\d+)?[BM]\b")


def _benchmark_kind(name: str, sentence: str) -> str:
    lowered = f"{name} {sentence}".lower()
    if "environment" in lowered or "simulat" in lowered:
        return "environment"
    if "dataset" in lowered or "corpus" in lowered:
        return "dataset"
    return "benchmark"


def _benchmarks(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
                rejected: list[str], titled: str | None = None) -> tuple[
        list[Benchmark], list[Found | None]]:
    """Named benchmarks; ``titled``: the one the title names, which the paper creates."""
    benchmarks: list[Benchmark] = []
    found: list[Found | None] = []
    index: dict[str, int] = {}
    for item in draft.benchmarks:
        drafted = find_name(item.name, text)
        spot = _find_named("benchmark", item.name, text, rejected)
        if spot is None or drafted is None:
            continue
        status, start, end = spot
        surface = text[start:end]
        reason = refused_benchmark(text, drafted[1:], start, end)
        if reason is not None:
            rejected.append(f"benchmark {item.name!r}: {reason}")
            continue
        if _MODEL_NAME.search(surface):
            rejected.append(f"benchmark {item.name!r}: a model, not a benchmark")
            continue
        sentence = _sentence_of(spans, start, end)
        introduced = _introduced(item, text, sentence, start, end) or (
            titled is not None and _key(surface) == _key(titled))
        key = _key(surface)
        if key in index:
            if introduced and not benchmarks[index[key]].introduced:
                benchmarks[index[key]] = benchmarks[index[key]].model_copy(
                    update={"introduced": True})
            continue
        index[key] = len(benchmarks)
        low, high = _evidence(text, sentence, (start, end))
        benchmarks.append(Benchmark(
            name=surface[:120], kind=_benchmark_kind(surface, text[sentence[0]:sentence[1]]),  # type: ignore[arg-type]
            introduced=introduced, evidence=text[low:high]))
        found.append(Found(status, start, end, (low, high)))
    return benchmarks, found


def _introduced(item: DraftBenchmark, text: str, sentence: tuple[int, int], start: int,
                end: int) -> bool:
    """Whether the paper creates it: a creation word right before or after the name ('our
    new X', 'X, a new benchmark') says so even when the model missed it; otherwise the
    model's flag is kept only when the sentence uses a creation verb."""
    before = _CUE_BEFORE.search(text[sentence[0]:start])
    if before and " and " not in before.group(2):
        return True
    if _CUE_AFTER.search(text[end:sentence[1]]):
        return True
    return item.new and bool(_CREATION_VERB.search(text[sentence[0]:sentence[1]]))


def _unit_at(text: str, start: int, end: int) -> str:
    after = text[end:end + 24]
    for pattern, unit in _UNIT_AFTER:
        if pattern.match(after):
            return unit
    if _TIMES_BEFORE.search(text[max(0, start - 8):start]):
        return "x"
    return "absolute"


def _gain_kind(unit: str, metric: str, sentence: str) -> str:
    if _EFFICIENCY.search(metric) or (unit == "x" and _EFFICIENCY.search(sentence)):
        return "efficiency"
    if _COMPARISON.search(sentence) and not _IMPROVEMENT.search(sentence):
        return "comparison"
    if _IMPROVEMENT.search(sentence):
        return "improvement"
    return "score"


_RANGE_AFTER = re.compile(r"^\s*(?:\\?%)?\s*(?:–|—|-|to)\s*(\d+(?:[.,]\d+)*)")


def _gains(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
           rejected: list[str]) -> tuple[list[ClaimedGain], list[Found | None],
                                         list[GainAttributes]]:
    """Gains at the numbers the abstract states; a range ('8–17%') is one gain, stored
    at its low end with the unit written after its high end. Metric, baseline and
    dataset are grounded too (extract.domain.attributes)."""
    gains: list[ClaimedGain] = []
    attributes: list[GainAttributes] = []
    found: list[Found | None] = []
    stated = number_spans(text)
    used: set[int] = set()
    range_highs: set[float] = set()
    for item in draft.gains:
        values = numbers_in(item.value)
        if not values:
            rejected.append(f"gain {item.value!r}: no number")
            continue
        if values[0] in range_highs:
            rejected.append(f"gain {item.value!r}: the high end of a range already stored")
            continue
        spot = _locate_number(item, values[0], text, spans, stated, used)
        if spot is None:
            rejected.append(f"gain {item.value!r} ({item.metric}): number not in the abstract")
            continue
        value, start, end = spot
        used.add(start)
        unit_end = end
        high = _RANGE_AFTER.match(text[end:end + 20])
        if high:
            unit_end = end + high.end()
            range_highs.add(float(high.group(1).replace(",", "")))
            used.add(end + high.start(1))
        unit = _unit_at(text, start, unit_end)
        sentence = _sentence_of(spans, start, end)
        low, high_end = _evidence(text, sentence, (start, unit_end))
        grounded = ground_gain_attributes(item.value, item.metric, item.vs, item.on, text,
                                          sentence, rejected)
        gains.append(ClaimedGain(
            metric=grounded.metric, value=value, unit=unit,  # type: ignore[arg-type]
            kind=_gain_kind(unit, item.metric, text[sentence[0]:sentence[1]]),  # type: ignore[arg-type]
            baseline=grounded.baseline, dataset=grounded.dataset,
            evidence=text[low:high_end]))
        found.append(Found("exact", start, unit_end, (low, high_end)))
        attributes.append(grounded)
    return gains, found, attributes


def _locate_number(item: DraftGain, value: float, text: str, spans: list[tuple[int, int]],
                   stated: list[tuple[float, int, int]], used: set[int]) -> tuple[
        float, int, int] | None:
    """The abstract's occurrence of the draft's number that best fits its metric and unit;
    years and model sizes ('7B') are not results."""
    context = _words(f"{item.metric} {item.vs or ''} {item.on or ''}")
    wanted_unit = _unit_at(item.value, *_first_number_span(item.value))
    if wanted_unit == "absolute":
        wanted_unit = ""  # the draft gave a bare number: any unit fits
    best: tuple[float, tuple[float, int, int]] | None = None
    for number, start, end in stated:
        if abs(number - abs(value)) > 1e-9 * max(1.0, abs(value)) or start in used:
            continue
        if _not_a_result(text, number, start, end) or _is_condition(text, start):
            continue
        sentence = _sentence_of(spans, start, end)
        fit = len(context & _words(text[sentence[0]:sentence[1]]))
        fit += 2 * (_unit_at(text, start, end) == wanted_unit)
        if best is None or fit > best[0]:
            best = (fit, (number, start, end))
    return best[1] if best else None


def _not_a_result(text: str, number: float, start: int, end: int) -> bool:
    """Numbers that name, count or size things rather than report results: part of a name
    ('CIFAR-10', 'GPT-4o', 'Recall@10'), a reference ('Theorem 2'), a count ('14 models'),
    a model size ('7B'), a year."""
    if _REFERENCE_BEFORE.search(text[max(0, start - 16):start]):
        return True
    if number.is_integer() and "." not in text[start:end]:
        following = _NEXT_WORD.match(text[end:end + 30])
        if following and following.group(1) not in _RESULT_WORDS:
            return True
    before = text[max(0, start - 2):start]
    if before[-1:].isalpha() or before[-1:] in ("@", "_", "^") or (
            before[-1:] == "-" and before[:1].isalnum()):
        return True
    glued = end < len(text) and text[end].isalpha() and text[end] not in "x×"
    if glued and not re.match(r"[a-z]*(fold|times|x)\b", text[end:end + 8]) \
            and _MAGNITUDE_AFTER.match(text[end:end + 10]) is None:
        return True  # glued to letters: 'GPT-4o', '3D'
    if _MAGNITUDE_AFTER.match(text[end:end + 10]) and _unit_at(text, start, end) == "absolute":
        return True
    return number.is_integer() and 1900 <= number <= 2100 and "." not in text[start:end]


def _is_condition(text: str, start: int) -> bool:
    """A number after a comparison ('depth $\\ge 2$', '$\\lambda > 0$') states a condition.
    Checked when grounding, not in the grammar's list of numbers (which only needs to be
    a superset: narrowing it would change every cached request that it touches)."""
    return bool(_CONDITION_BEFORE.search(text[max(0, start - 8):start]))


def result_numbers(text: str) -> list[str]:
    """The numbers an abstract states that could be results, as written, without repeats."""
    seen: dict[str, None] = {}
    for number, start, end in number_spans(text):
        if not _not_a_result(text, number, start, end):
            seen.setdefault(text[start:end], None)
    return list(seen)


def _first_number_span(value: str) -> tuple[int, int]:
    spans = number_spans(value)
    return (spans[0][1], spans[0][2]) if spans else (0, 0)


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


def _called_a_resource(name: str, text: str) -> bool:
    """A name the abstract calls a benchmark or dataset ('X, a new benchmark of ...')."""
    spot = find_name(name, text)
    return spot is not None and _any_mention_a_resource(text[spot[1]:spot[2]], text)


def _any_mention_a_resource(surface: str, text: str) -> bool:
    return any(named_as_resource(text, m.start(), m.end())
               for m in _whole_word(surface, re.I).finditer(text))


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
    methods = [m for m in draft.methods if _key(m) != _key(surface)]
    if named[1] or _any_mention_a_resource(surface, text) or _BENCHMARK_NAME.search(surface):
        others = [b for b in draft.benchmarks if _key(b.name) != _key(surface)]
        return draft.model_copy(update={
            "methods": methods,
            "benchmarks": [DraftBenchmark(name=surface, new=True), *others]}), None, surface
    return draft.model_copy(update={"methods": [surface, *methods]}), surface, None


def assemble(draft: PaperDraft, text: str, title: str | None = None) -> Assembled:
    """Ground a draft in its abstract: the stored extraction plus how each item was found.
    ``title``, when the input has one, may name the paper's method (see _from_title)."""
    spans = sentence_spans(text) or [(0, len(text))]
    rejected: list[str] = []
    draft, headline, titled_benchmark = _from_title(draft, text, title)
    named_benchmarks = [m for m in draft.methods if _BENCHMARK_NAME.search(m)
                        or _called_a_resource(m, text)]
    # resources a proposal verb introduces by name, which the model may have missed
    introduced = [text[a:b] for a, b in coined_proposals(text, spans)
                  if named_as_resource(text, a, b) or _BENCHMARK_NAME.search(text[a:b])]
    if named_benchmarks or introduced:  # 'CellularS2-Bench' as a method is a benchmark
        draft = draft.model_copy(update={
            "methods": [m for m in draft.methods if m not in named_benchmarks],
            "benchmarks": [*draft.benchmarks,
                           *(DraftBenchmark(name=m, new=True)
                             for m in [*named_benchmarks, *introduced])],
        })
    tasks, task_found = _tasks(draft, text, spans)
    benchmarks, bench_found = _benchmarks(draft, text, spans, rejected, titled_benchmark)
    methods, method_found = _methods(draft, text, spans, rejected,
                                     {_key(b.name) for b in benchmarks}, headline)
    missed = missed_results(text, spans, {g.value for g in draft.gains}, _unit_at,
                            lambda t, n, a, b: not _not_a_result(t, n, a, b)
                            and not _is_condition(t, a))
    if missed and len(draft.gains) + len(missed) <= 12:
        draft = draft.model_copy(update={"gains": [*draft.gains, *missed]})
    gains, gain_found, gain_attributes = _gains(draft, text, spans, rejected)
    extraction = PaperExtraction(
        contribution_types=_types(draft, benchmarks, text),
        tasks=tasks, methods=methods, benchmarks=benchmarks, claimed_gains=gains,
    )
    return Assembled(
        extraction,
        {"tasks": task_found, "methods": method_found, "benchmarks": bench_found,
         "claimed_gains": gain_found},
        rejected,
        gain_attributes,
    )
