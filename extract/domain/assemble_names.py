"""Grounding the draft's names: task phrases, the paper's own methods (its proposals, not
the baselines it compares with) and the benchmarks it evaluates on or creates."""

from __future__ import annotations

import re

from papersift.extract.domain.assemble_spans import (
    Found,
    content_words,
    evidence_window,
    find_name,
    find_named,
    looks_like_acronym,
    name_key,
    parenthetical_after,
    sentence_of,
)
from papersift.extract.domain.established import established_method, known_metric
from papersift.extract.domain.name_rules import (
    baseline_before,
    coined_proposals,
    named_as_resource,
    refused_benchmark,
    refused_method,
    strictly_proposed,
)
from papersift.extract.domain.wholeword import whole_word
from papersift.schemas import Benchmark, DraftBenchmark, Method, PaperDraft, Task

MAX_METHODS = 4  # the stored schema's cap
# A name with a parenthesis at its end: 'X (ACR)' for a method, 'LaSOT (Single-Object)'.
_TRAILING_PARENTHESIS = re.compile(r"^(.*\S)\s*\(([^()]+)\)$")

_CREATION_VERB = re.compile(
    r"\b(introduc\w*|present\w*|propos\w*|releas\w*|construct\w*|build|built|curat\w*|"
    r"collect\w*|creat\w*|develop\w*|design\w*)\b", re.I)
_CUE_BEFORE = re.compile(
    r"\b(introduce|introduces|introducing|present|presents|release|releases|construct|"
    r"curate|build|create|new|novel|our)\b([^.;,]{0,40}(?:,\s*(?:the\s+)?)?)$", re.I)
_CUE_AFTER = re.compile(
    r"^\s*(,|\(|:|--|—)?\s*(a|an)?\s*(new|novel|first)\b|"
    r"^[^.;]{0,30}\b(we|which we)\s+(introduce|release|construct|curate|build|create|collect)",
    re.I)


def ground_tasks(draft: PaperDraft, text: str, spans: list[tuple[int, int]]) -> tuple[
        list[Task], list[Found | None]]:
    tasks: list[Task] = []
    found: list[Found | None] = []
    seen: set[str] = set()
    for phrase in draft.tasks:
        key = name_key(phrase)
        if len(phrase.strip()) < 2 or not key or key in seen:
            continue
        seen.add(key)
        spot = find_name(phrase, text)
        if spot is not None:
            status, start, end = spot
            sentence = sentence_of(spans, start, end)
        else:  # the sentence sharing most of the phrase's words (spans is never empty)
            wanted = content_words(phrase)
            shared = {span: len(wanted & content_words(text[span[0]:span[1]])) for span in spans}
            best = max(spans, key=shared.__getitem__)
            share = shared[best] / len(wanted) if wanted else 0.0
            status = "fuzzy" if share >= 0.5 else "none"
            start, end = best
            sentence = best
        low, high = evidence_window(text, sentence, (start, end))
        tasks.append(Task(name=phrase[:120], evidence=text[low:high]))
        found.append(Found(status, start, end, (low, high)) if status != "none" else None)
    return tasks, found


_PROPOSAL = re.compile(
    r"\b(we|our|this (paper|work))\b[^.;]{0,80}?\b(propos|introduc|present|develop|design|"
    r"call|dub|nam|term|build|devis|formulat|creat|offer)\w*|\bcalled\b|\bdubbed\b|"
    r"\bnamed\b|\btermed\b|\bcoined\b|\(ours\)", re.I)


def _proposal_mention(surface: str, text: str, spans: list[tuple[int, int]],
                      first: tuple[int, int]) -> tuple[int, tuple[int, int] | None]:
    """How strongly the abstract presents a name as the paper's own (2: a proposal verb
    introduces it, see name_rules.strictly_proposed; 1: it sits in a proposal sentence;
    0: neither), and the first mention that does so."""
    loose: tuple[int, int] | None = None
    mentions = [(m.start(), m.end()) for m in whole_word(surface).finditer(text)] or [first]
    for start, end in mentions:
        sentence = sentence_of(spans, start, end)
        if strictly_proposed(text, sentence, start, end):
            return 2, (start, end)
        if loose is None and _PROPOSAL.search(text[sentence[0]:sentence[1]]):
            loose = (start, end)
    return (1, loose) if loose is not None else (0, None)


