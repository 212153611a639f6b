"""Search inside DuckDB: the fts extension's BM25 fused with vector cosine by reciprocal rank.

The vectors come from elsewhere (the embedding model lives in ``extract``): this module
stores them, keeps the keyword index current, and runs the SQL. The keyword index is
DuckDB's ``fts`` extension over ``papers(text)``, loaded from the file that the PyPI
package ``duckdb-ext-fts`` installs, never from the network.
"""

from __future__ import annotations

import importlib.util
import platform
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa

from papersift.schemas.fields import CUSTOM_VIEW, search_fields, summary_fields
from papersift.warehouse.custom import declared_fields, summary_columns
from papersift.warehouse.db import WarehouseError

DIM = 384
RRF_K = 60  # reciprocal rank fusion: score = sum of 1 / (RRF_K + rank)
DEPTH = 100  # candidates taken from each ranking before fusing
MODES = ("hybrid", "keyword", "vector")
FTS_HINT = "pip install 'papersift[embed]' (duckdb-ext-fts==1.4.4.20260205)"
SNIPPET_CHARS = 220


def fts_extension_dir() -> Path | None:
    """The extension folder of duckdb-ext-fts (``duckdb_ext/extensions``), if installed."""
    spec = importlib.util.find_spec("duckdb_ext")
    if spec is None or not spec.submodule_search_locations:
        return None
    machine = {"x86_64": "amd64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine(),
                                                                             platform.machine())
    for location in spec.submodule_search_locations:
        folder = Path(location) / "extensions"
        if (folder / f"v{duckdb.__version__}" / f"linux_{machine}" / "fts.duckdb_extension"
                ).is_file() or any(folder.glob("v*/*/fts.duckdb_extension")):
            return folder
    return None


def load_fts(con: duckdb.DuckDBPyConnection) -> None:
    """LOAD fts from the installed package's file; WarehouseError naming the fix if absent."""
    folder = fts_extension_dir()
    if folder is None:
        raise WarehouseError(f"keyword search needs DuckDB's fts extension: {FTS_HINT}")
    try:
        con.execute("SET extension_directory = ?", [str(folder)])
        con.execute("LOAD fts")
    except duckdb.Error as error:
        raise WarehouseError(f"cannot load the fts extension from {folder}: {error}") from error


# --- vectors -------------------------------------------------------------------------


def texts_without_vectors(con: duckdb.DuckDBPyConnection, model_id: str) -> list[tuple[str, str]]:
    """(text_sha256, text) of every paper whose text has no vector of this model yet."""
    rows = con.execute(
        "SELECT p.text_sha256, any_value(p.text) FROM papers p "
        "WHERE NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.text_sha256 = p.text_sha256 "
        "AND e.model_id = ?) GROUP BY 1 ORDER BY 1", [model_id]).fetchall()
    return [(key, text) for key, text in rows]


def store_vectors(con: duckdb.DuckDBPyConnection, model_id: str, keys: Sequence[str],
                  vectors: Any) -> int:
    """Insert (key, vector) rows not stored yet (anti-join, then CHECKPOINT); return how many.

    ``vectors`` is a float32 array of shape (len(keys), 384).
    """
    if not keys:
        return 0
    flat = pa.array(vectors.reshape(-1), type=pa.float32())
    table = pa.table({"text_sha256": pa.array(list(keys), pa.string()),
                      "vector": pa.FixedSizeListArray.from_arrays(flat, DIM)})
    now = datetime.now(UTC).replace(tzinfo=None)
    con.register("_new_vectors", table)
    try:
        before = _count(con, "SELECT count(*) FROM embeddings")
        con.execute(
            f"INSERT INTO embeddings SELECT DISTINCT ON (n.text_sha256) n.text_sha256, ?, "
            f"n.vector::FLOAT[{DIM}], ? FROM _new_vectors n WHERE NOT EXISTS (SELECT 1 FROM "
            "embeddings e WHERE e.text_sha256 = n.text_sha256 AND e.model_id = ?)",
            [model_id, now, model_id])
        added = _count(con, "SELECT count(*) FROM embeddings") - before
    finally:
        con.unregister("_new_vectors")
    con.execute("CHECKPOINT")
    return added


