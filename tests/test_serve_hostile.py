"""`papersift serve` against hostile requests (issue 28): DNS rebinding (a foreign Host
and Origin), run inputs outside the configured folders, bodies that broke the server
(a lone surrogate, an offset past 64 bits), and what the server leaves on disk."""

from __future__ import annotations

import json
import os
import signal
import stat
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from papersift.extract.interface.serve import create_app, main
from papersift.testing.serving import (
    LOCAL_URL,
    local_client,
    replay_config,
    server_process,
)
from papersift.warehouse.db import server_file
from tests.conftest import CORPUS

TOKEN = "a-long-enough-test-token"




def _accept_body(client: TestClient) -> dict[str, object]:
    item = client.get("/api/items", params={"item_type": "method", "limit": 1}).json()
    first = item["items"][0]
    return {"paper_id": first["paper_id"], "item_type": "method",
            "item_key": first["item_key"], "action": "accept"}


def test_a_rebinding_page_is_refused_by_its_host_and_origin(client: TestClient) -> None:
    attacker = {"Host": "attacker.example:8765", "Origin": "http://attacker.example:8765"}
    refused = client.get("/api/papers", headers={"Host": attacker["Host"]})
    assert refused.status_code == 421 and "--token" in refused.json()["error"]
    assert client.get("/", headers={"Host": attacker["Host"]}).status_code == 421
    body = _accept_body(client)
    assert client.post("/api/corrections", json=body, headers=attacker).status_code == 421
    started = client.post("/api/runs", json={"inputs": ["/"]}, headers=attacker)
    assert started.status_code == 421
    for name in ("localhost:8765", "127.0.0.1:8765", "[::1]:8765", "LOCALHOST:8765"):
        assert client.get("/api/health", headers={"Host": name}).status_code == 200, name
    for name in ("127.0.0.1:9999", "localhost", "localhost.attacker.example:8765", ""):
        assert client.get("/api/health", headers={"Host": name}).status_code == 421, name
    # a loopback Host does not make a foreign Origin acceptable
    foreign_origin = client.post("/api/corrections", json=body,
                                 headers={"Origin": "http://attacker.example:8765"})
    assert foreign_origin.status_code == 403
    assert client.get("/api/corrections").json()["corrections"] == []
    same = client.post("/api/corrections", json=body, headers={"Origin": LOCAL_URL})
    assert same.status_code == 201


def test_with_a_token_any_host_name_may_be_used(db: Path) -> None:
    app = create_app(replay_config(db, host="0.0.0.0", token=TOKEN))
    with TestClient(app, base_url="http://review.lab.example:8765") as client:
        assert client.get("/api/health").status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get("/api/health", headers=bearer).status_code == 200


def test_run_inputs_only_below_the_configured_roots(db: Path, tmp_path: Path) -> None:
    root = tmp_path / "allowed"
    root.mkdir()
    inside = root / "one.txt"
    inside.write_text(next(CORPUS.glob("*.txt")).read_text(encoding="utf-8"),
                      encoding="utf-8")
    (root / "escape").symlink_to(CORPUS)
    config = replay_config(db, inputs_roots=(root,))
    with local_client(create_app(config)) as client:
        for outside in ("/etc", str(CORPUS), str(root / "escape"), str(root / ".." / "x"),
                        "bad\x00path"):
            refused = client.post("/api/runs", json={"inputs": [outside]})
            assert refused.status_code == 403, outside
            assert "--inputs-root" in refused.json()["error"]
        assert client.get("/api/jobs").json()["jobs"] == []
        assert client.post("/api/runs", json={"inputs": [str(inside)]}).status_code == 202


def test_the_default_root_is_the_current_folder(db: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with local_client(create_app(replay_config(db))) as client:
        refused = client.post("/api/runs", json={"inputs": [str(CORPUS)]})
        assert refused.status_code == 403 and str(tmp_path) in refused.json()["error"]


def test_bodies_that_are_not_text_and_huge_offsets_are_4xx(client: TestClient) -> None:
    body = _accept_body(client)
    raw = json.dumps({**body, "action": "reject", "note": "x"}).replace('"x"', '"\\ud800 x"')
    lone = client.post("/api/corrections", content=raw.encode(),
                       headers={"content-type": "application/json"})
    assert lone.status_code == 400 and "surrogate" in lone.json()["error"]
    bad_utf8 = client.post("/api/extract", content=b'{"abstract": "\xed\xa0\x80"}',
                           headers={"content-type": "application/json"})
    assert bad_utf8.status_code == 400
    for path in ("/api/papers", "/api/items", "/api/corrections"):
        assert client.get(path, params={"offset": 2**63}).status_code == 422, path
    assert client.get("/", params={"offset": 2**63}).status_code == 200
    assert client.get("/api/corrections").json()["corrections"] == []


def test_the_server_file_holds_no_token_and_only_its_owner_reads_it(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", ["papersift", "serve", "--token", TOKEN])
    config = replay_config(db, host="0.0.0.0", token=TOKEN).checked()
    marker = server_file(db)
    marker.write_text("stale", encoding="utf-8")
    marker.chmod(0o644)
    assert main._announce(marker, config)
    assert TOKEN not in marker.read_text(encoding="utf-8")
    assert json.loads(marker.read_text(encoding="utf-8"))["argv"] == "papersift serve ..."
    assert stat.S_IMODE(marker.stat().st_mode) == 0o600


def _stopped(pid: int, seconds: float = 60.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not Path(f"/proc/{pid}").exists() or \
                "Z" in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]:
            return True
        time.sleep(0.1)
    return False


def test_a_sigtermed_server_removes_its_server_file(db: Path) -> None:
    with server_process(db):
        marker = server_file(db)
        pid = json.loads(marker.read_text(encoding="utf-8"))["pid"]
        os.kill(pid, signal.SIGTERM)
        assert _stopped(pid)
        assert not marker.exists()


def test_read_only_serves_where_its_server_file_cannot_be_written(db: Path) -> None:
    server_file(db).mkdir()  # as on a read-only disk: the file cannot be created
    with server_process(db, "--read-only") as url:
        assert httpx.get(f"{url}/api/papers", timeout=30).json()["total"] == 63


def test_sql_and_saved_queries_read_a_served_warehouse_through_its_snapshot(
        db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from papersift.extract.interface.cli import cli

    monkeypatch.setenv("PAPERSIFT_LOCK_WAIT", "0.5")
    with server_process(db) as url:
        item = httpx.get(f"{url}/api/items", params={"item_type": "method", "limit": 1},
                         timeout=60).json()["items"][0]
        posted = httpx.post(f"{url}/api/corrections", timeout=60, json={
            "paper_id": item["paper_id"], "item_type": "method", "item_key": item["item_key"],
            "action": "accept"})
        assert posted.status_code == 201
        counted = CliRunner().invoke(cli, ["sql", "SELECT count(*) AS n FROM corrections",
                                           "--db", str(db), "--format", "csv"])
        assert counted.exit_code == 0, counted.output
        assert counted.output.split() == ["n", "1"]
        saved = CliRunner().invoke(cli, ["query", "ungrounded_items", "--db", str(db)])
        assert saved.exit_code == 0, saved.output
        again = CliRunner().invoke(cli, ["sql", "SELECT count(*) FROM papers", "--db",
                                         str(db), "--format", "csv"])
        assert again.exit_code == 0 and again.output.split()[-1] == "63"
    assert not Path(f"{db}.snapshot").exists()  # the server removes what it published
