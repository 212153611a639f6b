"""Grounding the draft's names: task phrases, the paper's own methods (its proposals, not
the baselines it compares with) and the benchmarks it evaluates on or creates."""

from __future__ import annotations

import re

from papersift.extract.domain.lookup.assemble_spans import (
    TRAILING_PARENTHESIS,
    Found,
    as_written,
    content_words,
    evidence_window,
    find_name,
    find_named,
    name_key,
    sentence_of,
)
from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.extract.domain.rules.benchmark_candidates import EXPANSION_WORD
from papersift.extract.domain.rules.benchmark_kinds import (
    a_task_or_term,
    not_a_resource,
    used_as_data,
)
from papersift.extract.domain.rules.context_rules import background_end
from papersift.extract.domain.rules.known_benchmarks import known_benchmark
from papersift.extract.domain.rules.name_rules import inside_url, refused_benchmark
from papersift.schemas import Benchmark, DraftBenchmark, PaperDraft, Task

_CREATION_VERB = re.compile(
    r"\b(introduc\w*|present\w*|propos\w*|releas\w*|construct\w*|build|built|curat\w*|"
    r"collect\w*|creat\w*|develop\w*|design\w*)\b", re.I)
_CUE_BEFORE = re.compile(
    r"\b(introduce|introduces|introducing|present|presents|release|releases|construct|"
    r"curate|build|create|propose|proposes|establish|establishes|develop|develops|new|novel|"
    r"our)\b([^.;,]{0,40}(?:,\s*(?:the\s+)?)?)$", re.I)
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



# Model families and sizes: what a paper evaluates, not what it evaluates on.
_MODEL_NAME = re.compile(
    r"^(GPT|Llama|LLaMA|Qwen|Gemini|Claude|DeepSeek|Mistral|Mixtral|OLMo|Olmo|Phi|Gemma|"
    r"BERT|RoBERTa|T5|ViT|ResNet|CLIP|Falcon|Vicuna|PaLM|o[134])\b|\b\d+(\.\d+)?[BM]\b")


# A split named after a dataset ('LibriSpeech test-clean', 'Seed-TTS test-en', 'SQuAD dev'),
# but not a part described as a set ('the COCO-2014 validation set' is COCO-2014, 'the
# WMT'23 test datasets' WMT'23).
_SPLIT_AFTER = re.compile(
    r"^[ -](test|dev|val|validation)(-[A-Za-z0-9]+)?\b"
    r"(?!\s+(?:sets?|splits?|subsets?|datasets?)\b)")


def _benchmark_extent(text: str, start: int, end: int) -> tuple[int, int]:
    """A benchmark's name without a trailing description in parentheses ('LaSOT
    (Single-Object)' is LaSOT) or a plural acronym ('Yelp POIs' is Yelp), and with the
    split written after it."""
    described = TRAILING_PARENTHESIS.match(text[start:end])
    if described:
        end = start + described.end(1)
    split = _SPLIT_AFTER.match(text[end:end + 24])
    end = end + split.end() if split else end
    tail = _PLURAL_ACRONYM_TAIL.search(text[start:end])
    return start, start + tail.start() if tail else end


# 'Yelp POIs': a plural acronym after a name is what the resource holds, not its name.
_PLURAL_ACRONYM_TAIL = re.compile(r"(?<=\S)\s+[A-Z]{2,}s$")


def _benchmark_kind(name: str, sentence: str) -> str:
    lowered = f"{name} {sentence}".lower()
    if "environment" in lowered or "simulat" in lowered:
        return "environment"
    if "dataset" in lowered or "corpus" in lowered:
        return "dataset"
    return "benchmark"