def paper_vectors(con: duckdb.DuckDBPyConnection, model_id: str) -> tuple[list[str], Any]:
    """(paper ids, float32 array of their vectors), papers with a vector only, by id."""
    import numpy as np

    table = con.execute(
        "SELECT p.paper_id, e.vector FROM papers p JOIN embeddings e ON e.text_sha256 = "
        "p.text_sha256 AND e.model_id = ? ORDER BY p.paper_id", [model_id]).fetch_arrow_table()
    ids = table.column("paper_id").to_pylist()
    column = table.column("vector").combine_chunks()
    flat = column.flatten().to_numpy(zero_copy_only=False) if len(ids) else np.zeros(0)
    return ids, np.asarray(flat, dtype=np.float32).reshape(len(ids), DIM)


def _count(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> int:
    row = con.execute(sql, params or []).fetchone()
    return int(row[0]) if row else 0


# --- the keyword index ---------------------------------------------------------------


def _fingerprint(con: duckdb.DuckDBPyConnection) -> tuple[int, str]:
    row = con.execute("SELECT count(*), coalesce(bit_xor(hash(paper_id)), 0)::VARCHAR "
                      "FROM papers").fetchone()
    assert row is not None
    return int(row[0]), str(row[1])


def ensure_keyword_index(con: duckdb.DuckDBPyConnection) -> bool:
    """Build the fts index over papers(text) when the set of papers changed; True if built."""
    load_fts(con)
    papers, fingerprint = _fingerprint(con)
    last = con.execute("SELECT fingerprint FROM fts_builds ORDER BY built DESC LIMIT 1").fetchone()
    exists = _count(con, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                    "'fts_main_papers' AND table_name = 'postings'") > 0
    if exists and last is not None and last[0] == fingerprint:
        return False
    started = time.perf_counter()
    con.execute("PRAGMA create_fts_index('papers', 'paper_id', 'text', overwrite = 1)")
    _build_postings(con)
    con.execute("INSERT INTO fts_builds VALUES (?, ?, ?, ?)",
                [datetime.now(UTC).replace(tzinfo=None), papers, fingerprint,
                 time.perf_counter() - started])
    # the index is DDL: checkpoint so it never waits in the WAL
    # (docs/reliability.md, "Nothing lost")
    con.execute("CHECKPOINT")
    return True


def _build_postings(con: duckdb.DuckDBPyConnection) -> None:
    """One row per (term, paper) with its term frequency and the paper's length, sorted
    by term, beside the fts tables (``overwrite`` drops it with them). A query reads only
    its terms' rows (the sort lets DuckDB skip the rest) instead of every token of the
    collection, as the extension's ``match_bm25`` does for each paper."""
    con.execute("""
        CREATE OR REPLACE TABLE fts_main_papers.postings AS
        SELECT t.termid, t.docid, count(*) AS tf, any_value(d.len) AS len
        FROM fts_main_papers.terms t JOIN fts_main_papers.docs d ON d.docid = t.docid
        GROUP BY t.termid, t.docid ORDER BY t.termid, t.docid""")


# --- filters and search --------------------------------------------------------------


@dataclass(frozen=True)
class SearchFilters:
    """Narrow the candidates; names match case-insensitively, as substrings."""

    # (a field's filter name, text): an item of that field whose label contains the text
    # (FieldSpec.search: task, method, benchmark, type)
    named: tuple[tuple[str, str], ...] = ()
    has_numbers: bool = False
    area: str | None = None  # an area id, or words of its label
    # (user field, value): a choice or flag equals the value (ignoring case); another
    # field's item contains it
    custom: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, **given: Any) -> SearchFilters:
        """Filters by keyword: a field's filter name (``task="..."``, unset when None)
        or one of the other attributes."""
        names = {spec.search[0] for spec in search_fields() if spec.search}
        named = tuple((name, str(value)) for name, value in given.items()
                      if name in names and value)
        return cls(named=named, **{k: v for k, v in given.items() if k not in names})

    def where(self) -> tuple[str, list[Any]]:
        """A predicate on ``p.paper_id`` and its parameters."""
        clauses: list[str] = []
        params: list[Any] = []
        by_name = {spec.search[0]: spec for spec in search_fields() if spec.search}
        for name, value in self.named:
            spec = by_name.get(name)
            if spec is None:
                raise WarehouseError(f"no search filter {name!r}; one of {sorted(by_name)}")
            if value:
                clauses.append(f"p.paper_id IN (SELECT paper_id FROM {spec.view} WHERE "
                               f"{spec.label} ILIKE ?)")
                params.append(f"%{value}%")
        if self.has_numbers:
            clauses.append("p.paper_id IN (SELECT paper_id FROM gains)")
        if self.area:
            if self.area.strip().isdigit():
                clauses.append("p.paper_id IN (SELECT paper_id FROM paper_areas WHERE "
                               "area_id = ?)")
                params.append(int(self.area))
            else:
                clauses.append("p.paper_id IN (SELECT paper_id FROM paper_areas WHERE "
                               "label ILIKE ?)")
                params.append(f"%{self.area}%")
        for field, value in self.custom:
            clauses.append(f"p.paper_id IN (SELECT c.paper_id FROM {CUSTOM_VIEW} c LEFT JOIN "
                           "custom_fields f ON f.name = c.field WHERE c.field = ? AND CASE "
                           "WHEN f.grounding IN ('choice', 'flag') THEN lower(c.value) = "
                           "lower(?) ELSE c.value ILIKE ? END)")
            params += [field, value, f"%{value}%"]
        return (" AND ".join(clauses) or "TRUE"), params

    def check(self, con: duckdb.DuckDBPyConnection) -> None:
        """Refuse a filter on a user field the warehouse does not have, naming those it has."""
        known = {spec.name for spec in declared_fields(con)}
        unknown = sorted({field for field, _ in self.custom} - known)
        if unknown:
            raise WarehouseError(f"no user field {', '.join(unknown)} in this warehouse; it "
                                 f"has: {', '.join(sorted(known)) or 'none'}")


