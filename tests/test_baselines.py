"""The naive-instructor baseline (bench/) through the real openai + instructor code and the
real Runner, against a hand-written fake endpoint (answers written for these tests, not
recordings): its rows land in the warehouse as an ordinary run with its own provenance,
coercions keep storage from failing, and bad gold files get clear errors."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import httpx2
import pytest

from bench.baseline_common import (
    Draft,
    GainDraft,
    NamedDraft,
    contribution_types_for,
    evidence_for,
    number_from,
    to_extraction,
    unit_for,
)
from bench.baseline_naive import INSTRUCTION, NaivePaper, naive_extractor
from bench.baselines import BaselineError, gold_paper_ids, main, run_baseline
from papersift.extract.access.extractor import Extractor
from papersift.extract.access.llm import Endpoint
from papersift.prompts import load_prompt
from papersift.testing.bodies import chat_completion
from papersift.testing.mock import ScriptedServer
from papersift.warehouse.query import run_sql

BASE_URL = "http://fake.test/v1"
FASTMIX = (
    "We propose FastMix, a data mixing method for language model pretraining. FastMix "
    "improves average accuracy by 2.5% over DoReMi on MMLU and trains 3x faster."
)
TINYBENCH = (
    "We introduce TinyBench, a benchmark for evaluating small language models on "
    "reasoning. Current models score below 40% on it."
)
# Hand-written naive answers, shaped like what a small model returns.
FASTMIX_ANSWER = {
    "contribution_types": ["Method", "novel algorithm"],
    "tasks": ["language model pretraining", "data mixing", "a", "task four", "task five",
              "task six"],
    "methods": ["FastMix", "SlowMix"],
    "benchmarks": [{"name": "MMLU", "introduced": False}],
    "claimed_gains": [
        {"metric": "average accuracy", "value": 2.5, "unit": "%", "baseline": "DoReMi",
         "dataset": "MMLU"},
        {"metric": "training speed", "value": 3, "unit": "times", "baseline": None,
         "dataset": None},
    ],
}
TINYBENCH_ANSWER = {
    "contribution_types": ["essay"],
    "tasks": ["evaluating small language models"],
    "methods": [],
    "benchmarks": [{"name": "TinyBench", "introduced": True}],
    "claimed_gains": [{"metric": "score", "value": 40, "unit": "%", "baseline": None,
                       "dataset": "TinyBench"}],
}


def _corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir(exist_ok=True)
    (folder / "two.txt").write_text(f"Test 2026 Papers\n\n{FASTMIX}\n\n{TINYBENCH}\n",
                                    encoding="utf-8")
    return folder


def _answer_by_abstract(request: httpx2.Request) -> httpx2.Response:
    """Hand-written fake: picks the answer by the abstract in the request."""
    answer = FASTMIX_ANSWER if b"FastMix" in request.content else TINYBENCH_ANSWER
    return httpx2.Response(200, json=chat_completion(json.dumps(answer), prompt_tokens=400,
                                                     completion_tokens=90))


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    return run_sql(db, sql).rows


def test_naive_run_is_stored_like_a_papersift_run(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    server = ScriptedServer([_answer_by_abstract, _answer_by_abstract])
    extractor = naive_extractor(BASE_URL, "small-model", transport=server.transport())
    run = run_baseline(extractor, db, papers=[str(_corpus(tmp_path))])
    summary = run.summary
    assert summary.line() == "2 abstracts: 2 extracted, 0 from cache, 0 failed"
    assert (summary.prompt_tokens, summary.completion_tokens) == (800, 180)

    # Provenance: the run and its extractions name the baseline's prompt version.
    ((run_id, model, endpoint, prompt_version, params),) = _rows(
        db, "SELECT run_id, model, endpoint, prompt_version, params FROM runs")
    assert run_id == summary.run_id and model == "small-model" and endpoint == BASE_URL
    assert prompt_version.startswith("baseline:naive-instructor/sha256:")
    assert json.loads(params)["baseline"] == "naive-instructor"
    assert json.loads(params)["max_reasks"] == 1
    assert _rows(db, "SELECT DISTINCT run_id, prompt_version FROM extractions") == [
        (run_id, prompt_version)]
    assert _rows(db, "SELECT count(*), bool_and(latency_ms IS NOT NULL), sum(prompt_tokens) "
                     f"FROM calls WHERE run_id = '{run_id}' AND status = 'ok'") == [(2, True, 800)]
    assert [seconds >= 0 for seconds in run.seconds()] == [True, True]

    # Its cache keys are not papersift's for the same abstract.
    ((fastmix_key,),) = _rows(db, "SELECT e.cache_key FROM extractions e JOIN papers p "
                                  "USING (paper_id) WHERE p.text LIKE 'We propose FastMix%'")
    papersift = Extractor(Endpoint(base_url=BASE_URL, model="small-model", mode="json",
                                   constrain_json=True), load_prompt())
    assert fastmix_key != papersift.key_for(FASTMIX)
    papersift.close()

    # What was sent: the instruction, the naive schema as the grammar, temperature 0.
    body = server.bodies()[0]
    assert INSTRUCTION in body["messages"][0]["content"]
    assert body["response_format"] == {"type": "json_object",
                                       "schema": NaivePaper.model_json_schema()}
    assert body["temperature"] == 0.0

    # Coercions: allowed types only, then the rule; unknown unit -> other; caps.
    types = _rows(db, "SELECT p.text LIKE 'We propose%', list(c.type ORDER BY c.idx) FROM "
                      "extraction_contribution_types c JOIN papers p USING (paper_id) GROUP BY 1 "
                      "ORDER BY 1")
    assert types == [(False, ["benchmark"]), (True, ["method"])]
    assert _rows(db, "SELECT count(*) FROM extraction_tasks WHERE paper_id IN (SELECT paper_id "
                     "FROM papers WHERE text LIKE 'We propose%')") == [(4,)]
    gains = _rows(db, "SELECT metric, value, unit, kind, evidence, alignment FROM "
                      "extraction_gains ORDER BY metric")
    assert gains == [
        ("average accuracy", 2.5, "%", "improvement", "average accuracy", "exact"),
        ("score", 40.0, "%", "score", "score", "exact"),
        ("training speed", 3.0, "other", "score", "training speed", "none"),
    ]
    # Evidence is the name itself; the stored alignment says whether it is in the text.
    assert _rows(db, "SELECT name, evidence, alignment FROM extraction_methods ORDER BY idx"
                 ) == [("FastMix", "FastMix", "exact"), ("SlowMix", "SlowMix", "none")]
    assert _rows(db, "SELECT name, kind, introduced FROM extraction_benchmarks ORDER BY name"
                 ) == [("MMLU", "other", False), ("TinyBench", "other", True)]
    assert extractor.notes["unit became 'other'"] == 1
    assert extractor.notes["tasks cut to 4"] == 1
    assert extractor.notes["contribution types from the rule"] == 1
    extractor.close()

    # A second run is answered from the cache: the fake would fail on any request.
    again = naive_extractor(BASE_URL, "small-model", transport=ScriptedServer([]).transport())
    second = run_baseline(again, db, papers=[str(_corpus(tmp_path))])
    assert second.summary.line() == "2 abstracts: 0 extracted, 2 from cache, 0 failed"
    again.close()


def test_an_answer_that_never_parses_is_a_failure_row_after_one_reask(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    broken = httpx2.Response(200, json=chat_completion('{"contribution_types": ["method"'))
    server = ScriptedServer([broken, broken, _answer_by_abstract])
    extractor = naive_extractor(BASE_URL, "small-model", transport=server.transport())
    run = run_baseline(extractor, db, papers=[str(_corpus(tmp_path))])
    assert run.summary.line() == "2 abstracts: 1 extracted, 0 from cache, 1 failed"
    ((stage, reason, detail),) = _rows(db, "SELECT stage, reason, detail FROM failures")
    assert (stage, reason) == ("validation", "invalid_json")
    assert detail.startswith("after 2 attempt(s)")
    assert _rows(db, "SELECT ask, status FROM calls ORDER BY started, ask LIMIT 2") == [
        (1, "invalid"), (2, "invalid")]
    assert any(line.startswith("  failed sha256:") for line in run.lines())
    extractor.close()


def test_a_server_error_is_a_request_failure(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    refused = httpx2.Response(400, json={"error": {"message": "context length exceeded"}})
    server = ScriptedServer([refused, refused])
    extractor = naive_extractor(BASE_URL, "small-model", transport=server.transport())
    run = run_baseline(extractor, db, papers=[str(_corpus(tmp_path))])
    assert run.summary.n_failed == 2
    reasons = _rows(db, "SELECT DISTINCT stage, reason FROM failures")
    assert reasons == [("request", "http_400")]
    extractor.close()


def test_gold_selects_exactly_its_papers_in_its_order(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    corpus = _corpus(tmp_path)
    first = run_baseline(naive_extractor(BASE_URL, "m", transport=ScriptedServer(
        [_answer_by_abstract, _answer_by_abstract]).transport()), db, papers=[str(corpus)])
    ids = dict(_rows(db, "SELECT substr(text, 1, 10), paper_id FROM papers"))
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"papers": [{"paper_id": ids["We introdu"], "methods": []}]}),
                    encoding="utf-8")
    server = ScriptedServer([_answer_by_abstract])
    run = run_baseline(naive_extractor(BASE_URL, "m", transport=server.transport()), db,
                       gold=gold, use_cache=False)
    assert run.summary.n_abstracts == 1 and len(server.requests) == 1
    assert b"TinyBench" in server.requests[0].content
    assert first.summary.run_id != run.summary.run_id
    assert _rows(db, f"SELECT inputs FROM runs WHERE run_id = '{run.summary.run_id}'") == [
        (json.dumps([str(gold)]),)]


def test_gold_papers_missing_from_the_warehouse_are_named(tmp_path: Path) -> None:
    gold = tmp_path / "gold.json"
    gold.write_text(json.dumps({"papers": [{"paper_id": "sha256:abc"}]}), encoding="utf-8")
    extractor = naive_extractor(BASE_URL, "m", transport=ScriptedServer([]).transport())
    with pytest.raises(BaselineError, match=r"gold.json: 1 of 1 gold papers .*sha256:abc"):
        run_baseline(extractor, tmp_path / "w.duckdb", gold=gold)
    extractor.close()


@pytest.mark.parametrize(("content", "message"), [
    ('{"papers": [', r"bad.json: invalid JSON at line 1, column 13"),
    ('{"paper": []}', r'bad.json: expected an object with a "papers" list'),
    ('{"papers": [{"paper_id": "sha256:a"}, {"id": 2}]}',
     r'bad.json: papers\[1\] has no "paper_id"'),
])
def test_bad_gold_files_name_the_file_and_place(tmp_path: Path, content: str,
                                                message: str) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError, match=message):
        gold_paper_ids(bad)
    with pytest.raises(BaselineError, match="no such gold file"):
        gold_paper_ids(tmp_path / "absent.json")


def test_cli_errors_are_messages_not_tracebacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    common = ["--base-url", BASE_URL, "--model", "m", "--db", str(tmp_path / "w.duckdb")]
    assert main(["naive", *common]) == 2
    assert "give --gold FILE, --papers PATH, or both" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "bench.baseline_langextract", None)  # as if not installed
    assert main(["langextract", *common, "--papers", "x"]) == 2
    assert "pip install -e '.[baselines]'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "--gold" in capsys.readouterr().out


# -- coercions -----------------------------------------------------------------------------


def test_units_numbers_and_contribution_types() -> None:
    notes: Counter[str] = Counter()
    assert [unit_for(u, notes) for u in ["%", " PP ", "x", None, "", "percent"]] == [
        "%", "pp", "x", None, None, "other"]
    assert [number_from(v) for v in ["12.5%", "3x", "1,024", "-0.4 points", "n/a", None]] == [
        12.5, 3.0, 1024.0, -0.4, None, None]
    assert contribution_types_for(["Empirical Analysis", "theory", "theory", "x"], [], [],
                                  notes) == ["empirical_analysis", "theory"]
    assert contribution_types_for(None, [], [], notes) == ["method"]
    assert notes == Counter({"unit became 'other'": 1, "contribution type dropped": 1,
                             "contribution types from the rule": 1})


def test_short_evidence_is_widened_to_whole_words_or_quoted() -> None:
    text = "We train Q on a grid. It beats R2"
    notes: Counter[str] = Counter()
    assert evidence_for(None, "Q", text, notes) == "Q on"
    assert evidence_for("R2", "R2", text, notes) == "beats R2"
    assert evidence_for(None, "Z", text, notes) == '"Z"'
    assert evidence_for("x" * 500, "n", text, notes) == "x" * 400
    assert notes["short evidence widened to whole words"] == 2


def test_a_draft_with_empty_and_oversized_values_still_stores() -> None:
    notes: Counter[str] = Counter()
    draft = Draft(
        contribution_types=[],
        tasks=[NamedDraft("  "), NamedDraft("t" * 300)],
        methods=[NamedDraft("M")],
        gains=[GainDraft(None, float("nan"), "%", evidence="accuracy rose"),
               GainDraft(None, 1.0, None)],
    )
    extraction = to_extraction(draft, "M is a method; accuracy rose by 1 point.", notes)
    assert extraction.contribution_types == ["method"]
    assert [len(t.name) for t in extraction.tasks] == [120]
    assert extraction.methods[0].evidence == "M is"
    (gain,) = extraction.claimed_gains
    assert (gain.metric, gain.value, gain.evidence) == ("accuracy rose", None, "accuracy rose")
    assert notes["gain without metric or quote dropped"] == 1


def test_a_warehouse_shared_with_papersift_runs_gets_a_note(tmp_path: Path) -> None:
    from papersift.extract.interface.app import RunSettings, run_inputs
    from papersift.testing.mock import FakeModel

    db = tmp_path / "w.duckdb"
    corpus = _corpus(tmp_path)
    alone = run_baseline(naive_extractor(BASE_URL, "m", transport=ScriptedServer(
        [_answer_by_abstract, _answer_by_abstract]).transport()), db, papers=[str(corpus)])
    assert not alone.shares_warehouse
    run_inputs([str(corpus)], RunSettings(db=db), transport=FakeModel().transport(),
               endpoint=Endpoint(base_url=BASE_URL, model="m", mode="json"))
    shared = run_baseline(naive_extractor(BASE_URL, "m", transport=ScriptedServer(
        []).transport()), db, papers=[str(corpus)])
    assert shared.summary.n_cached == 2
    assert any("also holds papersift runs" in line for line in shared.lines())
