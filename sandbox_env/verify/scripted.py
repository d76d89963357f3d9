"""Scripted rollouts without a model: the same setup, tools, collect and grade as the env.

Used by verification, the reference policy's checks, the tests and the benchmark.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.constants import DEFAULTS
from sandbox_env.families import get_family, grade_final
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.grading.runs import Grader
from sandbox_env.rollout.tools import run_tool
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
    """Start a sandbox, play the tool calls, take the final state out, grade it."""
    family = get_family(task.family)
    outputs: list[str] = []
    async with backend.sandbox(image) as sb:
        await family.setup(sb, task)
        for call in calls:
            outputs.append(await run_tool(sb, call["tool"], call["args"], timeout))
        try:
            final = await family.collect(sb, task)
        except Exception as exc:  # noqa: BLE001 - as in the env: the harness failed, not the model
            return ScriptedRun(Grade.harness_fault(f"could not take the final state out of the sandbox: {exc}"), outputs)
    if getattr(family, "replays_cells", False):  # as the Lease records them (rollout/core.py)
        final["cells"] = [c["args"]["code"] for c in calls if c["tool"] == "execute_code"]
    final = json.loads(json.dumps(final))  # plain data only crosses from run to grade
    t0 = time.perf_counter()
    grade = await grade_final(task, final, grader or Grader(backend, image))
    return ScriptedRun(grade, outputs, time.perf_counter() - t0, final)
