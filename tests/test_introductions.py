"""Conference-wide evidence about `introduced` (issue 26): a dataset other papers of the
same collection name was not introduced by this one, unless its own sentence says so.

The endpoint is a HAND-WRITTEN FAKE (KeyedDrafts over httpx2.MockTransport), not a
model; the abstracts are written for this test."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import pytest
from click.testing import CliRunner

from papersift.extract.access.llm import Endpoint
from papersift.extract.domain.rules.used_elsewhere import MentionIndex, judge, own_cue
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.interface.cli import cli
from papersift.extract.runs.introductions import check_introductions, listed_verdicts
from papersift.testing.mock import KeyedDrafts
from papersift.testing.serving import copy_db
from papersift.warehouse.query import run_sql
from papersift.warehouse.repository import open_repository

# The model calls the well-known dataset new in the first paper; its sentence only uses
# a creation verb for something else. Two more papers of the collection evaluate on it.
ABSTRACTS = {
    "Kestrel": "Video captioning needs dense labels. We propose Kestrel, a captioner, and "
               "we release annotations built for evaluation; Kestrel is tested on YouCook2, "
               "which we curate into clips. Kestrel improves CIDEr by 4.1 points.",
    "Osprey": "Dense captioning is hard. We propose Osprey. Experiments on YouCook2 and "
              "ActivityNet show that Osprey improves CIDEr by 2.5 points.",
    "Heron": "We introduce HeronBench, a new benchmark of long videos. Models tested on "
             "YouCook2 and HeronBench fall short of humans by 30 points.",
    "Plover": "We propose Plover. On HeronBench, Plover improves accuracy by 3.2%.",
}


# the fake's address: no local server is started (llama-cpp-python need not be installed)
ENDPOINT = Endpoint(base_url="http://fake.test/v1", model="fake", mode="json")


def _draft(method: str, benchmarks: list[tuple[str, bool]]) -> dict[str, Any]:
    return {"tasks": ["video captioning"], "methods": [method],
            "benchmarks": [{"name": n, "new": new} for n, new in benchmarks],
            "gains": [], "types": ["method"]}


DRAFTS = {
    "Kestrel": _draft("Kestrel", [("YouCook2", True)]),
    "Osprey": _draft("Osprey", [("YouCook2", False), ("ActivityNet", False)]),
    "Heron": _draft("HeronBench", [("HeronBench", True), ("YouCook2", False)]),
    "Plover": _draft("Plover", [("HeronBench", False)]),
}


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """The four abstracts run once through the fake model; tests that write copy it."""
    where = tmp_path_factory.mktemp("introductions")
    corpus = where / "conference.jsonl"
    corpus.write_text("".join(json.dumps({"title": f"{key} paper", "abstract": text}) + "\n"
                              for key, text in ABSTRACTS.items()), encoding="utf-8")
    db = where / "w.duckdb"
    _, summary = run_inputs([str(corpus)], RunSettings(db=db),
                            transport=httpx2.MockTransport(KeyedDrafts(DRAFTS)),
                            endpoint=ENDPOINT)
    assert summary.n_extracted == 4
    return db, summary.notes


def _introduced(db: Path) -> dict[str, bool]:
    rows = run_sql(db, "SELECT b.name, b.introduced FROM benchmarks b "
                       "JOIN paper_summary p USING (paper_id) WHERE p.title = ?",
                   ["Kestrel paper"]).rows
    return dict(rows)


def test_the_own_cue_sits_next_to_the_name() -> None:
    assert own_cue("FooBench", "We introduce FooBench, a benchmark of 1k tasks.")
    assert own_cue("FooBench", "FooBench, a new benchmark for agents, is released.")
    assert not own_cue("YouCook2", "We build on YouCook2 and introduce a new dataset.")
    # random7 (tune): 'our method on ...' is no cue for what the method runs on
    assert not own_cue("TileNet", "We evaluate our method on nine TileNet-pretrained models.")
    assert own_cue("TileSet", "We release our new TileSet corpus.")
    assert not own_cue("FooBench", "Experiments on FooBench show gains.")


def test_the_index_finds_whole_names_in_other_abstracts_only() -> None:
    index = MentionIndex({"a": "We test on YouCook2 and MSR-VTT.", "b": "We use YouCook2-X.",
                          "c": "Using YouCook2, we caption."})
    assert index.mentions("YouCook2", exclude=("c",)) == ("a",)
    assert index.mentions("MSR-VTT") == ("a",)
    assert index.mentions("Dataset") == ()  # not a name: nothing to look for
    verdict = judge("YouCook2", "tested on YouCook2, which we curate", ("a",))
    assert not verdict.keep and "1 other paper(s)" in verdict.reason
    # a conference names a famous dataset in hundreds of abstracts: the reason stays a note
    many = tuple(f"sha256:{n:064x}" for n in range(400))
    crowded = judge("ImageNet" * 30, "trained on it", many)
    assert len(crowded.reason) < 500 and "400 other paper(s)" in crowded.reason


def test_a_run_marks_a_dataset_others_use_as_not_introduced_with_its_reason(
        checked: tuple[Path, list[str]], tmp_path: Path) -> None:
    db, notes = copy_db(checked[0], tmp_path), checked[1]
    assert _introduced(db) == {"YouCook2": False}
    assert any("1 benchmark(s) marked not introduced" in note for note in notes)
    # the paper that says 'we introduce HeronBench, a new benchmark' keeps its claim,
    # although another paper of the collection uses it
    heron = run_sql(db, "SELECT introduced FROM benchmarks WHERE name = 'HeronBench' "
                        "AND introduced").rows
    assert heron == [(True,)]
    (verdict,) = listed_verdicts(db)
    assert verdict["holds"] and "2 other paper(s)" in str(verdict["note"])
    # idempotent: a second check finds nothing more to do
    again = check_introductions(db)
    assert again.marked == [] and again.checked >= 1


def test_a_person_undoes_it_and_the_check_leaves_it_alone(
        checked: tuple[Path, list[str]], tmp_path: Path) -> None:
    from papersift.warehouse.corrections import Review, edit_item, item_version

    db = copy_db(checked[0], tmp_path)
    paper_id = run_sql(db, "SELECT paper_id FROM paper_summary WHERE title = ?",
                       ["Kestrel paper"]).rows[0][0]
    with open_repository(db) as repo:
        version = repo.run(item_version, paper_id, "benchmark", "youcook2")
        repo.run(edit_item, paper_id, "benchmark", "youcook2", {"introduced": True},
                 Review(reviewer="ana", version=version, note="they did re-annotate it"))
    assert _introduced(db) == {"YouCook2": True}
    result = check_introductions(db)
    assert result.marked == [] and result.left_to_people == 1
    assert _introduced(db) == {"YouCook2": True}
    assert not listed_verdicts(db)[0]["holds"]


def test_the_command_lists_the_verdicts_and_checks_without_writing(
        checked: tuple[Path, list[str]]) -> None:
    db = checked[0]
    listed = CliRunner().invoke(cli, ["introductions", "--db", str(db)])
    assert listed.exit_code == 0, listed.output
    assert "youcook2" in listed.output and "[holds]" in listed.output
    dry = CliRunner().invoke(cli, ["introductions", "--db", str(db), "--dry-run"])
    assert dry.exit_code == 0 and "0 would be marked" in dry.output
