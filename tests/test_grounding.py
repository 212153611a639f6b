"""Tests for extract.grounding, on the real corpus abstracts and small hand-made texts."""

from __future__ import annotations

import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from papersift.extract.domain.lookup.grounding import (
    FUZZY_THRESHOLD,
    MIN_FUZZY_CHARS,
    Alignment,
    align,
    normalize,
)
from papersift.extract.runs.ingest_files import ingest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def abstracts() -> list[str]:
    return [paper.text for paper in ingest([ROOT / "examples" / "neurips-2026"]).papers]


def find(abstracts: list[str], needle: str) -> str:
    [text] = [text for text in abstracts if needle in text]
    return text


def span(alignment: Alignment, text: str) -> str:
    assert alignment.char_start is not None
    assert alignment.char_end is not None
    assert 0 <= alignment.char_start < alignment.char_end <= len(text)
    return text[alignment.char_start : alignment.char_end]


# --------------------------------------------------------------------------- exact


def test_exact_match() -> None:
    text = "We propose X. X improves recall by 4 points."
    found = align("X improves recall", text)
    assert found == Alignment("exact", 14, 31, 1.0)
    assert span(found, text) == "X improves recall"


def test_exact_takes_first_occurrence() -> None:
    text = "alpha beta. alpha beta."
    assert align("alpha beta", text) == Alignment("exact", 0, 10, 1.0)


def test_any_corpus_substring_aligns_exactly(abstracts: list[str]) -> None:
    rng = random.Random(2026)
    for _ in range(3000):
        text = rng.choice(abstracts)
        start = rng.randrange(len(text))
        end = rng.randrange(start + 1, min(len(text), start + 400) + 1)
        quote = text[start:end]
        if not quote.strip():
            continue
        first = text.find(quote)
        assert align(quote, text) == Alignment("exact", first, first + len(quote), 1.0)


# --------------------------------------------------------------------------- normalized


@pytest.mark.parametrize(
    ("needle", "quote", "expected"),
    [
        # markdown emphasis inside a word
        (
            "**Pre**ference",
            "PreDiff (Preference Diffusion)",
            "PreDiff (**Pre**ference **Diff**usion)",
        ),
        # LaTeX double dash between percentages, written with an en dash
        (
            "8%--17%",
            "achieves 8%–17% relative improvement",
            "achieves 8%--17% relative improvement",
        ),
        # unicode en dash in the text, ASCII hyphen in the quote; case differs
        (
            "correctness–confidence",
            "by analysing predictions through correctness-confidence patterns",
            "By analysing predictions through correctness–confidence patterns",
        ),
        # markdown underscores around a phrase
        (
            "_security defense_",
            "Designing proactive security defense against",
            "Designing proactive _security defense_ against",
        ),
        # LaTeX math: \times, escaped percent and dollar signs
        ("$3.8\\times$", "(3.8x chance)", "($3.8\\times$ chance)"),
        ("$6.9\\%$--$24.0\\%$", "by 6.9%-24.0%, with", "by $6.9\\%$--$24.0\\%$, with"),
        # a Greek letter command and a subscript, quoted in unicode
        (
            "$\\lambda_{\\max}$",
            "the largest eigenvalue λ_max",
            "the largest eigenvalue $\\lambda_{\\max",
        ),
        # \emph{...}: the command goes, the argument stays
        ("\\emph{CAUSAL-UCB}", "We propose CAUSAL-UCB, a", "We propose \\emph{CAUSAL-UCB}, a"),
        # a curly apostrophe in the text, a straight one in the quote
        ("client’s", "value of a client's data", "value of a client’s data"),
    ],
)
def test_normalized_corpus_quotes(
    abstracts: list[str], needle: str, quote: str, expected: str
) -> None:
    text = find(abstracts, needle)
    assert quote not in text
    found = align(quote, text)
    assert found.status == "normalized"
    assert found.score == 1.0
    assert span(found, text) == expected


