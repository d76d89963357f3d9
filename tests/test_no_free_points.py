"""No reward for doing nothing: a repair's untouched deliverable scores 0, a composed app without its rules loses half.

Over every repair and composed task of the dataset. A fastapi repair scores 1.0 only when every check
passes (its broken app passes most of them; verification kept only repairs whose broken app fails
at least one check, and its report names what it failed); orm and django repairs grade all or
nothing already. A composed task's score is halved while any of its app-wide rule checks fails.
The prompt of each says so. tests/test_repair_docker.py grades the untouched deliverables in real
containers.
"""

from __future__ import annotations

import pytest

from sandbox_env.dataset import load_rows
from sandbox_env.families.base import TaskRow
from sandbox_env.families.fastapi import reward

ROWS = [TaskRow.from_info(r["info"]) for r in load_rows()]
REPAIRS = [r for r in ROWS if r.source == "repair"]
COMPOSED = [r for r in ROWS if r.source == "composed"]


def _rows(names: list[str], failing: set[str]) -> list[dict]:
    return [{"name": n, "passed": n not in failing} for n in names]


def test_there_are_repair_and_composed_tasks_to_hold_to_it():
    assert len(REPAIRS) > 100 and len(COMPOSED) > 50


@pytest.mark.parametrize("family", ["fastapi"])
def test_every_fastapi_repair_scores_nothing_unless_every_check_passes(family):
    repairs = [r for r in REPAIRS if r.family == family]
    assert repairs
    for task in repairs:
        names = [c["name"] for c in task.grading["checks"]]
        assert task.grading.get("scoring") == "all", task.task_id
        assert "scores 1.0 only when every check passes" in task.prompt, task.task_id
        assert reward(_rows(names, {names[-1]}), "all")[0] == 0.0
        assert reward(_rows(names, set()), "all")[0] == 1.0


def test_orm_and_django_repairs_grade_all_or_nothing_by_their_family():
    assert {r.family for r in REPAIRS} <= {"orm", "django", "fastapi"}


def test_every_composed_task_loses_at_least_half_without_its_rules():
    for task in COMPOSED:
        names = [c["name"] for c in task.grading["checks"]]
        governed = task.grading.get("rule_checks") or []
        assert governed and set(governed) <= set(names), task.task_id
        assert task.grading.get("scoring") == "rules_gate", task.task_id
        assert "halved while any of the rules for the whole service does not hold" in task.prompt
        for left_out in governed:  # any one rule check failing, everything else right
            score = reward(_rows(names, {left_out}), "rules_gate", governed)[0]
            assert score <= 0.5, (task.task_id, left_out, score)
        assert reward(_rows(names, set()), "rules_gate", governed)[0] == 1.0