def ground_benchmarks(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
                rejected: list[str], titled: str | None = None,
                terms: dict[str, str] | None = None) -> tuple[list[Benchmark], list[Found | None]]:
    """Named benchmarks; ``titled``: the one the title names, which the paper creates.
    ``terms`` receives the names refused as a task, problem or term (key -> why), which are
    not methods either."""
    benchmarks: list[Benchmark] = []
    found: list[Found | None] = []
    index: dict[str, int] = {}
    for item in (_as_the_text_writes_it(b, text) for b in draft.benchmarks):
        drafted = find_name(item.name, text)
        spot = find_named("benchmark", item.name, text, rejected)
        if spot is None or drafted is None:
            continue
        status, start, end = spot
        start, end = _benchmark_extent(text, start, end)
        surface = text[start:end]
        term = a_task_or_term(text, start, end)
        if term is not None:
            rejected.append(f"benchmark {item.name!r}: {term}, not a benchmark")
            if terms is not None:
                terms[name_key(surface)] = f"{term}, not a method"
            continue
        reason = refused_benchmark(text, drafted[1:], start, end)
        if reason is not None:
            rejected.append(f"benchmark {item.name!r}: {reason}")
            continue
        reason = not_a_resource(text, start, end)
        if reason is not None:
            rejected.append(f"benchmark {item.name!r}: {reason}")
            continue
        if _MODEL_NAME.search(surface) and not used_as_data(text, start):
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
    benchmarks, found = _one_entry_per_resource(benchmarks, found, rejected)
    return _without_background_citations(benchmarks, found, text, spans, rejected)


def _without_background_citations(benchmarks: list[Benchmark], found: list[Found | None],
                                  text: str, spans: list[tuple[int, int]],
                                  rejected: list[str]) -> tuple[list[Benchmark],
                                                                list[Found | None]]:
    """A paper that introduces its own benchmark or dataset often opens with the existing
    ones it finds wanting ('existing benchmarks (e.g., HumanEval, MBPP) are no longer
    sufficient'); an existing name written only there, before the paper speaks of its own
    work, is not one it evaluates on."""
    background = background_end(text, spans)
    if not background or not any(b.introduced for b in benchmarks):
        return benchmarks, found
    kept: list[tuple[Benchmark, Found | None]] = []
    for benchmark, spot in zip(benchmarks, found, strict=True):
        mentions = [m.start() for m in whole_word(benchmark.name).finditer(text)]
        if not benchmark.introduced and mentions and max(mentions) < background:
            rejected.append(f"benchmark {benchmark.name!r}: an existing one the background "
                            "cites before the paper introduces its own, not one it uses")
        else:
            kept.append((benchmark, spot))
    return [b for b, _ in kept], [f for _, f in kept]


def _capitals(name: str) -> str:
    """Capitals and digits: 'ISOOD' for 'IS-OOD', 'CIFAR10' for 'CIFAR 10'."""
    return "".join(c for c in name if c.isupper() or c.isdigit())


def _same_resource(short: str, long: str) -> bool:
    """'IS-OOD' and 'Incremental Shift OOD', 'SPA-Bench' and 'SmartPhone Agent Benchmark':
    one word and a longer name whose capitals and digits are the same (at least three
    capitals); or 'C4' and "Google's C4", the name after an owner's possessive.

    Looser than entities.acronyms.abbreviates (Schwartz-Hearst), which wants as many
    words as capitals and so refuses both examples above; digits count here, so 'CIFAR 10'
    is not 'CIFAR'."""
    if len(short.split()) != 1 or len(long.split()) < 2:
        return False
    capitals = _capitals(short)
    if sum(c.isupper() for c in capitals) >= 3 and capitals == _capitals(long):
        return True
    owner, _, rest = long.partition(" ")
    return owner.endswith(("'s", "’s")) and rest == short


