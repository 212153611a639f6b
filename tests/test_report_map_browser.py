"""The report's topic map in headless Chromium: the scatter coloured by area, hover shows
a paper's opening, a click filters the cards to its area, the area list, "similar
papers" on the cards, and the search box's hybrid ranking. The warehouse is the replayed
corpus with the recorded vectors (tests/searchtools.py) and a topic map built from them."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("numpy")

from papersift.extract.access.embedding import MODEL_ID
from papersift.extract.interface.discover import build_areas
from papersift.report.render import write_report
from papersift.warehouse.db import connect
from papersift.warehouse.query import run_sql
from papersift.warehouse.repository import Repository
from tests.searchtools import copy_db, store_recorded

pytestmark = pytest.mark.browser
SCREENSHOT_DIR_ENV = "PAPERSIFT_SCREENSHOT_DIR"



@pytest.fixture(scope="module")
def mapped_db(corpus_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    db = copy_db(corpus_db, tmp_path_factory.mktemp("mapped"))
    store_recorded(db)
    con = connect(db)
    try:
        build_areas(Repository(con), MODEL_ID)
    finally:
        con.close()
    return db


@pytest.fixture(scope="module")
def map_page(mapped_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("map-report") / "report.html"
    write_report(mapped_db, out)
    return out


def _visible(driver: Any) -> list[str]:
    return list(driver.execute_script(
        "return Array.from(document.querySelectorAll('article.card:not([hidden])'))"
        ".map(c => c.dataset.paperId)"))


def _point(driver: Any, dataset: int, index: int) -> tuple[float, float]:
    """A point's offset from the canvas centre, in CSS pixels."""
    x, y, width, height = driver.execute_script(
        "const c = window.papersiftMap; const p = c.getDatasetMeta(arguments[0])"
        ".data[arguments[1]]; return [p.x, p.y, c.width, c.height];", dataset, index)
    return x - width / 2, y - height / 2


def test_map_points_areas_hover_and_click(browser: Any, map_page: Path, mapped_db: Path) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    areas = run_sql(mapped_db, "SELECT area_id, size FROM areas ORDER BY size DESC, area_id").rows
    browser.get(map_page.as_uri())
    datasets = browser.execute_script(
        "return window.papersiftMap.data.datasets.map(d => [d.areaId, d.data.length, "
        "d.backgroundColor])")
    assert [(a, n) for a, n, _ in datasets] == [tuple(row) for row in areas]
    assert len({colour for _, _, colour in datasets}) == len(areas)  # one colour per area
    assert sum(n for _, n, _ in datasets) == 63

    canvas = browser.find_element(By.ID, "chart-map")
    browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", canvas)
    time.sleep(0.2)
    dx, dy = _point(browser, 0, 0)
    ActionChains(browser).move_to_element_with_offset(canvas, int(dx), int(dy)).perform()
    time.sleep(0.2)
    tooltip = browser.execute_script(
        "const t = window.papersiftMap.tooltip; return t.getActiveElements().length ? "
        "t.body.map(b => b.lines.join(' ')).join(' ') : ''")
    position = browser.execute_script(
        "return window.papersiftMap.data.datasets[0].data[0].position")
    opening = browser.execute_script(
        "return document.querySelectorAll('article.card')[arguments[0]]"
        ".querySelector('.abstract').textContent.split(/\\s+/).slice(0, 5).join(' ')", position)
    assert tooltip and opening.split()[0] in tooltip

    ActionChains(browser).move_to_element_with_offset(canvas, int(dx), int(dy)).click().perform()
    time.sleep(0.2)
    visible = _visible(browser)
    assert len(visible) == areas[0][1]
    picked = browser.execute_script(
        "return document.querySelector('article.card.picked').dataset.paperId")
    assert picked in visible
    in_area = {row[0] for row in run_sql(mapped_db, "SELECT paper_id FROM paper_areas WHERE "
                                         "area_id = ?", [areas[0][0]]).rows}
    assert set(visible) == in_area

    browser.find_element(By.ID, "reset").click()
    assert len(_visible(browser)) == 63
    last = browser.find_elements(By.CSS_SELECTOR, "#area-list [data-area]")[-1]
    browser.execute_script("arguments[0].click()", last)
    assert len(_visible(browser)) == areas[-1][1]


def test_similar_papers_on_every_card(browser: Any, map_page: Path) -> None:
    browser.get(map_page.as_uri())
    links = browser.execute_script(
        "return Array.from(document.querySelectorAll('article.card')).map(c => "
        "Array.from(c.querySelectorAll('ul.similar a')).map(a => a.getAttribute('href')))")
    assert len(links) == 63 and all(len(card) == 5 for card in links)
    ids = set(browser.execute_script(
        "return Array.from(document.querySelectorAll('article.card')).map(c => '#' + c.id)"))
    assert all(href in ids for card in links for href in card)
    own = browser.execute_script(
        "return Array.from(document.querySelectorAll('article.card')).filter(c => "
        "Array.from(c.querySelectorAll('ul.similar a')).some(a => a.getAttribute('href') "
        "=== '#' + c.id)).length")
    assert own == 0  # a paper is never listed as similar to itself


def test_search_box_ranks_by_the_hybrid_score(browser: Any, map_page: Path) -> None:
    from selenium.webdriver.common.by import By

    browser.get(map_page.as_uri())
    box = browser.find_element(By.ID, "search")
    box.send_keys("spiking neural networks")
    visible = _visible(browser)
    assert visible[0].startswith("sha256:a4db8dd34cf7")
    # vector neighbours of the best keyword hits come along, after it
    assert len(visible) > 1
    scores = browser.execute_script(
        "const r = window.papersiftRank(arguments[0]); return Array.from(document."
        "querySelectorAll('article.card:not([hidden])')).map(c => r.get(parseInt("
        "c.id.slice(6)) - 1))",
        "spiking neural networks")
    assert scores == sorted(scores, reverse=True)
    box.clear()
    box.send_keys(" ")
    browser.find_element(By.ID, "reset").click()
    order = browser.execute_script(
        "return Array.from(document.querySelectorAll('article.card')).map(c => c.id)")
    assert order == [f"paper-{i}" for i in range(1, 64)]  # the original order is back


def test_map_screenshot(browser: Any, map_page: Path, tmp_path: Path) -> None:
    browser.get(map_page.as_uri())
    browser.execute_script("document.getElementById('map').scrollIntoView()")
    time.sleep(0.2)
    folder = Path(os.environ.get(SCREENSHOT_DIR_ENV) or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "map.png"
    assert browser.save_screenshot(str(shot))
    assert shot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n") and shot.stat().st_size > 20_000
