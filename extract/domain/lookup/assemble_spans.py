"""Finding the draft's words in the abstract, shared by every field's grounding: sentence
spans, the evidence window around a mention, whole-word name lookup and the tests that
tell a proper name from a description.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from papersift.extract.domain.lookup.grounding import AlignmentStatus, align, normalize
from papersift.extract.domain.lookup.wholeword import whole_word
from papersift.schemas.paper import MAX_EVIDENCE_CHARS

MIN_EVIDENCE_CHARS = 3

_ABBREVIATIONS = ("e.g", "i.e", "et al", "vs", "etc", "cf", "Fig", "Eq", "resp", "approx",
                  "U.S", "U.K", "Dr", "No")
_SENTENCE_END = re.compile(r"[.!?](?=\s+[\"'(\[$\\*A-Z0-9])")
_WORD = re.compile(r"[a-z0-9]+")
# A name with a parenthesis at its end: 'Long Name (LN)', 'LaSOT (Single-Object)'.
TRAILING_PARENTHESIS = re.compile(r"^(.*\S)\s*\(([^()]+)\)$")
_STOP = frozenset({
    "a", "an", "the", "of", "for", "and", "or", "in", "on", "with", "to", "via", "by", "from",
    "at", "as", "is", "are", "we", "our", "this", "that", "its", "their", "using", "based",
})


@dataclass(frozen=True)
class Found:
    """Where an item was found: its mention and the sentence used as evidence."""

    status: AlignmentStatus
    start: int
    end: int
    sentence: tuple[int, int]


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


def sentence_of(spans: list[tuple[int, int]], start: int, end: int) -> tuple[int, int]:
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


def evidence_window(text: str, sentence: tuple[int, int],
                    mention: tuple[int, int]) -> tuple[int, int]:
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


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(normalize(text)) if w not in _STOP}


def _bounded(text: str, start: int, end: int) -> bool:
    """The span is not glued to letters or digits on either side."""
    left = text[start - 1] if start > 0 else " "
    right = text[end] if end < len(text) else " "
    return not (left.isalnum() and text[start].isalnum()) and not (
        right.isalnum() and text[end - 1].isalnum())


def find_name(name: str, text: str) -> tuple[AlignmentStatus, int, int] | None:
    """First whole-word occurrence of a name: exact, then ignoring case, then normalised."""
    name = name.strip()
    if not name:
        return None
    match = whole_word(name).search(text)
    if match:
        return "exact", match.start(), match.end()
    match = whole_word(name, re.I).search(text)
    if match:
        return "normalized", match.start(), match.end()
    found = align(name, text)
    if found.status == "normalized" and found.char_start is not None \
            and found.char_end is not None and _bounded(text, found.char_start, found.char_end):
        return "normalized", found.char_start, found.char_end
    return None


# Markup a model copies around a name ('$\\texttt{dattri}$', '**IPR**') and kind words it
# adds after one ('IPR framework' where the text has '**(IPR)** framework').
_WRAPPED = re.compile(r"^\$?\\(?:texttt|textbf|textit|textsc|mathrm|mathbf|emph)\{([^{}]+)\}\$?$"
                      r"|^\*\*([^*]+)\*\*$"
                      r"|^\$([^$\\{}]+)\$?$")  # '$T^3$', or '$T^3' with its closing dollar lost
# a method or a part of one; 'model', 'network', 'system' and 'agent' also head classes
# of things ('T2I models', 'neural networks')
_METHOD_KINDS = (r"framework|method|algorithm|approach|architecture|module|technique|"
                 r"pipeline|branch|component|block|layer")
_KIND_TAIL = re.compile(
    rf"^(.*\S)\s+(?:{_METHOD_KINDS}|model|system|agent|network|benchmark|dataset|corpus|"
    rf"suite|environment)s?$", re.I)
_METHOD_TAIL = re.compile(rf"^(.*\S)\s+(?:{_METHOD_KINDS})s?$", re.I)


def ends_in_a_method_kind(name: str) -> bool:
    """Whether a drafted name's last word makes it a method or a part of one ('2D Selective
    Scan (SS2D) module', 'Visual State-Space (VSS) blocks'): the model's own words say what
    it is, wherever it put it."""
    return _METHOD_TAIL.match(name.strip()) is not None


def as_written(name: str, text: str) -> str:
    """The drafted name as the abstract writes it: without the markup the model copied
    around it ('$\\texttt{dattri}$' -> 'dattri'), and without a kind word it added that
    the text does not write after it."""
    wrapped = _WRAPPED.match(name.strip())
    bare = wrapped and (wrapped.group(1) or wrapped.group(2) or wrapped.group(3))
    if bare and find_name(bare, text) is not None:
        return bare
    if find_name(name, text) is not None:
        return name  # 'IPR framework' written so: the kind word stays
    tail = _KIND_TAIL.match(name.strip())
    if tail and find_name(tail.group(1), text) is not None:
        return tail.group(1)
    return name


def parenthetical_after(text: str, end: int) -> str | None:
    match = re.match(r"[*_}]*\s*\(([^()]{2,100})\)", text[end:end + 110])  # '*Name* (ACR)'
    return match.group(1).strip() if match else None


def looks_like_acronym(name: str) -> bool:
    letters = [c for c in name if c.isalpha()]
    return bool(letters) and sum(c.isupper() for c in letters) >= max(2, len(letters) // 2) \
        and len(name.split()) == 1


_COLOUR = re.compile(r"\\(?:textcolor|color)\{[^{}]*\}")


# A colon right after a plural kind word opens a list of names, not a new sentence.
_AFTER_A_LIST_OF_RESOURCES = re.compile(
    r"\b(datasets|benchmarks|corpora|environments|suites)\s*:\s*$", re.I)


def _is_named(text: str, start: int, end: int, *, strict: bool = False) -> bool:
    """Whether a mention reads as a proper name: a capital beyond its first letter, a digit,
    formatting markup around it, or (unless ``strict``) a capitalised word in mid-sentence
    ('on Yelp and Goodreads'); 'a graph-based retriever' is a description. Strict is for
    method names: one capitalised word ('Transformers', 'Shapley') is rarely a new method."""
    # A colour's name is no part of the words it colours, and colour marks a highlighted
    # word, not a name ('\\textbf{\\textcolor{color3}{material}}'): only its letters count.
    mention = _COLOUR.sub("", text[start:end])
    if any(c.isdigit() for c in mention) or any(c.isupper() for c in mention[1:]):
        return True
    if _COLOUR.match(text, start):
        return False
    before = text[max(0, start - 12):start]
    if re.search(r"(\\text\w+\{|\\emph\{|\*\*|\\mathrm\{|\\texttt\{)$", before):
        return True
    if strict and " " not in mention.strip():
        return False
    if _AFTER_A_LIST_OF_RESOURCES.search(text[max(0, start - 30):start]):
        return mention[:1].isupper()  # 'two datasets: Bing and YFCC' lists names
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


_FOOTNOTE_TAIL = re.compile(r"\s*<sup>[^<]{0,12}</sup>$")
_QUANTITY = re.compile(r"^[\d.,]+\s*[KMBkmb%]?$")


def find_named(kind: str, name: str, text: str, rejected: list[str]) -> tuple[
        AlignmentStatus, int, int] | None:
    """Where a proper name sits in the abstract, trimmed of descriptive words; a name not
    found, a description or a quantity is noted in ``rejected``."""
    found = _locate(kind, name, text, rejected, refuse_descriptions=True)
    return None if found is None else found[:3]


def how_it_reads(text: str, start: int, end: int) -> str:
    """'named': a capital beyond its first letter, a digit or markup; 'one_word': one
    capitalised word ('Kraken', but also 'Transformers'); 'description': plain words."""
    if _is_named(text, start, end, strict=True):
        return "named"
    return "one_word" if _is_named(text, start, end) else "description"


def _one_proper_word(mention: str) -> bool:
    """One capitalised word with no other capital or digit ('Wasserstein', 'Dirichlet'): cut
    out of a lowercase phrase, it is a fragment of the phrase, not the phrase's name."""
    word = mention.strip("*_{}()")
    return " " not in word and word[:1].isupper() and not any(
        c.isupper() or c.isdigit() for c in word[1:])


