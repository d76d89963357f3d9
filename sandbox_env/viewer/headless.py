"""The system's headless Chromium, driven through selenium: for the browser test and the benchmark.

Only Debian's `chromium` and `chromium-driver` (or another Chromium/Chrome and a
matching chromedriver on PATH) are used; nothing is downloaded. selenium is a dev
dependency, imported only here. `BrowserMissing` says what to install.

`open_report` (a written file) and `open_url` (a page of the loopback server) load a page
and wait for it to say it is ready: the viewer sets `window.viewerReadyAt` (ms since
navigation start, `performance.now()`) once the family table and the first page of rows are
built and a frame has been painted (the runs index: once its list is built).
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
INSTALL = "apt-get install -y chromium chromium-driver, and pip install selenium (the dev extra)"


class BrowserMissing(RuntimeError):
    """No headless browser can be started here."""


def find_binaries() -> tuple[str, str]:
    browser = next((p for p in map(shutil.which, BROWSERS) if p), None)
    driver = shutil.which("chromedriver")
    if not browser or not driver:
        missing = ", ".join(n for n, p in (("chromium", browser), ("chromedriver", driver)) if not p)
        raise BrowserMissing(f"{missing} not found on PATH: {INSTALL}")
    return browser, driver


def start_chromium(width: int = 1280, height: int = 900) -> Any:
    """A headless Chromium under selenium's control; the caller quits it."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as exc:
        raise BrowserMissing(f"selenium is not importable ({exc}): {INSTALL}") from exc
    browser, driver = find_binaries()
    options = webdriver.ChromeOptions()
    options.binary_location = browser
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-extensions",
        f"--window-size={width},{height}",
    ):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service(driver), options=options)


def open_report(driver: Any, report: Path, timeout: float = 30.0, fragment: str = "") -> float:
    """Load the report (with `#fragment`, if given); returns the page's own ready time in ms since navigation start."""
    return open_url(driver, Path(report).resolve().as_uri() + (f"#{fragment}" if fragment else ""), timeout)


def open_url(driver: Any, url: str, timeout: float = 30.0) -> float:
    """Load a viewer page (a report file's URI, or a page of the loopback server) and wait until it is ready.
    A blank page first: a URL that differs from the current one only in its fragment would not load anew."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(url)
    WebDriverWait(driver, timeout).until(lambda d: d.execute_script("return window.viewerReadyAt !== undefined"))
    return float(driver.execute_script("return window.viewerReadyAt"))


def console_errors(driver: Any) -> list[str]:
    """Severe console messages so far (script errors, CSP violations)."""
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
