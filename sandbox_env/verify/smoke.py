"""Verification of the smoke tasks: the reference writes the file, an empty run does not."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sandbox_env.families.base import TaskRow, read_task_toml
from sandbox_env.verify.base import Control, VerifyContext
from sandbox_env.verify.scripted import scripted_rollout


class SmokeVerifier:
    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        meta = read_task_toml(folder)
        return [{"tool": t["tool"], "args": dict(t["args"])} for t in meta["reference"]]

    async def verify_task(self, folder: Path, task: TaskRow, ctx: VerifyContext) -> list[Control]:
        ref = await scripted_rollout(ctx.backend, ctx.image, task, self.reference_calls(folder))
        empty = await scripted_rollout(ctx.backend, ctx.image, task, [])
        return [
            Control("reference", ref.grade.score, ref.grade.score == 1.0, ref.grade.reason),
            Control("empty", empty.grade.score, empty.grade.score == 0.0, empty.grade.reason),
        ]

    def summarize(self, rows: list[TaskRow], controls: dict[str, list[Control]]) -> tuple[list[str], bool]:
        return [], True


VERIFIER = SmokeVerifier()
