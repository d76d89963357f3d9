"""Scripted rollouts without a model: the same setup, tools, collect and grade as the env.

Used by build_tasks.py --verify, the tests and the benchmark.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.families import get_family
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.grading import Grader
from sandbox_env.sandbox.docker_backend import DockerSandboxClient
from sandbox_env.sandbox.handle import Sandbox
from sandbox_env.tools import run_bash, run_code


@dataclass
class ScriptedRun:
    grade: Grade
    outputs: list[str] = field(default_factory=list)
    grade_seconds: float = 0.0
    final: dict[str, Any] = field(default_factory=dict)


async def call_tool(sb: Sandbox, tool: str, args: dict[str, Any], timeout: float = 30) -> str:
    if tool == "bash":
        return await run_bash(sb, args["command"], timeout)
    if tool == "execute_code":
        return await run_code(sb, args["code"], timeout)
    raise ValueError(f"unknown tool {tool!r}")


async def grade_final(task: TaskRow, final: dict[str, Any], grader: Grader) -> Grade:
    try:
        return await get_family(task.family).grade(final, task, grader)
    except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
        return Grade.harness_fault(f"{type(exc).__name__}: {exc}")


async def scripted_rollout(client: DockerSandboxClient, image: str, task: TaskRow,
                           calls: list[dict[str, Any]], timeout: float = 30,
                           grader: Grader | None = None) -> ScriptedRun:  # fmt: skip
    """Start a sandbox, play the tool calls, take the final state out, grade it."""
    family = get_family(task.family)
    sid = await client.acquire_ready(image)
    outputs: list[str] = []
    try:
        sb = Sandbox(client, sid)
        await family.setup(sb, task)
        for call in calls:
            outputs.append(await call_tool(sb, call["tool"], call["args"], timeout))
        try:
            final = await family.collect(sb, task)
        except Exception as exc:  # noqa: BLE001 - as in the env: the harness failed, not the model
            return ScriptedRun(Grade.harness_fault(f"could not take the final state out of the sandbox: {exc}"), outputs)
    finally:
        await client._run(client.delete_sync, sid)
    final = json.loads(json.dumps(final))  # plain data only crosses from run to grade
    t0 = time.perf_counter()
    grade = await grade_final(task, final, grader or Grader(client, image))
    return ScriptedRun(grade, outputs, time.perf_counter() - t0, final)
