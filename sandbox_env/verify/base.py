"""What verification passes around: controls, the context, the per-family verifier protocol.

A family verifier knows how to solve a task (its reference as tool calls), how to
check a task for real (`verify_task` → controls that must each come out as stated),
and how to summarize a family's controls. Families never import this package. A hand-written
task's sources live in its folder (`task_folder`), which verification and the stages read.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.sandbox import SandboxBackend

HEREDOC = "WEBSANDBOX_EOF"


def task_folder(family: str, task_id: str) -> Path:
    """Where a hand-written task's sources are (a generated, repair or composed task has no folder)."""
    return TASKS_DIR / family / task_id


def task_folders(family: str) -> list[Path]:
    """Every hand-written task folder of a family, in name order."""
    base = TASKS_DIR / family
    if not base.is_dir():
        return []
    return sorted(p for p in base.iterdir() if (p / "task.toml").is_file())


@dataclass
class Control:
    """One verification run: a named control, its score, and whether that is what it must be."""

    name: str
    score: float
    ok: bool
    detail: str = ""
    metrics: dict | None = None


@dataclass
class VerifyContext:
    backend: SandboxBackend
    image: str


class FamilyVerifier(Protocol):
    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        """The task's reference solution as the tool calls a model would make."""
        ...

    async def verify_task(self, folder: Path, task: TaskRow, ctx: VerifyContext) -> list[Control]:
        """Run the reference and the controls through the real grading path."""
        ...

    def summarize(self, rows: list[TaskRow], controls: dict[str, list[Control]]) -> tuple[list[str], bool]:
        """Lines for the verify summary, and False when a family-wide bound fails."""
        ...


def bash_write_files(files: dict[str, str]) -> str:
    """One bash command that writes each file under /workspace with a quoted heredoc."""
    parts = []
    for path, text in files.items():
        if HEREDOC in text:
            raise ValueError(f"{path} contains the heredoc delimiter {HEREDOC}")
        body = text if text.endswith("\n") else text + "\n"
        parts.append(f"mkdir -p \"$(dirname '/workspace/{path}')\" && cat > '/workspace/{path}' <<'{HEREDOC}'\n{body}{HEREDOC}")
    return "\n".join(parts)
