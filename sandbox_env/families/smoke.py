"""Trivial tasks that exercise the whole loop: make a file hold a given text.

Graded in a fresh container: the file is copied in and a grader program reads it,
so the path is the same as the real families'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox_env.families.base import Grade, TaskRow, read_task_toml
from sandbox_env.grading import Grader, ReportError
from sandbox_env.sandbox.handle import Sandbox


class SmokeFamily:
    name = "smoke"

    def compile_task(self, folder: Path) -> TaskRow:
        meta = read_task_toml(folder)
        return TaskRow(
            task_id=meta["id"], family=self.name, difficulty=meta["difficulty"], category=meta["category"],
            prompt=meta["spec"].strip(), files={}, collect=[meta["path"]],
            grading={"path": meta["path"], "expected": meta["expected"]},
        )  # fmt: skip

    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        meta = read_task_toml(folder)
        return [{"tool": t["tool"], "args": dict(t["args"])} for t in meta["reference"]]

    async def setup(self, sb: Sandbox, task: TaskRow) -> None:
        await sb.start_python()

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]:
        files = await sb.read_files(task.collect)
        return {"files": {p: (None if d is None else d.decode("utf-8", "replace")) for p, d in files.items()}}

    async def grade(self, final: dict[str, Any], task: TaskRow, grader: Grader) -> Grade:
        path = task.grading["path"]
        content = final["files"].get(path)
        if content is None:
            return Grade(0.0, f"{path} does not exist", metrics={"module_imported": 0.0})
        try:
            _, report = await grader.run_program("smoke_grader.py", {"path": path}, {path: content}, timeout=30)
        except ReportError as exc:
            return Grade.harness_fault(str(exc))
        got = report.get("content")
        ok = got == task.grading["expected"]
        check = {"name": "content", "passed": ok, "detail": "" if ok else f"expected {task.grading['expected']!r}, got {got!r}"}
        return Grade(float(ok), "file holds the expected text" if ok else check["detail"], [check],
                     {"checks_passed": float(ok)})  # fmt: skip

    async def verify_task(self, folder: Path, task: TaskRow, ctx: Any) -> list[Any]:
        from build_tasks import Control
        from sandbox_env.rollout import scripted_rollout

        ref = await scripted_rollout(ctx.client, ctx.image, task, self.reference_calls(folder))
        empty = await scripted_rollout(ctx.client, ctx.image, task, [])
        return [
            Control("reference", ref.grade.score, ref.grade.score == 1.0, ref.grade.reason),
            Control("empty", empty.grade.score, empty.grade.score == 0.0, empty.grade.reason),
        ]


FAMILY = SmokeFamily()
