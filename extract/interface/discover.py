"""Find and see: embeddings, hybrid search, similar papers and the topic map (library facade).

Each function opens the warehouse, brings what it needs up to date (vectors of new
papers, the keyword index when the papers changed) and answers. Vectors are cached by
text hash and model id, so a second run embeds nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from papersift.extract.access.embedding import (
    MODEL_ID,
    Embedder,
    EmbeddingError,
    load_embedder,
    model_dir,
)
from papersift.warehouse import areas as area_store
from papersift.warehouse import paper_ids, reads
from papersift.warehouse import search as sql
from papersift.warehouse.db import WarehouseError
from papersift.warehouse.repository import Repository, open_repository

EMBED_CHUNK = 256  # papers embedded, then stored (and checkpointed), at a time
# The best hit's cosine below which a search has no good match. bench/search_threshold.py
# on the bundled corpus: the 52 hand queries' best cosines run 0.233-0.737, 17 of 18
# off-topic queries (cooking, sport, travel...) stay under 0.17 (one reaches 0.265);
# at 0.20 no hand query is called off-topic.
GOOD_MATCH_COSINE = 0.20
ProgressCallback = Callable[[int, int], None]


@dataclass
class IndexSummary:
    papers: int = 0
    embedded: int = 0
    cached: int = 0
    embed_seconds: float = 0.0
    keyword_index_built: bool = False
    topic_run: str | None = None
    areas: int | None = None
    scores: dict[int, float] = field(default_factory=dict)


def embed_new_papers(repo: Repository, embedder: Embedder,
                     progress: ProgressCallback | None = None) -> tuple[int, int, float]:
    """Embed the papers whose text has no vector of this model yet: (new, cached, seconds)."""
    missing = repo.run(sql.texts_without_vectors, embedder.model_id)
    total = repo.run(paper_ids.distinct_texts)
    started = time.perf_counter()
    for start in range(0, len(missing), EMBED_CHUNK):
        chunk = missing[start:start + EMBED_CHUNK]
        vectors = embedder.embed([text for _, text in chunk])
        repo.run(sql.store_vectors, embedder.model_id, [key for key, _ in chunk], vectors)
        if progress is not None:
            progress(start + len(chunk), len(missing))
    return len(missing), total - len(missing), time.perf_counter() - started


def build_areas(repo: Repository, model_id: str, *, k: int | None = None
                ) -> tuple[str, int, dict[int, float]]:
    """Cluster the papers' vectors into areas and store a topic run: (run id, areas, scores)."""
    import numpy as np

    from papersift.extract.domain import topics

    ids, vectors = repo.run(sql.paper_vectors, model_id)
    previous_run, previous = repo.run(area_store.latest_members)
    position = {paper_id: i for i, paper_id in enumerate(ids)}
    old_centroids = [vectors[[position[p] for p in members if p in position]].mean(axis=0)
                     for _, members in sorted(previous.items())
                     if any(p in position for p in members)]
    clustering = topics.cluster(vectors, k=k, previous=np.asarray(old_centroids, np.float32)
                                if old_centroids else None)
    groups = [{ids[i] for i in range(len(ids)) if clustering.labels[i] == a}
              for a in range(clustering.k)]
    documents = repo.run(area_store.area_documents, ids)
    terms = topics.ctfidf_terms([[documents[p] for p in sorted(g)] for g in groups])
    assigned = topics.carry_ids(previous, groups)
    coords = topics.pca_2d(vectors)
    similarity = (vectors * clustering.centroids[clustering.labels]).sum(axis=1)
    rows = [area_store.AreaRow(area_id, ", ".join(terms[a][:3]) or f"area {area_id}",
                               terms[a], len(groups[a]), carried, overlap)
            for a, (area_id, carried, overlap) in enumerate(assigned)]
    papers = [area_store.PaperArea(ids[i], assigned[int(clustering.labels[i])][0],
                                   float(similarity[i]), float(coords[i, 0]), float(coords[i, 1]))
              for i in range(len(ids))]
    run_id = repo.run(
        area_store.store_topic_run, model_id=model_id, chosen_by=clustering.chosen_by,
        scores=clustering.scores, previous_run=previous_run, areas=rows, papers=papers)
    return run_id, clustering.k, clustering.scores


def index_collection(db: str | Path, *, areas: bool = True, k: int | None = None,
                     remap: bool = False, progress: ProgressCallback | None = None,
                     embedder: Embedder | None = None) -> IndexSummary:
    """Vectors for new papers, the keyword index, and (when the papers changed, or
    ``remap`` or ``k`` is given) a new topic map."""
    repo = open_repository(db, create=False)  # a mistyped --db makes nothing
    try:
        embedder = embedder or load_embedder()
        summary = IndexSummary(papers=repo.run(reads.count_papers))
        summary.embedded, summary.cached, summary.embed_seconds = embed_new_papers(
            repo, embedder, progress)
        summary.keyword_index_built = repo.run(sql.ensure_keyword_index)
        if areas and summary.papers >= 3 and (
                remap or k is not None
                or repo.run(area_store.latest_run_papers) != summary.papers):
            summary.topic_run, summary.areas, summary.scores = build_areas(
                repo, embedder.model_id, k=k)
    finally:
        repo.close()
    return summary


