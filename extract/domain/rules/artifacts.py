"""Artifacts a paper releases (code, data, models, a benchmark), found by code alone.

The model is not asked: a release is said in a few set ways ("code is available at",
"we release our dataset", "publicly available", a GitHub link), so a sentence that says
one is found by its cue, the artifacts are the kinds of thing its words name around the
cue, and the URL is the address the sentence gives. Each artifact's evidence is that
sentence, with the URL (or, without one, the cue) as its mention. The draft sent to the
model does not change, so neither do its cache keys.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from papersift.extract.domain.lookup.assemble_spans import evidence_window, sentence_spans

# Bump when detection changes what it finds for the same abstract (part of extraction ids).
DETECTION_VERSION = "artifacts/1"

_CUE = re.compile(
    r"\b(?:(?:is|are|will\s+be|has\s+been|have\s+been)\s+(?:made\s+)?"
    r"(?:publicly\s+|freely\s+|openly\s+)?(?:available|released|open[- ]sourced|accessible)"
    r"|\bwe\s+(?:also\s+|further\s+)?(?:publicly\s+)?(?:release|open[- ]source|"
    r"make\b[^.;]{0,60}?available)\w*"
    r"|\band\s+(?:publicly\s+)?(?:release[sd]?|make\b[^.;]{0,60}?available)\b"
    # standalone, only where nothing follows but where: 'publicly available datasets' are
    # someone else's
    r"|(?:publicly\s+(?:available|released)|open[- ]sourced?)(?=\s*(?:[.,;:)]|$|at\b|on\b|"
    r"upon\b|via\b|under\b|through\b))"
    r"|available\s+(?:at|online)\b|released\s+(?:at|on|under)\b)",
    re.I)
# A release only on request is not a release.
_ON_REQUEST = re.compile(r"\b(?:up)?on\s+(?:reasonable\s+)?request\b", re.I)
_URL = re.compile(r"\b(?:https?://|www\.|github\.com/|huggingface\.co/)[^\s<>\"'{}]+", re.I)
_URL_TAIL = ".,;:)]}"
# What a release sentence may name, closest wording first within each kind.
_KINDS = (
    ("code", re.compile(r"\b(source\s+code|code(?:base)?s?|implementations?|software|"
                        r"librar(?:y|ies)|toolkits?|packages?)\b", re.I)),
    ("data", re.compile(r"\b(data(?:sets?)?|corpus|corpora|annotations)\b", re.I)),
    ("model", re.compile(r"\b(models?|weights|checkpoints?)\b", re.I)),
    ("benchmark", re.compile(r"\b(benchmarks?|test\s*beds?|leaderboards?)\b", re.I)),
)
# How far from the cue the released things are named, within the sentence.
_WINDOW = 90


@dataclass(frozen=True)
class Artifact:
    """One released artifact: its kind, address, evidence and where it was found."""

    kind: str  # code / data / model / benchmark
    url: str | None
    evidence: str
    sentence: tuple[int, int]  # the evidence's span in the abstract
    mention: tuple[int, int]  # the URL, else the cue


def _url_in(text: str, begin: int, end: int) -> tuple[int, int] | None:
    match = _URL.search(text, begin, end)
    if match is None:
        return None
    stop = match.end()
    while stop > match.start() and text[stop - 1] in _URL_TAIL:
        stop -= 1
    return match.start(), stop


def _kinds_near(sentence: str, cue: tuple[int, int], has_url: bool) -> list[str]:
    """The kinds named within the window around the cue (not inside a URL: a link's path
    may say 'benchmark'); a link alone means code when it points at a code host."""
    window = _URL.sub(" ", sentence[max(0, cue[0] - _WINDOW):cue[1] + _WINDOW])
    kinds = [kind for kind, words in _KINDS if words.search(window)]
    if not kinds and has_url and re.search(r"github|gitlab|code", sentence, re.I):
        kinds = ["code"]
    return kinds


def detect_artifacts(text: str) -> list[Artifact]:
    """Every artifact the abstract says is (or will be) released, one per kind and URL,
    in order of appearance."""
    found: list[Artifact] = []
    seen: set[tuple[str, str | None]] = set()
    for begin, end in sentence_spans(text) or [(0, len(text))]:
        sentence = text[begin:end]
        if _ON_REQUEST.search(sentence):
            continue
        cue = _CUE.search(sentence)
        url = _url_in(text, begin, end)
        if cue is None and url is None:
            continue
        if cue is None:
            if not re.search(r"github|gitlab|huggingface", sentence, re.I):
                continue  # a link to a paper or a project page is not a release
            cue_span = (url[0] - begin, url[1] - begin) if url else (0, 0)
        else:
            cue_span = (cue.start(), cue.end())
        address = text[url[0]:url[1]] if url else None
        mention = url or (begin + cue_span[0], begin + cue_span[1])
        low, high = evidence_window(text, (begin, end), mention)
        for kind in _kinds_near(sentence, cue_span, url is not None):
            if (kind, address) in seen:
                continue
            seen.add((kind, address))
            found.append(Artifact(kind, address, text[low:high], (low, high), mention))
    return found
