"""Grader of the django family: the frozen acceptance tests, run by pytest in this process.

The order is the point. The report channel opens first. pytest and pytest-django are
imported from the image before /workspace is on sys.path. The frozen test files, with
the host's canaries among them, are written from the request just before pytest starts,
so nothing the rollout left behind can stand in for them. A "started" frame goes out
before the code under test can run: if the process then dies (an os._exit, a crash, the
time limit), the host sees that pytest started and never finished. A "loading" frame
goes out just before a deliverable module first runs (Announcer), so the host knows
whether a failure of pytest itself came after the code under test had run. Before the code under
test is imported, integrity.Guard notes what the verdict depends on; it streams every
test's outcome and every problem it finds as frames, and the final report carries its
end-of-run check (see integrity.py). The frozen tests' comparisons are observations
(observations.py): their operands leave as frames and the host compares them with expected
values that never enter this process (django_suite.py).

Request: {"settings": "project.settings", "files": {path: text}, "tests": [path, ...],
          "modules": ["shop.querysets", ...], "ini": "pytest.ini"}
"""

from __future__ import annotations

import os
import sys
import time
import traceback

os.environ["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only the plugins named below

# Trusted libraries first: a runner started ahead of time imports them while it waits, the grader's
# own modules (the integrity guard and the recorder) among them, before any workspace is importable.
import importlib  # noqa: E402

import django.test  # noqa: E402, F401
import integrity  # noqa: E402
import observations  # noqa: E402 - the frozen tests import it: bound now, before any code under test
import pytest  # noqa: E402, F401
import pytest_django.plugin  # noqa: E402, F401
import pytest_report_plugin  # noqa: E402, F401
from report_channel import grader_output_tail, open_channel  # noqa: E402

# What every grading imported after its request, imported while it waits too (about a hundred
# modules: pytest's default plugins, the sqlite backend and the migration machinery that creates the
# test database, and what they use). Modules only: no settings are read, no connection is made.
FIRST_USE_MODULES = (
    *(f"_pytest.{name}" for name in integrity.PYTEST_PLUGINS),
    "django.core.cache.backends.db",
    "django.core.cache.backends.locmem",
    "django.core.management.commands.createcachetable",
    "django.core.management.commands.migrate",
    "django.db.backends.sqlite3.base",
    "django.db.backends.sqlite3.client",
    "django.db.backends.sqlite3.creation",
    "django.db.backends.sqlite3.features",
    "django.db.backends.sqlite3.introspection",
    "django.db.backends.sqlite3.operations",
    "django.db.backends.sqlite3.schema",
    "django.db.migrations.autodetector",
    "django.db.migrations.executor",
    "django.db.migrations.loader",
    "django.db.migrations.optimizer",
    "django.db.migrations.questioner",
    "django.db.models.sql.compiler",
    "django.utils.translation.reloader",
    "multiprocessing.reduction",
    "pdb",
    "sqlparse",
    "statistics",
    "xml.etree.ElementTree",
)
for _name in FIRST_USE_MODULES:
    try:
        importlib.import_module(_name)
    except ImportError:  # another pytest or Django may lack one: it is imported on first use, as before
        pass

channel, request = open_channel()
WORKSPACE = "/workspace"
started = time.monotonic()


def post(report: dict) -> None:
    """An intermediate frame; the host reads the last one, so a later send() supersedes it."""
    channel.note(report)


class Announcer:
    """A finder first on sys.meta_path that streams a frame before a deliverable module first runs.

    The frame ({"stage": "started", "loading": name}) leaves the process before any code
    under test exists, so the host knows for certain whether a later failure (pytest
    stopped with an internal or usage error, an Exit, a crash) came after the code under
    test had run in this process, whatever that code later does to the process, its
    output or the runner's state. It finds nothing itself.
    """

    def __init__(self, modules: list[str]) -> None:
        self.modules = set(modules)
        self.sent = False

    def find_spec(self, name: str, path=None, target=None):  # noqa: ANN001 - the finder protocol
        if not self.sent and name in self.modules:
            self.sent = True
            post({"stage": "started", "loading": name})
        return None


def write_frozen(files: dict[str, str]) -> None:
    root = os.path.realpath(WORKSPACE)
    for rel, text in files.items():
        path = os.path.realpath(os.path.join(root, rel))
        if not path.startswith(root + os.sep):
            raise ValueError(f"frozen file outside the workspace: {rel!r}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.lexists(path):
            os.remove(path)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(text)


try:
    import pytest
    import pytest_django.plugin  # noqa: F401 - imported from the image before /workspace is importable
    from integrity import Guard
    from pytest_report_plugin import Recorder

    settings = str(request["settings"])
    tests = [str(t) for t in request["tests"]]
    recorder = Recorder([str(m) for m in request.get("modules", [])])
    ini = os.path.join(WORKSPACE, str(request.get("ini") or "pytest.ini"))
    os.chdir(WORKSPACE)
    sys.path.insert(1, WORKSPACE)
    sys.dont_write_bytecode = True
    frozen = request.pop("files")
    write_frozen(frozen)
    # compared values leave as frames and the host compares them; armed before the guard, so that
    # the sink is among the identities the guard watches (a wrapped sink could rewrite what is sent)
    observations.arm(channel.pinned_note())
    guard = Guard(channel, recorder, frozen, WORKSPACE)
    guard.arm()  # identities of what the verdict depends on, before the code under test is imported
    sys.meta_path.insert(0, Announcer(recorder.modules))
    args = [
        "-p",
        "pytest_django.plugin",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:stepwise",
        "-p",
        "no:legacypath",
        "--noconftest",
        "-c",
        ini,
        "--rootdir",
        WORKSPACE,
        "--ds",
        settings,
        "--no-migrations",
        "--continue-on-collection-errors",
        "-q",
        "--tb=short",
        "-W",
        "ignore::pytest.PytestAssertRewriteWarning",
        *tests,
    ]
except BaseException:  # noqa: BLE001 - the harness failed before the code under test ran
    channel.send({"stage": "harness_error", "error": traceback.format_exc()[-3000:]})

recorder.cpu["imports"] = round(time.process_time(), 3)
post({"stage": "started", "observing": True})  # from here, the host expects an observation per comparison
crash = None
try:
    exit_code = int(pytest.main(args, plugins=[recorder, guard]))
except BaseException:  # noqa: BLE001 - e.g. Django failing to start with the deliverable
    exit_code = None
    crash = traceback.format_exc()[-3000:]
try:
    integrity = guard.final()
except BaseException:  # noqa: BLE001 - a check that cannot run is a finding, not a pass
    integrity = {"problems": ["the integrity check failed: " + traceback.format_exc()[-500:]]}
channel.send(
    {
        "stage": "finished",
        "integrity": integrity,
        "exit_code": exit_code,
        "crash": crash,
        **recorder.report(),
        "output_tail": grader_output_tail(3000),
        "seconds": round(time.monotonic() - started, 3),
        "cpu_seconds": round(sum(os.times()[:2]), 3),
    }
)
