"""Busy-looping wrong answers graded all at once, as many as the budget admits, each score their own 0.0.

The attack: a wrong answer that spins instead of failing. Graded alone, it reaches its time
limit and scores 0.0. Graded beside others like it (which the same policy's other rollouts
supply), each sandbox gets a fraction of a CPU; when limits were judged on the wall clock,
a sandbox that got under half a CPU read as starved, a harness fault, rescheduled again and
again: the wrong answer escaped its zero whenever the machine was busy. Limits now count
the sandbox's own time and a backstop counts the CPU it consumed (sandbox/verdicts.py,
judge_backstop), so a spinning answer reaches its limit, slowly, at any share of a CPU the
budget admits.

Every answer here is graded by its family once (`family.grade`, not `grade_final`, which
would retry a harness fault): each must be a plain 0.0, never a scoring_error. The kinds: a
FastAPI handler that spins, an app that spins at import, a handler that spins in forked
workers, and a Django module that spins at import. A grading sandbox also outweighs the
rollouts beside it for the CPU (`favour`), so busy rollouts cannot starve a grading.
"""

from __future__ import annotations

import asyncio

import pytest

from sandbox_env.constants import GRADING_CPU_SHARES, TASKS_DIR
from sandbox_env.families.django import FAMILY as DJANGO
from sandbox_env.families.fastapi import FAMILY as FASTAPI
from sandbox_env.grading.grader import Grader
from sandbox_env.sandbox.budget import default_max_sandboxes
from sandbox_env.sandbox.docker import docker_client

pytestmark = pytest.mark.docker

GRADING_LIMIT = 10  # seconds of the sandbox's own time per grading

SPINS_IN_A_HANDLER = """
from fastapi import FastAPI

app = FastAPI()


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def anything(path: str):
    while True:
        pass
"""

SPINS_AT_IMPORT = """
from fastapi import FastAPI

app = FastAPI()
while True:
    pass
"""

SPINS_IN_WORKERS = """
import multiprocessing

from fastapi import FastAPI

app = FastAPI()


def spin(_):
    while True:
        pass


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def anything(path: str):
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(spin, range(2))
"""

MODULE_SPINS_AT_IMPORT = """
while True:
    pass
"""


def _answers() -> list[tuple[str, object, object, dict]]:
    fastapi_task = FASTAPI.compile_task(TASKS_DIR / "fastapi" / "fastapi_status_204")
    django_task = DJANGO.compile_task(TASKS_DIR / "django" / "dj01")
    module = django_task.grading["deliverables"][0]
    kinds = [
        ("a handler that spins", FASTAPI, fastapi_task, {"app.py": SPINS_IN_A_HANDLER}),
        ("an app that spins at import", FASTAPI, fastapi_task, {"app.py": SPINS_AT_IMPORT}),
        ("a handler that spins in forked workers", FASTAPI, fastapi_task, {"app.py": SPINS_IN_WORKERS}),
        ("a module that spins at import", DJANGO, django_task, {module: MODULE_SPINS_AT_IMPORT}),
    ]
    n = default_max_sandboxes()
    return [kinds[i % len(kinds)] for i in range(n)]


async def test_as_many_busy_wrong_answers_as_the_budget_admits_each_score_zero_and_none_is_a_harness_fault(backend, image):
    grader = Grader(backend, image, GRADING_LIMIT)
    answers = _answers()
    grades = await asyncio.gather(*(family.grade({"files": files}, task, grader) for _, family, task, files in answers))
    print(f"\n{len(answers)} busy wrong answers graded at once (the budget's limit on this machine):")
    for (kind, *_), grade in zip(answers, grades, strict=True):
        print(f"  {kind}: {grade.score} | {grade.reason[:160]}")
    for (kind, *_), grade in zip(answers, grades, strict=True):
        assert grade.scoring_error is None, f"{kind}: a harness fault, so it would be rescheduled: {grade.scoring_error}"
        assert grade.score == 0.0, f"{kind}: {grade.reason}"


async def test_a_grading_sandbox_outweighs_every_other_sandbox_for_the_cpu(backend, image):
    async with backend.sandbox(image) as rollout, backend.sandbox(image) as grading:
        await backend.favour(grading.id)
        shares = {sb.id: docker_client().api.inspect_container(sb.id)["HostConfig"]["CpuShares"] for sb in (rollout, grading)}
    assert shares[grading.id] == GRADING_CPU_SHARES
    assert shares[rollout.id] in (0, 1024)  # the engine's default weight
    assert GRADING_CPU_SHARES >= 4 * 1024
