"""The sharded path (extract.distributed) stores the same rows as the single-process Runner.

Both paths run the real openai + instructor code on abstracts of the bundled corpus,
answered by the REAL recorded responses of the local model; the Ray test runs a local Ray
instance (2 CPUs, no dashboard). Without the [ray] extra it is skipped, unless
PAPERSIFT_REQUIRE_RAY is set, as .ci/run does: there a missing ray fails. Run ids and
timestamps differ between the two runs by design and are left out of the comparison;
everything else must match row for row.
"""

from __future__ import annotations

import os
import pickle
import shutil
import tempfile
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import duckdb
import pytest

from papersift.extract.access.endpoints import EndpointError, EndpointOptions
from papersift.extract.access.recording import Recording, ReplayTransport
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.extract.runs.distributed import (
    DistributedError,
    MergeError,
    ShardExtractor,
    ShardSettings,
    export_cache_snapshot,
    merge_into,
    missing_shards,
    parquet_views,
    read_shard,
    replaying,
    run_on_ray,
    shard_corpus,
    worker_endpoint,
)
from papersift.testing.corpus import recorded_endpoint
from papersift.testing.killing import KillOnce
from tests.conftest import CORPUS, CORPUS_RECORDING, stored_rows

# Columns that differ between two runs of the same answers (when and under which run id).
VOLATILE = {
    "papers": ("first_seen",),
    "sources": ("first_seen",),
    "llm_cache": ("created",),
    "extractions": ("run_id", "created"),
    "run_papers": ("run_id", "recorded"),
    "calls": ("run_id", "started", "latency_ms"),
    "failures": ("run_id", "created"),
}
COMPARED = (
    "papers", "sources", "llm_cache", "extractions", "extraction_contribution_types",
    "extraction_tasks", "extraction_methods", "extraction_benchmarks", "extraction_gains",
    "run_papers", "calls", "failures",
)


def small_corpus(directory: Path) -> Path:
    """A folder: ten recorded abstracts from two files of the bundled corpus, one paragraph
    too short to send and an empty file (so skips and input failures are compared too)."""
    paragraphs = []
    for name in ("000_1aa1e087e7a844d9.txt", "002_fb6275e89cca5018.txt"):
        text = (CORPUS / name).read_text(encoding="utf-8")
        paragraphs += [p for p in text.split("\n\n")[1:] if p.strip()][:5]
    folder = directory / "corpus"
    folder.mkdir()
    body = "\n\n".join([*paragraphs[:4], "Too short to send.", *paragraphs[4:]])
    (folder / "small.txt").write_text("NeurIPS 2026 Papers\n\n" + body + "\n", encoding="utf-8")
    (folder / "empty.txt").write_text("", encoding="utf-8")
    return folder


def table_rows(db: Path, table: str) -> list[tuple[Any, ...]]:
    volatile = VOLATILE.get(table)
    columns = f"* EXCLUDE ({', '.join(volatile)})" if volatile else "*"
    return stored_rows(db, f"SELECT {columns} FROM {table} ORDER BY ALL")


def single_process(corpus: Path, db: Path) -> None:
    recording = Recording.load(CORPUS_RECORDING)
    replay = ReplayTransport(recording)
    _, summary = run_inputs([str(corpus)], RunSettings(db=db, max_reasks=1),
                            transport=replay, endpoint=recorded_endpoint(recording))
    assert replay.missing == []
    assert (summary.n_extracted, summary.n_failed) == (10, 1)


