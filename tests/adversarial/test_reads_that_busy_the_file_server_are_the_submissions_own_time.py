"""Code under test that hangs while its processes keep its file server busy scores the submission's 0.0.

On the fuse-overlayfs storage driver, reads of a container's root filesystem are served
by a host process outside its cgroup (sandbox/docker/fuse.py). A module that, at import,
starts processes that stat image paths in a loop and then hangs held its own readers back
behind that process: measured here, its timeout read as starvation (StarvedRun, a
scoring_error) in both attempts, so a wrong answer escaped its zero at will. Counting the
server's CPU as the sandbox's own use makes the hang the submission's.

The host runs one busy loop per core meanwhile, a load under which a sandbox that only
spins still gets 0.9 of its CPU (7% waiting). Measured on a 2-core host: the module's
cgroup used 0.29-0.38 CPU, its server 0.28-0.41, and its processes waited 40-55% of the
time, so the cgroup alone read as starved; with the server counted, 0.57-0.78 CPU, its
own. A quiet host gives the readers half a CPU and no case.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import grade_final
from sandbox_env.families.django import FAMILY as DJANGO
from sandbox_env.grading import Grader

pytestmark = pytest.mark.docker

GRADING_LIMIT = 20  # seconds: the hang meets the grading run's limit; blame reads its last 10 s
HOGS_PER_CORE = 1

STAT_STORM_THEN_HANG = '''
import subprocess
import time

READER = """
import os
i = 0
while True:
    i += 1
    try:
        os.stat("/opt/venv/lib/missing%d" % i)
    except OSError:
        pass
"""
for _ in range(2):
    subprocess.Popen(["python3", "-c", READER], start_new_session=True)
while True:
    time.sleep(1)
'''


async def test_a_module_that_hangs_while_its_readers_busy_the_file_server_scores_zero_without_a_scoring_error(backend, image):
    task = DJANGO.compile_task(TASKS_DIR / "django" / "dj01")
    module = task.grading["deliverables"][0]
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS_PER_CORE * (os.cpu_count() or 1))]
    try:
        grade = await grade_final(task, {"files": {module: STAT_STORM_THEN_HANG}}, Grader(backend, image, GRADING_LIMIT))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert grade.score == 0.0 and grade.scoring_error is None, grade.reason
