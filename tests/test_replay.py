"""The bundled corpus through the real openai + instructor code, answered by REAL responses
recorded from the local llama.cpp server (model, server and date: see the recording's
`recorded_with`). A request the recording lacks fails the test loudly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from papersift.extract.access.recording import MissingRecordingError, Recording, ReplayTransport
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.prompts import load_prompt
from papersift.schemas import schema_version
from papersift.testing.corpus import recorded_endpoint
from papersift.warehouse.query import run_sql
from tests.conftest import CORPUS, CORPUS_RECORDING


@pytest.fixture(scope="module")
def recording() -> Recording:
    return Recording.load(CORPUS_RECORDING)


def test_recording_says_where_it_came_from(recording: Recording) -> None:
    meta = recording.meta
    assert "not hand-written" in meta["source"]
    assert meta["server"].startswith("llama-cpp-python")
    assert meta["endpoint"]["model"] == "qwen2.5-coder-1.5b"
    assert meta["recorded_at"].startswith("2026-")
    # The recording is only valid for the prompt and schema it was made with.
    assert meta["prompt_version"] == load_prompt().version
    assert meta["schema_version"] == schema_version()
    text = CORPUS_RECORDING.read_text(encoding="utf-8").lower()
    assert "authorization" not in text and "bearer" not in text


def test_corpus_replay_stores_every_paper_then_rerun_is_free(
    recording: Recording, tmp_path: Path
) -> None:
    db = tmp_path / "w.duckdb"
    replay = ReplayTransport(recording)
    settings = RunSettings(db=db, max_reasks=1)
    _, summary = run_inputs([str(CORPUS)], settings, transport=replay,
                            endpoint=recorded_endpoint(recording))
    assert replay.missing == [], "requests without a recording: re-record with `make record`"
    assert summary.n_abstracts == 63
    assert summary.n_extracted + summary.n_failed == 63
    assert summary.n_extracted >= 55
    assert replay.requests == summary.http_requests
    assert run_sql(db, "SELECT count(*) FROM papers").rows == [(63,)]
    assert run_sql(db, "SELECT count(*) FROM latest_extractions").rows == [(summary.n_extracted,)]
    failed = run_sql(db, "SELECT count(*) FROM failures WHERE run_id IS NOT NULL").rows
    assert failed == [(summary.n_failed,)]

    # Every stored offset points at the quoted words (exactly, or after normalisation).
    spans = run_sql(db, """
        SELECT p.text, t.evidence, t.char_start, t.char_end, t.alignment
        FROM tasks t JOIN papers p USING (paper_id) WHERE t.alignment = 'exact'
    """).rows
    assert spans
    for text, evidence, start, end, _ in spans:
        assert text[start:end] == evidence

    rerun = ReplayTransport(recording)
    _, second = run_inputs([str(CORPUS)], settings, transport=rerun,
                           endpoint=recorded_endpoint(recording))
    assert second.n_cached == summary.n_extracted
    if summary.n_failed == 0:
        assert rerun.requests == 0


def test_an_unrecorded_request_fails_loudly(recording: Recording) -> None:
    import httpx2

    replay = ReplayTransport(recording)
    request = httpx2.Request("POST", "http://127.0.0.1:1/v1/chat/completions",
                             content=json.dumps({"messages": [], "model": "x"}).encode())
    with pytest.raises(MissingRecordingError, match="make record"):
        replay.handle_request(request)


def test_recording_saves_each_exchange_without_headers_and_replays_it(tmp_path: Path) -> None:
    import httpx2

    from papersift.extract.access.recording import IncrementalRecording, RecordingTransport

    path = tmp_path / "rec.json"
    # Hand-written upstream (a MockTransport), only to exercise the recorder itself.
    upstream = httpx2.MockTransport(lambda request: httpx2.Response(200, json={"ok": 1}))
    recorder = RecordingTransport(upstream, IncrementalRecording(path, {"source": "test"}))
    request = httpx2.Request("POST", "http://127.0.0.1:9/v1/chat/completions",
                             headers={"Authorization": "Bearer sk-secret"},
                             content=json.dumps({"model": "m", "messages": []}).encode())
    assert recorder.handle_request(request).json() == {"ok": 1}
    saved = Recording.load(path)  # written after the exchange, not at the end
    assert len(saved.interactions) == 1
    assert "sk-secret" not in path.read_text(encoding="utf-8")
    assert ReplayTransport(saved).handle_request(request).json() == {"ok": 1}