def shard_settings(out: Path, run_id: str, snapshot: Path | None = None) -> ShardSettings:
    return ShardSettings(out=out, run_id=run_id,
                         endpoint=recorded_endpoint(Recording.load(CORPUS_RECORDING)),
                         max_reasks=1, concurrency=2, cache_snapshot=snapshot,
                         transport=replaying(CORPUS_RECORDING))


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    try:
        import ray
    except ImportError:
        if os.environ.get("PAPERSIFT_REQUIRE_RAY"):
            pytest.fail("PAPERSIFT_REQUIRE_RAY is set but ray is not installed")
        pytest.skip("the [ray] extra is not installed (make install installs it)")
    saved = os.environ.get("RAY_AUTH_MODE")
    # A throwaway single-machine cluster: no token file written to the home directory.
    os.environ["RAY_AUTH_MODE"] = "disabled"
    # A short path of its own: Ray's socket paths must stay under the Unix limit.
    scratch = tempfile.mkdtemp(prefix="papersift-ray-")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, _temp_dir=scratch)
    try:
        yield
    finally:
        ray.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)
        if saved is None:
            os.environ.pop("RAY_AUTH_MODE", None)
        else:
            os.environ["RAY_AUTH_MODE"] = saved


# Ray Data's own DataContext() sets deprecated fields of itself on construction and warns
# about them (ray.data.context, Ray 2.60); nothing of ours sets them.
@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_ray_shards_store_the_same_rows_as_one_process(local_ray: None, tmp_path: Path) -> None:
    corpus = small_corpus(tmp_path)
    single = tmp_path / "single.duckdb"
    single_process(corpus, single)

    out = tmp_path / "out"
    shards = shard_corpus([corpus], out, papers_per_shard=3, run_id="run_sharded_1")
    assert len(shards) == 4
    summary = run_on_ray(shards, shard_settings(out, "run_sharded_1"), workers=2)
    assert [r.shard for r in summary.shards] == [0, 1, 2, 3]
    assert (summary.total("n_extracted"), summary.total("n_failed")) == (10, 1)

    # DuckDB reads the partitions in place, with the shard from the directory name.
    import duckdb

    con = duckdb.connect()
    assert "extractions" in parquet_views(con, out)
    per_shard = con.execute("SELECT shard, count(*) FROM run_papers GROUP BY 1 ORDER BY 1")
    assert per_shard.fetchall() == [(0, 3), (1, 3), (2, 3), (3, 2)]
    con.close()

    sharded = tmp_path / "sharded.duckdb"
    counts = merge_into(sharded, out, "run_sharded_1", inputs=[str(corpus)])
    assert (counts.n_abstracts, counts.n_extracted, counts.n_failed) == (11, 10, 1)
    for table in COMPARED:
        expected = table_rows(single, table)
        assert expected or table == "llm_cache" or table.startswith("extraction_"), table
        assert table_rows(sharded, table) == expected, table
    assert table_rows(single, "extraction_tasks"), "the comparison must cover item rows"
    stages = stored_rows(sharded, "SELECT stage, reason FROM failures ORDER BY ALL")
    assert stages == [("ingest", "empty"), ("ingest", "too_short")]
    run = stored_rows(sharded, "SELECT status, model, n_extracted FROM runs")
    assert run == [("finished", "qwen2.5-coder-1.5b", 10)]


def test_a_retried_shard_replaces_its_files_and_a_run_merges_once(tmp_path: Path) -> None:
    """No Ray needed: one worker object, the same shard twice (as Ray does on a retry)."""
    corpus = small_corpus(tmp_path)
    out = tmp_path / "out"
    shards = shard_corpus([corpus], out, papers_per_shard=6)
    assert [len(read_shard(path)) for path in shards] == [6, 5]
    assert shard_corpus([corpus], out, papers_per_shard=6) == shards  # same inputs: same files
    with pytest.raises(DistributedError, match=r"shard-00001\.parquet"):
        shard_corpus([corpus], out, papers_per_shard=20)  # would leave shard 1 behind
    with pytest.raises(DistributedError, match=r"no abstracts to shard .*empty\.txt: empty file"):
        shard_corpus([corpus / "empty.txt"], tmp_path / "none", papers_per_shard=6)
    worker = ShardExtractor(shard_settings(out, "run_retry"))
    assert missing_shards(shards, out) == shards
    try:
        first = worker.extract_shard(1, shards[1])
        files = sorted(p.relative_to(out) for p in out.rglob("*.parquet"))
        second = worker.extract_shard(1, shards[1])
    finally:
        worker.extractor.close()
    assert (first.summary.n_extracted, second.summary.n_extracted) == (5, 5)
    assert missing_shards(shards, out) == [shards[0]]
    assert sorted(p.relative_to(out) for p in out.rglob("*.parquet")) == files
    assert not list(out.rglob("*.partial"))
    assert Path("extractions/shard=1/extract.parquet") in files

    db = tmp_path / "w.duckdb"
    merge_into(db, out, "run_retry")
    assert stored_rows(db, "SELECT count(*) FROM run_papers") == [(5,)]
    assert stored_rows(db, "SELECT count(*) FROM papers") == [(11,)]
    with pytest.raises(MergeError, match="already in the warehouse"):
        merge_into(db, out, "run_retry")
    assert stored_rows(db, "SELECT count(*) FROM calls") == [(5,)]