@dataclass(frozen=True)
class Hit:
    """One paper found: its fused score, each ranking's rank and score, and a snippet."""

    paper_id: str
    score: float
    keyword_rank: int | None
    vector_rank: int | None
    bm25: float | None
    cosine: float | None
    snippet: str
    fields: dict[str, Any]


# BM25 as the fts extension's match_bm25 computes it (k = 1.2, b = 0.75, the same
# expression term for term), over the postings of the query's terms only: 5x less CPU
# than match_bm25 at 100k papers (bench/search_speed.py). A paper's terms are summed in
# order of size, so papers with the same words score exactly the same and tie on
# paper_id every time (match_bm25 sums in no fixed order: its scores move in the last
# bits between runs). tests/test_search.py checks the scores against match_bm25's.
_BM25 = """
    SELECT docs.name AS paper_id, s.bm25
    FROM (SELECT p.docid, list_sum(list_sort(list(
                 log((((stats.num_docs - q.df) + 0.5) / (q.df + 0.5)) + 1)
                 * ((p.tf * (1.2 + 1)) / (p.tf + (1.2 * ((1 - 0.75)
                 + (0.75 * (p.len / stats.avgdl))))))))) AS bm25
          FROM (SELECT termid, df FROM fts_main_papers.dict WHERE term IN (SELECT DISTINCT
                stem(unnest(fts_main_papers.tokenize($query)), 'porter'))) q
          JOIN fts_main_papers.postings p ON p.termid = q.termid
          CROSS JOIN fts_main_papers.stats stats
          GROUP BY p.docid) s
    JOIN fts_main_papers.docs docs ON docs.docid = s.docid"""
# Each ranking keeps its best $depth (by score, then paper_id) before numbering them,
# so only those are sorted, not every paper that matched.
_KEYWORD_RANKING = """
    SELECT paper_id, bm25, row_number() OVER (ORDER BY bm25 DESC, paper_id) AS kw_rank
    FROM (SELECT a.paper_id, b.bm25 FROM allowed a JOIN (""" + _BM25 + """) b
          ON b.paper_id = a.paper_id ORDER BY b.bm25 DESC, a.paper_id LIMIT $depth)"""
# Without filters every paper is allowed, and the index holds exactly the papers
# (ensure_keyword_index rebuilds it when they change), so the join to papers is skipped.
_KEYWORD_RANKING_ALL = """
    SELECT paper_id, bm25, row_number() OVER (ORDER BY bm25 DESC, paper_id) AS kw_rank
    FROM (""" + _BM25 + """ ORDER BY s.bm25 DESC, docs.name LIMIT $depth)"""
