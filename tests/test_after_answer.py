"""Nothing after the answer stops a run (issue 25): a list over the stored schema's limit is
trimmed with the rest listed in ``rejected``, an error in papersift's own grounding or row
building becomes that paper's failure row (the answer stays cached), and a property test
drives assembly with generated drafts and texts."""

from __future__ import annotations

import string
from pathlib import Path
from typing import get_args

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from papersift.extract.domain import fields as field_grounding
from papersift.extract.domain.assembly.assemble import assemble, stored_cap
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.jobs import MIN_WORDS
from papersift.schemas import PaperDraft
from papersift.schemas.paper import ContributionType
from papersift.testing.mock import FakeModel
from tests.conftest import CORPUS, stored_rows
from tests.test_pipeline import ENDPOINT

# A real NeurIPS 2025 abstract (openreview id tGrc8w6D1h's text) that states more results
# than the stored schema holds; the draft is what the simulator (a hand-written fake, not a
# model) answered for it, which made papersift crash on the whole conference before.
MANY_RESULTS = (
    "Our approach, X-EcoMLA, introduces a family of 1B, 3B, and 8B hybrid models by "
    "combining State Space Models (SSMs) and Multi-head Latent Attention (MLA) layers.\n"
    "X-EcoMLA achieves Transformer-level accuracy with near-SSM efficiency using only 7\u201311 "
    "billion training tokens and an 8B teacher. Moreover, it dramatically reduces KV cache "
    "size\u2014down to 3.9%, 2%, and 2.73% of the original for the 1B, 3B, and 8B variants, "
    "respectively\u2014while preserving 100%, 100%, and over 97% of average zero-shot "
    "performance on LM Harness tasks.\nNotably, X-EcoMLA-8B surpasses Minitron-8B in few-shot "
    "accuracy by 7%, while using 8\u00d7 fewer training tokens, over 12\u00d7 smaller KV cache, "
    "and a smaller teacher (8B vs. 15B). \nIt also achieves 1.4x\u20133.3x higher throughput "
    "(tokens/s) than MambaInLlama.")
SIMULATED_DRAFT = PaperDraft.model_validate({
    "benchmarks": [], "gains": [{"metric": "size down to", "value": "3.9"}],
    "methods": ["SSMs", "MLA"], "tasks": ["hybrid models"], "types": ["method"]})


def test_a_paper_stating_more_results_than_the_limit_is_stored_with_the_rest_rejected(
        ) -> None:
    assembled = assemble(SIMULATED_DRAFT, MANY_RESULTS)
    cap = stored_cap("claimed_gains")
    gains = assembled.extraction.claimed_gains
    assert len(gains) == cap == 8
    assert gains[0].value == 3.9  # the model's own gain comes first
    over = [r for r in assembled.rejected if f"over the stored limit of {cap} claimed_gains" in r]
    assert over, assembled.rejected  # the numbers code found beyond the limit are listed
    assert len(assembled.found["claimed_gains"]) == len(gains)
    assert len(assembled.gain_attributes) == len(gains)


