"""The pytest plugin of pytest_runner.py: records what pytest collected and how each test ended.

It keeps plain data only; the runner sends it over the report channel. The code
under test runs in the same process and can patch pytest, so nothing here is
trusted by the host on its own: the host checks canary outcomes it alone knows.
"""

from __future__ import annotations

import importlib
import time
from typing import Any

MAX_TEXT = 2000


def _text(report: Any) -> str:
    try:
        text = report.longreprtext
    except Exception:  # noqa: BLE001 - a report that cannot render is still a failure
        text = repr(getattr(report, "longrepr", ""))
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT // 4] + "\n[...]\n" + text[-MAX_TEXT * 3 // 4 :]


class Recorder:
    """Collects nodeids, per-test outcomes, collection errors and deliverable imports."""

    def __init__(self, modules: list[str]) -> None:
        self.modules = modules
        self.collection_done = False
        self.collected: list[str] = []
        self.collection_errors: dict[str, str] = {}
        self.outcomes: dict[str, str] = {}
        self.failures: dict[str, str] = {}
        self.imported: dict[str, Any] = {}
        self.cpu: dict[str, float] = {}  # CPU seconds of the process at each stage, to see what a run costs

    def _mark(self, stage: str) -> None:
        self.cpu[stage] = round(time.process_time(), 3)

    def pytest_configure(self, config: Any) -> None:
        self._mark("configured")

    def pytest_sessionfinish(self, session: Any) -> None:
        self._mark("finished")

    def pytest_collectreport(self, report: Any) -> None:
        if report.failed:
            self.collection_errors[report.nodeid] = _text(report)

    def pytest_collection_finish(self, session: Any) -> None:
        self._mark("collected")
        self.collection_done = True
        self.collected = [item.nodeid for item in session.items]
        for name in self.modules:  # most are imported by now; this records why one is not
            try:
                importlib.import_module(name)
                self.imported[name] = True
            except BaseException as exc:  # noqa: BLE001 - SystemExit from a module is its failure too
                self.imported[name] = f"{type(exc).__name__}: {exc}"[:500]

    def pytest_runtest_logreport(self, report: Any) -> None:
        nodeid = report.nodeid
        previous = self.outcomes.get(nodeid)
        if report.when == "setup":
            outcome = "error" if report.failed else "skipped" if report.skipped else "incomplete"
        elif report.when == "call":
            outcome = report.outcome  # passed | failed | skipped
        elif report.failed and previous not in ("failed", "error"):
            outcome = "error"  # the test passed but its teardown failed
        else:
            return
        self.outcomes[nodeid] = outcome
        if outcome in ("failed", "error"):
            self.failures[nodeid] = _text(report)

    def report(self) -> dict[str, Any]:
        return {
            "collection_done": self.collection_done,
            "collected": self.collected,
            "collection_errors": self.collection_errors,
            "outcomes": self.outcomes,
            "failures": self.failures,
            "imported": self.imported,
            "cpu": self.cpu,
        }
