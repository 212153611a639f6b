"""What code stores that the model did not give is recorded with its reason
(`extractions.added`, migration 0015) and shown by `papersift explain` (stop 29). The
model's answer here is a hand-written fake served at the HTTP boundary."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from papersift.extract.domain.assembly.assemble import assemble
from papersift.extract.interface.cli import cli
from papersift.schemas import PaperDraft
from tests.conftest import run_one_abstract, stored_rows

ABSTRACT = (
    "Tile agents plan poorly. We propose TilePlanner, an agent that plans with tiles. "
    "TilePlanner improves accuracy on MMLU and GSM8K by 4.2 points, and it lifts the "
    "success rate on the OrbitSet benchmark by 7.5 points over the best baseline."
)
# The fake answer leaves out GSM8K (a known dataset), OrbitSet (called a benchmark by the
# text) and the 7.5 points.
DRAFT = {"tasks": ["planning with tiles"], "methods": ["TilePlanner"],
         "benchmarks": [{"name": "MMLU", "new": False}],
         "gains": [{"value": "4.2", "metric": "accuracy"}], "types": ["method"]}


def test_assembly_says_what_code_added_and_why() -> None:
    got = assemble(PaperDraft.model_validate(DRAFT), ABSTRACT)
    assert sorted(b.name for b in got.extraction.benchmarks) == ["GSM8K", "MMLU", "OrbitSet"]
    assert sorted(got.added) == [
        "benchmark 'GSM8K': a known dataset (rules/known_benchmarks.txt) the abstract names",
        "benchmark 'OrbitSet': the abstract's words call it a dataset or benchmark",
        "gain 7.5: a result number the model left out, in a sentence that reports results"]


def test_the_additions_are_stored_and_explained(tmp_path: Path) -> None:
    db = run_one_abstract(tmp_path, "Tile Planning", ABSTRACT, DRAFT)
    [(added,)] = stored_rows(db, "SELECT added FROM latest_extractions")
    assert len(added) == 3 and any(line.startswith("benchmark 'GSM8K': a known dataset")
                                   for line in added)
    paper_id = stored_rows(db, "SELECT paper_id FROM papers")[0][0]
    shown = CliRunner().invoke(cli, ["explain", paper_id[:20], "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "added by code (not in the model's answer):" in shown.output
    assert "benchmark 'OrbitSet': the abstract's words call it a dataset" in shown.output


def test_a_paper_with_additions_but_no_method_candidate_is_explained(tmp_path: Path) -> None:
    abstract = ("Tile agents are studied widely. Results on MMLU and GSM8K show that larger "
                "tile models plan better.")
    draft = {"tasks": ["tile planning"], "methods": [],
             "benchmarks": [{"name": "MMLU", "new": False}], "gains": [],
             "types": ["empirical_analysis"]}
    db = run_one_abstract(tmp_path, "Tile Study", abstract, draft)
    paper_id = stored_rows(db, "SELECT paper_id FROM papers")[0][0]
    shown = CliRunner().invoke(cli, ["explain", paper_id[:20], "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "benchmark 'GSM8K': a known dataset" in shown.output
