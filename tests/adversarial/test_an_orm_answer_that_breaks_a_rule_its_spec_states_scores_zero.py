"""An orm answer that breaks a rule its spec states scores 0, whichever variant its rollout draws.

The class: a policy that reads a stated rule carelessly (an author with no books left out of
"every one of its books ...", a missing value taken for a match, letter case ignored, a range's
ends excluded, a distinct count counted with repeats). On a variant whose data cannot tell the
mistake apart it would score 1.0 on one task and 0.0 on another that states the same rule:
noise exactly where the rule is stated. Each mistake is generate/traps.py's, rendered to ORM code
as a model would write it, and graded through a real rollout and grading. The hand-written tasks'
rules are sentences: their mistakes are the mutants of verify/mutants.py's ORM_STATED_RULE_OPERATORS
(a fixture variant is admitted only where each gives other rows), one of each kind graded the same
way, on whatever variant the rollout draws.
"""

from __future__ import annotations

import pytest

from sandbox_env.dataset import load_rows
from sandbox_env.families.base import TaskRow
from sandbox_env.generate import store
from sandbox_env.generate.render_orm import render_orm
from sandbox_env.generate.traps import trap_mistakes
from sandbox_env.generate.tree import from_canonical
from sandbox_env.verify.base import task_folders
from sandbox_env.verify.mutants import ORM_STATED_RULE_OPERATORS
from sandbox_env.verify.scripted import scripted_rollout
from sandbox_env.verify.sensitivity import declared_equivalents, orm_mutants

pytestmark = pytest.mark.docker

KINDS = ("vacuous", "null", "case", "bound", "fan_out")


def _mistake(kind: str) -> tuple[TaskRow, str]:
    """The first stored train task that states a rule of this kind, and its mistake as one cell."""
    for record in store.read():
        if record["split"] != "train":
            continue
        for k, mistake in trap_mistakes(from_canonical(record["tree"])):
            if k == kind:
                info = next(r["info"] for r in load_rows() if r["info"]["task_id"] == record["task_id"])
                return TaskRow.from_info(info), render_orm(mistake)
    raise AssertionError(f"no stored task states a rule of kind {kind}")


@pytest.mark.parametrize("kind", KINDS)
async def test_the_mistake_a_stated_rule_invites_scores_zero(backend, image, kind):
    task, cell = _mistake(kind)
    run = await scripted_rollout(backend, image, task, [{"tool": "execute_code", "args": {"code": cell}}])
    assert run.grade.scoring_error is None, run.grade.scoring_error
    assert run.grade.score == 0.0, (kind, task.task_id, run.grade.reason)
    assert "result" in cell and run.final.get("result") is not None, "the mistake ran and left rows: it was made"


def _hand_written_mistake(operator: str) -> tuple[TaskRow, str]:
    """The first hand-written task with a mutant of this stated-rule operator (not declared equivalent), and it."""
    for folder in task_folders("orm"):
        skip = declared_equivalents(folder)
        for m in orm_mutants(folder):
            if m.operator == operator and m.name not in skip:
                info = next(r["info"] for r in load_rows() if r["info"]["task_id"] == folder.name)
                return TaskRow.from_info(info), m.source
    raise AssertionError(f"no hand-written task has a mutant of {operator}")


@pytest.mark.parametrize("operator", sorted(ORM_STATED_RULE_OPERATORS))
async def test_the_mistake_a_hand_written_specs_rule_invites_scores_zero(backend, image, operator):
    task, cell = _hand_written_mistake(operator)
    run = await scripted_rollout(backend, image, task, [{"tool": "execute_code", "args": {"code": cell}}])
    assert run.grade.scoring_error is None, run.grade.scoring_error
    assert run.grade.score == 0.0, (operator, task.task_id, run.grade.reason)
    assert run.final.get("result") is not None, "the mistake ran and left rows: it was made"
