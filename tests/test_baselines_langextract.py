"""The langextract baseline (bench/baseline_langextract.py): its few-shot examples check out
against their own text, its extractions convert to the stored shape, and a run through the
real langextract + openai code against a hand-written fake endpoint (answers written for
these tests, not recordings) is stored like a papersift run. Skipped without the
``[baselines]`` extra."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest

pytest.importorskip("langextract")

from langextract import prompt_validation as pv
from langextract.core import data as lx_data

import bench.baseline_langextract as lxb
from bench.baseline_common import to_extraction
from bench.baselines import run_baseline
from papersift.testing.bodies import chat_completion
from papersift.testing.mock import ScriptedServer
from papersift.warehouse.query import run_sql

BASE_URL = "http://fake.test/v1"
ABSTRACT = (
    "We propose FastMix, a data mixing method for language model pretraining. FastMix "
    "improves average accuracy by 2.5% over DoReMi on MMLU and trains 3x faster."
)
# A hand-written reply in langextract's JSON shape, as its schema grammar forces it.
REPLY: dict[str, Any] = {"extractions": [
    {"method": "FastMix", "method_attributes": None},
    {"task": "language model pretraining", "task_attributes": None},
    {"gain": "improves average accuracy by 2.5% over DoReMi on MMLU",
     "gain_attributes": {"metric": "average accuracy", "value": "2.5%", "unit": "%",
                         "baseline": "DoReMi", "dataset": "MMLU"}},
    {"benchmark": "MMLU", "benchmark_attributes": {"introduced": "no"}},
    {"gain": "trains 3x faster",
     "gain_attributes": {"metric": "training speed", "value": "3", "unit": "times",
                         "baseline": None, "dataset": None}},
]}


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    (folder / "one.txt").write_text(f"Test 2026 Papers\n\n{ABSTRACT}\n", encoding="utf-8")
    return folder


def _reply(content: str) -> httpx2.Response:
    return httpx2.Response(200, json=chat_completion(content, prompt_tokens=900,
                                                     completion_tokens=120))


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    return run_sql(db, sql).rows


def test_the_examples_are_found_in_their_own_text(monkeypatch: pytest.MonkeyPatch) -> None:
    lxb.validate_examples()
    misquoted = lx_data.ExampleData(text="We propose TreeNet for parsing.", extractions=[
        lx_data.Extraction(extraction_class="method", extraction_text="GraphNet")])
    monkeypatch.setattr(lxb, "EXAMPLES", [misquoted])
    with pytest.raises(pv.PromptAlignmentError):
        lxb.validate_examples()


def test_extractions_convert_to_the_stored_shape() -> None:
    text = "We propose FooNet. FooNet beats BarNet by 2 points on the new QA-Hard set."
    extractions = [  # hand-made, as langextract's resolver returns them
        lx_data.Extraction(extraction_class="method", extraction_text="FooNet"),
        lx_data.Extraction(extraction_class="Benchmark", extraction_text="QA-Hard",
                           attributes={"introduced": "Yes"}),
        lx_data.Extraction(extraction_class="gain",
                           extraction_text="beats BarNet by 2 points on the new QA-Hard set",
                           attributes={"metric": "accuracy", "value": "2", "unit": "points",
                                       "baseline": "BarNet", "dataset": ["QA-Hard", "x"]}),
        lx_data.Extraction(extraction_class="author", extraction_text="We"),
    ]
    notes: Counter[str] = Counter()
    extraction = to_extraction(lxb.draft_from(extractions), text, notes)
    assert extraction.contribution_types == ["method", "benchmark"]  # by the rule
    assert [(m.name, m.evidence) for m in extraction.methods] == [("FooNet", "FooNet")]
    (bench,) = extraction.benchmarks
    assert (bench.name, bench.introduced, bench.kind) == ("QA-Hard", True, "other")
    (gain,) = extraction.claimed_gains
    assert (gain.metric, gain.value, gain.unit, gain.kind, gain.baseline, gain.dataset) == (
        "accuracy", 2.0, "points", "improvement", "BarNet", "QA-Hard, x")
    assert gain.evidence == "beats BarNet by 2 points on the new QA-Hard set"
    assert notes == Counter({"contribution types from the rule": 1})


def test_langextract_run_is_stored_like_a_papersift_run(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    server = ScriptedServer([_reply(json.dumps(REPLY))])
    extractor = lxb.langextract_extractor(BASE_URL, "small-model",
                                          transport=server.transport())
    run = run_baseline(extractor, db, papers=[str(_corpus(tmp_path))])
    assert run.summary.line() == "1 abstracts: 1 extracted, 0 from cache, 0 failed"
    assert (run.summary.prompt_tokens, run.summary.completion_tokens) == (900, 120)

    body = server.bodies()[0]
    assert body["response_format"] == {"type": "json_object", "schema": lxb.response_schema()}
    assert (body["temperature"], body["seed"], body["max_tokens"]) == (0.0, 0, 512)
    prompt = body["messages"][-1]["content"]
    assert lxb.DESCRIPTION in prompt and "GraphMender" in prompt and ABSTRACT in prompt

    ((prompt_version, params),) = _rows(db, "SELECT prompt_version, params FROM runs")
    assert prompt_version.startswith("baseline:langextract/sha256:")
    assert json.loads(params)["baseline"] == "langextract"
    assert _rows(db, "SELECT ask, status, prompt_tokens, latency_ms IS NOT NULL FROM calls") == [
        (1, "ok", 900, True)]
    assert _rows(db, "SELECT name, evidence, alignment FROM extraction_methods") == [
        ("FastMix", "FastMix", "exact")]
    assert _rows(db, "SELECT metric, value, unit, evidence, alignment FROM extraction_gains "
                     "ORDER BY idx") == [
        ("average accuracy", 2.5, "%", "improves average accuracy by 2.5% over DoReMi on MMLU",
         "exact"),
        ("training speed", 3.0, "other", "trains 3x faster", "exact"),
    ]
    assert _rows(db, "SELECT type FROM extraction_contribution_types") == [("method",)]
    extractor.close()


@pytest.mark.parametrize(("reply", "failure"), [
    (_reply('{"extractions": [{"method": "FastMix"'), ("validation", "invalid_json")),
    (httpx2.Response(400, json={"error": {"message": "bad request"}}), ("request", "http_400")),
])
def test_failures_are_rows_not_crashes(tmp_path: Path, reply: httpx2.Response,
                                       failure: tuple[str, str]) -> None:
    db = tmp_path / "w.duckdb"
    extractor = lxb.langextract_extractor(BASE_URL, "m",
                                          transport=ScriptedServer([reply]).transport())
    run = run_baseline(extractor, db, papers=[str(_corpus(tmp_path))])
    assert run.summary.n_failed == 1
    assert _rows(db, "SELECT stage, reason FROM failures") == [failure]
    extractor.close()
