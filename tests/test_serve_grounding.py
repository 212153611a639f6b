"""A reviewer's values are grounded again, like a model's (issue 28): an edited name, an
added item named otherwise than its selection, or a gain's edited metric, baseline or
dataset is looked up in the abstract; what the abstract lacks is stored flagged
(alignment 'none', no offsets), never with the old offsets and 'exact', and it stays out
of the leaderboard and /api/gold. An undone reject puts a flagged item back in the
flagged filter."""

from __future__ import annotations

import re
from typing import Any

from fastapi.testclient import TestClient

from papersift.extract.interface.serve.app import inner_app

LOCATION = ("alignment", "mention_start", "mention_end", "char_start", "char_end")




def _first(client: TestClient, item_type: str, **where: Any) -> dict[str, Any]:
    rows = client.get("/api/items", params={"item_type": item_type, "limit": 1000}).json()
    return next(row for row in rows["items"]
                if all(row.get(k) == v if v is not None else row.get(k) is not None
                       for k, v in where.items()))


def _edit(client: TestClient, item: dict[str, Any], changes: dict[str, Any],
          version: int = 0) -> dict[str, Any]:
    answer = client.post("/api/corrections", json={
        "paper_id": item["paper_id"], "item_type": item["item_type"],
        "item_key": item["item_key"], "action": "edit", "version": version,
        "changes": changes})
    assert answer.status_code == 201, answer.text
    return answer.json()["item"]  # type: ignore[no-any-return]


def _flagged_ids(client: TestClient) -> set[str]:
    papers = client.get("/api/papers", params={"show": "flagged", "limit": 1000}).json()
    return {paper["paper_id"] for paper in papers["papers"]}


def test_a_renamed_task_the_abstract_lacks_is_flagged_without_offsets(
        client: TestClient) -> None:
    task = _first(client, "task", alignment="exact")
    edited = _edit(client, task, {"name": "Causal Spatial Reasoning Zyxw"})
    assert edited["name"] == "Causal Spatial Reasoning Zyxw"
    assert [edited[k] for k in LOCATION] == ["none", None, None, None, None]
    assert task["paper_id"] in _flagged_ids(client)
    gold = client.get("/api/gold").json()
    tasks = next(p["tasks"] for p in gold["papers"] if p["paper_id"] == task["paper_id"])
    assert "Causal Spatial Reasoning Zyxw" not in tasks


def test_a_method_renamed_to_other_words_of_its_abstract_points_at_them(
        client: TestClient) -> None:
    method = _first(client, "method", alignment="exact")
    text = client.get(f"/api/papers/{method['paper_id']}").json()["text"]
    word = next(w for w in re.findall(r"\b[A-Z][a-z]{5,}\b", text)
                if w.lower() != method["name"].lower())
    edited = _edit(client, method, {"name": word})
    assert edited["alignment"] == "exact"
    assert text[edited["mention_start"]:edited["mention_end"]] == word
    assert edited["evidence"] == text[edited["char_start"]:edited["char_end"]]
    missing = _edit(client, method, {"name": "NoSuchNet-9000"}, version=1)
    assert [missing[k] for k in LOCATION] == ["none", None, None, None, None]


def test_a_gain_edited_to_values_the_abstract_lacks_leaves_the_leaderboard(
        client: TestClient) -> None:
    gain = _first(client, "gain", dataset=None, alignment="exact")
    edited = _edit(client, gain, {"baseline": "GPT-4", "dataset": "ImageNet-1k",
                                  "metric": "top-1 accuracy zz"})
    assert edited["alignment"] == "none" and edited["char_start"] is None
    assert (edited["baseline_alignment"], edited["dataset_alignment"]) == ("none", "none")
    assert edited["metric_alignment"] == "none"
    state = inner_app(client.app).state.papersift  # the server's own connection
    board = state.read(lambda con: con.execute(
        "SELECT baseline FROM leaderboard WHERE paper_id = ?", [gain["paper_id"]]).fetchall())
    assert ("GPT-4",) not in board
    gold = client.get("/api/gold").json()
    gains = next(p["gains"] for p in gold["papers"] if p["paper_id"] == gain["paper_id"])
    assert "top-1 accuracy zz" not in [g["metric"] for g in gains]


def test_an_added_item_named_otherwise_than_its_selection_is_grounded(
        client: TestClient) -> None:
    paper = client.get("/api/papers", params={"limit": 1}).json()["papers"][0]
    text = client.get(f"/api/papers/{paper['paper_id']}").json()["text"]
    word = re.search(r"\b[A-Z][A-Za-z]{4,}\b", text)
    assert word is not None
    body = {"paper_id": paper["paper_id"], "item_type": "benchmark", "action": "add",
            "start": word.start(), "end": word.end(), "selected": word.group()}
    same = client.post("/api/corrections", json=body).json()["item"]
    assert same["alignment"] == "exact" and same["mention_start"] == word.start()
    other = client.post("/api/corrections", json={**body, "changes": {
        "name": "Qwertyuiop Bench"}}).json()["item"]
    assert other["alignment"] == "none" and other["mention_start"] is None


def test_an_undone_reject_puts_a_flagged_item_back_in_the_flagged_filter(
        client: TestClient) -> None:
    task = _first(client, "task", alignment="exact")
    paper = task["paper_id"]
    _edit(client, task, {"name": "Nothing Of This Abstract Qq"})
    assert paper in _flagged_ids(client)
    ident = {"paper_id": paper, "item_type": "task", "item_key": task["item_key"]}
    assert client.post("/api/corrections", json={**ident, "action": "reject", "version": 1,
                                                 "note": "wrong"}).status_code == 201
    restored = client.post("/api/corrections", json={**ident, "action": "restore",
                                                     "version": 2}).json()["item"]
    assert restored["review"] is None and restored["alignment"] == "none"
    assert paper in _flagged_ids(client)
    queue = client.get("/api/papers", params={"show": "queue", "limit": 1000}).json()
    assert paper in {p["paper_id"] for p in queue["papers"]}