def test_an_error_after_the_answer_is_one_failure_row_and_the_run_goes_on(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = field_grounding.ground

    def ground_failing_once(draft: PaperDraft, text: str, *args: object, **kw: object) -> object:
        if "privacy" in text.lower():  # some of the bundled abstracts
            raise RuntimeError("a bug in grounding")
        return real(draft, text, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr("papersift.extract.runs.rows.ground", ground_failing_once)
    db = tmp_path / "w.duckdb"
    model = FakeModel()
    _, summary = run_inputs([str(CORPUS)], RunSettings(db=db, concurrency=4),
                            transport=model.transport(), endpoint=ENDPOINT)
    failed = stored_rows(db, "SELECT paper_id, stage, reason, detail FROM failures")
    assert failed, "no abstract of the corpus mentions privacy: the test tests nothing"
    assert {(stage, reason) for _, stage, reason, _ in failed} == {
        ("grounding", "internal: RuntimeError")}
    assert all("a bug in grounding" in detail for *_, detail in failed)
    assert summary.n_failed == len(failed)  # type: ignore[attr-defined]
    assert summary.n_extracted == 63 - len(failed)  # type: ignore[attr-defined]
    extracted = stored_rows(db, "SELECT count(*) FROM extractions")[0][0]
    assert extracted == 63 - len(failed)
    # every answer was paid for once and is cached, the failed ones too
    assert stored_rows(db, "SELECT count(*) FROM llm_cache")[0][0] == 63
    assert model.requests == 63
    monkeypatch.setattr("papersift.extract.runs.rows.ground", real)
    _, again = run_inputs([str(CORPUS)], RunSettings(db=db), transport=model.transport(),
                          endpoint=ENDPOINT)
    assert model.requests == 63  # the rerun grounds the cached answers: nothing is paid twice
    assert again.n_failed == 0  # type: ignore[attr-defined]


# ---------------------------------------------------------------- the property test

WORDS = st.sampled_from([
    "we", "propose", "introduce", "Net", "GraphFormer", "ImageNet", "benchmark", "dataset",
    "achieves", "outperforms", "baseline", "accuracy", "on", "the", "of", "%", "x", "(", ")",
    "Bench-2", "state-of-the-art", "by", "points", "a", "novel", "method", "called", ",",
    "—", "e.g.", "$\\alpha$", "CIFAR-10", "GPT-4", "and", "12.5", "3x", "0.91", "1e-3",
    "7B", "10,000", "+4.2", "-3", "99.9%", "2024", "ours", "\n"])
NUMBER = st.one_of(st.integers(0, 10_000).map(str),
                   st.floats(0, 1000, allow_nan=False).map(lambda f: f"{f:.1f}"),
                   st.sampled_from(["12.5", "3", "0.91", "99.9", "7", "4.2", "1e-3", "10,000"]))
NAME = st.text(alphabet=string.ascii_letters + string.digits + "-. ()%", min_size=1,
               max_size=30).filter(str.strip)


@st.composite
def texts_and_drafts(draw: st.DrawFn) -> tuple[str, PaperDraft, str | None]:
    # At least MIN_WORDS words: a shorter text never reaches the model (jobs.too_short).
    words = draw(st.lists(st.one_of(WORDS, NUMBER), min_size=MIN_WORDS, max_size=120))
    sentences = draw(st.lists(st.sampled_from([". ", "; ", " ", ".\n"]), min_size=1,
                              max_size=len(words)))
    text = "".join(w + sentences[i % len(sentences)] for i, w in enumerate(words)).strip()
    held = [w for w in words if w.strip()]  # names the text holds, and others
    quoted = st.one_of(NAME, st.sampled_from(held)) if held else NAME
    draft = PaperDraft.model_validate({
        "tasks": draw(st.lists(quoted, min_size=1, max_size=2)),
        "methods": draw(st.lists(quoted, max_size=4)),
        "benchmarks": [{"name": n, "new": draw(st.booleans())}
                       for n in draw(st.lists(quoted, max_size=8))],
        "gains": [{"value": v, "metric": m, "vs": draw(st.none() | quoted),
                   "on": draw(st.none() | quoted)}
                  for v, m in draw(st.lists(st.tuples(st.one_of(NUMBER, quoted), quoted),
                                            max_size=8))],
        "types": draw(st.lists(st.sampled_from(list(get_args(ContributionType))),
                               min_size=1, max_size=3, unique=True)),
    })
    title = draw(st.none() | st.lists(quoted, min_size=1, max_size=6).map(" ".join))
    return text, draft, title


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(case=texts_and_drafts())
def test_assembly_never_raises_and_every_item_slices_back(
        case: tuple[str, PaperDraft, str | None]) -> None:
    text, draft, title = case
    grounded = field_grounding.ground(draft, text, field_grounding.DEFAULT_FIELDS, title)
    assembled = grounded.assembled
    extraction = assembled.extraction
    type(extraction).model_validate(extraction.model_dump())  # within every stored limit
    for name in ("tasks", "methods", "benchmarks", "claimed_gains"):
        items = getattr(extraction, name)
        assert len(items) <= stored_cap(name)
        assert len(assembled.found[name]) == len(items)
        for spot in assembled.found[name]:
            if spot is not None:
                begin, end = spot.sentence
                assert 0 <= begin <= end <= len(text)
