"""Verification's shared grading sandboxes give the verdicts that one fresh sandbox per grading gives.

verify/batched.py grades many deliverables of one fastapi task in one driver run; grading/reused.py
keeps a grading sandbox for several gradings. Both exist only to make verification cheaper, so the
test is equality: the same deliverables, graded both ways in the real image, pass and fail the same
checks; a deliverable that leaves a process or files behind changes nothing for the next one; and
what a batch cannot decide is graded again alone.
"""

from __future__ import annotations

import asyncio

import pytest

from sandbox_env.families import grade_final
from sandbox_env.families.fastapi import APP_PATH
from sandbox_env.generate import api_store
from sandbox_env.verify.batched import decidable

LEAVES_A_DAEMON = """\
import subprocess
subprocess.Popen(["sleep", "600"], start_new_session=True)
open("/workspace/left_behind.py", "w").write("LEFT = True\\n")
open("/tmp/left_behind", "w").write("x")
from fastapi import FastAPI
app = FastAPI()
"""

# defines `app` only when nothing an earlier deliverable left is in sight: graded alone, it serves
SEES_WHAT_WAS_LEFT = """\
import os
left = [p for p in os.listdir("/proc") if p.isdigit() and b"sleep" in open(f"/proc/{p}/cmdline", "rb").read()]
left += [p for p in ("/workspace/left_behind.py", "/tmp/left_behind") if os.path.exists(p)]
if not left:
    from fastapi import FastAPI
    app = FastAPI()
"""


def _record(index: int) -> dict:
    return api_store.read(api_store.GENERATED_FASTAPI_FILE)[index]


def _verdicts(grades) -> list[tuple[float, list[bool], bool]]:
    return [(g.score, [c["passed"] for c in g.checks], bool(g.scoring_error)) for g in grades]


@pytest.mark.docker
async def test_a_batch_passes_and_fails_the_same_checks_as_gradings_one_by_one(backend, image):
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify.batched import grade_sources
    from sandbox_env.verify.fastapi import CONTROLS
    from sandbox_env.verify.mutants import FASTAPI_OPERATORS, generate, one_per_operator

    record = _record(3)
    row = api_store.compile_generated_fastapi(record)
    mutants = one_per_operator(generate(record["reference"], FASTAPI_OPERATORS))
    sources = [record["reference"], *CONTROLS.values(), *(m.source for m in mutants)]
    grader = Grader(backend, image)
    batched = await grade_sources(row, sources, grader, concurrency=2)
    alone = await asyncio.gather(*(grade_final(row, {"files": {APP_PATH: s}}, grader) for s in sources))
    assert _verdicts(batched) == _verdicts(alone)
    assert batched[0].score == 1.0 and all(g.score < 1.0 for g in batched[1:])


@pytest.mark.docker
async def test_what_one_job_of_a_batch_leaves_behind_never_reaches_the_next(backend, image):
    from sandbox_env.grading.grader import Grader
    from sandbox_env.verify.batched import grade_batch

    row = api_store.compile_generated_fastapi(_record(0))
    grader = Grader(backend, image)
    alone = await grade_final(row, {"files": {APP_PATH: SEES_WHAT_WAS_LEFT}}, grader)
    _, after = await grade_batch(row, [LEAVES_A_DAEMON, SEES_WHAT_WAS_LEFT], grader)
    # graded alone it has an app (and fails the task's checks on their answers, not on a missing app)
    assert "no module-level `app`" not in alone.reason
    assert "no module-level `app`" not in after.reason, after.reason


@pytest.mark.docker
async def test_a_kept_sandbox_is_emptied_of_the_previous_deliverable(backend, image):
    from sandbox_env.grading.reused import ReusedSandboxGrader

    row = api_store.compile_generated_fastapi(_record(0))
    grader = ReusedSandboxGrader(backend, image)
    try:
        first = await grade_final(row, {"files": {APP_PATH: LEAVES_A_DAEMON}}, grader)
        after = await grade_final(row, {"files": {APP_PATH: SEES_WHAT_WAS_LEFT}}, grader)
        assert grader.kept == 1  # the second grading ran in the first one's sandbox
    finally:
        await grader.stop()
    assert not first.scoring_error and "no module-level `app`" not in first.reason
    assert "no module-level `app`" not in after.reason, after.reason


def test_a_job_the_driver_blamed_on_the_host_or_cut_for_size_is_graded_again_alone():
    done = {"stage": "done", "sessions": [{"responses": [{"status": 200}]}], "stalled": None}
    assert decidable(done)
    assert not decidable({**done, "stalled": {"blame": "harness", "kind": "run"}})
    assert decidable({**done, "stalled": {"blame": "app", "kind": "step"}})
    assert not decidable({**done, "sessions": [{"responses": [{"status": 200, "over_budget": True}]}]})
    assert not decidable({**done, "stage": "serving"})


@pytest.mark.docker
async def test_a_kept_sandbox_gives_its_slot_back_to_a_sandbox_that_waits_for_one(image):
    """With a budget of one sandbox, a rollout's container asked for after a kept grading still starts:
    the idle kept sandbox is removed (grading/reused.IDLE_SECONDS) instead of holding the budget forever."""
    from sandbox_env.grading.reused import ReusedSandboxGrader
    from sandbox_env.sandbox.docker import DockerBackend

    one = DockerBackend(max_sandboxes=1)
    grader = ReusedSandboxGrader(one, image)
    try:
        row = api_store.compile_generated_fastapi(_record(0))
        graded = await grade_final(row, {"files": {APP_PATH: _record(0)["reference"]}}, grader)
        assert graded.score == 1.0
        sid = await asyncio.wait_for(one.acquire(image), timeout=300)  # a deadlock would wait forever
        await one.delete(sid)
        assert grader.kept == 0
    finally:
        await grader.stop()
        one.teardown()
