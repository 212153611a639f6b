"""Grounding the draft's claimed gains at the numbers the abstract states: the value and
unit come from the abstract's own characters, and numbers that name, count or size
things (a year, '7B', 'CIFAR-10') are not results."""

from __future__ import annotations

import re

from papersift.extract.domain.assembly.attributes import GainAttributes, ground_gain_attributes
from papersift.extract.domain.lookup.assemble_spans import (
    Found,
    content_words,
    evidence_window,
    sentence_of,
)
from papersift.extract.domain.rules.context_rules import background_end
from papersift.extract.domain.rules.gain_decision import (
    GainDecision,
    decide_gain,
    gain_features,
    load_gain_weights,
)
from papersift.extract.domain.rules.gain_numbers import (
    is_count_or_name,
    leaves_open,
    link_numbers,
    states_no_measurement,
)
from papersift.extract.domain.rules.method_decision import Weights
from papersift.schemas import ClaimedGain, DraftGain, PaperDraft
from papersift.schemas.numbers import number_spans, numbers_in

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


def unit_at(text: str, start: int, end: int) -> str:
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


def ground_gains(draft: PaperDraft, text: str, spans: list[tuple[int, int]],
           rejected: list[str]) -> tuple[list[ClaimedGain], list[Found | None],
                                         list[GainAttributes]]:
    """Gains at the numbers the abstract states; a range ('8–17%') is one gain, stored
    at its low end with the unit written after its high end. Metric, baseline and
    dataset are grounded too (extract.domain.assembly.attributes)."""
    gains: list[ClaimedGain] = []
    attributes: list[GainAttributes] = []
    found: list[Found | None] = []
    stated = number_spans(text)
    links = link_numbers(text, stated)
    used: set[int] = set()
    range_highs: set[float] = set()
    background = background_end(text, spans)
    for item in draft.gains:
        values = numbers_in(item.value)
        if not values:
            rejected.append(f"gain {item.value!r}: no number")
            continue
        if values[0] in range_highs:
            rejected.append(f"gain {item.value!r}: the high end of a range already stored")
            continue
        spot = _locate_number(item, values[0], text, spans, stated, used, background)
        if spot is None and background and _locate_number(
                item, values[0], text, spans, stated, used, 0):
            rejected.append(f"gain {item.value!r} ({item.metric}): stated only in the "
                            "background, before the paper speaks of its own work")
            continue
        if spot is None:
            taken = any(abs(n - abs(values[0])) < 1e-9 and s in used for n, s, _ in stated)
            rejected.append(f"gain {item.value!r} ({item.metric}): " + (
                "the number is already stored" if taken else "number not in the abstract"))
            continue
        value, start, end = _paper_side(text, spot, stated, used)
        if start in used and start != spot[1]:
            rejected.append(f"gain {item.value!r}: the baseline's number in 'A vs. B'")
            continue
        (value, start, end), moved = links.own_spot((value, start, end))
        if start in used:
            rejected.append(f"gain {item.value!r}: {moved or 'a number'} already stored")
            continue
        used.add(start)
        unit_end = end
        high = links.high_of.get(start)
        if high is not None:
            unit_end = high.end
            range_highs.add(high.value)
            used.add(high.start)
        unit = unit_at(text, start, unit_end)
        sentence = sentence_of(spans, start, end)
        low, high_end = evidence_window(text, sentence, (start, unit_end))
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


def decide_gains(gains: list[ClaimedGain], found: list[Found | None],
                 attributes: list[GainAttributes], text: str, spans: list[tuple[int, int]],
                 added: set[float], rejected: list[str], decisions: list[GainDecision],
                 weights: Weights | None = None
                 ) -> tuple[list[ClaimedGain], list[Found | None], list[GainAttributes]]:
    """The grounded gains the calibrated decision keeps (rules/gain_decision.py), in order;
    flagged and refused ones are noted in ``rejected`` with their score, and every
    decision is appended to ``decisions``. ``added``: the values code added."""
    weights = weights or load_gain_weights()
    kept: list[int] = []
    for index, (gain, spot) in enumerate(zip(gains, found, strict=True)):
        if spot is None or gain.value is None:  # ground_gains gives each a spot and value
            kept.append(index)
            continue
        features = gain_features(
            text, (spot.start, spot.end), sentence_of(spans, spot.start, spot.end),
            gain.unit or "other",
            gain.value,
            added=gain.value in added, baseline=gain.baseline is not None,
            dataset=gain.dataset is not None)
        decision = decide_gain(gain.value, spot.start, spot.end, features, weights)
        decisions.append(decision)
        if decision.outcome == "kept":
            kept.append(index)
        else:
            rejected.append(decision.note(weights))
    return ([gains[i] for i in kept], [found[i] for i in kept],
            [attributes[i] for i in kept])