# Each vector is scored before the join to papers, so only (key, score) goes through the
# hash join, not 384 floats a row: 4-5x less CPU at 100k papers (bench/search_speed.py).
_SCORED = """(SELECT text_sha256, array_cosine_similarity(vector, {vector}::FLOAT[384])
          AS cosine FROM embeddings WHERE model_id = {model})"""
_VECTOR_RANKING = """
    SELECT paper_id, cosine, row_number() OVER (ORDER BY cosine DESC, paper_id) AS vec_rank
    FROM (SELECT a.paper_id, s.cosine FROM allowed a JOIN """ + _SCORED.format(
        vector="$vector", model="$model_id") + """ s ON s.text_sha256 = a.text_sha256
          ORDER BY s.cosine DESC, a.paper_id LIMIT $depth)"""
_NO_KEYWORD = ("SELECT NULL::VARCHAR AS paper_id, NULL::DOUBLE AS bm25, "
               "NULL::BIGINT AS kw_rank LIMIT 0")
_NO_VECTOR = ("SELECT NULL::VARCHAR AS paper_id, NULL::FLOAT AS cosine, "
              "NULL::BIGINT AS vec_rank LIMIT 0")
_RANKINGS = """
WITH allowed AS (SELECT p.paper_id, p.text_sha256 FROM papers p WHERE {where}),
kw AS ({keyword}),
vec AS ({vector})
SELECT paper_id,
       coalesce(1.0 / ($rrf_k + kw_rank), 0) + coalesce(1.0 / ($rrf_k + vec_rank), 0) AS score,
       kw_rank, vec_rank, bm25, cosine
FROM kw FULL OUTER JOIN vec USING (paper_id)
ORDER BY score DESC, paper_id LIMIT $limit
"""


def rank(con: duckdb.DuckDBPyConnection, query: str, vector: Sequence[float] | None,
         model_id: str | None, *, mode: str = "hybrid", filters: SearchFilters | None = None,
         limit: int = 10, depth: int = DEPTH) -> list[tuple[Any, ...]]:
    """(paper_id, score, kw_rank, vec_rank, bm25, cosine), best first (fts loaded and the
    keyword index current: ensure_keyword_index)."""
    if mode not in MODES:
        raise WarehouseError(f"unknown search mode {mode!r}: one of {', '.join(MODES)}")
    use_keyword = mode != "vector"
    use_vector = mode != "keyword" and vector is not None
    filters = filters or SearchFilters()
    filters.check(con)
    where, where_params = filters.where()
    keyword = _KEYWORD_RANKING if where_params or where != "TRUE" else _KEYWORD_RANKING_ALL
    sql = _RANKINGS.format(where=_positional_to_named(where, len(where_params)),
                           keyword=keyword if use_keyword else _NO_KEYWORD,
                           vector=_VECTOR_RANKING if use_vector else _NO_VECTOR)
    params: dict[str, Any] = {"rrf_k": RRF_K, "limit": limit}
    if use_keyword:
        params |= {"query": query, "depth": depth}
    if use_vector and vector is not None:
        params |= {"vector": vector_param(vector), "model_id": model_id or "", "depth": depth}
    params.update({f"f{index}": value for index, value in enumerate(where_params)})
    try:
        return con.execute(sql, params).fetchall()
    except duckdb.Error as error:
        raise WarehouseError(f"search failed: {error}") from error


def vector_param(vector: Sequence[float]) -> str:
    """A vector as the text of a DuckDB array literal: binding it so and casting in SQL takes
    milliseconds, where binding a 384-item Python list takes most of a second."""
    return "[" + ",".join(f"{float(x):.8g}" for x in vector) + "]"


def _positional_to_named(where: str, count: int) -> str:
    for index in range(count):
        where = where.replace("?", f"$f{index}", 1)
    return where


