"""How the numbers of an abstract relate to each other, read when gains are grounded.

- A **range** ("8%--17%", "12$\\sim$20 %", "2.7%–8.0%", "ranges from 2 to 34") is one
  result, stored at its low end: a draft that gives the high end is moved to the range.
- A **change** ("improved its win rate from 55.0% to 58.3%": a change verb, then 'from A
  to B') reports one result, the value it reached; the starting value is the baseline's
  number. Without the verb ("ranging from 4.3% to 77.3%") it is a range.
- **Counts, names, formulas and settings** that the assembler's own list of result
  numbers lets through because a capital or a symbol follows the number: "7 T2V models",
  "over 50 LLMs", "10 Indic languages", "4 of 13 models", "Claude 3 Opus", an exponent
  "T^{-1/2}", a formula's term "1-\\delta", an operating point "at 50% sparsity".
- A sentence that **leaves a question open** ("we leave open whether ... from 2.1 to 1")
  states no result.

These checks run only when grounding; the grammar's list of numbers a model may give
(``result_numbers``) does not read them, so cached requests stay valid.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Spot = tuple[float, int, int]  # (value, start, end) of a number the abstract states

_RANGE_AFTER = re.compile(
    r"^\s*(?:\\?%)?\s*\$?\s*(?:--|–|—|-|~|\\sim|to)\s*\$?\s*(\d+(?:[.,]\d+)*)")
# 'increased from the initial 85.9% to 91.9%': a change verb, then 'from' and the start
_CHANGE_FROM_BEFORE = re.compile(
    r"\b(increas|improv|rais|boost|lift|reduc|decreas|lower|drop|cut|jump|ris|rose|fell|"
    r"fall|grow|grew|shrink|shrank|went|go(?:es)?|mov|push|bring|brought)\w*\s+"
    r"(?:[\w-]+\s+){0,8}?from\s+(?:the\s+)?(?:[a-z]+\s+)?\$?\s*$", re.I)
_OF_COUNT_AFTER = re.compile(r"^\s+of\s+(?:the\s+)?\d")
# '7 T2V models', '4 Norwegian Open Language Models': capitalised word(s), then a plural
_NAMED_COUNT_AFTER = re.compile(r"^\s+(?:[A-Z][\w-]*\s+){1,3}([A-Za-z][a-z]{2,}s)\b")
# a term of a formula: '1-\delta', '(1+O(α))', '2^k'
_FORMULA_AFTER = re.compile(r"^\s?[-+^_*]\s?(\\[A-Za-z]|[A-Za-z]\b|[A-Z]\(|\{)")
# 'O(1)', '\\Theta(2)': an order of growth; 'CC BY-NC 4.0 license': a licence's version
_ORDER_BEFORE = re.compile(r"(\bO|\\Theta|\\Omega|\\mathcal\{O\})\s*\(\s*$")
_LICENCE_AFTER = re.compile(r"^\s+licen[cs]e\b", re.I)
# 'a dataset containing 6,000 SFT data', 'a total of 43 hours', 'on average 2.6 movies':
# the size of what was collected
_SIZE_BEFORE = re.compile(
    r"\b(contain\w*|consist\w*\s+of|compris\w*|a\s+total\s+of|in\s+total|total(l)?ing|"
    r"on\s+average|an\s+average\s+of|averaging)\s+(?:over\s+|about\s+|nearly\s+|more\s+than\s+|"
    r"approximately\s+|roughly\s+)?\$?\s*$", re.I)
# a sentence that states a result: its words
RESULT_SENTENCE = re.compile(
    r"\b(outperform\w*|improv\w*|gain\w*|boost\w*|reduc\w*|better|surpass\w*|exceed\w*|"
    r"achiev\w*|reach\w*|attain\w*|faster|speed\w*|higher|lower|accuracy|score\w*)\b", re.I)
# a sentence of proven guarantees: its numbers are bounds, not measurements
_GUARANTEE_SENTENCE = re.compile(
    r"\b(we\s+prove|provabl\w*|guarantee\w*|approximation\s+(?:ratio|factor|guarantee)|"
    r"regret|lower\s+bound|upper\s+bound|iteration\s+complexity|sample\s+complexity)\b",
    re.I)
# inside a power's braces ('m^{3/2}') or an interval in math ('$[0, 1]$')
_INSIDE_POWER = re.compile(r"\^\{[^{}$]*$")
_INTERVAL_START = re.compile(r"[\[(]\s*-?[\d.]*\s*,?\s*$")
_INTERVAL_END = re.compile(r"^\s*(,\s*-?[\d.]+\s*)?[\])]")
# 'comparable performance at 50% sparsity': an operating point, not a result
_AT_BEFORE = re.compile(r"\bat\s+(?:only\s+)?\$?\s*$", re.I)
_AT_NOT = re.compile(r"^\s*(?:\\?%)?\$?\s+(of|the)\b")
# '50 LLMs', '8 GPUs': an acronym in the plural
_ACRONYM_PLURAL_AFTER = re.compile(r"^\s+[A-Z][A-Za-z0-9]*[A-Z0-9]s\b")
_NOT_PLURAL_NOUNS = frozenset({"points", "times", "hours", "seconds", "minutes", "bits",
                               "pts", "less", "gains", "improves", "achieves", "yields"})
_VERSION_BETWEEN = (re.compile(r"\b[A-Z][a-z]+\s$"), re.compile(r"^\s[A-Z][a-z]"))
_EXPONENT_BEFORE = re.compile(r"[\^{]\s*-?\s*$")
_POWER_BEFORE = re.compile(r"\^\s*\{?\s*-?\s*$")
# 'ranking among the top 3', 'top-1': a rank or a cut-off, not a result
_RANK_BEFORE = re.compile(r"\btop[-\s]?\$?$", re.I)
# '$512 \\times 512$', '64x64': a size written as a product
_TIMES_NUMBER_AFTER = re.compile(r"^\s*(?:\\+times|×|x)\s*\d")  # '\\times' too
_TIMES_NUMBER_BEFORE = re.compile(r"\d\s*(?:\\+times|×|x)\s*$")
# 'AlpacaEval 2', 'Llama 3': a small number right after a name with inner capitals
_NAME_BEFORE = re.compile(r"\b[A-Z][A-Za-z-]*[a-z][A-Z][\w-]*\s$|\b[A-Z][a-z]+[A-Z]+\s$")
_UNIT_AFTER = re.compile(r"^\s*(?:\\?%|x\b|×|pp\b|points?\b|times\b|percent)", re.I)
# '9 NLU and 2 Generation datasets', '12 public benchmarks': a count of resources
_COUNTED_AFTER = re.compile(
    r"^\s+([\w-]+)(?:\s+and\s+\d+\s+[\w-]+)?\s+(?:[\w-]+\s+)?(?:datasets|benchmarks|"
    r"corpora|environments|tasks|languages|domains)\b")
# '30+ proprietary LLMs', '40+ task categories': 'N+' then words, not a unit
_PLUS_COUNT_AFTER = re.compile(r"^\+\s+(?!(?:points?|pp|times|percent|x)\b)[A-Za-z]")
# 'outperforming A-7B (..) and B ': a comparison word, then only names, lists and
# parentheses up to where the number's parenthesis opens; the last name is capitalised
_COMPARED_NAMES_BEFORE = re.compile(
    r"\b(?:outperform\w*|surpass\w*|beat\w*|than|over|compared\s+(?:to|with)|versus|vs\.?)"
    r"\s+(?:[\w.@+-]+(?:\s*\([^()]*\))?(?:\s*,)?\s+){0,5}?"
    r"(?<![\w.@+-])[A-Z][\w.@+-]*\s*$")
_OPEN_QUESTION = re.compile(
    r"\b(leaves?\s+(?:\w+\s+){0,3}open|open\s+(?:question|problem)s?|remains?\s+open|"
    r"we\s+conjecture|leaves?\s+(?:\w+\s+){0,5}(?:to|for)\s+future\s+work)\b", re.I)


# '... from 1% using direct requests to 88%': a few words may stand between A and 'to B'
_REACHED_AFTER = re.compile(r"^\s*(?:\\?%)?\$?(?:\s+[\w-]+){1,6}?\s+to\s+\$?\s*(\d+(?:[.,]\d+)*)")


@dataclass(frozen=True)
class RangeEnd:
    """A range's high end as written after its low end: where its number starts, where
    the range's text ends (its unit is read after that), and its value."""

    start: int
    end: int
    value: float


