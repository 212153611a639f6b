"""Reviewed papers as the prompt's few-shot pool, end to end and offline: a run, a
reviewer's corrections, `papersift corrections pool`, then `--fewshot-pool` runs.

The endpoint is a HAND-WRITTEN FAKE (httpx2.MockTransport, not a recording): it answers
each abstract with the fixed draft of DRAFTS whose key the abstract contains, and keeps
every request body it saw."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.assembly.assemble import result_numbers
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.interface.cli import cli
from papersift.prompts import Example, PromptError, load_prompt
from papersift.prompts.pool import FewshotPool, load_pool, with_pool
from papersift.testing.mock import KeyedDrafts
from papersift.warehouse.corrections import Mention, Review, add_item, edit_item, set_status
from papersift.warehouse.db import connect

ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")
SPANSEEK = ("We study retrieval for long scientific documents. We propose SpanSeek, a method "
            "that retrieves answer-bearing passages. On QASPER and our new PaperQA-Long "
            "benchmark, SpanSeek improves recall by 6.5 points over BM25. It also reaches "
            "71.2% accuracy on QASPER.")
TABULAR = ("This paper examines contrastive pretraining for tabular data. Masking columns "
           "improves downstream classification by 3.1% on the OpenML suite.")
LEGAL = ("We study retrieval for long legal documents. We propose ClauseSeek, which improves "
         "recall by 2.2 points on QASPER.")
DRAFTS: dict[str, dict[str, Any]] = {
    "SpanSeek": {"tasks": ["retrieval for long scientific documents"],
                 "methods": ["SpanSeek"], "benchmarks": [{"name": "QASPER", "new": False}],
                 "gains": [{"value": "6.5", "metric": "recall", "vs": "BM25"},
                           {"value": "71.2", "metric": "accuracy", "on": "QASPER"}],
                 "types": ["method"]},
    "tabular": {"tasks": ["contrastive pretraining for tabular data"], "methods": [],
                "benchmarks": [], "gains": [], "types": ["empirical_analysis"]},
    "ClauseSeek": {"tasks": ["retrieval for long legal documents"], "methods": ["ClauseSeek"],
                   "benchmarks": [], "gains": [], "types": ["method"]},
}


def _run(db: Path, texts: list[str], pool: Path | None = None,
         use_cache: bool = True) -> tuple[KeyedDrafts, Any]:
    corpus = db.parent / f"in-{len(list(db.parent.glob('in-*')))}.txt"
    corpus.write_text("\n\n".join(texts) + "\n", encoding="utf-8")
    model = KeyedDrafts(DRAFTS)  # HAND-WRITTEN FAKE endpoint: the draft the abstract names
    _, summary = run_inputs([str(corpus)], RunSettings(db=db, fewshot_pool=pool,
                                                       use_cache=use_cache),
                            transport=httpx2.MockTransport(model), endpoint=ENDPOINT)
    return model, summary


def _review_spanseek(db: Path) -> str:
    """A reviewer's work on the SpanSeek paper; returns its paper_id."""
    con = connect(db)
    try:
        paper_id, text = con.execute(
            "SELECT paper_id, text FROM papers WHERE text LIKE '%SpanSeek%'").fetchone()
        ann = Review(reviewer="ann", version=0)
        set_status(con, paper_id, "gain", "recall|6.5", "reject",
                   Review(reviewer="ann", version=0, note="measured on another split"))
        edit_item(con, paper_id, "gain", "accuracy|71.2", {"metric": "accuracy on QASPER"}, ann)
        edit_item(con, paper_id, "method", "spanseek", {"name": "SpanSeek-XL"}, ann)
        start = text.index("PaperQA-Long")
        sentence = (text.index("On QASPER"), text.index("BM25.") + 5)
        add_item(con, paper_id, "benchmark",
                 Mention(start, start + len("PaperQA-Long"), "PaperQA-Long", sentence),
                 {"introduced": True}, ann)
    finally:
        con.close()
    return str(paper_id)


