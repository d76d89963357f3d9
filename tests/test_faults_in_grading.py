"""A correct answer whose grading container fails from outside is retried, never the submission's zero.

The reference of one cheap task per family is graded through the one production entry
(`grade_final`) while a fault strikes the grading container from outside, through the real
engine (tests/fault_kit.py), once its grader program runs: `docker kill`, `docker rm -f`,
`docker pause`, SIGSTOP to the agent by root on the host, `docker update --cpus 0.01`.
Struck once, the grade is retried in a fresh container and scores 1.0; struck on every
attempt, it is a harness fault (score 0.0 with `scoring_error`), never a plain 0.0.
The orm family grades on the host (no grading container): its faults are those of the
final collect (test_faults_in_rollouts.py).

A grading container whose limits are lowered from outside while its grader runs (`docker
update --pids-limit`, `--memory` cut to a few MiB over what it holds) makes a correct
answer run out of forks or memory: the limit is not the one the backend set, so hitting it
is not the submission's doing (blame rule 5, docs/architecture.md): retried, then a harness fault.

A grader program killed by root on the host (`kill -9` of the HTTP driver's host pid,
found with `docker top`) while the app is importing or serving: the app's processes are
fenced (they may signal only themselves), so the signal came from outside: retried, then a
harness fault.

Under a host CPU hog (several busy loops per core) with a tight grading limit, every
reference scores 1.0 or is a harness fault: the wall-clock backstop of a starved run is
never the submission's.

A transient engine error on create (`docker.errors.APIError`) is raised by a wrapper
around the SDK's `containers.create`: it tests the harness's handling of the error, the
containers that do get made are real.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys

import pytest
from docker.errors import APIError
from fault_kit import (
    FAULTS,
    GRADER_PROGRAMS,
    Injector,
    kill_program,
    leftovers,
    lower_memory_limit,
    lower_pids_limit,
    starve,
)

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import get_family, grade_final
from sandbox_env.grading.grader import Grader
from sandbox_env.sandbox.docker import DockerBackend

pytestmark = pytest.mark.docker

TASKS = {"fastapi": "fastapi_path_order", "django": "dj01", "smoke": "smoke_hello"}
GRADING_LIMIT = 60  # seconds a grading may take; generous, the machine is loaded
STARVED_LIMIT = 4  # seconds of the sandbox's own time: a starved run waits GRADING_BACKSTOP_FACTOR of them


def reference(family: str):
    """(task, final state) of the family's cheap task with its reference answer."""
    folder = TASKS_DIR / family / TASKS[family]
    task = get_family(family).compile_task(folder)
    if family == "fastapi":
        return task, {"files": {"app.py": (folder / "reference.py").read_text()}}
    if family == "django":
        return task, {"files": {d: (folder / "reference" / d).read_text() for d in task.grading["deliverables"]}}
    return task, {"files": {"hello.txt": task.grading["expected"]}}


@pytest.fixture
def own_backend():
    """A backend of the test's own, so the injector strikes only its containers."""
    b = DockerBackend()
    yield b
    b.teardown()
    assert leftovers(b.client_id) == []


async def _grade(backend, image, family: str, fault, times: int, limit: float = GRADING_LIMIT, every_attempt: bool = True):
    """Grade the family's reference with `fault` struck on its first `times` grading containers.

    `every_attempt` False: an attempt may succeed before the fault has been struck `times` times.
    """
    task, final = reference(family)
    with Injector(backend.client_id, "grader", GRADER_PROGRAMS[family], fault, times) as injector:
        grade = await grade_final(task, final, Grader(backend, image, limit))
    struck = len(injector.hits) == times if every_attempt else 1 <= len(injector.hits) <= times
    assert injector.errors == [] and struck, (injector.errors, injector.hits, grade.score, grade.reason)
    return grade


