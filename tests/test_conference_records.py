"""Real records in, real names out (issue 25): a conference file's title, id, venue, year,
link and other fields are kept, and papers are shown by title in the wide exports."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.testing.mock import FakeModel
from papersift.warehouse.export import export
from tests.conftest import stored_rows
from tests.test_pipeline import ENDPOINT

RECORDS = [
    {"id": "AbCdEf1234", "title": "Sparse Routers Learn to Share",
     "abstract": "We study mixture-of-experts routing and propose ShareRoute, a router that "
                 "shares experts across layers. ShareRoute improves accuracy by 2.1 points "
                 "on GLUE while using 30% fewer parameters than a dense baseline.",
     "venue": "ICLR", "year": "2024", "openreview_url": "https://openreview.net/forum?id=AbCdEf1234",
     "primary_area": "generative models", "keywords": ["mixture of experts", "routing"],
     "status": "ICLR 2024 poster"},
    {"id": "2024.emnlp-main.7", "title": "Counting Words Twice",
     "abstract": "We count the words of ten thousand documents twice and report that the "
                 "two counts agree on 99.5% of them, which shows the counter is stable.",
     "venue": "EMNLP", "year": 2024, "volume": "main"},
]


def test_a_conference_record_keeps_its_names_and_papers_show_by_title(tmp_path: Path) -> None:
    source = tmp_path / "conf.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    db = tmp_path / "w.duckdb"
    run_inputs([str(source)], RunSettings(db=db), transport=FakeModel().transport(),
               endpoint=ENDPOINT)
    rows = stored_rows(db, "SELECT source_id, title, venue, year, url, extra FROM sources "
                           "ORDER BY position")
    assert rows[0][:5] == ("AbCdEf1234", "Sparse Routers Learn to Share", "ICLR", 2024,
                           "https://openreview.net/forum?id=AbCdEf1234")
    assert json.loads(rows[0][5]) == {"primary_area": "generative models",
                                      "keywords": ["mixture of experts", "routing"],
                                      "status": "ICLR 2024 poster"}
    assert rows[1][4] is None and json.loads(rows[1][5]) == {"volume": "main"}

    out = tmp_path / "out"
    export(db, out, "csv")
    with (out / "papers.csv").open(encoding="utf-8", newline="") as handle:
        papers = {row["source_id"]: row for row in csv.DictReader(handle)}
    assert papers["AbCdEf1234"]["title"] == "Sparse Routers Learn to Share"
    assert papers["2024.emnlp-main.7"]["title"] == "Counting Words Twice"
    header = next(iter(papers.values()))
    assert list(header)[:4] == ["paper_id", "title", "source_id", "url"]


def test_a_sample_is_seeded_stable_and_grows_without_paying_twice(tmp_path: Path) -> None:
    """--sample N extracts N abstracts drawn by a seeded hash (issue 25: the path for a
    user with no key and a whole conference), ingests them all, and a larger sample keeps
    the smaller one's papers, so its rerun pays only for the new ones."""
    from papersift.extract.domain.reading.sampling import seeded_sample
    from tests.conftest import CORPUS

    db = tmp_path / "w.duckdb"
    model = FakeModel()
    _, first = run_inputs([str(CORPUS)], RunSettings(db=db, sample=10, sample_seed=7),
                          transport=model.transport(), endpoint=ENDPOINT)
    assert (first.n_abstracts, first.n_extracted, model.requests) == (10, 10, 10)
    assert stored_rows(db, "SELECT count(*) FROM papers")[0][0] == 63  # all ingested
    sampled = {row[0] for row in stored_rows(db, "SELECT paper_id FROM extractions")}
    every = {row[0] for row in stored_rows(db, "SELECT paper_id FROM papers")}
    assert sampled == seeded_sample(sorted(every), 10, 7) == seeded_sample(every, 10, 7)
    assert seeded_sample(every, 10, 8) != sampled  # the seed matters

    _, second = run_inputs([str(CORPUS)], RunSettings(db=db, sample=25, sample_seed=7),
                           transport=model.transport(), endpoint=ENDPOINT)
    assert (second.n_cached, second.n_extracted, model.requests) == (10, 15, 25)


def test_a_new_benchmark_that_other_papers_name_is_listed_as_doubtful(tmp_path: Path) -> None:
    """Conference-wide evidence (issue 26): a benchmark one paper is said to introduce,
    which two other abstracts of the warehouse also name, is listed by the saved query
    doubtful_new_benchmarks; one nobody else names is not. A hand-written fake endpoint
    gives every paper the same draft (ScriptedServer)."""
    from click.testing import CliRunner

    from papersift.extract.interface.cli import cli
    from papersift.testing.mock import ScriptedServer, ok

    abstracts = [
        "We introduce OrbitSet, a new benchmark of satellite orbits, and FreshBench, a new "
        "suite for orbit forecasting with twelve tasks for learned predictors.",
        "We study orbit forecasting with graph networks and evaluate them on OrbitSet, where "
        "our predictor lowers the error of strong baselines by a wide margin.",
        "Results on OrbitSet show that physics priors help small models forecast orbits "
        "better than large models trained without them, across all horizons.",
    ]
    corpus = tmp_path / "orbits.txt"
    corpus.write_text("Orbit Papers\n\n" + "\n\n".join(abstracts) + "\n", encoding="utf-8")
    draft = {"tasks": ["orbit forecasting"], "methods": [],
             "benchmarks": [{"name": "OrbitSet", "new": True},
                            {"name": "FreshBench", "new": True}],
             "gains": [], "types": ["benchmark"]}
    db = tmp_path / "w.duckdb"
    server = ScriptedServer([ok(draft) for _ in abstracts])
    run_inputs([str(corpus)], RunSettings(db=db, use_cache=False),
               transport=server.transport(), endpoint=ENDPOINT)
    introduced = stored_rows(db, "SELECT name FROM benchmarks WHERE introduced ORDER BY name")
    assert introduced == [("FreshBench",), ("OrbitSet",)]  # only the first paper's cue counts
    shown = CliRunner().invoke(cli, ["query", "doubtful_new_benchmarks", "--db", str(db),
                                     "--format", "csv"])
    assert shown.exit_code == 0, shown.output
    rows = list(csv.DictReader(shown.output.splitlines()))
    assert [(r["benchmark"], r["other_papers"]) for r in rows] == [("OrbitSet", "2")]
