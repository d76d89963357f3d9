"""Scripted rollouts without a model: a rollout core `Lease` driven by a list of tool calls.

Used by verification, the reference policy's checks, the tests and the benchmark. It is the
path both front doors take (sandbox_env/rollout/core.py): the same setup, tools, replacement of
a sandbox the model's own processes ended, collection (with the blame at collect), release and
grading; what it adds is only the list of calls in place of a model, and the outputs, final
state and grading time for the caller to read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sandbox_env.constants import DEFAULTS
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.grading.grader import Grader
from sandbox_env.rollout.core import LeaseError, Rollouts, SandboxSettings
from sandbox_env.sandbox import SandboxBackend


@dataclass
class ScriptedRun:
    grade: Grade
    outputs: list[str] = field(default_factory=list)
    grade_seconds: float = 0.0
    final: dict[str, Any] = field(default_factory=dict)


async def scripted_rollout(
    backend: SandboxBackend,
    image: str,
    task: TaskRow,
    calls: list[dict[str, Any]],
    timeout: float = DEFAULTS.timeout_per_command_seconds,
    grader: Grader | None = None,
) -> ScriptedRun:
    """Open a lease on `backend`, play the tool calls, finish it (collect, release, grade)."""
    rollouts = Rollouts(SandboxSettings(image=image, pool_size=0, timeout_per_command_seconds=timeout), backend)
    if grader is not None:
        rollouts.grader = grader
    try:
        lease = await rollouts.open(task)
    except LeaseError as exc:
        return ScriptedRun(Grade.harness_fault(str(exc)))
    outputs: list[str] = []
    try:
        for call in calls:
            outputs.append(await lease.call(call["tool"], call["args"]))
    except LeaseError as exc:
        lease.release_later()
        return ScriptedRun(lease.harness_fault(str(exc)), outputs)
    except BaseException:
        lease.release_later()
        raise
    grade = await lease.finish()
    return ScriptedRun(grade, outputs, lease.grade_seconds, lease.final)
