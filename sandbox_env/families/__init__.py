"""The task families, by name, and the one production grading entry.

Each family module exports FAMILY (see base.Family): prompt, setup, collect, grade.
Verification of tasks (references, controls, mutants) lives in sandbox_env/verify/,
which imports families and is never imported by them.

`grade_final` applies the blame rule (sandbox_env/sandbox/blame.py) at the one production entry:
a harness fault (an exception, or a grade with `scoring_error`) is retried once, in fresh
sandboxes, before it is reported; a grading sandbox that the code under test ended from
inside (`SandboxEndedFromInside`: out of memory, its process limit hit, an agent silenced
by a busy sandbox) is the submission's 0.0, never a scoring error. So is a harness fault in
a run whose sandbox the code under test pushed to its limits (`blame.limits_hit` over
the run's usage trace: forks refused, OOM kills, memory at its limit, tasks multiplied):
a driver starved by a fork or memory bomb failed because of the bomb.

Neither holds when a grading sandbox's memory or pids limit was changed from outside
during a run (`blame.outside_change`: `docker update` lowered it): what the code under
test did against that limit proves nothing, so a grade short of full marks from such an
attempt, a plain 0.0 or an ending from inside included, is a harness fault, retried like
any other. A full score stands: the answer passed in spite of it (unless the backend
refused the run first: the Docker backend checks the limits around every call).
"""

from __future__ import annotations

import importlib
import logging
from typing import Any

from sandbox_env.families.base import METRIC_NAMES, Family, Grade, TaskRow
from sandbox_env.grading.grader import Grader, recording_gradings
from sandbox_env.sandbox import SandboxEndedFromInside
from sandbox_env.sandbox.blame import limits_hit, outside_change

logger = logging.getLogger("websandbox")
GRADING_ATTEMPTS = 2  # a harness fault is retried once in fresh sandboxes before it is reported

__all__ = ["FAMILY_NAMES", "Family", "Grade", "TaskRow", "ended_before_collect", "get_family", "grade_final"]

FAMILY_NAMES = ("smoke", "orm", "django", "fastapi")


def get_family(name: str) -> Family:
    if name not in FAMILY_NAMES:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(FAMILY_NAMES)}")
    return importlib.import_module(f"sandbox_env.families.{name}").FAMILY


def ended_from_inside(evidence: str) -> Grade:
    """The submission's 0.0 for a grading sandbox that its own code ended."""
    metrics = {name: 0.0 for name in METRIC_NAMES}
    return Grade(
        0.0,
        f"the code under test ended its grading sandbox: {evidence}",
        [{"name": "grading", "passed": False, "detail": evidence}],
        metrics,
    )


def ended_before_collect(evidence: str) -> Grade:
    """The model's 0.0 for a rollout sandbox that its own processes ended before its final state was read."""
    return Grade(
        0.0,
        f"the sandbox's own processes ended it before its final state could be read: {evidence}",
        metrics={name: 0.0 for name in METRIC_NAMES},
    )


async def grade_final(task: TaskRow, final: dict[str, Any], grader: Grader) -> Grade:
    """Grade a rollout's final state with its family; a harness failure is a grade, not a crash."""
    family = get_family(task.family)
    faults: list[str] = []
    for _ in range(GRADING_ATTEMPTS):
        with recording_gradings() as traces:
            try:
                grade = await family.grade(final, task, grader)
            except SandboxEndedFromInside as exc:
                grade = ended_from_inside(exc.evidence)
            except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
                grade = Grade.harness_fault(f"{type(exc).__name__}: {exc}")
        changed = next((c for trace in traces if (c := outside_change(trace.whole()))), None)
        if changed and grade.score < 1.0:
            grade = Grade.harness_fault(f"the grading does not count, {changed}: {grade.reason}")
        if not grade.scoring_error:
            return grade
        pushed = next((e for trace in traces if (e := limits_hit(trace.whole()))), None)
        if pushed:
            return ended_from_inside(f"{pushed}, and then the grading failed ({grade.scoring_error})")
        faults.append(grade.scoring_error)
        logger.warning(
            "grading %s: harness fault (%s); %s",
            task.task_id,
            grade.scoring_error,
            "retrying in a fresh sandbox" if len(faults) < GRADING_ATTEMPTS else "giving up",
        )
    grade.scoring_error = f"{grade.scoring_error} (the same in {len(faults)} attempts, each in a fresh sandbox)"
    return grade
