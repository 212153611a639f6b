"""`papersift serve`: every API route and page, the token off loopback, CSRF, read-only,
version conflicts, bad requests (4xx, nothing written), extraction through the API
against the recording and the hand-written fault server, background runs with progress
and cancel, and a `papersift run` told which server holds its warehouse."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.serve import ServeConfig, ServeError, create_app
from papersift.report.render import ASSETS
from papersift.testing.serving import (
    LOCAL_URL,
    local_client,
    replay_config,
    server_process,
)
from papersift.testing.sim import SimEndpoint, fault_profile
from papersift.warehouse.db import connect
from tests.conftest import CORPUS

TOKEN = "a-long-enough-test-token"




def _csrf(client: TestClient) -> str:
    found = re.search(r'name="csrf-token" content="([^"]+)"', client.get("/").text)
    assert found is not None
    return found.group(1)


def _paper_with(client: TestClient, item_type: str) -> tuple[str, dict[str, Any]]:
    """The first paper with an item of this type, and that item (version 0: unreviewed)."""
    found = client.get("/api/items", params={"item_type": item_type, "limit": 1}).json()
    item = found["items"][0]
    return item["paper_id"], {**item, "version": 0}


def test_pages_render_with_vendored_assets_only(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200 and page.text.count('<article class="card review"') == 20
    # nothing is fetched from another host: every script and style is served here
    assert re.findall(r'(?:src|href)="(https?:)?//', page.text) == []
    htmx = client.get("/assets/htmx.min.js")
    readme = (ASSETS / "vendor" / "README.md").read_text(encoding="utf-8")
    assert htmx.status_code == 200 and "htmx.min.js` is htmx **2.0.11**" in readme
    assert hashlib.sha256(htmx.content).hexdigest() in readme
    assert client.get("/assets/missing.js").status_code == 404
    assert client.get("/", params={"q": "PreDiff"}).text.count("<article") == 1
    flagged_papers = {item["paper_id"] for kind in ("task", "method", "benchmark", "gain")
                      for item in client.get("/api/items", params={"item_type": kind,
                                                                   "limit": 1000}
                                             ).json()["items"]
                      if item["alignment"] == "none" or item.get("value_in_evidence") is False}
    flagged = client.get("/", params={"show": "flagged"}).text
    assert flagged.count("<article") == min(len(flagged_papers), 20)
    queued = client.get("/queue", follow_redirects=False)
    assert queued.status_code == 303 and "/papers/sha256:" in queued.headers["location"]
    paper = client.get(queued.headers["location"])
    assert paper.status_code == 200 and 'id="queue-next"' in paper.text
    assert client.get("/papers/sha256:nothing").status_code == 404
    assert client.get("/conflicts").status_code == 200
    assert client.get("/runs").status_code == 200


def test_openapi_schema_documents_every_api_route(client: TestClient) -> None:
    schema = client.get("/api/openapi.json").json()
    assert set(schema["paths"]) == {
        "/api/health", "/api/papers", "/api/papers/{paper_id}", "/api/items",
        "/api/corrections", "/api/corrections/export", "/api/conflicts", "/api/gold",
        "/api/runs", "/api/runs/{run_id}", "/api/jobs", "/api/jobs/{job_id}",
        "/api/jobs/{job_id}/cancel", "/api/extract", "/api/snapshot"}
    assert "CorrectionIn" in schema["components"]["schemas"]


def test_reads_and_each_kind_of_correction(client: TestClient, db: Path) -> None:
    listing = client.get("/api/papers", params={"limit": 5}).json()
    assert listing["total"] == 63 and len(listing["papers"]) == 5
    assert client.get("/api/papers", params={"q": "PreDiff"}).json()["total"] == 1
    assert client.get("/api/papers/sha256:unknown").status_code == 404
    gains = client.get("/api/items", params={"item_type": "gain"}).json()
    assert gains["total"] > 10 and {g["origin"] for g in gains["items"]} == {"model"}
    assert client.get("/api/health").json()["reviewer"] == "tester"

    paper_id, method = _paper_with(client, "method")
    ident = {"paper_id": paper_id, "item_type": "method", "item_key": method["item_key"]}
    accepted = client.post("/api/corrections", json={**ident, "action": "accept"})
    assert accepted.status_code == 201 and accepted.json()["item"]["review"] == "accept"
    edited = client.post("/api/corrections", json={**ident, "action": "edit", "version": 1,
                                                   "changes": {"name": "Renamed"}})
    assert edited.status_code == 201 and edited.json()["item"]["name"] == "Renamed"
    assert edited.json()["item"]["origin"] == "corrected"
    rejected = client.post("/api/corrections", json={**ident, "action": "reject", "version": 2,
                                                     "note": "a baseline"})
    assert rejected.status_code == 201 and rejected.json()["item"] is None
    detail = client.get(f"/api/papers/{paper_id}").json()
    assert method["item_key"] not in {i["item_key"] for i in detail["items"]}
    assert detail["rejected"][0]["note"] == "a baseline"
    restored = client.post("/api/corrections", json={**ident, "action": "restore",
                                                     "version": 3})
    assert restored.json()["item"]["name"] == "Renamed"

    text = detail["text"]
    word = re.search(r"[A-Z][A-Za-z]{4,}", text)
    assert word is not None
    added = client.post("/api/corrections", json={
        "paper_id": paper_id, "item_type": "benchmark", "action": "add",
        "start": word.start(), "end": word.end(), "selected": word.group(),
        "changes": {"introduced": True}})
    assert added.status_code == 201
    item = added.json()["item"]
    assert item["origin"] == "added" and item["name"] == word.group() and item["introduced"]
    assert text[item["char_start"]:item["char_end"]] == item["evidence"]
    reviewed = client.post("/api/corrections", json={"paper_id": paper_id,
                                                     "item_type": "paper",
                                                     "action": "reviewed"})
    assert reviewed.status_code == 201

    stored = client.get("/api/corrections", params={"paper_id": paper_id}).json()
    assert [c["action"] for c in stored["corrections"]] == [
        "accept", "edit", "edit", "reject", "restore", "add", "reviewed"]
    # the renamed method was grounded again: its second edit says where (nowhere)
    assert [c["field"] for c in stored["corrections"][1:3]] == ["name", "grounding"]
    assert all(c["reviewer"] == "tester" for c in stored["corrections"])
    csv_text = client.get("/api/corrections/export", params={"format": "csv"}).text
    assert csv_text.count("\n") == 8 and "a baseline" in csv_text
    assert client.get("/api/corrections/export",
                      params={"format": "jsonl"}).text.count("\n") == 7
    gold = client.get("/api/gold").json()
    assert gold["format"] == "papersift-gold/1" and len(gold["papers"]) == 1
    assert word.group() in {b["name"] for b in gold["papers"][0]["benchmarks"]}
    assert client.get("/api/conflicts").json() == {"conflicts": []}
    # /api/items pages in SQL and its cached answer follows the writes above
    added_now = client.get("/api/items", params={"item_type": "benchmark",
                                                 "origin": "added"}).json()
    assert added_now["total"] == 1 and added_now["items"][0]["name"] == word.group()
    first, second = (client.get("/api/items", params={"item_type": "gain", "limit": 3,
                                                      "offset": at}).json()
                     for at in (0, 3))
    assert first["total"] == second["total"] == gains["total"]
    assert [g["item_key"] for g in first["items"] + second["items"]] == [
        g["item_key"] for g in gains["items"][:6]]


def test_second_save_on_the_same_version_is_refused_with_the_current_value(
        client: TestClient) -> None:
    paper_id, gain = _paper_with(client, "gain")
    save = {"paper_id": paper_id, "item_type": "gain", "item_key": gain["item_key"],
            "action": "edit", "version": gain["version"]}
    first = client.post("/api/corrections", json={**save, "changes": {"value": 41.5}})
    assert first.status_code == 201
    second = client.post("/api/corrections", json={**save, "changes": {"value": 99}})
    assert second.status_code == 409
    body = second.json()
    assert "changed by someone else" in body["error"] and body["current"]["value"] == 41.5
    assert len(client.get("/api/corrections").json()["corrections"]) == 2  # value + check
    # the page's form gets the same refusal, shown in the card it swaps in
    form = {"paper_id": paper_id, "item_type": "gain", "item_key": gain["item_key"],
            "action": "edit", "version": str(gain["version"]), "set_value": "7"}
    refused = client.post("/ui/correct", data=form, headers={"X-CSRF-Token": _csrf(client)})
    assert refused.status_code == 409 and "changed by someone else" in refused.text


@pytest.mark.parametrize(("body", "status", "says"), [
    ({"item_type": "method", "item_key": "x", "action": "accept",
      "paper_id": "sha256:none"}, 404, "no paper"),
    ({"item_type": "method", "item_key": "no such method", "action": "accept"}, 404,
     "has no method"),
    ({"item_type": "benchmark", "action": "add", "start": 5, "end": 100_000,
      "selected": "x"}, 400, "outside the abstract"),
    ({"item_type": "benchmark", "action": "add", "start": 0, "end": 4,
      "selected": "Nope"}, 400, "not the selected"),
    ({"item_type": "gain", "action": "add", "start": 0, "end": 4}, 400, "needs start"),
    ({"item_type": "method", "item_key": "{key}", "action": "edit",
      "changes": {"unit": "%"}}, 400, "cannot be edited"),
    ({"item_type": "method", "item_key": "{key}", "action": "reject"}, 400, "a reason"),
    ({"item_type": "method", "item_key": "{key}", "action": "edit",
      "changes": {"name": "x" * 600}}, 400, "longer than"),
    ({"item_type": "method", "item_key": "{key}", "action": "accept", "version": "two"},
     422, "integer"),
    ({"item_type": "widget", "item_key": "{key}", "action": "accept"}, 422, "item_type"),
    ({"item_type": "method", "item_key": "{key}", "action": "accept", "extra": 1}, 422,
     "extra"),
])
def test_bad_requests_get_4xx_and_write_nothing(client: TestClient, body: dict[str, Any],
                                                status: int, says: str) -> None:
    paper_id, method = _paper_with(client, "method")
    payload = {"paper_id": paper_id, **body}
    if payload.get("item_key") == "{key}":
        payload["item_key"] = method["item_key"]
    answer = client.post("/api/corrections", json=payload)
    assert answer.status_code == status, answer.text
    assert says in answer.text
    assert client.get("/api/corrections").json()["corrections"] == []


def test_oversized_and_non_json_bodies_are_refused(client: TestClient) -> None:
    big = client.post("/api/extract", json={"abstract": "word " * 300_000})
    assert big.status_code == 413 and "request body over" in big.json()["error"]
    plain = client.post("/api/corrections", content=b"{}", headers={"content-type": "text/plain"})
    assert plain.status_code == 415
    assert client.post("/api/extract", json={"abstract": "   "}).status_code == 400
    missing = str(Path.cwd() / "no-such-file.txt")  # below the inputs root, not there
    assert client.post("/api/runs", json={"inputs": [missing]}).status_code == 400
    assert client.get("/api/jobs/job_none").status_code == 404
    assert client.post("/api/jobs/job_none/cancel", json={}).status_code == 404
    assert client.get("/api/runs/run_none").status_code == 404
    assert client.get("/api/corrections").json()["corrections"] == []


def test_csrf_cross_site_requests_are_refused(client: TestClient) -> None:
    paper_id, method = _paper_with(client, "method")
    form = {"paper_id": paper_id, "item_type": "method", "item_key": method["item_key"],
            "action": "accept", "version": "0"}
    assert client.post("/ui/correct", data=form).status_code == 403
    assert client.post("/ui/correct", data=form,
                       headers={"X-CSRF-Token": "forged"}).status_code == 403
    body = {**form, "version": 0}
    foreign = client.post("/api/corrections", json=body,
                          headers={"Origin": "http://evil.example"})
    assert foreign.status_code == 403 and "cross-origin" in foreign.json()["error"]
    site = client.post("/api/corrections", json=body, headers={"Sec-Fetch-Site": "cross-site"})
    assert site.status_code == 403
    assert client.get("/api/corrections").json()["corrections"] == []
    ok = client.post("/ui/correct", data=form, headers={"X-CSRF-Token": _csrf(client),
                                                        "Origin": LOCAL_URL})
    assert ok.status_code == 200 and "o-accepted" in ok.text


def test_a_non_loopback_bind_needs_the_token_on_every_request(db: Path) -> None:
    with pytest.raises(ServeError, match="--token"):
        create_app(ServeConfig(db=db, host="0.0.0.0"))
    with pytest.raises(ServeError, match="16 characters"):
        create_app(ServeConfig(db=db, host="0.0.0.0", token="short"))
    with local_client(create_app(ServeConfig(db=db, host="0.0.0.0", token=TOKEN))) as client:
        for path in ("/", "/api/papers", "/api/openapi.json", "/assets/htmx.min.js"):
            assert client.get(path).status_code == 401
        assert client.get("/api/papers",
                          headers={"Authorization": "Bearer wrong-token-xxxxxxxx"}
                          ).status_code == 401
        bearer = {"Authorization": f"Bearer {TOKEN}"}
        assert client.get("/api/papers", headers=bearer).status_code == 200
        refused = client.post("/api/corrections", json={"paper_id": "x"})
        assert refused.status_code == 401
        opened = client.get("/?token=" + TOKEN, follow_redirects=False)
        assert opened.status_code == 303 and opened.headers["location"] == "/"
        assert TOKEN not in opened.headers["location"]
        assert client.get("/").status_code == 200  # the cookie now carries it
    os.environ["PAPERSIFT_TOKEN"] = TOKEN
    try:
        with local_client(create_app(ServeConfig(db=db, host="0.0.0.0"))) as client:
            assert client.get("/api/papers").status_code == 401
    finally:
        del os.environ["PAPERSIFT_TOKEN"]


def test_read_only_serves_pages_and_refuses_changes(db: Path) -> None:
    with local_client(create_app(ServeConfig(db=db, read_only=True))) as client:
        page = client.get("/")
        assert page.status_code == 200 and 'class="read-only"' in page.text
        assert "button class=\"accept\"" not in page.text
        refused = client.post("/api/corrections", json={"paper_id": "x"})
        assert refused.status_code == 403 and "read-only" in refused.json()["error"]
        assert client.post("/api/extract", json={"abstract": "x"}).status_code == 403


NEW_ABSTRACT = ("We study sparse retrieval for long documents. Our method, SparseLens, "
                "improves recall by 4.2 points on the LongDocQA benchmark over dense "
                "retrievers, while using a tenth of the memory.")


def test_extract_one_abstract_through_the_api_against_a_fake_endpoint(db: Path) -> None:
    with SimEndpoint(fault_profile()) as fake:
        endpoint = Endpoint(base_url=fake.base_url, model="fault-server", mode="json")
        with local_client(create_app(ServeConfig(db=db, endpoint=endpoint))) as client:
            first = client.post("/api/extract", json={"abstract": NEW_ABSTRACT,
                                                      "title": "SparseLens"})
            assert first.status_code == 200, first.text
            body = first.json()
            assert body["outcome"] == "extracted" and body["failure"] is None
            tasks = [i for i in body["paper"]["items"] if i["item_type"] == "task"]
            assert tasks and NEW_ABSTRACT.startswith(tasks[0]["name"])
            again = client.post("/api/extract", json={"abstract": NEW_ABSTRACT,
                                                      "title": "SparseLens"}).json()
            assert again["outcome"] == "cached" and again["run_id"] != body["run_id"]
            # the title is part of the request the model saw, so it is part of the cache key
            assert fake.log[-1].paper_id == body["paper_id"] and len(fake.log) == 1
            assert client.get("/api/papers").json()["total"] == 64
            assert client.get(f"/api/runs/{body['run_id']}").json()["n_extracted"] == 1
            runs = client.get("/api/runs").json()
            assert runs["runs"][0]["run_id"] == again["run_id"] and len(runs["jobs"]) == 2
        assert len(fake.log) == 1  # the second answer came from the cache
    con = connect(db, read_only=True)
    try:
        source = con.execute("SELECT s.file, s.title FROM sources s WHERE paper_id = ?",
                             [body["paper_id"]]).fetchall()
    finally:
        con.close()
    assert source[0][1] == "SparseLens" and "serve-inputs" in source[0][0]


def _wait(client: TestClient, job_id: str, until: set[str]) -> dict[str, Any]:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        job = client.get(f"/api/jobs/{job_id}").json()
        if job["status"] in until:
            return job  # type: ignore[no-any-return]
        time.sleep(0.05)
    raise AssertionError(f"job {job_id} never reached {until}")


def test_background_run_reports_progress_and_stores_through_the_server(db: Path) -> None:
    with local_client(create_app(replay_config(db, inputs_roots=(CORPUS,)))) as client:
        started = client.post("/api/runs", json={"inputs": [str(CORPUS)], "no_cache": True})
        assert started.status_code == 202 and started.json()["url"].startswith("/api/jobs/")
        job = _wait(client, started.json()["job_id"], {"finished", "failed"})
        assert job["status"] == "finished", job
        assert job["abstracts"] == 63 and job["extracted"] == 63 and job["done"] == 63
        assert client.get(f"/api/runs/{job['run_id']}").json()["status"] == "finished"


def test_a_background_run_can_be_cancelled(db: Path) -> None:
    with SimEndpoint(fault_profile(latency_s=0.2)) as slow:
        endpoint = Endpoint(base_url=slow.base_url, model="fault-server", mode="json")
        config = ServeConfig(db=db, endpoint=endpoint, inputs_roots=(CORPUS,))
        with local_client(create_app(config)) as client:
            job_id = client.post("/api/runs", json={"inputs": [str(CORPUS)],
                                                    "no_cache": True}).json()["job_id"]
            queued = client.post("/api/runs", json={"inputs": [str(CORPUS)]}).json()
            assert client.post(f"/api/jobs/{queued['job_id']}/cancel",
                               json={}).json()["status"] == "cancelled"
            deadline = time.monotonic() + 60
            while client.get(f"/api/jobs/{job_id}").json()["done"] < 2:
                assert time.monotonic() < deadline
                time.sleep(0.05)
            assert client.post(f"/api/jobs/{job_id}/cancel", json={}).status_code == 200
            job = _wait(client, job_id, {"cancelled", "finished", "failed"})
            assert job["status"] == "cancelled" and 2 <= job["done"] < 63
            run = client.get(f"/api/runs/{job['run_id']}").json()
            assert run["status"] == "interrupted"
            assert client.get(f"/api/jobs/{queued['job_id']}").json()["run_id"] is None


def test_papersift_run_on_a_served_warehouse_names_the_server(db: Path) -> None:
    with server_process(db) as url:
        env = {**os.environ, "PAPERSIFT_LOCK_WAIT": "0.2"}
        result = subprocess.run([sys.executable, "-m", "papersift", "run", str(CORPUS),
                                 "--db", str(db)], check=False, capture_output=True, text=True,
                                env=env,
                                timeout=120)
        assert result.returncode != 0
        message = " ".join(result.stderr.split())
        assert "held by papersift serve" in message and url in message
        assert f"{url}/api/runs" in message
        assert (db.parent / f"{db.name}.serve.json").exists()
    assert not (db.parent / f"{db.name}.serve.json").exists()


def test_corrections_export_command_writes_history_and_gold(db: Path, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from papersift.extract.interface.cli import cli

    with local_client(create_app(ServeConfig(db=db))) as client:
        paper_id, method = _paper_with(client, "method")
        rejected = client.post("/api/corrections", json={
            "paper_id": paper_id, "item_type": "method", "item_key": method["item_key"],
            "action": "reject", "note": "not a method", "reviewer": "bo"})
        assert rejected.status_code == 201
    out, gold = tmp_path / "c.csv", tmp_path / "gold.json"
    result = CliRunner().invoke(cli, ["corrections", "export", "--db", str(db), "--out",
                                      str(out), "--gold", str(gold)])
    assert result.exit_code == 0, result.output
    lines = out.read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2 and "reject" in lines[1] and "not a method" in lines[1]
    papers = json.loads(gold.read_text(encoding="utf-8"))["papers"]
    assert [p["paper_id"] for p in papers] == [paper_id]
    assert method["name"] not in {m["name"] for m in papers[0]["methods"]}
    jsonl = CliRunner().invoke(cli, ["corrections", "export", "--db", str(db), "--format",
                                     "jsonl"])
    assert json.loads(jsonl.output)["reviewer"] == "bo"
    empty = tmp_path / "empty.duckdb"
    connect(empty).close()
    refused = CliRunner().invoke(cli, ["eval", "--gold-from-corrections", "--db", str(empty)])
    assert refused.exit_code == 1 and "no corrections yet" in refused.output
    both = CliRunner().invoke(cli, ["eval", "--db", str(db)])
    assert both.exit_code == 2 and "--gold-from-corrections" in both.output
