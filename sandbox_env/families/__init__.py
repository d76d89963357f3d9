"""The task families, by name, and the one production grading entry.

Each family module exports FAMILY (see base.Family): prompt, setup, collect, grade.
Verification of tasks (references, controls, mutants) lives in sandbox_env/verify/,
which imports families and is never imported by them.
"""

from __future__ import annotations

import importlib
from typing import Any

from sandbox_env.families.base import Family, Grade, TaskRow
from sandbox_env.grading import Grader

__all__ = ["FAMILY_NAMES", "Family", "Grade", "TaskRow", "get_family", "grade_final"]

FAMILY_NAMES = ("smoke", "orm", "django", "fastapi")


def get_family(name: str) -> Family:
    if name not in FAMILY_NAMES:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(FAMILY_NAMES)}")
    return importlib.import_module(f"sandbox_env.families.{name}").FAMILY


async def grade_final(task: TaskRow, final: dict[str, Any], grader: Grader) -> Grade:
    """Grade a rollout's final state with its family; a harness failure is a grade, not a crash."""
    try:
        return await get_family(task.family).grade(final, task, grader)
    except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
        return Grade.harness_fault(f"{type(exc).__name__}: {exc}")
