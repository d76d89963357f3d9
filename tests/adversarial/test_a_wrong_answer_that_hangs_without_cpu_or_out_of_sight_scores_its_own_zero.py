"""A wrong answer that hangs cheaply, or burns its CPU where its grader does not look, still scores its own 0.0.

The blame rule (sandbox/verdicts.py, judge_backstop; http_driver.py's Clock): a limit counts
the sandbox's own time, CPU or active (wall minus waiting for a CPU); only a run that reaches
the wall-clock backstop without that is "starved", a harness fault that the trainer
reschedules, and the host checks that claim against its own cgroup reading. A wrong answer
gains from turning its 0.0 into "starved". The attacks:

- hangs that use no CPU: a handler asleep, blocked on a pipe nobody writes, deadlocked on
  its own lock; a Django module asleep at import;
- CPU burnt out of the driver's sight: a handler whose work runs in grandchildren that
  escape its wait (double fork: reparented to pid 1, reaped there, so no process of the app
  ever holds their CPU time), short-lived ones one after another; a spinning handler that
  such grandchildren keep waiting for a CPU, so that the driver's clock reads "starved" and
  the run reaches its wall-clock backstop (the host's cgroup reading must overrule the
  driver's "harness"); and an app whose import sleeps while a setsid'd daemon of it spins.

Each is graded once by its family (no retry of a harness fault), with a small limit: each must
be a plain 0.0, never a scoring_error.
"""

from __future__ import annotations

import time

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.django import FAMILY as DJANGO
from sandbox_env.families.fastapi import FAMILY as FASTAPI
from sandbox_env.grading.grader import Grader

pytestmark = pytest.mark.docker

GRADING_LIMIT = 10  # seconds of the sandbox's own time per grading

ROUTE = '@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])'

ASLEEP_IN_A_HANDLER = f"""
import time

from fastapi import FastAPI

app = FastAPI()


{ROUTE}
def anything(path: str):
    time.sleep(3600)
"""

BLOCKED_ON_A_PIPE = f"""
import os

from fastapi import FastAPI

app = FastAPI()
_read, _write = os.pipe()


{ROUTE}
def anything(path: str):
    return os.read(_read, 1)
"""

DEADLOCKED_ON_ITS_OWN_LOCK = f"""
import threading

from fastapi import FastAPI

app = FastAPI()
_lock = threading.Lock()


{ROUTE}
def anything(path: str):
    with _lock:
        with _lock:
            return {{}}
"""

GRANDCHILDREN_THAT_ESCAPE_THE_WAIT = f"""
import os
import time

from fastapi import FastAPI

app = FastAPI()


def _escaped_burst(seconds):
    child = os.fork()
    if child == 0:
        if os.fork() == 0:  # the grandchild: its parent exits at once, pid 1 reaps it
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
        os._exit(0)
    os.waitpid(child, 0)


{ROUTE}
def anything(path: str):
    while True:
        _escaped_burst(0.05)
        time.sleep(0.01)
"""

# The driver's clock made to read "starved": the handler spins (so its thread is always runnable)
# while a launcher keeps about twenty short-lived grandchildren spinning beside it, each reaped by
# pid 1 once done, so their CPU never shows in any process of the app's side. The handler's thread
# waits for a CPU that, as far as /proc shows, nobody of the app's used: its active time hardly
# grows and the run reaches the wall-clock backstop, blamed on the harness by the driver. The
# host's cgroup reading has the grandchildren's CPU and must overrule that claim.
STARVED_BY_ITS_OWN_INVISIBLE_GRANDCHILDREN = f"""
import os
import time

from fastapi import FastAPI

app = FastAPI()


def _burst(seconds):
    if os.fork() == 0:
        if os.fork() == 0:
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
        os._exit(0)
    os.wait()


def _launcher():
    if os.fork() == 0:
        os.setsid()
        while True:
            _burst(0.03)
            time.sleep(0.03)


{ROUTE}
def anything(path: str):
    _launcher()
    while True:
        pass
"""

ASLEEP_AT_IMPORT_BESIDE_A_SPINNING_DAEMON = """
import os
import time

from fastapi import FastAPI

app = FastAPI()

if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        while True:
            pass
    os._exit(0)
time.sleep(3600)
"""

MODULE_ASLEEP_AT_IMPORT = """
import time

time.sleep(3600)
"""


async def _grade_fastapi_once(backend, image, source: str):
    task = FASTAPI.compile_task(TASKS_DIR / "fastapi" / "fastapi_status_204")
    return await FASTAPI.grade({"files": {"app.py": source}}, task, Grader(backend, image, GRADING_LIMIT))


def _assert_own_zero(grade) -> None:
    assert grade.scoring_error is None, f"a harness fault, so it would be rescheduled: {grade.scoring_error}"
    assert grade.score == 0.0, grade.reason


@pytest.mark.parametrize(
    "source",
    [ASLEEP_IN_A_HANDLER, BLOCKED_ON_A_PIPE, DEADLOCKED_ON_ITS_OWN_LOCK],
    ids=["asleep in a handler", "blocked on a pipe", "deadlocked on its own lock"],
)
async def test_a_handler_that_hangs_without_using_cpu_scores_its_own_zero(backend, image, source):
    t0 = time.monotonic()
    grade = await _grade_fastapi_once(backend, image, source)
    _assert_own_zero(grade)
    assert time.monotonic() - t0 < 120, "judged at its limit, not at the backstop's leisure"


async def test_a_handler_whose_grandchildren_escape_its_wait_and_spin_scores_its_own_zero(backend, image):
    grade = await _grade_fastapi_once(backend, image, GRANDCHILDREN_THAT_ESCAPE_THE_WAIT)
    _assert_own_zero(grade)


async def test_a_handler_starved_by_its_own_invisible_grandchildren_scores_its_own_zero(backend, image):
    t0 = time.monotonic()
    grade = await _grade_fastapi_once(backend, image, STARVED_BY_ITS_OWN_INVISIBLE_GRANDCHILDREN)
    _assert_own_zero(grade)
    assert time.monotonic() - t0 < 120


async def test_an_import_that_sleeps_beside_a_spinning_daemon_of_its_own_scores_its_own_zero(backend, image):
    grade = await _grade_fastapi_once(backend, image, ASLEEP_AT_IMPORT_BESIDE_A_SPINNING_DAEMON)
    _assert_own_zero(grade)


async def test_a_django_module_asleep_at_import_scores_its_own_zero(backend, image):
    task = DJANGO.compile_task(TASKS_DIR / "django" / "dj01")
    module = task.grading["deliverables"][0]
    grade = await DJANGO.grade({"files": {module: MODULE_ASLEEP_AT_IMPORT}}, task, Grader(backend, image, GRADING_LIMIT))
    _assert_own_zero(grade)
