"""What the words around a name say about it, beyond the name itself: the abstract's
background, a name used as the kind of a thing ('a novel O2O RL algorithm'), a model the
paper trains, a category of benchmarks, and a dataset the paper names in apposition.

Each rule reads cue words next to a mention; none is keyed to one abstract. They were read
off the tune half of the third development set (bench/gold/dev3) and are tested on
invented sentences in tests/test_context_rules.py.
"""

from __future__ import annotations

import re
from functools import lru_cache

# A sentence in which the paper speaks of its own work.
_OWN_WORK = re.compile(
    r"\b(we|our|us|ours|this\s+(paper|work|study|article|thesis)|here(in)?|"
    r"in\s+this\s+(paper|work|study))\b", re.I)


def background_end(text: str, spans: list[tuple[int, int]]) -> int:
    """Where the abstract's background ends: the start of the first sentence in which the
    paper speaks of its own work ('we', 'our', 'this paper'), when that is not the first
    sentence; 0 when there is no background (or no such sentence at all)."""
    return _background_end(text, tuple(spans))


@lru_cache(maxsize=64)
def _background_end(text: str, spans: tuple[tuple[int, int], ...]) -> int:
    for begin, end in spans:
        if _OWN_WORK.search(text, begin, end):
            return begin
    return 0


# 'a novel O2O RL algorithm', 'an LLM-based agent': an indefinite article (and praise)
# before the name, a kind noun after it.
_INDEFINITE_BEFORE = re.compile(
    r"\b[Aa]n?\s+((novel|new|simple|general|unified|efficient|effective|principled|"
    r"practical|scalable|robust|lightweight|generic|modular|first)[,\s]+)*[*_{]*$")
_KIND_AFTER = re.compile(
    r"^[*_}]*(-based|-style|-like)?\s+(algorithms?|methods?|approach(es)?|frameworks?|"
    r"models?|techniques?|variants?|schemes?|procedures?|pipelines?|architectures?|"
    r"agents?|systems?)\b")


def names_a_kind(text: str, start: int, end: int) -> bool:
    """The mention modifies an indefinite noun ('a novel O2O RL algorithm'): it says
    what kind of thing the paper's method is, not what the method is called."""
    return bool(_INDEFINITE_BEFORE.search(text[max(0, start - 60):start])
                and _KIND_AFTER.match(text[end:end + 24]))


# 'the Local Glivenko-Cantelli setting': a problem class or phenomenon, not a method.
_SETTING_AFTER = re.compile(
    r"^[*_}]*\s+(settings?|problems?|paradigms?|regimes?|scenarios?|hypothes[ie]s|"
    r"conjectures?|phenomen(on|a)|paradox(es)?)\b")


def names_a_setting(text: str, end: int) -> bool:
    return bool(_SETTING_AFTER.match(text[end:end + 24]))


# 'By retraining La-Proteína', 'we fine-tune Whisper': the paper trains it, so it is a model.
_TRAINED_BEFORE = re.compile(
    r"\b(re-?train(ing|ed|s)?|fine-?tun(e|es|ed|ing)|finetun(e|es|ed|ing)|"
    r"pre-?train(ing|ed|s)?|distill(ing|ed|s)?)\s+(the\s+)?(open-source\s+)?[*_{]*$", re.I)


def trained_by_the_paper(text: str, start: int) -> bool:
    return bool(_TRAINED_BEFORE.search(text[max(0, start - 40):start]))


# 'on diverse ODQA benchmarks': a quantity or variety of benchmarks of some kind.
_QUANTIFIED_BEFORE = re.compile(
    r"\b(diverse|various|several|multiple|many|numerous|different|standard|popular|"
    r"common|existing|\d+|two|three|four|five|six|seven|eight|nine|ten)\s+[*_{]*$"
    r"|\b(?-i:[a-z]+-[a-z]+)\s+[*_{]*$", re.I)  # 'open-ended QA datasets'

_PLURAL_KIND_AFTER = re.compile(r"^[*_}]*\s+(benchmarks|datasets|corpora)\b")


# 'IT datasets (FLAN, CoT, and Alpaca)': the plural kind word is followed by the names.
_NAMES_FOLLOW = re.compile(r"^[*_}]*\s+(benchmarks|datasets|corpora)\s*(\(|:|such as|like|"
                           r"including)\s*[A-Z]")


def a_kind_of_benchmarks(text: str, start: int, end: int) -> bool:
    """'on diverse ODQA benchmarks', 'three QA datasets', 'open-ended QA datasets', 'IT
    datasets (FLAN, CoT, ...)': the name says what kind of benchmarks they are."""
    return bool(_QUANTIFIED_BEFORE.search(text[max(0, start - 24):start])
                and _PLURAL_KIND_AFTER.match(text[end:end + 16])) \
        or bool(_NAMES_FOLLOW.match(text[end:end + 40]))


# 'datasets (FLAN, CoT, and Alpaca)', 'datasets such as GSM8K': a list a data noun heads
# ('benchmarks, including RAG, ICL, and general domains' lists kinds, not datasets).
_NAME_ITEM = r"[A-Z0-9][\w.+'’-]*(\s+[A-Z0-9][\w.+'’-]*){0,3}"
_DATA_LIST_BEFORE = re.compile(
    r"\b(datasets|corpora)\s*(\(|:|such as|like)\s*"
    rf"((the\s+)?{_NAME_ITEM}\s*(,\s*(and|or)?|and|or|&)\s*){{0,8}}(the\s+)?$")