def test_reviewed_papers_become_a_grounded_versioned_pool(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _run(db, [SPANSEEK, TABULAR])
    _review_spanseek(db)
    out = tmp_path / "pools" / "mine.json"
    result = CliRunner().invoke(cli, ["corrections", "pool", "--db", str(db), "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    # the edited method name is not in the abstract: left out, and said so
    assert "left out method 'SpanSeek-XL': not in the abstract" in result.output
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["format"] == "papersift-fewshot-pool/1"
    [example] = document["examples"]  # the unreviewed tabular paper is not in it
    assert example["abstract"] == SPANSEEK
    assert example["answer"] == {
        "tasks": ["retrieval for long scientific documents"], "methods": [],
        "benchmarks": [{"name": "QASPER", "new": False}, {"name": "PaperQA-Long", "new": True}],
        "gains": [{"value": "71.2", "metric": "accuracy on QASPER", "on": "QASPER"}],
        "types": ["method"]}
    answer = example["answer"]
    for name in [*answer["tasks"], *answer["methods"], *(b["name"] for b in answer["benchmarks"]),
                 *(g["metric"] for g in answer["gains"])]:
        assert name in SPANSEEK
    assert {g["value"] for g in answer["gains"]} <= set(result_numbers(SPANSEEK))
    pool = load_pool(out)
    assert pool.version == document["version"] and document["version"] in result.output
    again = tmp_path / "again.json"
    assert CliRunner().invoke(cli, ["corrections", "pool", "--db", str(db), "--out",
                                    str(again)]).exit_code == 0
    assert load_pool(again).version == pool.version  # the same reviews, the same version


def test_a_run_with_the_pool_sends_the_closest_examples_and_keys_its_cache(
        tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _run(db, [SPANSEEK, TABULAR])
    _review_spanseek(db)
    out = tmp_path / "pool.json"
    assert CliRunner().invoke(cli, ["corrections", "pool", "--db", str(db), "--out",
                                    str(out)]).exit_code == 0
    example = json.loads(out.read_text(encoding="utf-8"))["examples"][0]
    prompt = load_prompt()

    plain, _ = _run(db, [LEGAL])
    before = plain.bodies[0]["messages"]  # no pool: system, then the abstract, as before
    assert [m["role"] for m in before] == ["system", "user"]
    assert before[1]["content"] == prompt.user(LEGAL)

    pooled, summary = _run(db, [LEGAL], pool=out)
    assert summary.n_extracted == 1 and summary.n_cached == 0  # its own cache key
    roles = [m["role"] for m in pooled.bodies[0]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]
    shown = pooled.bodies[0]["messages"]
    assert shown[0] == before[0]  # the same static system prefix
    assert shown[1]["content"] == prompt.user(SPANSEEK)
    assert json.loads(shown[2]["content"]) == example["answer"]
    assert shown[3]["content"] == prompt.user(LEGAL)
    cached, summary = _run(db, [LEGAL], pool=out)
    assert summary.n_cached == 1 and cached.bodies == []

    # a reviewed paper extracted again is never shown its own answer
    own, _ = _run(db, [SPANSEEK], pool=out, use_cache=False)
    assert [m["role"] for m in own.bodies[0]["messages"]] == ["system", "user"]
    versions = connect(db, read_only=True)
    try:
        rows = versions.execute("SELECT DISTINCT prompt_version FROM extractions").fetchall()
        params = versions.execute("SELECT params FROM runs WHERE params LIKE "
                                  "'%fewshot_pool_version%'").fetchall()
    finally:
        versions.close()
    assert len(rows) == 2 and params  # pool runs say which pool they used


def test_examples_are_chosen_by_word_overlap_never_the_abstract_itself() -> None:
    texts = ["Graph neural networks for molecule property prediction.",
             "Retrieval augmented generation for long documents.",
             "Retrieval for long legal documents with sparse indexes."]
    pool = FewshotPool(examples=tuple(Example(t, {"tasks": [t]}) for t in texts),
                       version="sha256:x", k=2)
    chosen = pool.choose("Dense retrieval for long documents.")
    assert [e.abstract for e in chosen] == [texts[1], texts[2]]
    assert texts[2] not in [e.abstract for e in pool.choose(texts[2])]
    assert len(pool.choose("Nothing in common whatsoever.")) == 2  # ties: pool order


def test_the_prompt_version_follows_the_pools(tmp_path: Path) -> None:
    prompt = load_prompt()
    one = FewshotPool(examples=(Example("a b c", {}),), version="sha256:one")
    two = FewshotPool(examples=(Example("a b c", {}),), version="sha256:two")
    assert len({prompt.version, with_pool(prompt, one).version,
                with_pool(prompt, two).version}) == 3
    assert with_pool(prompt, one).system == prompt.system


@pytest.mark.parametrize(("content", "message"), [
    ("not json", "not a JSON few-shot pool"),
    ('{"examples": []}', "not a few-shot pool"),
    ('{"format": "papersift-fewshot-pool/1", "examples": []}', "has no examples"),
    ('{"format": "papersift-fewshot-pool/1", "examples": [{"abstract": "a"}]}',
     "example 1 needs exactly"),
    ('{"format": "papersift-fewshot-pool/1", "version": "sha256:0", '
     '"examples": [{"abstract": "a", "answer": {}}]}', "edited by hand"),
])
def test_a_bad_pool_file_is_one_clean_message_naming_it(tmp_path: Path, content: str,
                                                        message: str) -> None:
    bad = tmp_path / "bad-pool.json"
    bad.write_text(content, encoding="utf-8")
    with pytest.raises(PromptError, match=message) as raised:
        load_pool(bad)
    assert "bad-pool.json" in str(raised.value)


def test_a_warehouse_without_reviews_makes_no_pool(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    _run(db, [TABULAR])
    result = CliRunner().invoke(cli, ["corrections", "pool", "--db", str(db), "--out",
                                      str(tmp_path / "p.json")])
    assert result.exit_code == 1 and "no reviewed papers yet" in result.output
    assert not (tmp_path / "p.json").exists()