def _hits(repo: Repository, ranked: list[tuple[Any, ...]], query: str
          ) -> list[sql.Hit]:
    fields = repo.run(sql.paper_fields, [row[0] for row in ranked])
    hits = []
    for paper_id, score, kw_rank, vec_rank, bm25, cosine in ranked:
        paper = fields.get(paper_id, {})
        hits.append(sql.Hit(paper_id, float(score), kw_rank, vec_rank, bm25, cosine,
                            sql.snippet(paper.get("text") or "", query), paper))
    return hits


def search(db: str | Path, query: str, *, mode: str = "hybrid",
           filters: sql.SearchFilters | None = None, limit: int = 10,
           embedder: Embedder | None = None) -> list[sql.Hit]:
    """Papers for a query: BM25 and vector cosine fused by reciprocal rank (or one alone)."""
    if not query.strip():
        raise WarehouseError("the search query is empty")
    repo = open_repository(db, create=False)
    try:
        if embedder is None and mode != "keyword":
            embedder = load_embedder()
        if embedder is not None:
            embed_new_papers(repo, embedder)
        repo.run(sql.ensure_keyword_index)
        vector = embedder.embed([query])[0].tolist() if embedder is not None else None
        ranked = repo.run(sql.rank, query, vector, embedder.model_id if embedder else None,
                          mode=mode, filters=filters, limit=limit)
        return _hits(repo, ranked, query)
    finally:
        repo.close()


def best_cosine(hits: list[sql.Hit]) -> float | None:
    """The highest cosine among the hits (None when none has one: keyword mode)."""
    scores = [hit.cosine for hit in hits if hit.cosine is not None]
    return max(scores) if scores else None


def no_good_match(hits: list[sql.Hit]) -> str | None:
    """Why these hits are no good match for their query, or None when they are one: no
    hit at all, or the closest paper's cosine under GOOD_MATCH_COSINE."""
    if not hits:
        return "no paper matches"
    best = best_cosine(hits)
    if best is not None and best < GOOD_MATCH_COSINE:
        return (f"no good match: the closest paper's cosine is {best:.2f}, under "
                f"{GOOD_MATCH_COSINE:.2f} (the line between on- and off-topic queries)")
    return None


def similar(db: str | Path, paper_id: str | None = None, *, text: str | None = None,
            filters: sql.SearchFilters | None = None, limit: int = 10,
            embedder: Embedder | None = None) -> tuple[dict[str, Any] | None, list[sql.Hit]]:
    """The papers nearest to one paper (or to a text): (that paper's fields, the hits)."""
    if paper_id is None and text is None:
        raise WarehouseError("give a PAPER_ID (or its prefix) or --text TEXT to find "
                             "papers like it")
    if paper_id is not None and text is not None:
        raise WarehouseError("give a PAPER_ID or --text, not both")
    repo = open_repository(db, create=False)
    try:
        embedder = embedder or load_embedder()
        embed_new_papers(repo, embedder)
        origin = None
        if paper_id is not None:
            vector = repo.run(sql.stored_vector, paper_id, embedder.model_id)
            exclude = repo.run(paper_ids.paper_id_from_prefix, paper_id)
            assert exclude is not None
            origin = repo.run(sql.paper_fields, [exclude]).get(exclude)
        else:
            assert text is not None
            vector = embedder.embed([text])[0].tolist()
            exclude = None
        near = repo.run(sql.neighbours, vector, embedder.model_id, exclude=exclude,
                              filters=filters, limit=limit)
        fields = repo.run(sql.paper_fields, [p for p, _ in near])
        hits = [sql.Hit(p, cosine, None, rank, None, cosine,
                        " ".join((fields.get(p, {}).get("text") or "").split())[:sql.SNIPPET_CHARS],
                        fields.get(p, {}))
                for rank, (p, cosine) in enumerate(near, start=1)]
        return origin, hits
    finally:
        repo.close()


def areas(db: str | Path) -> list[dict[str, Any]]:
    """The latest topic map's areas, largest first."""
    repo = open_repository(db, read_only=True)
    try:
        return repo.run(area_store.area_table)
    finally:
        repo.close()


def _query_embedding() -> tuple[Callable[[str], list[float]] | None, str | None]:
    """``embed(text)`` for SQL and its model id when the model is installed (loaded on
    its first call only), else (None, None)."""
    try:
        model_dir()
    except EmbeddingError:
        return None, None

    def embed_query(text: str) -> list[float]:
        return [float(v) for v in load_embedder().embed([text])[0]]

    return embed_query, MODEL_ID


def sql_preparer() -> sql.SqlPreparer:
    """What `papersift sql` runs on its connection before locking it: the search macros,
    with ``embed(text)`` when the model is installed."""
    return sql.macros_preparer(_query_embedding)