@dataclass(frozen=True)
class NumberLinks:
    """Ranges and changes among an abstract's stated numbers, by the start of a number."""

    range_low_of: dict[int, Spot] = field(default_factory=dict)  # high end -> low end
    high_of: dict[int, RangeEnd] = field(default_factory=dict)  # low end -> high end
    reached_of: dict[int, Spot] = field(default_factory=dict)  # 'from A' -> 'to B'

    def own_spot(self, spot: Spot) -> tuple[Spot, str | None]:
        """Where a draft's number is stored: a range's high end moves to its low end, a
        change's starting value to the value reached. The second item says why it moved."""
        _, start, _ = spot
        if start in self.range_low_of:
            return self.range_low_of[start], "the high end of a range"
        if start in self.reached_of:
            return self.reached_of[start], "the starting value of a change 'from A to B'"
        return spot, None



def link_numbers(text: str, stated: list[Spot]) -> NumberLinks:
    """Find the ranges and the 'from A to B' changes among ``stated``."""
    by_start = {spot[1]: spot for spot in stated}
    links = NumberLinks()
    for spot in stated:
        _, start, end = spot
        changed = _CHANGE_FROM_BEFORE.search(text[max(0, start - 100):start])
        reached = _REACHED_AFTER.match(text[end:end + 80]) if changed else None
        if reached is not None and (end + reached.start(1)) in by_start:
            links.reached_of[start] = by_start[end + reached.start(1)]
            continue
        match = _RANGE_AFTER.match(text[end:end + 24])
        if match is None or (end + match.start(1)) not in by_start:
            continue
        high = by_start[end + match.start(1)]
        if changed and "to" in match.group(0):
            links.reached_of[start] = high
        else:
            links.range_low_of[high[1]] = spot
            links.high_of[start] = RangeEnd(high[1], end + match.end(),
                                            float(match.group(1).replace(",", "")))
    return links


