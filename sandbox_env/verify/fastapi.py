"""Verification of the fastapi tasks: the reference through a rollout, the controls through grading.

The reference is written with bash (a quoted heredoc) and imported, as a model would;
it must score 1.0 twice (through the rollout and graded directly), and on a task whose
checks draw values ([[vary]], families/fastapi_vary.py) on REFERENCE_DRAWS gradings in all,
each with its own draw. Four controls that
must not pass: an empty app.py, no `app`, a syntax error, and a catch-all app answering
200 {} everywhere (bounded by CONTROL_BOUNDS across the family). The summary enforces the
family's minimum task and check counts when the whole family is verified.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import grade_final
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.families.fastapi import APP_PATH
from sandbox_env.grading.grader import Grader
from sandbox_env.verify.base import Control, VerifyContext, bash_write_files
from sandbox_env.verify.scripted import scripted_rollout

CONTROLS = {
    "empty": "",
    "no_app": "import fastapi\n\napplication = fastapi.FastAPI()\n",
    "syntax": "from fastapi import FastAPI\n\napp = FastAPI(\n\n@app.get('/')\ndef root():\n    return {}\n",
    "catch_all": (
        "from fastapi import FastAPI\n\napp = FastAPI()\n\n\n"
        '@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"])\n'
        "def catch_all(path: str):\n    return {}\n"
    ),
}
CONTROL_BOUNDS = {"empty": 0.0, "no_app": 0.0, "syntax": 0.0, "catch_all": 0.02}
TIER_MINIMUMS = {"easy": 5, "medium": 12, "hard": 17}
FAMILY_MINIMUMS = {"tasks": 34, "checks": 113}
REFERENCE_DRAWS = 5  # gradings of the reference, each with a fresh draw, on a task with [[vary]]


def _score_of(controls: list[Control], name: str) -> float:
    return next((c.score for c in controls if c.name == name), 0.0)


def _control(name: str, grade: Grade, want: float, seconds: float | None = None) -> Control:
    ok = grade.score == want and not grade.tampered and not grade.scoring_error
    detail = grade.reason
    failing = [f"{c['name']}: {c['detail']}" for c in grade.checks if not c["passed"]]
    if want == 1.0 and failing:
        detail += " | " + " | ".join(failing[:3])
    metrics = {"tampered": float(grade.tampered)}
    if seconds is not None:
        metrics["seconds"] = seconds
    return Control(name, grade.score, ok, detail, metrics)


class FastAPIVerifier:
    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        """One bash call writing the reference with a quoted heredoc, then an import check."""
        return self.source_calls((folder / "reference.py").read_text())

    def source_calls(self, source: str) -> list[dict[str, Any]]:
        """One bash call writing `source` as app.py with a quoted heredoc, then an import check."""
        command = bash_write_files({APP_PATH: source}) + "\ncd /workspace && python -c 'import app'"
        return [{"tool": "bash", "args": {"command": command}}]

    async def verify_task(self, folder: Path, task: TaskRow, ctx: VerifyContext) -> list[Control]:
        grader = Grader(ctx.backend, ctx.image)
        ref = await scripted_rollout(ctx.backend, ctx.image, task, self.reference_calls(folder))

        async def timed(source: str) -> tuple[Grade, float]:
            t0 = time.perf_counter()
            g = await grade_final(task, {"files": {APP_PATH: source}}, grader)
            return g, time.perf_counter() - t0

        reference_source = (folder / "reference.py").read_text()
        again, seconds = await timed(reference_source)
        rest = await asyncio.gather(*(timed(src) for src in CONTROLS.values()))
        out = [_control("reference", ref.grade, 1.0), _control("ref_direct", again, 1.0, seconds)]
        if task.grading.get("vary"):
            draws = await asyncio.gather(*(timed(reference_source) for _ in range(REFERENCE_DRAWS - 2)))
            out += [_control(f"ref_draw_{i + 3}", g, 1.0) for i, (g, _) in enumerate(draws)]
        for (name, _), (grade, secs) in zip(CONTROLS.items(), rest, strict=True):
            out.append(_control(name, grade, 0.0, secs))
        return out

    def summarize(self, rows: list[TaskRow], controls: dict[str, list[Control]]) -> tuple[list[str], bool]:
        """Per-tier counts and reference scores, the four control means, grading time; ok=False when a bound fails."""
        lines: list[str] = []
        ok = True
        n_checks = sum(len(r.grading["checks"]) for r in rows)
        family_dir = TASKS_DIR / "fastapi"
        whole = len(rows) >= len([p for p in family_dir.iterdir() if (p / "task.toml").is_file()])
        for tier in ("easy", "medium", "hard"):
            tier_rows = [r for r in rows if r.difficulty == tier]
            refs = [_score_of(controls[r.task_id], "reference") for r in tier_rows]
            mean = sum(refs) / len(refs) if refs else 0.0
            checks = sum(len(r.grading["checks"]) for r in tier_rows)
            lines.append(f"{tier:<6} {len(tier_rows):3d} tasks  {checks:3d} checks  reference mean {mean:.3f}")
            if whole and len(tier_rows) < TIER_MINIMUMS[tier]:
                lines.append(f"  ! fewer than {TIER_MINIMUMS[tier]} {tier} tasks")
                ok = False
        n_openapi = sum(
            any(s["request"]["path"] == r.grading.get("openapi_url", "/openapi.json") for s in c["steps"])
            for r in rows
            for c in r.grading["checks"]
        )
        lines.append(f"total  {len(rows):3d} tasks  {n_checks:3d} checks ({n_openapi} read the OpenAPI document)")
        if whole and (len(rows) < FAMILY_MINIMUMS["tasks"] or n_checks < FAMILY_MINIMUMS["checks"]):
            lines.append(f"  ! the family needs at least {FAMILY_MINIMUMS['tasks']} tasks and {FAMILY_MINIMUMS['checks']} checks")
            ok = False
        for name, bound in CONTROL_BOUNDS.items():
            scores = [_score_of(controls[r.task_id], name) for r in rows]
            mean = sum(scores) / len(scores) if scores else 0.0
            good = mean <= bound
            ok = ok and good
            lines.append(f"control {name:<10} mean {mean:.3f} (bound {bound:.3f}) {'ok' if good else 'OUT OF BOUND'}")
        tampered = [f"{r.task_id}:{c.name}" for r in rows for c in controls[r.task_id] if (c.metrics or {}).get("tampered")]
        lines.append(f"tampered flags on references/controls: {len(tampered)}{' ' + ', '.join(tampered) if tampered else ''}")
        ok = ok and not tampered
        times = [
            c.metrics["seconds"]
            for r in rows
            for c in controls[r.task_id]
            if c.name == "ref_direct" and c.metrics and "seconds" in c.metrics
        ]
        if times:
            lines.append(
                f"reference grading time per task (under this run's own concurrency): "
                f"median {statistics.median(times):.2f} s, max {max(times):.2f} s"
            )
        return lines, ok


VERIFIER = FastAPIVerifier()