def listed_as_data(text: str, start: int) -> bool:
    """The mention is one of a list that a plural data noun heads: a dataset, whatever its
    name (an established method's name such as 'CoT' included)."""
    return bool(_DATA_LIST_BEFORE.search(text[max(0, start - 200):start]))


# 'the SafeSearch benchmark', 'our MCE dataset': a determiner, the name, a resource noun.
# an acronym may stand in parentheses after its capitalised expansion: 'the Multimodal
# Multi-image Understanding (MMIU) benchmark'
_DETERMINED_BEFORE = re.compile(
    r"\b([Tt]he|[Oo]ur|[Tt]his|[Nn]ew|[Nn]ovel|[Pp]roposed)\s+[*_{]*"
    r"(?:(?:[A-Z][\w-]*\s+){1,6}\(\s*)?$")
_RESOURCE_NOUN_AFTER = re.compile(
    r"^[*_}]*(?:\s*\))?\s+(benchmark|dataset|corpus|testbed|database|leaderboard)\b(?!s)",
    re.I)


# 'we construct StorySparkQA dataset': a creation verb right before the name stands for
# the determiner.
_CREATED_BEFORE = re.compile(
    r"\b(?:construct|build|built|introduc|present|releas|creat|curat|collect)\w*\s+[*_{]*$")


def called_a_resource_directly(text: str, start: int, end: int) -> bool:
    """'we construct the SafeSearch benchmark', 'the Multimodal Multi-image Understanding
    (MMIU) benchmark', 'we construct StorySparkQA dataset': the text uses the name as the
    name of a benchmark or dataset."""
    before = text[max(0, start - 90):start]
    return bool((_DETERMINED_BEFORE.search(before) or _CREATED_BEFORE.search(before))
                and _RESOURCE_NOUN_AFTER.match(text[end:end + 18]))


# 'Our new dataset, the Consistency Distilled Synthetic Protein Database, is ...'
_RESOURCE_APPOSITION = re.compile(
    r"\b(?:[Oo]ur|[Aa]|[Tt]he|[Tt]his)\s+(?:new\s+|novel\s+|proposed\s+)?"
    r"(?:dataset|benchmark|corpus|database),\s+(?:the\s+|called\s+|named\s+|dubbed\s+)?"
    r"((?:[A-Z][\w-]*\s+){0,7}[A-Z][\w-]*)(?=\s*[,.;(])")


def resources_in_apposition(text: str) -> list[tuple[int, int]]:
    """Spans of capitalised names that follow 'our (new) dataset,' and the like."""
    return [match.span(1) for match in _RESOURCE_APPOSITION.finditer(text)]


# 'we construct BOOST-QA, a fine-tuning dataset ...': a coined name right after a verb that
# makes data (the method verbs of name_rules.PROPOSAL_VERB do not include these).
_MADE_RESOURCE = re.compile(
    r"\b(?:[Ww]e|[Oo]ur|[Tt]his (?:paper|work))\b[^.;]{0,40}?\b(?:construct|curat|collect|"
    r"releas|compil|assembl|gather)\w*\s+(?:(?:a|an|the)\s+)?(?:(?:new|novel)\s+)?[*_]*"
    r"([A-Z][\w-]*[A-Z0-9][\w-]*|[a-z]+[A-Z][\w-]*)[*_]*(?=\s*[,(:—])")


def made_resources(text: str) -> list[tuple[int, int]]:
    """Spans of coined names a data-making verb introduces ('we curate X,'); the caller
    keeps those the words after call a dataset or benchmark (named_as_resource)."""
    return [match.span(1) for match in _MADE_RESOURCE.finditer(text)]


# '34.8-hour', '300-image': a size or count that the model took for a name.
_SIZE_AS_NAME = re.compile(r"^\d[\d.,]*\s?-?\s?[a-z]+$")


def a_size(mention: str) -> bool:
    return bool(_SIZE_AS_NAME.match(mention.strip("*_ ")))


# '10 GNN benchmark datasets', '18 (variants of) Diffusion Models': a number of things.
_COUNTED = re.compile(r"^\d+\s+(?:\(|\S)")
_PLURAL_THINGS_AFTER = re.compile(
    r"^[*_}]*(?:\s+and\s+\d+\s+[\w-]+)?\s+(?:[\w-]+\s+)?(?:datasets|benchmarks|corpora|environments|tasks|models|"
    r"variants|sets|suites|domains|languages)\b", re.I)


def a_count_of_things(text: str, start: int, end: int) -> bool:
    """A count the model took for a name: a bare number, then a word and a plural kind
    ('10 GNN benchmark datasets'), or a bracket the name does not close ('18 (variants')."""
    mention = text[start:end]
    if not _COUNTED.match(mention):
        return False
    return mention.count("(") > mention.count(")") or bool(
        _PLURAL_THINGS_AFTER.match(text[end:end + 40]))


# 'a ... dataset(GraphDoc)', 'two benchmarks (TweetEval and Tweet Topic Classification)':
# a name in parentheses right after a resource noun, alone or in a list, is that resource's
_KIND_BEFORE_PARENTHESIS = re.compile(
    r"\b(dataset|benchmark|corpus|suite)s?\s*\((?:[^()]{0,80}?(?:,|\band\b|\bor\b)\s*)?$",
    re.I)


def named_in_parentheses_after_a_resource(text: str, start: int) -> bool:
    """'... analysis dataset(GraphDoc)': the resource's own name, whatever it abbreviates."""
    return bool(_KIND_BEFORE_PARENTHESIS.search(text[max(0, start - 120):start]))
