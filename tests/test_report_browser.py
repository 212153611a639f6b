"""The report in a real browser: headless Chromium opens the file written from the replayed
corpus, and the cards, highlights, charts and filters are checked from inside the page;
a screenshot is saved. Skipped (with the reason) where Chromium is not installed, unless
PAPERSIFT_REQUIRE_BROWSER is set, as .ci/run does: there a missing browser fails."""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

import pytest

from papersift.report.render import write_report
from papersift.warehouse.query import run_sql

pytestmark = pytest.mark.browser

SCREENSHOT_DIR_ENV = "PAPERSIFT_SCREENSHOT_DIR"



@pytest.fixture(scope="module")
def report_page(corpus_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("report") / "report.html"
    write_report(corpus_db, out)
    return out


def _visible_cards(driver: Any) -> int:
    return int(driver.execute_script(
        "return document.querySelectorAll('article.card:not([hidden])').length"))


def _shown_label(driver: Any) -> str:
    return str(driver.execute_script("return document.getElementById('shown').textContent"))


def test_cards_highlights_and_charts_render(browser: Any, report_page: Path,
                                            corpus_db: Path) -> None:
    browser.get(report_page.as_uri())
    # Nothing was fetched: every script and style is in the file.
    fetched = browser.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    assert fetched == []
    assert browser.execute_script("return typeof Chart") == "function"
    charts = browser.execute_script(
        "return window.papersiftCharts.map(c => [c.canvas.id, c.canvas.width > 0, "
        "c.data.datasets[0].data.length])")
    assert [c[0] for c in charts] == ["chart-types", "chart-tasks", "chart-benchmarks",
                                      "chart-gains"]
    assert all(drawn and points > 0 for _, drawn, points in charts)

    papers = dict(run_sql(corpus_db, "SELECT paper_id, text FROM papers").rows)
    cards = browser.execute_script("""
        return Array.from(document.querySelectorAll('article.card')).map(card => [
            card.dataset.paperId, card.querySelector('p.abstract').textContent]);""")
    assert dict(cards) == papers and len(cards) == 63

    # Each item with offsets: its highlighted segments spell text[start:end] exactly.
    result = browser.execute_script("""
        const problems = []; let checked = 0;
        for (const card of document.querySelectorAll('article.card')) {
            const text = card.querySelector('p.abstract').textContent;
            for (const item of card.querySelectorAll('.item[data-start]')) {
                const key = item.dataset.key;
                const start = +item.dataset.start, end = +item.dataset.end;
                const parts = Array.from(card.querySelectorAll('.hl[data-items]'))
                    .filter(s => s.dataset.items.split(' ').includes(key));
                const got = parts.map(s => s.textContent).join('');
                if (got !== text.slice(start, end)) problems.push([card.dataset.paperId, key]);
                checked += 1;
            }
        }
        return [checked, problems];""")
    checked, problems = result
    assert problems == [] and checked > 150

    # The field colours differ, and the markup delimiters are hidden but present.
    colours = browser.execute_script("""
        const bg = sel => getComputedStyle(document.querySelector(sel)).backgroundColor;
        return [bg('p.abstract .hl-task'), bg('p.abstract .hl-method'),
                bg('p.abstract .hl-benchmark'), bg('p.abstract .hl-gain')];""")
    assert len(set(colours)) == 4 and "rgba(0, 0, 0, 0)" not in colours
    assert browser.execute_script(
        "return getComputedStyle(document.querySelector('p.abstract .mk')).display") == "none"
    prediff = browser.execute_script("""
        const card = Array.from(document.querySelectorAll('article.card'))
            .find(c => c.textContent.includes('PreDiff'));
        return card.querySelector('p.abstract').innerText;""")
    assert "We propose PreDiff (Preference Diffusion)" in prediff
    flagged = browser.execute_script(
        "return document.querySelectorAll('.item.is-flagged .flag').length")
    from papersift.warehouse.report import load_report

    cards = load_report(corpus_db).papers
    assert flagged == sum(not item.located for card in cards for item in card.items)
    # The Chinese collection title comes through as text.
    collections = browser.execute_script(
        "return Array.from(document.querySelectorAll('.provenance .collection'), "
        "e => e.textContent)")
    assert "NeurIPS 2026 论文列表" in collections


def test_filters_and_search_narrow_the_cards(browser: Any, report_page: Path,
                                             corpus_db: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    browser.get(report_page.as_uri())
    assert _visible_cards(browser) == 63 and _shown_label(browser) == "63 of 63 papers"

    task = "generative recommendation"
    expected = run_sql(corpus_db, "SELECT count(DISTINCT paper_id) FROM tasks "
                                  "WHERE lower(name) = ?", [task]).rows[0][0]
    assert expected > 1
    Select(browser.find_element(By.ID, "filter-task")).select_by_value(task)
    assert _visible_cards(browser) == expected
    assert _shown_label(browser) == f"{expected} of 63 papers"

    browser.find_element(By.ID, "reset").click()
    with_numbers = run_sql(corpus_db, "SELECT count(DISTINCT paper_id) FROM gains "
                                      "WHERE value IS NOT NULL").rows[0][0]
    browser.find_element(By.ID, "filter-numbers").click()
    assert _visible_cards(browser) == with_numbers < 63

    browser.find_element(By.ID, "reset").click()
    benchmark_type = run_sql(corpus_db, "SELECT count(DISTINCT paper_id) FROM "
                                        "contribution_types WHERE type = 'benchmark'").rows
    Select(browser.find_element(By.ID, "filter-type")).select_by_value("benchmark")
    assert _visible_cards(browser) == benchmark_type[0][0]

    browser.find_element(By.ID, "reset").click()
    browser.find_element(By.ID, "search").send_keys("PreDiff")
    assert _visible_cards(browser) == 1

    browser.find_element(By.ID, "reset").click()
    browser.find_element(By.ID, "search").send_keys("no paper says this")
    assert _visible_cards(browser) == 0
    assert browser.find_element(By.ID, "none-shown").is_displayed()

    browser.find_element(By.ID, "reset").click()
    assert _visible_cards(browser) == 63

    # "raw markup" shows the stored delimiters; the text itself never changed.
    prediff = "return Array.from(document.querySelectorAll('p.abstract'))" \
              ".find(p => p.textContent.includes('PreDiff')).innerText"
    assert "(Preference Diffusion)" in browser.execute_script(prediff)
    browser.find_element(By.ID, "show-markup").click()
    assert "(**Pre**ference **Diff**usion)" in browser.execute_script(prediff)


def test_screenshot(browser: Any, report_page: Path, tmp_path: Path) -> None:
    browser.get(report_page.as_uri())
    time.sleep(0.2)  # let the canvases paint
    folder = Path(os.environ.get(SCREENSHOT_DIR_ENV) or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    shot = folder / "report-e2e.png"
    assert browser.save_screenshot(str(shot))
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000


def test_a_large_report_draws_its_cards_in_pages(browser: Any, corpus_db: Path,
                                                 tmp_path: Path) -> None:
    """A conference's cards are drawn page by page (issue 25): 10 at first here, 20 more
    per page; a filter or a search draws them all first, so it still sees every paper."""
    out = tmp_path / "paged.html"
    write_report(corpus_db, out, first_page=10, page_size=20)
    browser.get(out.as_uri())
    drawn = "return document.querySelectorAll('article.card').length"
    assert browser.execute_script(drawn) == 10
    assert _shown_label(browser) == "10 of 63 papers drawn"
    browser.execute_script("document.getElementById('show-more').click()")
    assert browser.execute_script(drawn) == 30
    browser.execute_script("""
        const box = document.getElementById('search');
        box.value = 'the';
        box.dispatchEvent(new Event('input'));""")
    assert browser.execute_script(drawn) == 63
    visible = _visible_cards(browser)
    assert 0 < visible <= 63 and _shown_label(browser) == f"{visible} of 63 papers"
    assert browser.execute_script(
        "return document.getElementById('more-cards').hidden") is True