def test_workers_reuse_the_warehouse_cache_through_a_snapshot(tmp_path: Path) -> None:
    corpus = small_corpus(tmp_path)
    db = tmp_path / "w.duckdb"
    single_process(corpus, db)
    snapshot = tmp_path / "cache.parquet"
    assert export_cache_snapshot(db, snapshot) == 10

    out = tmp_path / "out"
    (shard,) = shard_corpus([corpus], out, papers_per_shard=20)
    # A replay that fails every request: a cached paper must not ask anything.
    worker = ShardExtractor(replace(shard_settings(out, "run_cached", snapshot),
                                    transport=refusing_transport))
    try:
        report = worker.extract_shard(0, shard).summary
    finally:
        worker.extractor.close()
    assert (report.n_cached, report.n_extracted, report.n_failed, report.prompt_tokens) == \
        (10, 0, 1, 0)
    merge_into(db, out, "run_cached")
    assert stored_rows(db, "SELECT count(*) FROM calls WHERE run_id = 'run_cached'") == [(0,)]
    assert stored_rows(db, "SELECT count(*) FROM extractions") == [(10,)]
    outcomes = stored_rows(db, "SELECT outcome, count(*) FROM run_papers "
                               "WHERE run_id = 'run_cached' GROUP BY 1 ORDER BY 1")
    assert outcomes == [("cached", 10), ("failed", 1)]


def refusing_transport() -> ReplayTransport:
    """A replay of an empty recording: any request fails loudly."""
    return ReplayTransport(Recording(meta={}, interactions=[]))