_HEADS_OF_A_NAME = frozenset({
    "framework", "method", "model", "models", "algorithm", "approach", "architecture",
    "system", "pipeline", "network", "networks", "module", "technique", "estimator",
    "library", "toolkit", "agent", "policy", "loss", "objective", "family", "strategy",
    "procedure", "mechanism", "tool", "operator", "metric", "score", "measure", "layer",
    "block", "encoder", "decoder", "solver", "optimizer", "scheme", "protocol", "paradigm",
    "prompt", "prompting", "attack", "defense", "kernel", "regularizer", "sampler",
    "benchmark", "dataset", "suite", "index", "criterion", "test", "variant", "version",
})
# Words that end a name's phrase rather than head it ('X as our core metric', 'X with Y')
_JOINING = frozenset({"as", "with", "and", "or", "for", "via", "on", "in", "of", "to", "that",
                      "which", "is", "are", "was", "by", "from", "at", "using", "based", "where",
                      "when", "while", "we", "our", "the", "a", "an", "its", "this", "these"})


def _modifier_of(rest: str) -> bool:
    """Whether the words the model wrote after a name make that name a modifier of a
    lowercase head ('Quasi-Newton approximations', 'nearest simplex ETF geometry'),
    rather than a name with its kind word after it ('X framework', 'X conversion tool',
    'X with Y')."""
    words = re.findall(r"[A-Za-z][\w-]*", rest)
    return bool(words) and words[0].islower() and words[0] not in _JOINING and not (
        {words[0], words[-1]} & _HEADS_OF_A_NAME)