def ground_methods(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
             rejected: list[str], benchmark_keys: set[str],
             headline: str | None = None) -> tuple[list[Method], list[Found | None]]:
    """Named methods; when some are presented as the paper's own ('we propose X'), the
    others (baselines, tools it uses) are dropped."""
    candidates: list[tuple[Method, Found, int]] = []
    forms_seen: set[str] = set()
    for name in draft.methods:
        drafted = find_name(name, text)
        spot = find_named("method", name, text, rejected)
        if spot is None or drafted is None:
            continue
        status, start, end = spot
        defined = _TRAILING_PARENTHESIS.match(text[start:end])
        if defined and looks_like_acronym(defined.group(2)):
            start, end = start + defined.start(2), start + defined.end(2)  # 'X (ACR)' -> ACR
        surface = text[start:end]
        level, proposal = _proposal_mention(surface, text, spans, (start, end))
        if headline is not None and name == headline:
            level = 2  # the title names it
        reason = refused_method(text, sentence_of(spans, start, end), drafted[1:], start, end,
                                proposed=level == 2)
        if reason is not None:
            rejected.append(f"method {name!r}: {reason}")
            continue
        if proposal is not None:
            start, end = proposal
        other = parenthetical_after(text, end)
        expansion = None
        aliases: list[str] = []
        if other and looks_like_acronym(other) and not looks_like_acronym(surface):
            aliases = [other]
        elif other and looks_like_acronym(surface):
            expansion = other
        if expansion is None and looks_like_acronym(surface):
            expansion = _spelled_out(surface, text)
        keys = {name_key(surface), *(name_key(a) for a in aliases),
                name_key(expansion or "")} - {""}
        if keys & benchmark_keys:
            rejected.append(f"method {name!r}: also listed as a benchmark")
            continue
        if keys & forms_seen:
            continue  # the same method under another of its names
        forms_seen |= keys
        sentence = sentence_of(spans, start, end)
        low, high = evidence_window(text, sentence, (start, end))
        method = Method(name=surface[:120], expansion=expansion, aliases=aliases,
                        evidence=text[low:high])
        candidates.append((method, Found(status, start, end, (low, high)), level))
    for start, end in coined_proposals(text, spans):  # headline names the model missed
        surface = text[start:end]
        if name_key(surface) in forms_seen | benchmark_keys or named_as_resource(text, start, end):
            continue
        sentence = sentence_of(spans, start, end)
        if refused_method(text, sentence, (start, end), start, end, proposed=True):
            continue
        other = parenthetical_after(text, end)
        expansion = other if other and looks_like_acronym(surface) else (
            _spelled_out(surface, text) if looks_like_acronym(surface) else None)
        aliases = [other] if other and looks_like_acronym(other) and expansion is None else []
        forms_seen |= {name_key(surface), name_key(expansion or ""), *map(name_key, aliases)} - {""}
        low, high = evidence_window(text, sentence, (start, end))
        candidates.append((Method(name=surface, expansion=expansion, aliases=aliases,
                                  evidence=text[low:high]),
                           Found("exact", start, end, (low, high)), 2))
    for acronym, start, end, expansion_text in _defined_in_proposals(text, spans):
        keys = {name_key(acronym), name_key(expansion_text)} - {""}
        if keys & (forms_seen | benchmark_keys):
            continue
        forms_seen |= keys
        sentence = sentence_of(spans, start, end)
        low, high = evidence_window(text, sentence, (start, end))
        method = Method(name=acronym, expansion=expansion_text or None, aliases=[],
                        evidence=text[low:high])
        candidates.append((method, Found("exact", start, end, (low, high)), 2))
    candidates = _promote_parts(candidates, text, spans)
    strongest = max((level for _, _, level in candidates), default=0)
    methods: list[Method] = []
    found: list[Found | None] = []
    for method, where, level in candidates:
        if level < min(strongest, 1):
            rejected.append(f"method {method.name!r}: not presented as the paper's own")
            continue
        if _part_of_another(method, [other for other, _, _ in candidates], text):
            rejected.append(f"method {method.name!r}: part of a longer name")
            continue
        if len(methods) < MAX_METHODS:
            methods.append(method)
            found.append(where)
    return methods, found


# A sentence that lists what the paper's method is made of ('PURE consists of three core
# components: a Review Extractor ...', 'H-DenseFormer integrates a ... (MPE) module').
_COMPOSITION = re.compile(r"\b(consists? of|compris\w*|(is |are )?composed of|integrat\w*|"
                          r"incorporat\w*|contains?|equipped with|components?|modules?)\b", re.I)


def _promote_parts(candidates: list[tuple[Method, Found, int]], text: str,
                   spans: list[tuple[int, int]]) -> list[tuple[Method, Found, int]]:
    """Names in a sentence that describes what a proposed method is made of: the named
    parts of the paper's own method (level 1), not baselines."""
    own = [m for m, _, level in candidates if level == 2]
    if not own:
        return candidates
    promoted = []
    for method, where, drafted_level in candidates:
        level = drafted_level
        if level == 0:
            before = text[sentence_of(spans, where.start, where.end)[0]:where.start]
            if _COMPOSITION.search(before) and any(
                    whole_word(form).search(before) for m in own
                    for form in (m.name, m.expansion or "") if form) \
                    and not baseline_before(text, where.start):
                level = 1
        promoted.append((method, where, level))
    return promoted


def _spelled_out(acronym: str, text: str) -> str | None:
    """The words an abstract defines an acronym with: 'Nested Causal Thompson Sampling'
    for 'NCTS' in '... Nested Causal Thompson Sampling (NCTS) ...'."""
    for match in _DEFINED_ACRONYM.finditer(text):
        if match.group(2) == acronym:
            return match.group(1).strip()
    return None


def _part_of_another(method: Method, others: list[Method], text: str = "") -> bool:
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