@pytest.mark.parametrize(("text", "quote", "expected"), [
    # whitespace and case
    ("Intro.  Our  Method\n  reaches   SOTA results.", "our method reaches sota results",
     "Our  Method\n  reaches   SOTA results"),
    # a ligature and a combining accent
    ("We \ufb01nd that caf\u0065\u0301 models work.", "we find that café models",
     "We \ufb01nd that caf\u0065\u0301 models"),
    # wrapping quotes and an ellipsis
    ("We show that sparse models generalise better than dense ones.",
     '"sparse models generalise better..."', "sparse models generalise better"),
    # \textbf and inline math
    (r"We call it $\textbf{TRACE}$, and set \(k\) to \textbf{five}.",
     "We call it TRACE, and set k to five",
     r"We call it $\textbf{TRACE}$, and set \(k\) to \textbf{five"),
], ids=["whitespace_and_case", "unicode_forms", "wrapping_quotes_and_ellipsis",
        "textbf_and_inline_math"])
def test_normalized_match_spans_the_original_text(text: str, quote: str,
                                                  expected: str) -> None:
    found = align(quote, text)
    assert found.status == "normalized"
    assert span(found, text) == expected


def test_normalize_examples() -> None:
    assert normalize("A  **bold**\tMove — done") == "a bold move-done"
    assert normalize(r"$\alpha$ and α") == "alpha and alpha"
    assert normalize("x ≤ 3 and 2×") == "x <= 3 and 2x"


# --------------------------------------------------------------------------- fuzzy


COCHI = (
    "Experiments across multiple LLMs show consistent improvements in calibration metrics, "
    "including Expected Calibration Error, Negative Log-Likelihood, and Brier Score"
)


@pytest.mark.parametrize(
    "quote",
    [
        # one word changed by a typo
        COCHI.replace("calibration metrics", "calibraton metrics"),
        # one word dropped
        COCHI.replace("consistent ", ""),
        # American spelling of a British word, elsewhere in the abstract
        "By analyzing predictions through correctness-confidence patterns, CoCHI enables",
        # an article changed and two neighbouring words swapped
        COCHI.replace("multiple LLMs", "the multiple LLMs").replace(
            "consistent improvements", "improvements consistent"
        ),
    ],
)
def test_fuzzy_misquotes(abstracts: list[str], quote: str) -> None:
    text = find(abstracts, COCHI)
    found = align(quote, text)
    assert found.status == "fuzzy"
    assert FUZZY_THRESHOLD <= found.score < 1.0
    located = span(found, text)
    assert located in COCHI or located.startswith("By analysing predictions")


def test_fuzzy_span_covers_the_sentence(abstracts: list[str]) -> None:
    text = find(abstracts, COCHI)
    found = align(COCHI.replace("calibration metrics", "calibraton metrics"), text)
    assert span(found, text) == COCHI


def test_sentence_from_another_abstract_is_not_found(abstracts: list[str]) -> None:
    text = find(abstracts, COCHI)
    other = find(abstracts, "Sequential recommendation predicts")
    quote = "Sequential recommendation predicts which item a user will interact with next."
    assert quote in other
    assert align(quote, text).status == "none"


@pytest.mark.parametrize(
    "quote",
    [
        # a number changed: similar enough for the score, rejected by the word check
        "On four benchmarks, PreDiff achieves 8%--19% relative improvement over existing methods",
        "On five benchmarks, PreDiff achieves 8%--17% relative improvement over existing methods",
        # a polarity word flipped
        "On four benchmarks, PreDiff achieves 8%--17% relative degradation over existing methods",
        # the method's name replaced
        "On four benchmarks, DiffRec achieves 8%--17% relative improvement over existing methods",
    ],
)
def test_changed_statements_are_not_found(abstracts: list[str], quote: str) -> None:
    text = find(abstracts, "8%--17%")
    found = align(quote, text)
    assert found.status == "none"
    assert found.char_start is None
    assert found.char_end is None
    assert found.score >= FUZZY_THRESHOLD  # the score alone would have accepted it