def is_count_or_name(text: str, number: float, start: int, end: int) -> bool:
    """A number that counts or names things though a capitalised word follows it."""
    after, before = text[end:end + 40], text[max(0, start - 24):start]
    if (_EXPONENT_BEFORE.search(before) and re.match(r"\s?/", after)) \
            or _POWER_BEFORE.search(before):
        return True  # an exponent: 'T^{-1/2}', '\\beta^{-1}'
    if _INSIDE_POWER.search(before) or (_in_math(text, start) and _INTERVAL_START.search(
            before) and _INTERVAL_END.match(after)):
        return True  # 'm^{3/2}', '$[0, 1]$'
    if _FORMULA_AFTER.match(after) or _ORDER_BEFORE.search(before) \
            or _LICENCE_AFTER.match(after):
        return True
    if _AT_BEFORE.search(before) and not _AT_NOT.match(after):
        return True  # an operating point: 'at 50% sparsity'
    if baseline_score(text, start):
        return True  # 'outperforming X-7B (73.0% and 7.5%)': the baseline's numbers
    if not number.is_integer() or "." in text[start:end]:
        return False
    if _RANK_BEFORE.search(before) or _TIMES_NUMBER_AFTER.match(after) \
            or _TIMES_NUMBER_BEFORE.search(before):
        return True  # a rank ('among the top 3') or a size ('$512 \\times 512$')
    if _OF_COUNT_AFTER.match(after) or _ACRONYM_PLURAL_AFTER.match(after):
        return True
    named = _NAMED_COUNT_AFTER.match(after)
    if named and named.group(1) not in _NOT_PLURAL_NOUNS:
        return True
    if number <= 10 and _NAME_BEFORE.search(before) and not _UNIT_AFTER.match(after):
        return True  # a version that ends a name: 'AlpacaEval 2', 'MATH 500' is not one
    if re.match(rf"^\s*\([A-Za-z-]+{int(number)}\)", after):
        return True  # a name's number that its acronym repeats: 'Segment Anything 2 (SAM2)'
    if _PLUS_COUNT_AFTER.match(after):
        return True  # '30+ proprietary and open-source LLMs', '40+ task categories'
    counted = _COUNTED_AFTER.match(after)
    if counted and counted.group(1).lower() not in _NOT_PLURAL_NOUNS:
        return True  # '9 NLU and 2 Generation datasets': how many datasets
    return bool(_VERSION_BETWEEN[0].search(before) and _VERSION_BETWEEN[1].match(after))


def baseline_score(text: str, start: int) -> bool:
    """Whether the number sits in a parenthesis right after a name the sentence compares
    the paper's method with ('outperforming InternLM2-7B (73.0% and 7.5%) and TheoremLlama
    (50.1% and 4.0%)'): the baseline's scores, not the paper's result."""
    paren = text.rfind("(", max(0, start - 40), start)
    if paren < 0 or ")" in text[paren:start]:
        return False
    return bool(_COMPARED_NAMES_BEFORE.search(text[max(0, paren - 160):paren]))


def _in_math(text: str, start: int) -> bool:
    """Whether ``start`` lies between two unescaped dollar signs."""
    return len(re.findall(r"(?<!\\)\$", text[:start])) % 2 == 1


def leaves_open(sentence: str) -> bool:
    """The sentence poses an open question or future work rather than a result."""
    return _OPEN_QUESTION.search(sentence) is not None


def states_no_measurement(sentence: str, before: str) -> str | None:
    """Why a number in ``sentence`` (``before``: the text right before it) is no measured
    result, or None: the size of what was collected, in a sentence that reports no result
    ('a dataset containing 6,000 ...', 'a total of 43 hours'), or a proven guarantee
    ('we prove ... at most 3 times', '... regret')."""
    if _SIZE_BEFORE.search(before[-40:]) and not RESULT_SENTENCE.search(sentence):
        return "the size of what was collected"
    if _GUARANTEE_SENTENCE.search(sentence) and not RESULT_SENTENCE.search(
            _GUARANTEE_SENTENCE.sub("", sentence)):
        return "a proven guarantee, not a measurement"
    return None
