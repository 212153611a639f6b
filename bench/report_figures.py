"""How long `papersift report` takes and how big the page is.

Builds the bundled corpus's warehouse by replaying the real recording (offline), then
writes the report --repeat times and prints the time to read the warehouse, to render,
and the file size. With Chromium installed (`make install-browser`) it also opens the
page headless and prints the time to a loaded page with its charts drawn; --screenshot
saves what it shows (docs/report.png is made this way). --scale N repeats the same on a
warehouse of N synthetic papers answered by the hand-written instant fake model.

    python -m bench.report_figures [--repeat 5] [--screenshot docs/report.png] [--scale 2000]
"""

from __future__ import annotations

import argparse
import logging
import statistics
import tempfile
import time
from pathlib import Path

from bench.pipeline_overhead import build_corpus
from papersift.extract.access.llm import Endpoint
from papersift.extract.interface.app import RunSettings, run_inputs
from papersift.report.render import render_html, write_report
from papersift.testing.browser import browser_problem, open_browser
from papersift.testing.corpus import replay_corpus
from papersift.testing.mock import FakeModel
from papersift.warehouse.report import load_report

ROOT = Path(__file__).resolve().parent.parent


def measure(db: Path, out: Path, repeat: int, label: str) -> None:
    reads, renders, totals = [], [], []
    for _ in range(repeat):
        started = time.perf_counter()
        data = load_report(db)
        read = time.perf_counter()
        render_html(data)
        renders.append(time.perf_counter() - read)
        reads.append(read - started)
        totals.append(write_report(db, out).seconds)
    size = out.stat().st_size
    print(f"{label}: {len(data.papers)} papers, report {size / 1e6:.2f} MB "
          f"({size / len(data.papers) / 1e3:.1f} kB/paper); write_report median "
          f"{statistics.median(totals):.3f}s (min {min(totals):.3f}s) = read "
          f"{statistics.median(reads):.3f}s + render {statistics.median(renders):.3f}s "
          f"over {repeat} runs")


def open_in_browser(page: Path, screenshot: Path | None, width: int, height: int,
                    scale: float = 1.0) -> None:
    problem = browser_problem()
    if problem:
        print(f"browser: skipped ({problem})")
        return
    started = time.perf_counter()
    driver = open_browser(width, height, scale)
    launched = time.perf_counter()
    try:
        driver.get(page.as_uri())
        driver.execute_script("return window.papersiftCharts.length")
        loaded = time.perf_counter()
        timing = driver.execute_script(
            "const t = performance.getEntriesByType('navigation')[0];"
            "return [t.domContentLoadedEventEnd, t.loadEventEnd];")
        print(f"browser: Chromium start {launched - started:.2f}s; page open to charts drawn "
              f"{loaded - launched:.2f}s (DOMContentLoaded {timing[0]:.0f} ms, "
              f"load {timing[1]:.0f} ms)")
        if screenshot:
            # Fold the long tables so the first cards show under the overview.
            driver.execute_script(
                "document.querySelectorAll('details').forEach(d => d.open = false);")
            time.sleep(0.3)
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            driver.save_screenshot(str(screenshot))
            print(f"screenshot: {screenshot} ({screenshot.stat().st_size / 1e3:.0f} kB, "
                  f"{width}x{height} CSS px at scale {scale})")
    finally:
        driver.quit()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--screenshot", type=Path)
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=2000)
    parser.add_argument("--scale-factor", type=float, default=1.0,
                        help="device pixels per CSS pixel of the screenshot")
    parser.add_argument("--scale", type=int, default=0,
                        help="also measure a warehouse of this many synthetic papers")
    args = parser.parse_args()
    logging.getLogger("instructor").setLevel(logging.CRITICAL)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        db = folder / "corpus.duckdb"
        started = time.perf_counter()
        summary = replay_corpus(db)
        print(f"warehouse: replayed recording, {summary.line()} in "
              f"{time.perf_counter() - started:.1f}s")
        page = folder / "report.html"
        measure(db, page, args.repeat, "corpus")
        open_in_browser(page, args.screenshot, args.width, args.height, args.scale_factor)
        if args.scale:
            build_corpus(folder, args.scale)
            big = folder / "scale.duckdb"
            run_inputs([str(folder / "bench.txt")], RunSettings(db=big),
                       transport=FakeModel().transport(),
                       endpoint=Endpoint(base_url="http://fake.test/v1", model="instant-fake",
                                         mode="json"))
            measure(big, folder / "scale.html", max(1, args.repeat // 2),
                    "scale (fake answers, 1 item each)")
            open_in_browser(folder / "scale.html", None, args.width, 1000)


if __name__ == "__main__":
    main()