def test_exchanged_terms_are_not_found() -> None:
    text = "Our method outperforms the strongest baseline on every benchmark we tried."
    quote = "The strongest baseline outperforms our method on every benchmark we tried."
    assert align(quote, text, threshold=0.0).status == "none"


def test_short_quotes_are_never_fuzzy() -> None:
    text = "We introduce calibration heads for language models."
    quote = "calibraton"  # a typo of a word in the text
    assert len(normalize(quote)) < MIN_FUZZY_CHARS
    found = align(quote, text, threshold=0.0)
    assert found.status == "none"
    assert found.score > 0.8
    assert align("Calibration", text).status == "normalized"


@pytest.mark.parametrize("quote", ["", "   ", "\n\t", "...", "**"])
def test_empty_quotes(quote: str) -> None:
    found = align(quote, "Some text without emphasis markers.")
    assert found == Alignment("none", None, None, 0.0)


def test_quote_longer_than_text() -> None:
    text = "A short abstract about graphs."
    quote = "A short abstract about graphs, followed by many words the text never had."
    assert align(quote, text).status == "none"
    assert align(quote, "").status == "none"


def test_offsets_stay_in_bounds(abstracts: list[str]) -> None:
    rng = random.Random(7)
    for _ in range(400):
        text = rng.choice(abstracts)
        words = text.split()
        start = rng.randrange(max(1, len(words) - 12))
        picked = words[start : start + rng.randrange(3, 25)]
        if len(picked) > 3:
            del picked[rng.randrange(len(picked))]
        source = rng.choice(abstracts) if rng.random() < 0.3 else text
        found = align(" ".join(picked), source)
        assert 0.0 <= found.score <= 1.0
        if found.status == "none":
            assert found.char_start is None and found.char_end is None
        else:
            span(found, source)


# --------------------------------------------------------------------------- bench


def load_bench() -> ModuleType:
    path = ROOT / "bench" / "grounding_threshold.py"
    spec = importlib.util.spec_from_file_location("grounding_threshold", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TINY = [
    "We propose a graph sampler for large networks. It reduces training time by 35% on "
    "three benchmarks. The sampler keeps accuracy within one point of full-batch training.",
    "Language models often hallucinate citations. We build a retrieval checker that flags "
    "invented references. The checker catches 91% of fabricated citations in our study.",
    "Robots must plan under uncertainty. We present a planner that learns cost maps from "
    "demonstrations. Experiments in simulation show safer paths than classical baselines.",
]


def test_bench_on_tiny_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bench = load_bench()
    cases = bench.build_cases(TINY, seed=1, per_abstract=3)
    kinds = {case.kind for case in cases}
    assert {"drop_word", "typo", "other_abstract", "number_changed"} <= kinds
    assert all(case.quote not in TINY[case.abstract] for case in cases)
    outcomes = bench.run_cases(cases, TINY)
    rows = bench.sweep(outcomes, (0.5, 0.9, 1.0))
    assert [row.threshold for row in rows] == [0.5, 0.9, 1.0]
    positives = sum(case.positive for case in cases)
    for row in rows:
        assert row.true_pos + row.false_neg == positives
        assert 0.0 <= row.precision <= 1.0
        assert 0.0 <= row.recall <= 1.0
    assert rows[0].true_pos >= rows[1].true_pos >= rows[2].true_pos
    assert bench.choose_threshold(rows) in (0.5, 0.9, 1.0)

    corpus = tmp_path / "tiny.txt"
    corpus.write_text("Tiny corpus\n\n" + "\n\n".join(TINY) + "\n", "utf-8")
    assert bench.main([str(corpus), "--per-abstract", "2"]) == 0
    printed = capsys.readouterr().out
    assert "3 abstracts" in printed
    assert "threshold" in printed
