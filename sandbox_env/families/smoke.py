"""Trivial tasks that exercise the whole loop: make a file hold a given text.

Graded in a fresh container: the file is copied in and a grader program reads it,
so the path is the same as the real families'.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox_env.families.base import Grade, TaskRow, collect_files, read_task_toml
from sandbox_env.grading.grader import Grader, ReportError
from sandbox_env.sandbox import Sandbox


class SmokeFamily:
    name = "smoke"

    def compile_task(self, folder: Path) -> TaskRow:
        meta = read_task_toml(folder)
        return TaskRow(
            task_id=meta["id"],
            family=self.name,
            difficulty=meta["difficulty"],
            category=meta["category"],
            prompt=meta["spec"].strip(),
            files={},
            collect=[meta["path"]],
            grading={"path": meta["path"], "expected": meta["expected"]},
        )

    async def setup(self, sb: Sandbox, task: TaskRow) -> None:
        await sb.start_python()

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]:
        return await collect_files(sb, task.collect)

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
        return Grade(float(ok), "file holds the expected text" if ok else check["detail"], [check], {"checks_passed": float(ok)})


FAMILY = SmokeFamily()