def _one_entry_per_resource(benchmarks: list[Benchmark], found: list[Found | None],
                            rejected: list[str]) -> tuple[list[Benchmark], list[Found | None]]:
    """One entry per resource: where two entries are an acronym and its expansion, or a
    name with and without its owner, the one-word name stays (introduced if either was);
    where the paper introduces a name and the same name with a version or size, the
    versioned one stays."""
    dropped: set[int] = set()
    for i, short in enumerate(benchmarks):
        for j, long in enumerate(benchmarks):
            if i in dropped or j in dropped or not _same_resource(short.name, long.name):
                continue
            dropped.add(j)
            if long.introduced and not short.introduced:
                benchmarks[i] = short.model_copy(update={"introduced": True})
            rejected.append(f"benchmark {long.name!r}: the same resource as {short.name!r}")
    for i, short in enumerate(benchmarks):  # 'EPFL-Smart-Kitchen' (the title) and '-30'
        twin = next((long for j, long in enumerate(benchmarks)
                     if j not in dropped and long.introduced and short.introduced
                     and long.name.startswith(short.name)
                     and _VERSION_OF.fullmatch(long.name[len(short.name):])), None)
        if twin is not None and i not in dropped:
            dropped.add(i)
            rejected.append(f"benchmark {short.name!r}: the same new resource as {twin.name!r}")
    return ([b for k, b in enumerate(benchmarks) if k not in dropped],
            [f for k, f in enumerate(found) if k not in dropped])


# A version or size after a name the paper introduces twice ('-30', ' v2', '-1M').
_VERSION_OF = re.compile(r"[\s-]?v?\d+(?:\.\d+)?[KMB]?")


def _as_the_text_writes_it(item: DraftBenchmark, text: str) -> DraftBenchmark:
    """The drafted name without markup or an added kind word, spaced where only a URL runs
    its words together."""
    item = _spaced_when_only_in_a_url(item, text)
    return item.model_copy(update={"name": as_written(item.name, text)})


def _spaced_when_only_in_a_url(item: DraftBenchmark, text: str) -> DraftBenchmark:
    """'BrainTreebank' where the text writes 'Brain Treebank' and only its URL runs the
    words together: the name as the text writes it."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])", " ", item.name)
    if spaced == item.name:
        return item  # nothing runs together: no lookup (ground_benchmarks makes its own)
    spot = find_name(item.name, text)
    if spot is None or not inside_url(text, spot[1], spot[2]):
        return item
    found = find_name(spaced, text)
    if found is None or inside_url(text, found[1], found[2]):
        return item
    return item.model_copy(update={"name": spaced})


def _introduced(item: DraftBenchmark, text: str, sentence: tuple[int, int], start: int,
                end: int) -> bool:
    """Whether the paper creates it: a creation word right before or after the name ('our
    new X', 'X, a new benchmark') says so even when the model missed it; otherwise the
    model's flag is kept only when the sentence uses a creation verb."""
    named = _EXPANSION_BEFORE.search(text, max(sentence[0], start - 120), start)
    lead = named.start() if named else start  # 'propose the Panel ... Operation (PUO)'
    before = _CUE_BEFORE.search(text[sentence[0]:lead])
    source = built_from(text, sentence[0], lead)
    if before and " and " not in before.group(2) and not source:
        return True
    if _CUE_AFTER.search(text[end:sentence[1]]):
        return True
    return item.new and bool(_CREATION_VERB.search(text[sentence[0]:sentence[1]])) \
        and not source and not known_benchmark(text[start:end])


# The capitalised expansion right before a name in parentheses: 'the Panel Understanding
# and Operation (' before 'PUO'.
_EXPANSION_BEFORE = re.compile(rf"(?:{EXPANSION_WORD})+\($")
# Words that make the name after them a source of what the paper creates, not the
# creation: 'graphs over nuScenes', 'annotations from captions in YouCook2 and ActivityNet'.
_SOURCE_WORDS = frozenset({"from", "over", "in", "on", "of", "using", "upon", "atop",
                           "extending", "extends", "extend", "existing", "public"})
_LISTED = frozenset({"and", "or", ",", "the", "as", "well"})


def built_from(text: str, sentence_start: int, start: int) -> bool:
    """Whether the words right before a name (past other names of the same list) make it
    what the paper builds on rather than what it creates."""
    words = re.findall(r"[\w-]+|,", text[max(sentence_start, start - 80):start])
    for word in reversed(words):
        if word.lower() in _LISTED or word[:1].isupper() or word[:1].isdigit():
            continue
        return word.lower() in _SOURCE_WORDS
    return False
