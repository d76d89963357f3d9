"""A composed app that gets every component right but skips the app-wide feature is not full marks.

The attack, as a policy that has read the composed tasks would try it: build each group of
endpoints as its single-feature task says, and leave out the one thing that ties them
together (the overridden validation answer, the app-wide dependency, the middleware, the
shared state), or apply it to one group only (the key on one router, the error shape on
the routes' own errors but not the router's 404/405, the journal on the tool routes). Every
composed task keeps such answers as `wrong_*.py`; graded through the real path, each must
score below 1.0 with no scoring error and no tamper flag (its zero share is the model's, not
a harness fault), must lose at least one of the task's interaction checks (the checks that
exist to catch exactly this), and must still pass some component check (it is the realistic
near-miss, not a broken app).
"""

from __future__ import annotations

import asyncio
import tomllib

import pytest
from attack_kit import FASTAPI_TASKS, grade_fastapi

pytestmark = pytest.mark.docker

COMPOSED = sorted(
    f.name for f in FASTAPI_TASKS.iterdir() if (f / "task.toml").is_file() and "[composed]" in (f / "task.toml").read_text()
)


@pytest.mark.parametrize("task_id", COMPOSED)
async def test_each_interaction_wrong_answer_loses_an_interaction_check(backend, image, task_id):
    folder = FASTAPI_TASKS / task_id
    interaction = set(tomllib.loads((folder / "task.toml").read_text())["composed"]["interaction_checks"])
    wrongs = sorted(folder.glob("wrong_*.py"))
    assert len(wrongs) >= 2, f"{task_id} keeps fewer than two interaction wrong answers"
    grades = await asyncio.gather(*(grade_fastapi(backend, image, p.read_text(), task=task_id) for p in wrongs))
    for path, grade in zip(wrongs, grades, strict=True):
        assert grade.scoring_error is None and not grade.tampered, (path.name, grade.reason)
        assert grade.score < 1.0, (path.name, grade.reason)
        failed = {c["name"] for c in grade.checks if not c["passed"]}
        assert failed & interaction, (path.name, "no interaction check failed", sorted(failed))
        assert any(c["passed"] for c in grade.checks), (path.name, "a broken app, not a near miss", grade.reason)