_VERSUS_BEFORE = re.compile(r"(\d[\d.,]*)\s*(?:\\?%)?\s*(?:vs\.?|versus)\s*$")


def _paper_side(text: str, spot: tuple[float, int, int], stated: list[tuple[float, int, int]],
                used: set[int]) -> tuple[float, int, int]:
    """In 'A vs. B' the paper's own result is A and B is the baseline's: a draft that gave
    B is moved to A (when A is a number the abstract states and no other gain took it)."""
    _, start, _ = spot
    match = _VERSUS_BEFORE.search(text[max(0, start - 40):start])
    if match is None:
        return spot
    own_end = max(0, start - 40) + match.end(1)
    for number, begin, finish in stated:
        if finish == own_end:
            return number, begin, finish  # already used: the caller drops the baseline's
    return spot


def _locate_number(item: DraftGain, value: float, text: str, spans: list[tuple[int, int]],
                   stated: list[tuple[float, int, int]], used: set[int], background: int
                   ) -> tuple[float, int, int] | None:
    """The abstract's occurrence of the draft's number that best fits its metric and unit,
    after the abstract's background; years and model sizes ('7B') are not results."""
    context = content_words(f"{item.metric} {item.vs or ''} {item.on or ''}")
    wanted_unit = unit_at(item.value, *_first_number_span(item.value))
    if wanted_unit == "absolute":
        wanted_unit = ""  # the draft gave a bare number: any unit fits
    best: tuple[float, tuple[float, int, int]] | None = None
    for number, start, end in stated:
        if abs(number - abs(value)) > 1e-9 * max(1.0, abs(value)) or start in used \
                or start < background:
            continue
        if not_a_result(text, number, start, end) or is_condition(text, start, end) \
                or is_count_or_name(text, number, start, end):
            continue
        sentence = sentence_of(spans, start, end)
        if leaves_open(text[sentence[0]:sentence[1]]) or states_no_measurement(
                text[sentence[0]:sentence[1]], text[sentence[0]:start]):
            continue
        fit = len(context & content_words(text[sentence[0]:sentence[1]]))
        fit += 2 * (unit_at(text, start, end) == wanted_unit)
        if best is None or fit > best[0]:
            best = (fit, (number, start, end))
    return best[1] if best else None


def not_a_result(text: str, number: float, start: int, end: int) -> bool:
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
    if _MAGNITUDE_AFTER.match(text[end:end + 10]) and unit_at(text, start, end) == "absolute":
        return True
    return number.is_integer() and 1900 <= number <= 2100 and "." not in text[start:end]


_TEXT_FORMAT_BEFORE = re.compile(
    r"\\(textbf|textit|emph|underline|textsc|texttt|mathbf|boldsymbol|bf|it)\{$")


def is_condition(text: str, start: int, end: int | None = None) -> bool:
    """A number that is not a claim by where it stands: after a comparison ('depth
    $\\ge 2$', '$\\lambda > 0$'), a citation ('[22]'), a list marker ('1)', '(2)'), a
    setting glued to its noun ('3-second prompt', '10-shot'), a formula ('1/ε') or a
    term inside math braces ('$\\max\\{d_x,2\\}$'). Checked when grounding, not in the
    grammar's list of numbers (which only needs to be a superset: narrowing it would
    change every cached request that it touches)."""
    if _CONDITION_BEFORE.search(text[max(0, start - 8):start]):
        return True
    if end is None:
        return False
    before, after = text[max(0, start - 3):start], text[end:end + 12]
    if re.search(r"\[[\d,\s–-]*$", before) and re.match(r"[\d,\s–-]*\]", after):
        return True  # a citation
    if re.match(r"\)", after) and (before.endswith("(") or re.search(r"(^|[\s:;,{])$", before)) \
            and "." not in text[start:end]:
        return True  # a list marker: '1) ...', '(2) ...', '\\textbf{1)}'
    if re.match(r"-(?!fold|times|x\b)[a-z]", after):
        return True  # a setting: '3-second', '10-shot'
    if re.match(r"\s?/\s?[^\d\s]", after):
        return True  # a formula: '1/ε'
    if _TEXT_FORMAT_BEFORE.search(text[max(0, start - 16):start]):
        return False  # formatting, not math: '\\textbf{47\\%}'
    return bool(re.search(r"[{,]$", before) and re.match(r"[,}\\]", after))  # math terms


def result_numbers(text: str) -> list[str]:
    """The numbers an abstract states that could be results, as written, without repeats."""
    seen: dict[str, None] = {}
    for number, start, end in number_spans(text):
        if not not_a_result(text, number, start, end):
            seen.setdefault(text[start:end], None)
    return list(seen)


def _first_number_span(value: str) -> tuple[int, int]:
    spans = number_spans(value)
    return (spans[0][1], spans[0][2]) if spans else (0, 0)
