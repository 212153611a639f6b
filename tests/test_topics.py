"""The topic map: clustering with the number of areas from the data, labels, stable ids."""

from __future__ import annotations

from pathlib import Path

import pytest

np = pytest.importorskip("numpy")

from papersift.extract.access.embedding import MODEL_ID  # noqa: E402
from papersift.extract.domain import topics  # noqa: E402
from papersift.extract.interface import discover  # noqa: E402
from papersift.warehouse.db import connect  # noqa: E402
from papersift.warehouse.query import run_sql, saved_queries  # noqa: E402
from papersift.warehouse.repository import Repository  # noqa: E402
from tests.searchtools import copy_db, recorded_vectors, store_recorded  # noqa: E402


def _blobs(centres: int, per: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    middles = rng.normal(size=(centres, 32))
    points = np.vstack([m + 0.15 * rng.normal(size=(per, 32)) for m in middles])
    return points.astype(np.float32), np.repeat(np.arange(centres), per)


@pytest.mark.parametrize("centres", [3, 5])
def test_the_number_of_areas_comes_from_the_data(centres: int) -> None:
    points, truth = _blobs(centres, 20)
    clustering = topics.cluster(points)
    assert clustering.k == centres and clustering.chosen_by == "silhouette"
    assert set(clustering.scores) == set(topics.candidate_ks(len(points)))
    # each found area is one true blob
    for area in range(clustering.k):
        assert len(set(truth[clustering.labels == area].tolist())) == 1
    again = topics.cluster(points)
    assert np.array_equal(again.labels, clustering.labels)  # seeded: same input, same areas


def test_a_fixed_number_of_areas_is_recorded_as_fixed() -> None:
    points, _ = _blobs(3, 10)
    clustering = topics.cluster(points, k=4)
    assert (clustering.k, clustering.chosen_by, clustering.scores) == (4, "fixed", {})


def test_ctfidf_prefers_words_particular_to_an_area() -> None:
    terms = topics.ctfidf_terms([
        ["graph neural networks for molecules", "graph neural networks on molecules data"],
        ["bandit regret bounds for bandit problems", "contextual bandit regret"],
    ])
    assert terms[0][0] in {"graph", "graph neural", "molecules", "neural networks",
                           "graph neural networks", "neural"}
    assert "bandit" in terms[1][0]
    assert not set(terms[0]) & set(terms[1])


def test_ids_carry_over_one_to_one_by_overlap() -> None:
    previous = {1: {"a", "b", "c", "d"}, 2: {"e", "f", "g"}, 3: {"h", "i"}}
    new = [{"e", "f", "g", "x"}, {"a", "b", "c"}, {"h", "y", "z"}, {"i", "d"}]
    assigned = topics.carry_ids(previous, new)
    assert assigned[0] == (2, True, 1.0)
    assert assigned[1] == (1, True, 0.75)
    assert assigned[2] == (3, True, 0.5)
    assert assigned[3] == (4, False, None)  # a new id, never a reused one


def test_area_ids_stay_on_a_grown_collection(corpus_db: Path, tmp_path: Path) -> None:
    db = copy_db(corpus_db, tmp_path)
    con = connect(db, read_only=True)
    ids = [row[0] for row in con.execute("SELECT paper_id FROM papers ORDER BY 1").fetchall()]
    con.close()
    first_half = ids[::2] + ids[1::4]  # 48 of the 63 papers
    store_recorded(db, keep=first_half)
    con = connect(db)
    try:
        first_run, k1, _ = discover.build_areas(Repository(con), MODEL_ID)
        before = dict(con.execute("SELECT paper_id, area_id FROM paper_areas").fetchall())
    finally:
        con.close()
    store_recorded(db)  # the collection grows to 63 papers
    con = connect(db)
    try:
        _, k2, _ = discover.build_areas(Repository(con), MODEL_ID)
        after = dict(con.execute("SELECT paper_id, area_id FROM paper_areas").fetchall())
        carried = con.execute("SELECT count(*) FILTER (WHERE carried_over), count(*) FROM "
                              "areas").fetchone()
        previous = con.execute("SELECT previous_run FROM latest_topic_run").fetchone()
    finally:
        con.close()
    assert len(before) == 48 and len(after) == 63 and previous == (first_run,)
    assert carried is not None and carried[0] >= min(k1, k2) - 1
    kept = sum(after[p] == area for p, area in before.items())
    assert k1 == k2  # still within the silhouette tolerance: the number of areas is kept
    assert kept / len(before) >= 0.9, (kept, k1, k2)


def test_areas_tables_and_saved_queries(corpus_db: Path, tmp_path: Path) -> None:
    db = copy_db(corpus_db, tmp_path)
    store_recorded(db)
    con = connect(db)
    try:
        _, k, scores = discover.build_areas(Repository(con), MODEL_ID)
    finally:
        con.close()
    keys, _ = recorded_vectors()
    assert 2 <= k <= len(keys) // 3 and scores
    areas = run_sql(db, "SELECT area_id, label, size FROM areas").rows
    assert len(areas) == k and sum(size for _, _, size in areas) == 63
    assert all(label for _, label, _ in areas)
    mapped = run_sql(db, "SELECT count(*), count(DISTINCT area_id), min(x), max(x) FROM "
                     "paper_areas").rows[0]
    assert mapped[:2] == (63, k) and -1.0 <= mapped[2] < mapped[3] <= 1.0
    saved = saved_queries()
    for name in ("areas_by_size", "area_top_tasks", "area_new_benchmarks"):
        result = run_sql(db, saved[name].sql)
        assert result.columns and (result.rows or name == "area_new_benchmarks")
    by_size = run_sql(db, saved["areas_by_size"].sql).rows
    assert [row[2] for row in by_size] == sorted((row[2] for row in by_size), reverse=True)


def test_labels_of_two_areas_do_not_share_their_first_terms() -> None:
    terms = topics.ctfidf_terms([
        ["causal discovery of graphs", "causal graphs and discovery", "causal structure graphs"],
        ["causal attention in transformers", "causal attention heads of transformers"],
    ])
    assert not set(terms[0][:3]) & set(terms[1][:3])
    assert "attention" in " ".join(terms[1][:3]) and "graphs" in " ".join(terms[0][:3])