def test_each_worker_reads_its_own_key_and_a_local_model_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = ShardSettings(out=tmp_path, run_id="r",
                             endpoint=EndpointOptions(provider="openai", model="gpt-4o-mini"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-only-on-the-worker")
    assert b"sk-only-on-the-worker" not in pickle.dumps(settings)
    endpoint = worker_endpoint(settings)  # what each worker does where it runs
    assert (endpoint.kind, endpoint.api_key) == ("openai", "sk-only-on-the-worker")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(EndpointError, match="remote endpoint"):
        worker_endpoint(ShardSettings(out=tmp_path, run_id="r"))


def test_an_endpoint_carrying_a_key_is_not_shipped_to_workers(tmp_path: Path) -> None:
    endpoint = replace(recorded_endpoint(Recording.load(CORPUS_RECORDING)), api_key="sk-x")
    with pytest.raises(DistributedError, match="EndpointOptions"):
        ShardSettings(out=tmp_path, run_id="r", endpoint=endpoint)


def test_a_worker_paces_at_its_share_of_the_rate_limit(tmp_path: Path) -> None:
    """No Ray needed: one worker object against the simulator, given RPM / workers."""
    from papersift.testing.sim import SimConfig, SimEndpoint

    out = tmp_path / "out"
    (shard,) = shard_corpus([CORPUS], out, papers_per_shard=100)
    # The account allows 1,200 requests a minute (20/s, 20 at once); this worker's share
    # is 600. Paced at 95% of its share from the first request, it can never be refused.
    with SimEndpoint(SimConfig(latency="fixed:0", rpm=1200, burst_s=1.0)) as sim:
        endpoint = EndpointOptions(provider="compatible", base_url=sim.base_url,
                                   model="gpt-4o-mini")
        worker = ShardExtractor(ShardSettings(out=out, run_id="run_paced", endpoint=endpoint,
                                              concurrency=16, rpm=600))
        try:
            report = worker.extract_shard(0, shard).summary
        finally:
            worker.extractor.close()
        stats = sim.stats()
    assert (report.n_abstracts, report.n_extracted, report.n_failed) == (63, 63, 0)
    assert stats["by_status"] == {"200": 63}
    assert stats["rate_limited"] == {"requests": 0, "tokens": 0}
    # 63 requests at 9.5 a second after a first burst of 9: about 5.7 s; unpaced they
    # would arrive within a fraction of a second. Two requests of slack for the first
    # connections' set-up and the server's clock (CI measured 5.564 s against 5.579).
    assert stats["last_request_at"] - stats["first_request_at"] >= (63 - 11) / 9.5


def test_a_worker_replaces_a_cached_answer_that_no_longer_validates(tmp_path: Path) -> None:
    """No Ray needed: the snapshot holds damaged answers; the worker asks again, and the
    merge replaces the stored rows, so the next run finds valid answers."""
    corpus = small_corpus(tmp_path)
    db = tmp_path / "w.duckdb"
    single_process(corpus, db)
    con = duckdb.connect(str(db))  # what an older papersift could have stored
    con.execute("UPDATE llm_cache SET response_json = '{\"types\": [\"nonsense\"]}'")
    con.close()
    snapshot = tmp_path / "cache.parquet"
    export_cache_snapshot(db, snapshot)
    out = tmp_path / "out"
    (shard,) = shard_corpus([corpus], out, papers_per_shard=20)
    worker = ShardExtractor(shard_settings(out, "run_again", snapshot))
    try:
        report = worker.extract_shard(0, shard).summary
    finally:
        worker.extractor.close()
    assert (report.n_cache_invalid, report.n_extracted) == (10, 10)
    merge_into(db, out, "run_again")
    assert stored_rows(db, "SELECT count(*), count(DISTINCT cache_key) FROM llm_cache "
                           "WHERE response_json::VARCHAR NOT LIKE '%nonsense%'") == [(10, 10)]


@pytest.mark.filterwarnings("ignore::DeprecationWarning:ray.data.context")
def test_a_killed_ray_worker_loses_no_paper(local_ray: None, tmp_path: Path) -> None:
    """A worker SIGKILLed in the middle of a shard (its requests in flight, nothing
    written): Ray runs the shard again elsewhere, and every paper ends stored once, as a
    row or a failure with its reason."""
    corpus = small_corpus(tmp_path)
    out = tmp_path / "out"
    shards = shard_corpus([corpus], out, papers_per_shard=3, run_id="run_killed")
    marker = tmp_path / "killed"
    settings = replace(shard_settings(out, "run_killed"),
                       transport=KillOnce(replaying(CORPUS_RECORDING), marker, at_request=2))
    summary = run_on_ray(shards, settings, workers=2)
    assert marker.exists(), "a worker was killed"
    assert [r.shard for r in summary.shards] == [0, 1, 2, 3]
    assert missing_shards(shards, out) == []
    db = tmp_path / "w.duckdb"
    counts = merge_into(db, out, "run_killed", inputs=[str(corpus)])
    assert (counts.n_abstracts, counts.n_extracted, counts.n_failed) == (11, 10, 1)
    assert stored_rows(db, "SELECT count(*), count(DISTINCT paper_id) FROM run_papers") == [
        (11, 11)]
    assert stored_rows(db, "SELECT count(*) FROM failures WHERE reason IS NULL") == [(0,)]
