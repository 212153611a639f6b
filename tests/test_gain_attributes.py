"""A gain's metric, baseline (vs) and dataset (on) are grounded by code like names: a
hand-written FAKE server obeys an invented draft that names a baseline and a dataset the
abstract never mentions, and neither is stored as fact; each is listed in
`extractions.rejected`, and the stored gain says how each attribute was found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from papersift.extract.access.llm import Endpoint, RetryPolicy
from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.domain.assembly.attributes import ground_phrase
from papersift.extract.domain.reading.ingest import paper_id_for
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.schemas import PaperDraft
from papersift.testing.sim import fault_profile, running
from tests.conftest import stored_rows

ABSTRACT = ("We study sparse routing for mixture-of-experts language models. We propose "
            "RouteLite, which prunes idle experts at inference time. RouteLite cuts decoding "
            "latency by 31% compared with dense routing on WikiText-103, and keeps 98.2% of "
            "the perplexity of the full model.")
# What an obedient fake model answers: two gains, one with attributes that are in the
# abstract, one with attributes that are not ('GPT-4', 'ImageNet-1k', 'BLEU').
OBEDIENT_DRAFT: dict[str, Any] = {
    "tasks": ["sparse routing for mixture-of-experts language models"],
    "methods": ["RouteLite"],
    "benchmarks": [{"name": "WikiText-103", "new": False}],
    "gains": [
        {"value": "31", "metric": "decoding latency", "vs": "dense routing",
         "on": "WikiText-103"},
        {"value": "98.2", "metric": "BLEU", "vs": "GPT-4", "on": "ImageNet-1k"},
    ],
    "types": ["method"],
}


def test_assembly_keeps_found_attributes_and_rejects_invented_ones() -> None:
    assembled = assemble(PaperDraft.model_validate(OBEDIENT_DRAFT), ABSTRACT)
    found, invented = assembled.extraction.claimed_gains
    assert (found.metric, found.baseline, found.dataset) == (
        "decoding latency", "dense routing", "WikiText-103")
    assert assembled.gain_attributes[0].columns() == {
        "metric_alignment": "exact", "baseline_alignment": "exact",
        "dataset_alignment": "exact"}
    assert (invented.baseline, invented.dataset) == (None, None)
    assert assembled.gain_attributes[1].columns() == {
        "metric_alignment": "none", "baseline_alignment": "none", "dataset_alignment": "none"}
    assert invented.metric == "BLEU"  # kept, since every gain needs one, but flagged
    rejected = " | ".join(assembled.rejected)
    assert "'GPT-4': not in the abstract" in rejected
    assert "'ImageNet-1k': not in the abstract" in rejected
    assert "metric 'BLEU'" in rejected


def test_a_phrase_is_found_exactly_case_blind_or_by_its_words_in_the_sentence() -> None:
    sentence = (ABSTRACT.index("RouteLite cuts"), len(ABSTRACT))
    assert ground_phrase("Dense Routing", ABSTRACT, sentence).status == "normalized"
    assert ground_phrase("Dense Routing", ABSTRACT, sentence).value == "dense routing"
    # every content word (up to its ending) is in the gain's sentence: fuzzy, kept as written
    assert ground_phrase("latency of decoding", ABSTRACT, sentence).status == "fuzzy"
    # a word the sentence lacks: not the abstract's
    assert ground_phrase("throughput of decoding", ABSTRACT, sentence).status == "none"
    assert ground_phrase("", ABSTRACT, sentence).value is None


def test_an_obedient_draft_does_not_store_invented_attributes_as_aligned(tmp_path: Path) -> None:
    source = tmp_path / "papers.jsonl"
    source.write_text(json.dumps({"abstract": ABSTRACT}) + "\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    with running(fault_profile(answer=lambda _abstract: OBEDIENT_DRAFT)) as server:
        run_inputs([str(source)],
                   RunSettings(db=db, max_reasks=1, retry=RetryPolicy(max_attempts=1)),
                   endpoint=Endpoint(base_url=server.base_url, model="obedient", mode="json"))
    rows = stored_rows(db, "SELECT value, metric, baseline, dataset, metric_alignment, "
                           "baseline_alignment, dataset_alignment FROM gains ORDER BY idx")
    assert rows == [
        (31.0, "decoding latency", "dense routing", "WikiText-103", "exact", "exact", "exact"),
        (98.2, "BLEU", None, None, "none", "none", "none"),
    ]
    for _value, _metric, baseline, dataset, *_ in rows:
        assert baseline is None or baseline in ABSTRACT
        assert dataset is None or dataset in ABSTRACT
    (rejected,) = stored_rows(db, "SELECT rejected FROM extractions WHERE paper_id = ?"
                              .replace("?", f"'{paper_id_for(ABSTRACT)}'"))[0]
    assert any("GPT-4" in line for line in rejected)
    assert any("ImageNet-1k" in line for line in rejected)
    # the CSV export carries the alignments, so a spreadsheet shows which were found
    from papersift.warehouse.export import export

    export(db, tmp_path / "out", "csv")
    header, *lines = (tmp_path / "out" / "gains.csv").read_text(encoding="utf-8").splitlines()
    assert "baseline_alignment" in header and "dataset_alignment" in header
    assert len(lines) == 2
