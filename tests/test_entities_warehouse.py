"""Canonical entities in a real warehouse (the bundled corpus replayed from the real
recording): a run canonicalises, a second pass writes nothing, user merges and splits
win and survive a re-run, and the saved queries and leaderboard answer by entity."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from papersift.extract.interface.cli import cli
from papersift.extract.interface.entities import build, merge, split
from papersift.extract.runs.canon import CanonOptions
from papersift.testing.corpus import replay_corpus
from papersift.warehouse.query import run_sql
from tests.conftest import stored_rows


@pytest.fixture
def db(corpus_db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "w.duckdb"
    shutil.copy(corpus_db, copy)
    return copy


def _count(db: Path, table: str) -> int:
    return int(stored_rows(db, f"SELECT count(*) FROM {table}")[0][0])


def test_a_run_canonicalises_and_an_unchanged_warehouse_costs_nothing(db: Path) -> None:
    passes = _count(db, "entity_passes")
    assert passes == 1  # the replayed run ended with a pass
    missing = stored_rows(db, "SELECT count(*) FROM benchmarks WHERE entity_id IS NULL")
    assert missing == [(0,)]
    summary = build(db, CanonOptions(embeddings=False))
    assert summary.up_to_date
    assert _count(db, "entity_passes") == passes
    assert _count(db, "entity_assignments") > 0


def test_item_views_carry_entities_and_merges_are_explained(db: Path) -> None:
    cider = stored_rows(db, "SELECT DISTINCT metric, canonical_metric, metric_direction, "
                            "metric_kind FROM gains WHERE metric ILIKE 'CIDEr%' ORDER BY 1")
    assert cider == [("CIDEr on ActivityNet", "CIDEr", "higher", "score"),
                     ("CIDEr on YouCook2", "CIDEr", "higher", "score")]
    stated = stored_rows(db, "SELECT detail FROM entity_decisions WHERE stage = 'abstract' "
                             "AND kind = 'method' AND a_key = 'ncms'")
    assert stated and all("Neural Causal Models (NCMs)" in d for (d,) in stated)
    # "grounded in Pearl's Causal Hierarchy (PCH)" only defines PCH in passing: since stop 39
    # grounding refuses it as the paper's method, so no entity merge is recorded for it
    assert stored_rows(db, "SELECT count(*) FROM methods WHERE name = 'PCH'") == [(0,)]
    assert stored_rows(db, "SELECT b_key FROM entity_decisions WHERE a_key = 'pch'") == []
    # "conditional optimal transport (COT)" is the acronym of a lowercase term: grounding
    # refuses it as a method, so the curated CoT alias never meets it here (the rule that
    # an abstract's own spelling beats the table is tested in test_entities.py)
    assert stored_rows(db, "SELECT canonical FROM entity_lookup WHERE name = 'COT'") == []


def test_user_merge_and_split_win_and_survive_a_rerun(db: Path, tmp_path: Path) -> None:
    before = dict(stored_rows(db, "SELECT benchmark, papers FROM (SELECT canonical AS "
                                  "benchmark, count(DISTINCT paper_id) AS papers FROM "
                                  "benchmarks GROUP BY 1)"))
    assert before["Amazon"] == 1 and before["Amazon Books"] == 1
    merged, _ = merge(db, ["Amazon", "Amazon Books"], "benchmark", "same source")
    assert set(merged.keys) == {"amazon", "amazonbooks"}
    result = run_sql(db, "SELECT papers, spellings FROM (FROM most_used_benchmarks_q)"
                     .replace("FROM most_used_benchmarks_q", _saved("most_used_benchmarks")))
    counts = {spellings: papers for papers, spellings in result.rows}
    assert counts["Amazon; Amazon Books"] == 2
    # the same run again (all from cache) and a rebuild keep the user's merge
    replay_corpus(db)
    build(db, CanonOptions(embeddings=False))
    assert _entity_of(db, "Amazon Books") == _entity_of(db, "Amazon")
    # the split undoes it, and wins too
    parts, _ = split(db, "Amazon", ["Amazon Books"], "benchmark")
    assert len(parts) == 2
    replay_corpus(db)
    assert _entity_of(db, "Amazon Books") != _entity_of(db, "Amazon")
    decisions = stored_rows(db, "SELECT verdict FROM entity_user_decisions ORDER BY seq")
    assert decisions == [("same",), ("different",)]


def test_split_takes_an_automatic_merge_apart(db: Path) -> None:
    entity = _entity_of(db, "NCMs", "method")
    assert entity == _entity_of(db, "Neural Causal Models", "method")  # the abstract's pair
    members = stored_rows(db, f"SELECT count(*) FROM entity_keys WHERE entity_id = '{entity}'")
    assert members[0][0] >= 2
    parts, _ = split(db, entity, [], "method")
    assert len(parts) == members[0][0]
    assert _entity_of(db, "NCMs", "method") != _entity_of(db, "Neural Causal Models",
                                                          "method")


def _saved(name: str) -> str:
    from papersift.warehouse.query import saved_queries

    return "(" + saved_queries()[name].sql.rstrip().rstrip(";") + ")"


def _entity_of(db: Path, name: str, kind: str = "benchmark") -> str:
    rows = stored_rows(db, f"SELECT entity_id FROM entity_lookup WHERE kind = '{kind}' "
                           f"AND name = '{name}'")
    return str(rows[0][0])


def test_cli_entities_and_leaderboard(db: Path) -> None:
    runner = CliRunner()
    listed = runner.invoke(cli, ["entities", "list", "--db", str(db), "--kind", "metric",
                                 "--merged", "--format", "json"])
    assert listed.exit_code == 0, listed.output
    assert any(row["canonical"] == "CIDEr" for row in json.loads(listed.output))
    shown = runner.invoke(cli, ["entities", "show", "CIDEr on YouCook2", "--db", str(db)])
    assert shown.exit_code == 0, shown.output
    assert "metric:cider" in shown.output and "higher is better" in shown.output
    board = runner.invoke(cli, ["query", "leaderboard", "--benchmark", "youcook 2",
                                "--db", str(db), "--format", "json"])
    assert board.exit_code == 0, board.output
    rows = json.loads(board.output)
    assert rows and {r["benchmark"] for r in rows} == {"YouCook2"}
    for row in rows:  # an absolute score and an improvement never share a column
        assert (row["score"] is None) or (row["improvement"] is None)
        assert row["evidence"] and row["mention_start"] is not None
    # the run built stages 1-3; without the embedding stage (which needs the [embed]
    # model and is tested with a fake embedder below) a build has nothing left to do
    again = runner.invoke(cli, ["entities", "build", "--db", str(db), "--no-embeddings"])
    assert again.exit_code == 0 and "up to date" in again.output
    unknown = runner.invoke(cli, ["query", "unknown_metrics", "--db", str(db),
                                  "--format", "json"])
    assert any(r["metric"] == "query executability" for r in json.loads(unknown.output))
    wrong = runner.invoke(cli, ["entities", "show", "no such thing", "--db", str(db)])
    assert wrong.exit_code == 1 and "no entity named" in wrong.output
    bad = runner.invoke(cli, ["query", "failures", "--benchmark", "X", "--db", str(db)])
    assert bad.exit_code == 1 and "takes no benchmark" in bad.output


def test_bad_user_alias_file_is_one_clean_message(db: Path, tmp_path: Path) -> None:
    bad = tmp_path / "aliases.toml"
    bad.write_text("[[benchmark]]\nname = 3\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["entities", "build", "--db", str(db), "--aliases",
                                      str(bad)])
    assert result.exit_code == 1
    assert str(bad) in result.output and "needs a non-empty name" in result.output


class BagOfWordsEmbedder:
    """A HAND-WRITTEN FAKE of the sentence embedder (extract/access/embedding.py): names
    with the same bag of words (plural s dropped) get one vector, others orthogonal ones;
    it counts what it is asked to embed."""

    model_id = "fake-bag-of-words"

    def __init__(self) -> None:
        self.bags: dict[frozenset[str], int] = {}
        self.embedded: list[str] = []

    def embed(self, texts: list[str]) -> Any:
        import numpy as np

        self.embedded += texts
        vectors = np.zeros((len(texts), 512), dtype=np.float32)
        for row, text in enumerate(texts):
            bag = frozenset(w.lower().rstrip("s") for w in text.split() if w.lower() != "of")
            vectors[row, self.bags.setdefault(bag, len(self.bags)) % 512] = 1.0
        return vectors


def test_embedding_stage_merges_guarded_pairs_once(db: Path) -> None:
    pytest.importorskip("numpy")
    from papersift.extract.runs.canon import canonicalise
    from papersift.warehouse import Warehouse

    with Warehouse(db) as warehouse:
        con = warehouse.con
        extraction, paper = con.execute(
            "SELECT extraction_id, paper_id FROM latest_extractions LIMIT 1").fetchone()
        for idx, (table, name) in enumerate([
                ("extraction_tasks", "classification of images"),
                ("extraction_tasks", "image classification"),
                ("extraction_benchmarks", "CIFAR-10"), ("extraction_benchmarks", "CIFAR-100")]):
            con.execute(f"INSERT INTO {table} (extraction_id, paper_id, idx, name, evidence, "
                        "alignment) VALUES (?, ?, ?, ?, 'x', 'exact')",
                        [extraction, paper, 100 + idx, name])
        fake = BagOfWordsEmbedder()
        first = canonicalise(warehouse, CanonOptions(threshold=0.9), embedder=fake)
        assert not first.up_to_date and fake.embedded
        rows = con.execute("SELECT a_key, b_key, verdict, stage, score FROM entity_decisions "
                           "WHERE stage IN ('embedding', 'guard')").fetchall()
        assert ("classificationofimage", "imageclassification", "same", "embedding",
                1.0) in rows
        assert ("cifar10", "cifar100", "different", "guard", None) in rows
        same = con.execute("SELECT count(DISTINCT entity_id) FROM entity_lookup WHERE name IN "
                           "('classification of images', 'image classification')").fetchone()
        assert same == (1,)
        apart = con.execute("SELECT count(DISTINCT entity_id) FROM entity_lookup WHERE name IN "
                            "('CIFAR-10', 'CIFAR-100')").fetchone()
        assert apart == (2,)
        asked = len(fake.embedded)
        again = canonicalise(warehouse, CanonOptions(threshold=0.9), embedder=fake)
        assert again.up_to_date and len(fake.embedded) == asked  # nothing embedded twice


def test_leaderboard_for_an_unknown_benchmark_says_so_with_close_names(db: Path) -> None:
    runner = CliRunner()
    typo = runner.invoke(cli, ["query", "leaderboard", "--benchmark", "youcok2",
                               "--db", str(db)])
    assert typo.exit_code == 1, typo.output
    assert "no benchmark named 'youcok2'" in typo.output and "YouCook2" in typo.output
    nothing = runner.invoke(cli, ["query", "leaderboard", "--benchmark", "zzqx",
                                  "--db", str(db)])
    assert nothing.exit_code == 1 and "no benchmark named 'zzqx'" in nothing.output
    by_id = runner.invoke(cli, ["query", "leaderboard", "--benchmark", "benchmark:youcook2",
                                "--db", str(db), "--format", "json"])
    assert by_id.exit_code == 0 and json.loads(by_id.output), by_id.output
