"""Cues that the abstract calls a name a benchmark, dataset or other resource, or software,
right next to it: 'CausalSpatial, a diagnostic benchmark', 'a new dataset, StorySumm',
'X, a comprehensive framework for evaluating ...', 'BenchBench, a python package'."""

from __future__ import annotations

import re

from papersift.extract.domain.rules.context_rules import called_a_resource_directly

# The words between the article and the kind word may not name another kind of thing or
# start a clause: 'X, an end-to-end framework that evolves instruction datasets' is a
# framework.
_NOT_BETWEEN = (r"(?!(?:framework|method|model|approach|system|algorithm|architecture|"
                r"pipeline|technique|strategy|agent|tool|paradigm|that|which|to|for|of|"
                r"from|with|by|using|on|in)\b)")
# A word there may hold a Unicode hyphen ('the first large\u2011scale benchmark').
_RESOURCE_AFTER = re.compile(
    r"^[*_}\s]*(\([^()]{1,40}\))?[*_}\s]*(,|:|—|--|-{3}|is|,?\s*which is)\s*(a|an|the|our)\s+"
    r"(" + _NOT_BETWEEN + r"[\w\u2010\u2011-]+,?\s+){0,6}?(benchmark|dataset|corpus|suite|testbed|"
    r"test bed|leaderboard|environment|collection|arena)s?\b", re.I)


_RESOURCE_BEFORE = re.compile(  # no name between the article and the kind word
    r"\b([Aa]n?|[Nn]ew|[Nn]ovel|[Oo]ur)\s+([a-z][a-z-]*\s+){0,5}?"
    r"(benchmark|dataset|corpus|suite|testbed|leaderboard|environment)\s*[,:(]?\s*"
    r"(the\s+)?((called|named|dubbed|termed)\s+)?(\*\*|\*|\\textbf\{|\\textsc\{|\\emph\{)?$")


_TOOL_AFTER = re.compile(
    r"^[*_}\s]*(\([^()]{1,40}\))?[*_}\s]*,\s*(a|an|the|our)\s+([\w-]+\s+){0,3}?"
    r"(package|library|toolkit|toolbox|codebase|software)\b", re.I)


def called_a_tool(text: str, start: int, end: int) -> bool:
    """The abstract presents this name as software right after it ('BenchBench, a python
    package for ...'), whatever its name looks like: the paper's tool, not a benchmark."""
    return bool(_TOOL_AFTER.match(text[end:end + 80]))


# 'GC4NC, a comprehensive framework for evaluating ...', 'VMDT (...), the first unified
# platform for evaluating ...': a framework or platform *for evaluating* is a benchmark.
_EVALUATION_AFTER = re.compile(
    r"^[*_}\s]*(\([^()]{1,60}\))?[*_}\s]*(,|:|—|--|is)\s*(a|an|the|our)\s+"
    r"([\w-]+,?\s+){0,4}?(framework|platform|suite|toolkit|testbed|protocol)\s+(for|to)\s+"
    r"(systematically\s+|comprehensively\s+)?(evaluat|benchmark|assess)\w*", re.I)


def named_as_resource(text: str, start: int, end: int) -> bool:
    """The abstract calls this name a benchmark or dataset right next to it
    ('CausalSpatial, a diagnostic benchmark', 'a new dataset, StorySumm, ...'), so it is
    not a method."""
    return bool(_RESOURCE_AFTER.match(text[end:end + 120])
                or _EVALUATION_AFTER.match(text[end:end + 160])
                or _named_after_a_resource(text, start)
                or called_a_resource_directly(text, start, end))


# 'Evaluated on a real-world social dataset, MF-LLM reduces ...': the dataset is where the
# name was run, not what it is named.
_PLACE_BEFORE = re.compile(r"\b(on|in|from|using|across|over|with|to|of|into)\s*$", re.I)


def _named_after_a_resource(text: str, start: int) -> bool:
    window_start = max(0, start - 60)
    match = _RESOURCE_BEFORE.search(text[window_start:start])
    if match is None:
        return False
    if match.group(6):  # 'a ... corpus called X' names it wherever it stands
        return True
    return not _PLACE_BEFORE.search(
        text[max(0, window_start + match.start() - 20):window_start + match.start()])
