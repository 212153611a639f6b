"""Headless Chromium for the report's browser test and bench: Debian's ``chromium``
driven by Selenium through Debian's ``chromium-driver`` (same version, so no driver
download). ``make install-browser`` installs both."""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from typing import Any

INSTALL_HINT = "`make install-browser` (apt: chromium chromium-driver)"


def browser_problem() -> str | None:
    """Why no headless browser can be started here, or None when one can."""
    missing = [name for name in ("chromium", "chromedriver") if shutil.which(name) is None]
    if missing:
        return f"no {' or '.join(missing)} on PATH: {INSTALL_HINT}"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed: pip install -e '.[dev]'"
    return None


def open_browser(width: int = 1280, height: int = 1000, scale: float = 1.0) -> Any:
    """A headless Chromium window (a selenium WebDriver) of width x height CSS pixels,
    drawn at ``scale`` device pixels per CSS pixel; the caller quits it."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(shutil.which("chromium"))
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu",
                     "--disable-dev-shm-usage", "--hide-scrollbars",
                     f"--force-device-scale-factor={scale}", f"--window-size={width},{height}"):
        options.add_argument(argument)
    service = Service(executable_path=str(shutil.which("chromedriver")))
    return webdriver.Chrome(service=service, options=options)


def browser_session(width: int = 1280, height: int = 1000) -> Iterator[Any]:
    """A browser for a module's tests (use with ``yield from`` in a fixture): skipped with
    the reason where none can start, failed instead under PAPERSIFT_REQUIRE_BROWSER (CI)."""
    import pytest

    problem = browser_problem()
    if problem:
        if os.environ.get("PAPERSIFT_REQUIRE_BROWSER"):
            pytest.fail(f"PAPERSIFT_REQUIRE_BROWSER is set but {problem}")
        pytest.skip(problem)
    driver = open_browser(width, height)
    try:
        yield driver
    finally:
        driver.quit()
