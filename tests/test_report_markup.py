"""Markup recognition for the report: what is styled, what stays raw, and that the
segments always give back the stored text and its offsets."""

from __future__ import annotations

import itertools
import random

import pytest

from papersift.extract.runs.ingest_files import ingest
from papersift.report.markup import Span, find_markup, segments
from tests.conftest import CORPUS


def _visible(text: str) -> str:
    """The text with hidden delimiters removed, styles shown as [style:text]."""
    shown = []
    for segment in segments(text, []):
        if segment.hidden:
            continue
        styles = ",".join(sorted(segment.styles))
        shown.append(f"[{styles}:{segment.text}]" if styles else segment.text)
    return "".join(shown)


@pytest.mark.parametrize(("text", "visible"), [
    ("We propose PreDiff (**Pre**ference **Diff**usion).",
     "We propose PreDiff ([bold:Pre]ference [bold:Diff]usion)."),
    ("a *causal pieces* idea and _security defense_ here",
     "a [italic:causal pieces] idea and [italic:security defense] here"),
    (r"\textbf{Bias} \textbf{Rec}ommendation", "[bold:Bias] [bold:Rec]ommendation"),
    (r"\textbf{Nested \emph{inner}} end", "[bold:Nested ][bold,italic:inner] end"),
    (r"\textsc{GoogleReview-MMTool} \texttt{x}", "[smallcaps:GoogleReview-MMTool] [mono:x]"),
    (r"by $6.9\%$ and 5\% more", "by [math:6.9][math:%] and 5% more"),
    ("$x_1 * y_2$ and $a_b$", "[math:x_1 * y_2] and [math:a_b]"),
    (r"Big-$M$ and $\lambda_{\max}$", r"Big-[math:M] and [math:\lambda_{\max}]"),
    # Left raw: unknown commands, broken markup, identifiers, lone operators, TeX quotes.
    (r"see \cite{x} and \mathrm{PA}", r"see \cite{x} and \mathrm{PA}"),
    (r"\textbf{never closed and **half", r"\textbf{never closed and **half"),
    ("snake_case_name and a * b * c", "snake_case_name and a * b * c"),
    ("``what-if'' questions cost $5 and $6", "``what-if'' questions cost $5 and $6"),
    ("不是 **标记** 吗", "不是 [bold:标记] 吗"),
])
def test_markup_is_styled_only_when_well_formed(text: str, visible: str) -> None:
    assert _visible(text) == visible
    assert "".join(s.text for s in segments(text, [])) == text


def test_only_delimiters_are_hidden() -> None:
    text = r"**A** \textbf{B} $c$ 5\%"
    markup = find_markup(text)
    hidden = "".join(text[start:end] for start, end in markup.hidden)
    assert hidden == "****" + r"\textbf{" + "}" + "$$" + "\\"


def test_corpus_abstracts_with_random_spans_keep_every_offset() -> None:
    rng = random.Random(7)
    papers = ingest([CORPUS]).papers
    assert len(papers) == 63
    for paper in papers:
        text = paper.text
        spans = []
        for index in range(8):
            start = rng.randrange(len(text))
            spans.append(Span(start, start + rng.randrange(1, 300), "task", f"task-{index}"))
        cut = segments(text, spans)
        assert "".join(s.text for s in cut) == text
        assert cut[0].start == 0 and cut[-1].end == len(text)
        assert all(a.end == b.start for a, b in itertools.pairwise(cut))
        for span in spans:
            covered = [s for s in cut if span.key in {x.key for x in s.spans}]
            assert "".join(s.text for s in covered) == text[span.start:span.end]
            assert all(a.end == b.start for a, b in itertools.pairwise(covered))


def test_the_most_specific_span_gives_the_colour() -> None:
    outer = Span(0, 20, "task", "task-0")
    inner = Span(5, 10, "gain", "gain-0")
    cut = segments("x" * 20, [outer, inner])
    assert [s.primary.field if s.primary else None for s in cut] == ["task", "gain", "task"]


def test_spans_outside_the_text_are_clipped_and_empty_ones_dropped() -> None:
    text = r"We present <b>**x**</b> and \textbf{y} " * 3
    spans = [Span(0, 40, "task", "task-0"), Span(10, 80, "method", "method-0"),
             Span(70, 71, "gain", "gain-0"), Span(-5, 3, "task", "task-1"),
             Span(len(text) - 2, len(text) + 9, "benchmark", "benchmark-0"),
             Span(5, 5, "gain", "gain-1")]
    cut = segments(text, spans)
    assert "".join(s.text for s in cut) == text
    assert all(a.end == b.start for a, b in itertools.pairwise(cut))
    for span in spans:
        covered = [s for s in cut if span.key in {x.key for x in s.spans}]
        if span.start >= span.end:
            assert not covered
            continue
        assert covered[0].start == max(0, span.start)
        assert covered[-1].end == min(len(text), span.end)
