"""`examples/custom-fields` in every output built-in fields reach: the wide papers table
(CSV), the workbook, and the report's overview and filters.

The endpoint is the HAND-WRITTEN FAKE of test_custom_fields (KeyedDrafts over
httpx2.MockTransport), not a model."""

from __future__ import annotations

import csv
import html
import json
import re
import zipfile
from pathlib import Path
from typing import Any

import pytest

from papersift.report.render import render_html, write_report
from papersift.warehouse.export import export
from papersift.warehouse.report import load_report
from tests.test_custom_fields import EXAMPLE, _run, fake_fields_model


@pytest.fixture(scope="module")
def fields_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse the example's fields were extracted into (two papers)."""
    where = tmp_path_factory.mktemp("fields")
    _run(where, fake_fields_model(), EXAMPLE)
    return where / "w.duckdb"


def test_the_wide_papers_csv_has_a_column_per_user_field(fields_db: Path,
                                                         tmp_path: Path) -> None:
    export(fields_db, tmp_path, "csv")
    with (tmp_path / "papers.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    header = list(rows[0])
    own = ["custom_baselines", "custom_model_sizes", "custom_limitation",
           "custom_proves_theory", "custom_setting"]
    assert header[-6:] == [*own, "text"]  # the file's order, before the abstract
    flownet = next(row for row in rows if row["text"].startswith("We propose"))
    assert flownet["custom_baselines"] == "BERT; RetroMAE"
    assert (flownet["custom_model_sizes"], flownet["custom_setting"]) == ("7", "reinforcement")
    assert flownet["custom_proves_theory"] == "true"


def test_the_workbook_has_the_user_fields_columns_and_items(fields_db: Path,
                                                            tmp_path: Path) -> None:
    export(fields_db, tmp_path, "xlsx")
    with zipfile.ZipFile(tmp_path / "papersift.xlsx") as archive:
        sheets = re.findall(r'<sheet name="([^"]+)"',
                            archive.read("xl/workbook.xml").decode())
        assert sheets[0] == "papers" and sheets[-1] == "custom"
        strings = "".join(archive.read(name).decode() for name in archive.namelist()
                          if name.startswith("xl/") and name.endswith(".xml"))
    assert "custom_baselines" in strings and "custom_setting" in strings
    assert "BERT; RetroMAE" in strings  # the papers sheet's cell
    assert "limits it to simulated settings" in strings  # the custom sheet's item


def test_the_report_overview_and_filters_cover_the_user_fields(fields_db: Path) -> None:
    data = load_report(fields_db)
    counts = dict(data.overview.custom)
    assert [c.label for c in counts["custom-setting"]] == ["reinforcement", "self-supervised"]
    assert data.fields[-5:] == ("custom-baselines", "custom-model_sizes", "custom-limitation",
                                "custom-proves_theory", "custom-setting")
    assert data.descriptions["custom-setting"] == "The learning setting the paper works in."
    page = render_html(data)
    assert 'id="overview-custom-setting"' in page
    menu = re.search(r'<select class="filter-custom" data-field="custom-setting".*?</select>',
                     page, re.S)
    assert menu is not None and '<option value="reinforcement">' in menu.group(0)
    cards = [json.loads(html.unescape(found))
             for found in re.findall(r'data-custom="([^"]*)"', page)]
    assert sorted(card["custom-setting"] for card in cards) == [["reinforcement"],
                                                               ["self-supervised"]]


@pytest.mark.browser
def test_a_user_field_menu_filters_the_cards_in_a_browser(browser: Any, fields_db: Path,
                                                          tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    page = tmp_path / "report.html"
    write_report(fields_db, page)
    browser.get(page.as_uri())
    visible = "return [...document.querySelectorAll('article.card:not([hidden])')].length"
    assert browser.execute_script(visible) == 2
    menu = browser.find_element(By.CSS_SELECTOR, 'select[data-field="custom-setting"]')
    Select(menu).select_by_value("self-supervised")
    assert browser.execute_script(visible) == 1
    browser.find_element(By.ID, "reset").click()
    assert browser.execute_script(visible) == 2


def test_the_cli_runs_the_example_against_the_simulator_into_papers_csv(
        tmp_path: Path) -> None:
    """`papersift run --fields` through the real CLI and the LABELLED SIMULATOR (it answers
    a request's added properties by their JSON type), then `export`: the wide table
    carries the example's columns."""
    from click.testing import CliRunner

    from papersift.extract.interface.cli import cli
    from papersift.testing.sim import SimConfig, SimEndpoint
    from tests.test_custom_fields import RETRIEVAL, TABULAR

    corpus = tmp_path / "a.txt"
    corpus.write_text(f"{RETRIEVAL}\n\n{TABULAR}\n", encoding="utf-8")
    db = tmp_path / "w.duckdb"
    with SimEndpoint(SimConfig()) as sim:
        ran = CliRunner().invoke(cli, ["run", str(corpus), "--db", str(db), "--base-url",
                                       sim.base_url, "--model", "sim", "--mode", "json_schema",
                                       "--fields", str(EXAMPLE)])
    assert ran.exit_code == 0, ran.output
    out = tmp_path / "out"
    assert CliRunner().invoke(cli, ["export", "--db", str(db), "--format", "csv",
                                    "--out", str(out)]).exit_code == 0
    with (out / "papers.csv").open(encoding="utf-8") as handle:
        rows = {row["text"][:10]: row for row in csv.DictReader(handle)}
    assert rows[RETRIEVAL[:10]]["custom_setting"] == "reinforcement"
    assert rows[RETRIEVAL[:10]]["custom_baselines"] == "FlowNet"
    assert rows[RETRIEVAL[:10]]["custom_model_sizes"] == ""  # 'FlowNet': no number, refused


def test_search_filters_on_a_user_field(fields_db: Path, tmp_path: Path) -> None:
    """`papersift search --field NAME=VALUE`: a choice matches its value exactly
    ('supervised' does not match 'self-supervised'), a name field by containment, and
    the hits show the user fields' columns; an unknown field is named."""
    import shutil

    from click.testing import CliRunner

    from papersift.extract.interface.cli import cli

    db = tmp_path / "copy.duckdb"
    shutil.copy(fields_db, db)

    def found(*filters: str) -> list[dict[str, Any]]:
        args = ["search", "model data", "--db", str(db), "--mode", "keyword", "--format",
                "json", *[part for given in filters for part in ("--field", given)]]
        result = CliRunner().invoke(cli, args)
        assert result.exit_code == 0, result.output
        return list(json.loads(result.output[result.output.index("["):
                                             result.output.rindex("]") + 1]))

    assert len(found()) == 2
    (hit,) = found("setting=self-supervised")
    assert hit["custom_setting"] == "self-supervised"
    assert found("setting=supervised") == []
    (hit,) = found("baselines=retro")
    assert hit["custom_baselines"] == "BERT; RetroMAE"
    refused = CliRunner().invoke(cli, ["search", "x", "--db", str(db), "--mode", "keyword",
                                       "--field", "nosuch=1"])
    assert refused.exit_code != 0 and "no user field nosuch" in refused.output
