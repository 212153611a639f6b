"""`papersift serve` under concurrent reviewing (issue 28): reviewers who each read a
paper and correct it at the same moment must all be answered, and every correction
answered 201 must be in the warehouse after a kill -9. Before the fix a correction's
CHECKPOINT waited for a scan that an earlier request's cursor kept open (a half-read
fetchone result), and that cursor was to be closed by a dependency's teardown queued for
the thread pool (40 threads), all of them waiting for the write lock the CHECKPOINT held:
more reviewers than threads hung the server for good (bench/serve_review_load.py runs
60; 30 did not hang, 45 did)."""

from __future__ import annotations

from pathlib import Path

from bench.serve_review_load import measure
from papersift.testing.serving import copy_db


def test_more_reviewers_than_server_threads_never_hang_and_lose_nothing(corpus_db: Path,
                                                                 tmp_path: Path) -> None:
    db = copy_db(corpus_db, tmp_path)
    got = measure(db, clients=45, rounds=2, timeout=120.0)
    assert got["hangs"] == 0, got
    assert got["health_after"] == 200, got
    assert got["refused"] == 0, got
    assert got["created"] == 90 and got["lost"] == 0, got