def neighbours(con: duckdb.DuckDBPyConnection, vector: Sequence[float], model_id: str, *,
               exclude: str | None = None, filters: SearchFilters | None = None,
               limit: int = 10) -> list[tuple[str, float]]:
    """(paper_id, cosine) of the papers nearest to ``vector``, nearest first."""
    filters = filters or SearchFilters()
    filters.check(con)
    where, where_params = filters.where()
    rows = con.execute(
        "SELECT p.paper_id, s.cosine FROM papers p JOIN " + _SCORED.format(
            vector="?", model="?") + " s ON s.text_sha256 = p.text_sha256 "
        f"WHERE p.paper_id IS DISTINCT FROM ? AND {where} ORDER BY cosine DESC, p.paper_id "
        "LIMIT ?", [vector_param(vector), model_id, exclude, *where_params, limit]).fetchall()
    return [(paper_id, float(cosine)) for paper_id, cosine in rows]


def stored_vector(con: duckdb.DuckDBPyConnection, paper_id: str, model_id: str) -> list[float]:
    """The stored vector of one paper (a unique id prefix is enough)."""
    rows = con.execute(
        "SELECT p.paper_id, e.vector FROM papers p LEFT JOIN embeddings e ON e.text_sha256 = "
        "p.text_sha256 AND e.model_id = ? WHERE p.paper_id LIKE ? || '%' OR p.paper_id LIKE "
        "'sha256:' || ? || '%' LIMIT 2", [model_id, paper_id, paper_id]).fetchall()
    if not rows:
        raise WarehouseError(f"no paper {paper_id!r} in the warehouse")
    if len(rows) > 1:
        raise WarehouseError(f"{paper_id!r} names more than one paper: give more of its id")
    if rows[0][1] is None:
        raise WarehouseError(f"paper {rows[0][0]} has no vector yet: run `papersift index`")
    return list(rows[0][1])


def paper_fields(con: duckdb.DuckDBPyConnection, paper_ids: Sequence[str]
                 ) -> dict[str, dict[str, Any]]:
    """The wide fields of some papers (title, the file's id, text, a column per field of
    paper_summary, area, and a custom_NAME per user field)."""
    if not paper_ids:
        return {}
    has_areas = _count(con, "SELECT count(*) FROM topic_runs") > 0
    area = ("(SELECT area_id || ' ' || label FROM paper_areas pa WHERE pa.paper_id = "
            "s.paper_id)" if has_areas else "NULL")
    own = "".join(f", {column}" for column in summary_columns(con))
    cursor = con.execute(
        "SELECT s.paper_id, s.title, s.source_id, s.text, "
        + "".join(f"s.{spec.name}, " for spec in summary_fields())
        + f"{area} AS area{own} FROM paper_summary s WHERE s.paper_id IN "
        "(SELECT unnest(?))", [list(paper_ids)])
    columns = [d[0] for d in cursor.description or []]
    return {row[0]: dict(zip(columns, row, strict=True)) for row in cursor.fetchall()}


# --- snippets ------------------------------------------------------------------------

_WORD = re.compile(r"[A-Za-z0-9]+")
_STOP = frozenset((  # noqa: SIM905
    "a an and are as at be by for from in into is it of on or that the their "
    "this to with without we our via using between").split())


def query_terms(query: str) -> list[str]:
    """The query's words worth marking: lowercased, stop words out, 3+ characters."""
    return [w for w in (m.lower() for m in _WORD.findall(query)) if w not in _STOP and len(w) > 2]


def _stem(word: str) -> str:
    return word[:max(4, len(word) - 3)] if len(word) > 5 else word


def snippet(text: str, query: str, width: int = SNIPPET_CHARS, mark: tuple[str, str] = ("«", "»")
            ) -> str:
    """The ``width``-character window of ``text`` with the most query words, each marked."""
    flat = " ".join(text.split())
    stems = {_stem(term) for term in query_terms(query)}
    hits = [(m.start(), m.end()) for m in _WORD.finditer(flat)
            if stems and any(m.group().lower().startswith(s) for s in stems)]
    start = 0
    if hits:
        best = max(range(len(hits)), key=lambda i: sum(
            1 for s, _ in hits[i:] if s < hits[i][0] + width))
        start = max(0, min(hits[best][0] - 40, len(flat) - width))
        while start > 0 and flat[start - 1] != " ":
            start -= 1
    end = min(len(flat), start + width)
    pieces: list[str] = ["…" if start > 0 else ""]
    cursor = start
    for s, e in hits:
        if s < start or e > end:
            continue
        pieces += [flat[cursor:s], mark[0], flat[s:e], mark[1]]
        cursor = e
    pieces.append(flat[cursor:end] + ("…" if end < len(flat) else ""))
    return "".join(pieces)


