"""User-field items in `papersift serve`: shown on the card, accepted, rejected and
edited like built-in items; an edited value is grounded again by the field's own
declaration (a choice must be one of its values), and the corrected value reaches the
views every output reads.

The warehouse is filled through the HAND-WRITTEN FAKE endpoint of test_custom_fields."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from papersift.extract.interface.serve.app import inner_app
from tests.test_custom_fields import EXAMPLE, _run, fake_fields_model

LOCATION = ("alignment", "mention_start", "mention_end", "char_start", "char_end")


@pytest.fixture
def fields_db(tmp_path: Path) -> Path:
    _run(tmp_path, fake_fields_model(), EXAMPLE)
    return tmp_path / "w.duckdb"


@pytest.fixture
def client(fields_db: Path) -> Iterator[Any]:
    from papersift.extract.interface.serve import create_app
    from papersift.testing.serving import local_client, replay_config

    with local_client(create_app(replay_config(fields_db, reviewer="tester"))) as test_client:
        yield test_client


def _sql(client: TestClient, sql: str) -> list[tuple[Any, ...]]:
    """A query on the server's own connection (it holds the warehouse)."""
    state = inner_app(client.app).state.papersift
    return state.read(lambda con: con.execute(sql).fetchall())  # type: ignore[no-any-return]


def _post(client: TestClient, item: dict[str, Any], **body: Any) -> Any:
    return client.post("/api/corrections", json={
        "paper_id": item["paper_id"], "item_type": item["item_type"],
        "item_key": item["item_key"], "version": body.pop("version", 0), **body})


def _flownet(client: TestClient, item_type: str) -> dict[str, Any]:
    """The first item of this type of the FlowNet abstract."""
    rows = client.get("/api/items", params={"item_type": item_type}).json()["items"]
    return next(row for row in rows if "We propose" in
                client.get(f"/api/papers/{row['paper_id']}").json()["text"])


def test_a_user_field_item_is_on_the_card_and_can_be_rejected(client: TestClient) -> None:
    baseline = _flownet(client, "custom-baselines")
    card = client.get(f"/api/papers/{baseline['paper_id']}").json()
    assert {(i["item_type"], i["value"]) for i in card["items"]
            if i["item_type"].startswith("custom-")} >= {
        ("custom-baselines", "BERT"), ("custom-baselines", "RetroMAE"),
        ("custom-setting", "reinforcement")}
    page = client.get(f"/papers/{baseline['paper_id']}").text
    assert 'data-type="custom-baselines"' in page and '<option value="custom-setting">' in page
    answer = _post(client, baseline, action="reject", note="not a baseline")
    assert answer.status_code == 201, answer.text
    left = _sql(client, "SELECT value FROM custom_baselines ORDER BY idx")
    assert (baseline["value"],) not in left and len(left) == 1


def test_an_edited_choice_is_checked_normalised_and_grounded_again(
        client: TestClient) -> None:
    setting = _flownet(client, "custom-setting")
    assert setting["value"] == "reinforcement" and setting["alignment"] == "exact"
    refused = _post(client, setting, action="edit", changes={"value": "adversarial"})
    assert refused.status_code == 400 and "not one of" in refused.text
    answer = _post(client, setting, action="edit", changes={"value": "Self Supervised"})
    assert answer.status_code == 201, answer.text
    edited = answer.json()["item"]
    # the abstract never says self-supervised: kept, flagged, without the old offsets
    assert edited["value"] == "self-supervised"
    assert [edited[k] for k in LOCATION] == ["none", None, None, None, None]
    stored = _sql(client, "SELECT value, alignment FROM custom_setting c JOIN papers p "
                          "USING (paper_id) WHERE p.text LIKE 'We propose%'")
    assert stored == [("self-supervised", "none")]


