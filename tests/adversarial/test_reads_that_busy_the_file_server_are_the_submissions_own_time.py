"""Code under test that hangs while its processes keep its file server busy scores the submission's 0.0.

On the fuse-overlayfs storage driver, reads of a container's root filesystem are served
by a host process outside its cgroup (sandbox/docker/fuse.py). A module that, at import,
starts processes that stat image paths in a loop and then hangs held its own readers back
behind that process: measured here, its timeout read as starvation (StarvedGrading, a
scoring_error) in both attempts, so a wrong answer escaped its zero at will. Counting the
server's CPU as the sandbox's own use makes the hang the submission's.

Measured on a 2-core host with one busy loop per core (a load under which a sandbox that
only spins still gets 0.9 of its CPU, 7% waiting): the module's cgroup used 0.29-0.38 CPU,
its server 0.28-0.41, and its processes waited 40-55% of the time, so the cgroup alone
read as starved; with the server counted, 0.57-0.78 CPU, its own.

Whether the cgroup alone reads as starved depends on the host's load, which a test cannot
fix, so the first test checks the evidence itself, as a ratio: the readers' server does
about as much CPU work as they do, and it is counted in the sandbox's use. The second runs
the attack end to end on the host as it is and needs the verdict to be the submission's.

Where the image's /opt is a read-only bind of a host copy (sandbox/docker/host_tree.py), the
readers still keep the server busy: every path walk from `/` has it revalidate `opt` first.
"""

from __future__ import annotations

import asyncio

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import grade_final
from sandbox_env.families.django import FAMILY as DJANGO
from sandbox_env.grading.grader import Grader
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.usage import between

pytestmark = pytest.mark.docker

GRADING_LIMIT = 20  # seconds: the hang meets the grading's limit; blame reads its last 10 s
SERVED_SHARE = 0.25  # the server's CPU against the readers' own: measured 0.7-1.0 on this driver

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


READER = 'import os\nwhile True:\n    try: os.stat("/opt/venv/lib/missing")\n    except OSError: pass'
READERS = f"for i in 1 2; do python3 -c '{READER}' & done; sleep 6; kill %1 %2"


async def test_the_cpu_of_the_file_server_that_the_readers_keep_busy_counts_as_the_sandboxs_own(backend, sandbox):
    start = backend.usage_point(sandbox.id)
    if start is None:
        pytest.fail("no usage evidence for a local sandbox: the cgroup was not found")
    await sandbox.exec(READERS, timeout=30)
    await asyncio.sleep(0.2)
    usage = between(start, backend.usage_point(sandbox.id), cpus=1.0)
    if docker_client().info().get("Driver") != "fuse-overlayfs":
        pytest.skip("this engine's storage driver serves the root filesystem from no host process")
    assert usage.served is not None, "the fuse-overlayfs server of the sandbox was not found or not read"
    own = usage.cpu - usage.served
    assert own > 0.5, usage
    print(f"\nreaders: {own:.2f} s of CPU in the cgroup, {usage.served:.2f} s in their server")
    assert usage.served >= SERVED_SHARE * own, usage


async def test_a_module_that_hangs_while_its_readers_busy_the_file_server_scores_zero_without_a_scoring_error(backend, image):
    task = DJANGO.compile_task(TASKS_DIR / "django" / "dj01")
    module = task.grading["deliverables"][0]
    grade = await grade_final(task, {"files": {module: STAT_STORM_THEN_HANG}}, Grader(backend, image, GRADING_LIMIT))
    assert grade.score == 0.0 and grade.scoring_error is None, grade.reason