# --- SQL for users -------------------------------------------------------------------


# What `papersift sql` runs on its connection before locking it (query.run_sql's prepare).
SqlPreparer = Callable[[duckdb.DuckDBPyConnection], None]
QueryEmbedding = Callable[[], tuple[Callable[[str], list[float]] | None, str | None]]


def macros_preparer(embedding: QueryEmbedding) -> SqlPreparer:
    """A prepare that gives the connection the search macros (prepare_sql); ``embedding()``
    is asked when the connection opens: ``embed(text)`` and its model id, or (None, None)."""
    def prepare(con: duckdb.DuckDBPyConnection) -> None:
        embed_query, model_id = embedding()
        prepare_sql(con, embed_query, model_id)
    return prepare


def prepare_sql(con: duckdb.DuckDBPyConnection,
                embed_query: Callable[[str], list[float]] | None, model_id: str | None) -> None:
    """Give a connection ``search_papers(q)`` and ``similar_papers(paper_id)`` table macros.

    ``embed_query`` becomes the SQL function ``embed(text)``; without it the macros rank
    by keywords only. Needs fts loadable (call before the connection is locked).
    """
    if fts_extension_dir() is None:
        return
    load_fts(con)
    if _count(con, "SELECT count(*) FROM duckdb_schemas() WHERE schema_name = "
              "'fts_main_papers'") == 0:
        return
    model = (model_id or "").replace("'", "''")
    if embed_query is not None:
        con.create_function("embed", embed_query, ["VARCHAR"],  # type: ignore[list-item]
                            f"FLOAT[{DIM}]", side_effects=False)  # type: ignore[arg-type]
        vector_rank = f"""
            SELECT paper_id, row_number() OVER (ORDER BY cosine DESC, paper_id) AS vec_rank FROM (
              SELECT p.paper_id, s.cosine FROM papers p JOIN (SELECT text_sha256,
              array_cosine_similarity(vector, embed(q)) AS cosine FROM embeddings
              WHERE model_id = '{model}') s ON s.text_sha256 = p.text_sha256)
            ORDER BY cosine DESC LIMIT {DEPTH}"""
    else:
        vector_rank = "SELECT NULL::VARCHAR AS paper_id, NULL::BIGINT AS vec_rank LIMIT 0"
    scored = ("SELECT paper_id, fts_main_papers.match_bm25(paper_id, q) AS bm25 FROM papers"
              if _count(con, "SELECT count(*) FROM duckdb_tables() WHERE schema_name = "
                        "'fts_main_papers' AND table_name = 'postings'") == 0
              else _BM25.replace("$query", "q"))  # an index built before the postings
    con.execute(f"""
        CREATE OR REPLACE TEMP MACRO search_papers(q) AS TABLE
        WITH kw AS (
            SELECT paper_id, row_number() OVER (ORDER BY bm25 DESC, paper_id) AS kw_rank
            FROM ({scored}) WHERE bm25 IS NOT NULL ORDER BY bm25 DESC LIMIT {DEPTH}),
        vec AS ({vector_rank})
        SELECT paper_id, coalesce(1.0 / ({RRF_K} + kw_rank), 0)
                         + coalesce(1.0 / ({RRF_K} + vec_rank), 0) AS score, kw_rank, vec_rank
        FROM kw FULL OUTER JOIN vec USING (paper_id) ORDER BY score DESC, paper_id""")
    con.execute(f"""
        CREATE OR REPLACE TEMP MACRO similar_papers(pid) AS TABLE
        SELECT p.paper_id, array_cosine_similarity(e.vector, t.vector) AS cosine
        FROM papers p JOIN embeddings e ON e.text_sha256 = p.text_sha256
        AND e.model_id = '{model}'
        JOIN (SELECT e2.vector FROM papers p2 JOIN embeddings e2 ON e2.text_sha256 =
              p2.text_sha256 AND e2.model_id = '{model}' WHERE p2.paper_id = pid) t ON TRUE
        WHERE p.paper_id <> pid ORDER BY cosine DESC, p.paper_id""")
