"""The vector ranking's SQL alone, before and after scoring ahead of the join, on N random
unit vectors (no papers' texts, no fts), with DuckDB on one thread.

    python -m bench.vector_scan [--papers 100000] [--repeat 5]

Vectors are synthetic (random normal, normalised): only the scan's cost is measured.
"""

from __future__ import annotations

import argparse
import statistics
import time

import duckdb
import numpy as np
import pyarrow as pa

DIM = 384
BEFORE = """SELECT a.paper_id, array_cosine_similarity(e.vector, $v::FLOAT[384]) AS cosine
  FROM papers a JOIN embeddings e ON e.text_sha256 = a.text_sha256 AND e.model_id = $m
  ORDER BY cosine DESC LIMIT 100"""
AFTER = """SELECT a.paper_id, s.cosine FROM papers a JOIN (SELECT text_sha256,
  array_cosine_similarity(vector, $v::FLOAT[384]) AS cosine FROM embeddings
  WHERE model_id = $m) s ON s.text_sha256 = a.text_sha256 ORDER BY cosine DESC LIMIT 100"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--papers", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(args.papers, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    keys = [f"sha256:{i:064x}" for i in range(args.papers)]
    con = duckdb.connect()
    con.execute("SET threads = 1")
    con.register("_papers", pa.table({"paper_id": keys, "text_sha256": keys}))
    con.execute("CREATE TABLE papers AS SELECT * FROM _papers")
    flat = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), DIM)
    con.register("_vectors", pa.table({"text_sha256": keys, "vector": flat}))
    con.execute(f"CREATE TABLE embeddings AS SELECT text_sha256, 'm' AS model_id, "
                f"vector::FLOAT[{DIM}] AS vector FROM _vectors")
    query = vectors[5] + 0.1
    query /= np.linalg.norm(query)
    params = {"v": "[" + ",".join(f"{x:.8g}" for x in query) + "]", "m": "m"}
    for name, sql in (("before", BEFORE), ("after", AFTER)):
        walls, cpus = [], []
        for _ in range(args.repeat):
            wall, cpu = time.perf_counter(), time.process_time()
            top = con.execute(sql, params).fetchall()
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
        assert top[0][0] == keys[5]
        print(f"{args.papers:,} vectors, {name}: median {statistics.median(walls) * 1000:.0f} "
              f"ms wall, {statistics.median(cpus) * 1000:.0f} ms CPU")


if __name__ == "__main__":
    main()