def locate_method(name: str, text: str, rejected: list[str]) -> tuple[
        AlignmentStatus, int, int, str] | None:
    """Where a drafted method name sits in the abstract, and how it reads there (see
    how_it_reads). Unlike find_named, only a name the abstract lacks or a quantity is
    refused here: how it reads is left to the calibrated decision (method_decision.py)."""
    return _locate("method", name, text, rejected, refuse_descriptions=False)


def _locate(kind: str, name: str, text: str, rejected: list[str], *,
            refuse_descriptions: bool) -> tuple[AlignmentStatus, int, int, str] | None:
    """A name's first mention, trimmed of descriptive words unless it is a description,
    and how it reads; a name not found, a quantity and (when asked) a description are
    noted in ``rejected``."""
    spot = find_name(name, text)
    if spot is None:
        rejected.append(f"{kind} {name!r}: not in the abstract")
        return None
    status, start, end = spot
    reads = how_it_reads(text, start, end)
    if reads == "description" and refuse_descriptions:
        rejected.append(f"{kind} {name!r}: a description, not a name")
        return None
    if reads != "description":
        low, high = _trim_description(text, start, end)
        if kind == "method" and (low, high) != (start, end) and _one_proper_word(text[low:high]):
            reads = "description"  # 'spherical convolutional Wasserstein distance' stays whole
        else:
            if kind == "method" and _modifier_of(text[high:end]):
                reads = "description"  # 'Quasi-Newton approximations': not a name of its own
            start, end = low, high
    footnote = _FOOTNOTE_TAIL.search(text[start:end])
    if footnote and footnote.start() > 0:  # 'LTNER<sup>1</sup>': the page's footnote marker
        end = start + footnote.start()
    if _QUANTITY.match(text[start:end]):
        rejected.append(f"{kind} {name!r}: a quantity, not a name")
        return None
    return status, start, end, reads


def name_key(name: str) -> str:
    """Lowercase words; a '+' counts as one, since 'Multi-News+' is not 'Multi-News'."""
    return " ".join(_WORD.findall(normalize(name).replace("+", " plus ")))
