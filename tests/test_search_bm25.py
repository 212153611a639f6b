"""Keyword ranking from the postings table: the fts extension's BM25, read for the query's
terms only (warehouse/search.py), checked against the extension's own match_bm25."""

from __future__ import annotations

import itertools
from datetime import datetime
from pathlib import Path

import duckdb
import pytest

from papersift.warehouse import search
from papersift.warehouse.db import connect
from tests.searchtools import copy_db

pytestmark = pytest.mark.skipif(search.fts_extension_dir() is None, reason=search.FTS_HINT)

QUERIES = ("causal bandits", "spiking neural networks", "federated learning incentive",
           "large language model reasoning benchmark", "recommendation", "zzzz unknownword")
_MATCH_BM25 = ("SELECT paper_id, bm25 FROM (SELECT paper_id, fts_main_papers.match_bm25("
               "paper_id, ?) AS bm25 FROM papers p WHERE {where}) WHERE bm25 IS NOT NULL")


def _indexed(corpus_db: Path, tmp_path: Path) -> duckdb.DuckDBPyConnection:
    con = connect(copy_db(corpus_db, tmp_path))
    search.ensure_keyword_index(con)
    return con


def _agrees(ranked: list[tuple[str, float]], reference: dict[str, float]) -> None:
    """Same papers and scores as match_bm25, in its order wherever its scores differ
    (match_bm25's last bits vary between runs, so near-equal scores may swap there)."""
    assert {p for p, _ in ranked} == set(reference)
    for paper_id, bm25 in ranked:
        assert bm25 == pytest.approx(reference[paper_id], rel=1e-12)
    for (first, _), (second, _) in itertools.pairwise(ranked):
        assert reference[first] >= reference[second] - 1e-9


@pytest.mark.parametrize("filters", [search.SearchFilters(),
                                     search.SearchFilters.of(type="benchmark")])
def test_keyword_ranking_is_match_bm25(corpus_db: Path, tmp_path: Path,
                                       filters: search.SearchFilters) -> None:
    con = _indexed(corpus_db, tmp_path)
    where, params = filters.where()
    try:
        for query in QUERIES:
            reference = dict(con.execute(_MATCH_BM25.format(where=where),
                                         [query, *params]).fetchall())
            rows = search.rank(con, query, None, None, mode="keyword", filters=filters,
                               limit=100)
            _agrees([(row[0], row[4]) for row in rows], reference)
            assert [row[2] for row in rows] == list(range(1, len(rows) + 1))
            if query.startswith("zzzz"):
                assert rows == []
            else:
                assert rows
    finally:
        con.close()


def test_papers_with_the_same_words_tie_on_paper_id(corpus_db: Path, tmp_path: Path) -> None:
    con = connect(copy_db(corpus_db, tmp_path))
    words = ("Quantum walkers sample graphs quickly.", "Walkers mix on expander graphs.",
             "We bound the mixing time of quantum walkers.")
    texts = [" ".join(words), " ".join(reversed(words)), " ".join(words[1:] + words[:1])]
    now = datetime(2026, 1, 1)
    for index, text in enumerate(texts):
        con.execute("INSERT INTO papers VALUES (?, ?, ?, ?, ?)",
                    [f"sha256:tie{2 - index}", text, f"sha256:tie{2 - index}", len(text), now])
    search.ensure_keyword_index(con)
    try:
        runs = [search.rank(con, "quantum walkers mixing graphs", None, None,
                            mode="keyword", limit=5) for _ in range(3)]
    finally:
        con.close()
    top = runs[0][:3]
    assert [row[0] for row in top] == ["sha256:tie0", "sha256:tie1", "sha256:tie2"]
    assert len({row[4] for row in top}) == 1  # exactly the same score, not nearly
    assert runs[1] == runs[0] and runs[2] == runs[0]


def test_an_index_built_without_postings_is_rebuilt(corpus_db: Path, tmp_path: Path) -> None:
    con = _indexed(corpus_db, tmp_path)
    try:
        assert search.ensure_keyword_index(con) is False
        con.execute("DROP TABLE fts_main_papers.postings")  # as an index built before them
        assert search.ensure_keyword_index(con) is True
        assert search.rank(con, "causal bandits", None, None, mode="keyword")
    finally:
        con.close()