@pytest.mark.parametrize("family", ["fastapi", "django"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_grading_container_struck_from_outside_once_is_retried_and_the_correct_answer_scores_one(
    own_backend, image, family, fault
):
    grade = await _grade(own_backend, image, family, FAULTS[fault], times=1)
    assert grade.score == 1.0 and grade.scoring_error is None, grade.reason


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_grading_container_struck_from_outside_on_every_attempt_is_a_harness_fault(own_backend, image, fault):
    grade = await _grade(own_backend, image, "fastapi", FAULTS[fault], times=2)
    assert grade.score == 0.0 and grade.scoring_error, grade.reason
    assert "the same in 2 attempts" in grade.scoring_error, grade.scoring_error


@pytest.mark.slow  # quicker siblings: the host-hog case below, tests/test_blame.py, test_fastapi_docker's starved app
@pytest.mark.parametrize("family", ["fastapi", "django"])
async def test_a_grading_container_starved_of_cpu_from_outside_never_gives_a_correct_answer_a_plain_zero(
    own_backend, image, family
):
    # limits count the sandbox's own time: a starved run may still finish (1.0) or meet its backstop (a harness fault)
    grade = await _grade(own_backend, image, family, starve, times=2, limit=STARVED_LIMIT, every_attempt=False)
    assert grade.score == 1.0 or grade.scoring_error, grade.reason


LIMIT_CUTS = {"pids": ("fastapi", lower_pids_limit), "memory": ("django", lower_memory_limit)}
SQUEEZED_LIMIT = 20  # seconds: an app squeezed for memory may thrash until its backstop


@pytest.mark.parametrize("limit, times", [("pids", 1), ("pids", 2), ("memory", 1)])  # a squeezed run is slow: memory once
async def test_a_grading_container_whose_limit_is_lowered_from_outside_never_gives_a_correct_answer_a_plain_zero(
    own_backend, image, limit, times
):
    family, fault = LIMIT_CUTS[limit]
    grade = await _grade(own_backend, image, family, fault, times=times, limit=SQUEEZED_LIMIT)
    if times == 1:
        assert grade.score == 1.0 and grade.scoring_error is None, grade.reason
    else:
        assert grade.score == 0.0 and grade.scoring_error, grade.reason
        assert "changed from outside" in grade.scoring_error, grade.scoring_error


@pytest.mark.parametrize("times", [1, 2])
async def test_a_grader_program_killed_from_outside_never_gives_a_correct_answer_a_plain_zero(own_backend, image, times):
    grade = await _grade(own_backend, image, "fastapi", kill_program(GRADER_PROGRAMS["fastapi"]), times=times)
    if times == 1:
        assert grade.score == 1.0 and grade.scoring_error is None, grade.reason
    else:
        assert grade.score == 0.0 and grade.scoring_error, grade.reason
        # killed while importing or serving (the fence), or before the driver's first note: the harness's either way
        assert "the same in 2 attempts" in grade.scoring_error, grade.scoring_error


class _FailingCreate:
    """The SDK's `containers` collection whose first `failures` creates raise an engine error."""

    def __init__(self, containers, failures: int) -> None:
        self._containers, self.failures = containers, failures

    def create(self, **spec):
        if self.failures > 0:
            self.failures -= 1
            raise APIError("500 Server Error: Internal Server Error (injected: the engine failed this create)")
        return self._containers.create(**spec)

    def __getattr__(self, name):
        return getattr(self._containers, name)


class _FlakyEngine:
    """The backend's `DockerClient`, but for its `containers` collection (a property the SDK lets no one set)."""

    def __init__(self, client, failures: int) -> None:
        self._client = client
        self.containers = _FailingCreate(client.containers, failures)

    def __getattr__(self, name):
        return getattr(self._client, name)


@pytest.mark.parametrize("failures, expected_score", [(1, 1.0), (2, 0.0)])
async def test_an_engine_error_creating_the_grading_container_is_retried_then_reported(
    own_backend, image, monkeypatch, failures, expected_score
):
    async with own_backend.sandbox(image):  # a first sandbox, unhindered: the engine's answer on SYS_RESOURCE is known
        pass
    monkeypatch.setattr(own_backend, "_docker", _FlakyEngine(own_backend._docker, failures))
    task, final = reference("smoke")
    grade = await grade_final(task, final, Grader(own_backend, image, GRADING_LIMIT))
    assert grade.score == expected_score, grade.reason
    assert (grade.scoring_error is None) == (expected_score == 1.0), grade.scoring_error
    if expected_score == 0.0:
        assert "the engine failed this create" in grade.scoring_error


HOGS_PER_CORE = 3  # busy loops per core on the host (tests/test_load.py runs two in all, through vf-eval)
HOG_LIMIT = 20  # seconds: a tight grading limit, so the starved run meets its wall-clock backstop


async def test_correct_answers_graded_under_a_host_cpu_hog_with_a_tight_limit_score_one_or_are_harness_faults(own_backend, image):
    """Every reference scores 1.0 or carries a scoring_error; a starved backstop is never a plain zero."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(HOGS_PER_CORE * (os.cpu_count() or 1))]
    try:
        runs = [reference(family) for family in ("fastapi", "django") for _ in range(2)]
        grades = await asyncio.gather(*(grade_final(t, f, Grader(own_backend, image, HOG_LIMIT)) for t, f in runs))
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    print("\nunder the hog:", [(g.score, bool(g.scoring_error)) for g in grades])
    for grade in grades:
        assert grade.score == 1.0 or grade.scoring_error, grade.reason
