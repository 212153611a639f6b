"""Results the model left out: numbers with a result unit in a sentence that reports results.

Abstracts often state several results in one sentence ("improves accuracy by 4.1% on A and
6.3% on B, and cuts latency 2x"); a small model tends to write the first and stop. Code
adds the others: a number written with a result unit (%, percentage points, x, points) in
a sentence that compares or reports ("outperforms", "improves", "reduces", "achieves"),
that is not part of a name, a condition or a setup size, and that the model did not
already give. Its metric is the abstract's own words next to it.
"""

from __future__ import annotations

import re

from papersift.schemas import DraftGain
from papersift.schemas.numbers import number_spans

_REPORTS = re.compile(
    r"\b(outperform\w*|improv\w*|reduc\w*|gain\w*|boost\w*|achiev\w*|surpass\w*|exceed\w*|"
    r"faster|slower|speed\w*|better|higher|lower|fewer|cuts?|increas\w*|decreas\w*|"
    r"attain\w*|reach\w*|obtain\w*|yield\w*|deliver\w*|beat\w*|accuracy|relative)\b", re.I)
_SETUP = re.compile(r"\b(compris\w*|consist(s|ed|ing)? of|contain\w*|includ\w*|spans?|"
                    r"covers?|collect\w*|annotat\w*|sampl\w*|randomly|mask\w*|drop(s|ped|ping)?|"
                    r"remov\w*|split)\b", re.I)
_AFTER_UNIT = re.compile(r"^\s*(?:\\?%|percentage points?|pp\b|points?\b|\$?\\times\$?|×|x\b)?"
                         r"\s*(?:(?:relative|absolute|average|higher|lower|better)\s+)?"
                         r"(?:(?:in|on|of|for)\s+)?((?:[A-Za-z][\w@-]*\s*){1,4})")
# A decimal written with a metric's name right after it ('18.6 mAP', '27.3 BLEU') is a
# reported score even without a unit.
METRIC_NAME_AFTER = re.compile(
    r"^\s*(mAP|m?AP(?:_?\w+)?|BLEU|ROUGE(?:-\w+)?|FID|F1|EM|PSNR|SSIM|dB|CIDEr|METEOR|m?IoU|"
    r"NDCG|MRR|WER|CER|EER|AUC|AUROC|FPS)\b")
_STOP_TAIL = frozenset({"and", "or", "over", "than", "on", "in", "across", "compared", "with",
                        "while", "the", "a", "an", "to", "at", "by", "for", "of", "respectively"})


def _metric_after(text: str, end: int) -> str | None:
    named = METRIC_NAME_AFTER.match(text[end:end + 12])
    if named is not None:
        return named.group(1)
    match = _AFTER_UNIT.match(text[end:end + 60])
    if match is None:
        return None
    words = match.group(1).split()
    while words and words[-1].lower() in _STOP_TAIL:
        words.pop()
    while words and words[0].lower() in _STOP_TAIL:
        words.pop(0)
    return " ".join(words) or None


def missed_results(text: str, spans: list[tuple[int, int]], stated: set[str],
                   unit_at: object, is_result: object) -> list[DraftGain]:
    """Draft gains for results the model did not give. ``stated``: the values it gave;
    ``unit_at(text, start, end)`` and ``is_result(text, number, start, end)`` are the
    assembler's own readers of units and of numbers that are results."""
    found: list[DraftGain] = []
    seen = set(stated)
    for begin, finish in spans:
        sentence = text[begin:finish]
        if not _REPORTS.search(sentence) or _SETUP.search(sentence):
            continue
        for number, start, end in number_spans(sentence):
            written = sentence[start:end]
            if written in seen:
                continue
            if unit_at(text, begin + start, begin + end) == "absolute" and not (  # type: ignore[operator]
                    "." in written and METRIC_NAME_AFTER.match(sentence[end:end + 12])):
                continue
            if not is_result(text, number, begin + start, begin + end):  # type: ignore[operator]
                continue
            metric = _metric_after(text, begin + end) or "result"
            seen.add(written)
            found.append(DraftGain(value=written, metric=metric))
    return found