def _defined_in_proposals(text: str, spans: list[tuple[int, int]]) -> list[
        tuple[str, int, int, str]]:
    """Acronyms a proposal sentence defines ('we introduce Conformal Severity Control
    (CSC)'): (acronym, start, end, spelled-out form). The model misses some of these."""
    found = []
    for begin, end in spans:
        sentence = text[begin:end]
        if "(" not in sentence or not _PROPOSAL.search(sentence):
            continue  # every definition below is 'words (ACRONYM)'
        for match in _DEFINED_ACRONYM.finditer(sentence):
            acronym = match.group(2)
            if not looks_like_acronym(acronym) or _PLURAL.match(acronym) \
                    or _known_name(acronym) or baseline_before(text, begin + match.start(1)) \
                    or not _spelled_from(match.group(1), acronym):
                continue
            found.append((acronym, begin + match.start(2), begin + match.end(2),
                          match.group(1).strip()))
        found.extend(_lowercase_definitions(text, (begin, end), {a for a, *_ in found}))
    return found + _parts_after_proposal(text, spans, {a for a, *_ in found})


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
        letters = "".join(c for c in acronym if c.isalpha()).lower()
        words = list(re.finditer(r"[a-z][\w-]*", match.group(1)))
        for count in range(1, len(words) + 1):
            tail = words[-count:]
            initials = "".join(part[0] for w in tail for part in w.group().split("-") if part)
            if initials == letters and acronym not in seen and not _known_name(acronym):
                start = match.start(1) + tail[0].start()
                if strictly_proposed(text, sentence, start, match.end(2)):
                    found.append((acronym, match.start(2), match.end(2),
                                  text[start:match.start(1) + tail[-1].end()]))
                break
    return found


def _parts_after_proposal(text: str, spans: list[tuple[int, int]], seen: set[str]) -> list[
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
                    or baseline_before(text, begin + match.start(1)):
                continue
            seen.add(acronym)
            parts.append((acronym, begin + match.start(2), begin + match.end(2), expansion))
    return parts


BENCHMARK_NAME = re.compile(r"(Bench|Benchmark|Suite|Arena|Gym)\b|-?[Bb]ench\b")

# Model families and sizes: what a paper evaluates, not what it evaluates on.
_MODEL_NAME = re.compile(
    r"^(GPT|Llama|LLaMA|Qwen|Gemini|Claude|DeepSeek|Mistral|Mixtral|OLMo|Olmo|Phi|Gemma|"
    r"BERT|RoBERTa|T5|ViT|ResNet|CLIP|Falcon|Vicuna|PaLM|o[134])\b|\b\d+(\.\d+)?[BM]\b")


# A split named after a dataset ('LibriSpeech test-clean', 'Seed-TTS test-en', 'SQuAD dev').
_SPLIT_AFTER = re.compile(r"^[ -](test|dev|val|validation)(-[A-Za-z0-9]+)?\b")


def _benchmark_extent(text: str, start: int, end: int) -> tuple[int, int]:
    """A benchmark's name without a trailing description in parentheses ('LaSOT
    (Single-Object)' is LaSOT) and with the split written after it."""
    described = _TRAILING_PARENTHESIS.match(text[start:end])
    if described:
        end = start + described.end(1)
    split = _SPLIT_AFTER.match(text[end:end + 24])
    return start, end + split.end() if split else end


def _benchmark_kind(name: str, sentence: str) -> str:
    lowered = f"{name} {sentence}".lower()
    if "environment" in lowered or "simulat" in lowered:
        return "environment"
    if "dataset" in lowered or "corpus" in lowered:
        return "dataset"
    return "benchmark"


def ground_benchmarks(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
                rejected: list[str], titled: str | None = None) -> tuple[
        list[Benchmark], list[Found | None]]:
    """Named benchmarks; ``titled``: the one the title names, which the paper creates."""
    benchmarks: list[Benchmark] = []
    found: list[Found | None] = []
    index: dict[str, int] = {}
    for item in draft.benchmarks:
        drafted = find_name(item.name, text)
        spot = find_named("benchmark", item.name, text, rejected)
        if spot is None or drafted is None:
            continue
        status, start, end = spot
        start, end = _benchmark_extent(text, start, end)
        surface = text[start:end]
        reason = refused_benchmark(text, drafted[1:], start, end)
        if reason is not None:
            rejected.append(f"benchmark {item.name!r}: {reason}")
            continue
        if _MODEL_NAME.search(surface):
            rejected.append(f"benchmark {item.name!r}: a model, not a benchmark")
            continue
        sentence = sentence_of(spans, start, end)
        introduced = _introduced(item, text, sentence, start, end) or (
            titled is not None and name_key(surface) == name_key(titled))
        key = name_key(surface)
        if key in index:
            if introduced and not benchmarks[index[key]].introduced:
                benchmarks[index[key]] = benchmarks[index[key]].model_copy(
                    update={"introduced": True})
            continue
        index[key] = len(benchmarks)
        low, high = evidence_window(text, sentence, (start, end))
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