def test_an_edited_name_points_at_its_new_mention(client: TestClient) -> None:
    baseline = _flownet(client, "custom-baselines")
    text = client.get(f"/api/papers/{baseline['paper_id']}").json()["text"]
    answer = _post(client, baseline, action="edit", changes={"value": "retromae"})
    assert answer.status_code == 201, answer.text
    edited = answer.json()["item"]
    assert edited["value"] == "RetroMAE"  # as the abstract writes it
    assert text[edited["mention_start"]:edited["mention_end"]] == "RetroMAE"
    assert edited["origin"] == "corrected"


def test_a_reviewed_papers_user_fields_reach_the_fewshot_pool(tmp_path: Path) -> None:
    """`corrections pool` answers the user fields as corrected and grounded; a run with
    the same fields is shown them, a run without fields is not (its examples are cut to
    its own draft)."""
    import json

    import httpx2

    from papersift.extract.interface.app import RunSettings, run_inputs
    from papersift.extract.interface.corrections import write_pool
    from papersift.warehouse import connect
    from papersift.warehouse.corrections import Review, mark_reviewed, set_status
    from tests.test_custom_fields import ENDPOINT, TABULAR

    _run(tmp_path, fake_fields_model(), EXAMPLE)
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        flownet = con.execute("SELECT paper_id FROM papers WHERE text LIKE 'We propose%'"
                              ).fetchone()[0]
        set_status(con, flownet, "custom-baselines", "bert", "reject",
                   Review("ann", 0, "not compared"))
        mark_reviewed(con, flownet, Review("ann", 0))
    finally:
        con.close()
    pool = tmp_path / "pool.json"
    assert write_pool(db, pool).examples == 1
    answer = json.loads(pool.read_text(encoding="utf-8"))["examples"][0]["answer"]
    assert (answer["baselines"], answer["model_sizes"]) == (["RetroMAE"], ["7"])
    assert (answer["setting"], answer["proves_theory"]) == ("reinforcement", True)

    def shown(fields: Path | None) -> dict[str, object]:
        model = fake_fields_model()
        corpus = tmp_path / "tabular.txt"
        corpus.write_text(TABULAR + "\n", encoding="utf-8")
        run_inputs([str(corpus)], RunSettings(db=tmp_path / "other.duckdb", fields=fields,
                                              fewshot_pool=pool, use_cache=False),
                   transport=httpx2.MockTransport(model), endpoint=ENDPOINT)
        return json.loads(model.bodies[0]["messages"][2]["content"])  # type: ignore[no-any-return]

    assert shown(EXAMPLE)["setting"] == "reinforcement"
    assert "setting" not in shown(None) and shown(None)["tasks"] == answer["tasks"]


def test_reviewed_user_fields_are_gold_for_eval(client: TestClient) -> None:
    """/api/gold carries a reviewed paper's user fields as corrected."""
    setting = _flownet(client, "custom-setting")
    assert _post(client, setting, action="edit",
                 changes={"value": "self-supervised"}).status_code == 201
    gold = client.get("/api/gold").json()
    (paper,) = [p for p in gold["papers"] if p["paper_id"] == setting["paper_id"]]
    assert paper["custom"]["setting"] == ["self-supervised"]
    assert paper["custom"]["baselines"] == ["BERT", "RetroMAE"]


def test_an_unsupported_user_field_value_puts_its_paper_in_the_flagged_queue(
        client: TestClient) -> None:
    """A choice nothing in the abstract says (here the catch-all 'other') is flagged for
    review; a false flag, which never has a sentence, is not."""
    def flagged() -> set[str]:
        papers = client.get("/api/papers", params={"show": "flagged", "limit": 100}).json()
        return {paper["paper_id"] for paper in papers["papers"]}

    tabular = next(row for row in client.get("/api/items", params={
        "item_type": "custom-setting"}).json()["items"] if row["value"] == "self-supervised")
    assert tabular["paper_id"] not in flagged()  # its false proves_theory is no flag
    answer = _post(client, tabular, action="edit", changes={"value": "other"})
    assert answer.status_code == 201, answer.text
    assert answer.json()["item"]["alignment"] == "none"
    assert tabular["paper_id"] in flagged()
