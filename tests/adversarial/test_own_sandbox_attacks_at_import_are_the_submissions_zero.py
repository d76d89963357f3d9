"""A deliverable that attacks its grading sandbox at import scores the submission's 0.0, never a scoring error.

The attacks run when the grader imports the deliverable (fastapi's app.py, a Django
module), through the one production grading entry (`grade_final`). However far the attack
gets (the agent ended with everything else, the kernel's OOM killer, a sandbox at its
process limit, junk on the agent's stream), the evidence shows that the code under test
did it: 0.0, `scoring_error` None.
"""

from __future__ import annotations

import pytest
from own_sandbox_kit import AT_IMPORT

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import grade_final
from sandbox_env.families.django import FAMILY as DJANGO
from sandbox_env.families.fastapi import FAMILY as FASTAPI
from sandbox_env.grading.grader import Grader

pytestmark = pytest.mark.docker

GRADING_LIMIT = 30  # seconds; the fork bomb and the memory bomb run until something stops them


@pytest.mark.parametrize("attack", sorted(AT_IMPORT))
async def test_an_app_that_attacks_its_grading_sandbox_at_import_scores_zero_without_a_scoring_error(backend, image, attack):
    task = FASTAPI.compile_task(TASKS_DIR / "fastapi" / "fastapi_path_order")
    grade = await grade_final(task, {"files": {"app.py": AT_IMPORT[attack]}}, Grader(backend, image, GRADING_LIMIT))
    assert grade.score == 0.0 and grade.scoring_error is None, grade.reason


@pytest.mark.parametrize("attack", ["kill -9 -1", "memory bomb"])
async def test_a_django_module_that_attacks_its_grading_sandbox_scores_zero_without_a_scoring_error(backend, image, attack):
    task = DJANGO.compile_task(TASKS_DIR / "django" / "dj01")
    module = task.grading["deliverables"][0]
    grade = await grade_final(task, {"files": {module: AT_IMPORT[attack]}}, Grader(backend, image, GRADING_LIMIT))
    assert grade.score == 0.0 and grade.scoring_error is None, grade.reason
