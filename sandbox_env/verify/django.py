"""Verification of the django tasks: the reference, then controls that must not pass, each graded twice.

The reference is written with bash and its visible tests run in the rollout, as a model
would; then, graded directly: empty deliverables, a syntax error, junk/ (plausible but
wrong), wrong_*/ (each wrong in one way) and naive/ (budget tasks: right results, too many
queries, which must score 0.0 with correct_but_naive 1.0). Each control is graded twice so
that a flaky verdict shows. A task's gradings run at once (at most CONCURRENT_GRADINGS, the rollout
beside them) in kept grading sandboxes (grading/reused.py: our own deliverables only, each in a fresh
pytest process over an emptied workspace). Every grading draws its own hidden-test data where the task
declares `[[vary]]` tokens (families/django_vary.py): the reference is then graded on
VARIED_DRAWS draws, and every control on two, each of which must keep it wrong.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.families.django import FAMILY, read_folder
from sandbox_env.grading.grader import Grader
from sandbox_env.grading.reused import ReusedSandboxGrader
from sandbox_env.verify.base import Control, VerifyContext, bash_write_files
from sandbox_env.verify.scripted import scripted_rollout

GARBAGE = "def broken(:\n    return ???\n"
VARIED_DRAWS = 4
CONCURRENT_GRADINGS = 3  # of one task's controls


class DjangoVerifier:
    def solution_files(self, folder: Path, kind: str = "reference") -> dict[str, str]:
        """The deliverables of reference/, naive/ or junk/ (empty when the folder does not exist)."""
        return read_folder(folder / kind)

    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        return self.files_calls(self.solution_files(folder))

    def files_calls(self, files: dict[str, str]) -> list[dict[str, Any]]:
        """Deliverables written with bash, then the visible tests run, as a model would."""
        return [
            {"tool": "bash", "args": {"command": bash_write_files(files)}},
            {"tool": "bash", "args": {"command": "cd /workspace && python -m pytest -q"}},
        ]

    async def verify_task(self, folder: Path, task: TaskRow, ctx: VerifyContext) -> list[Control]:
        grader = ReusedSandboxGrader(ctx.backend, ctx.image)
        sem = asyncio.Semaphore(CONCURRENT_GRADINGS)
        try:
            return await self._controls(folder, task, ctx, grader, sem)
        finally:
            await grader.stop()

    async def _controls(
        self, folder: Path, task: TaskRow, ctx: VerifyContext, grader: Grader, sem: asyncio.Semaphore
    ) -> list[Control]:
        """Every control's gradings at once (at most CONCURRENT_GRADINGS running), in the order listed."""

        async def graded(files: dict[str, str]) -> tuple[Grade, dict[str, Any] | None, float]:
            async with sem:
                t0 = time.perf_counter()
                grade, report = await FAMILY.grade_with_report({"files": files}, task, grader)
                return grade, report, time.perf_counter() - t0

        async def twice(
            name: str,
            files: dict[str, str],
            want_score: float,
            want_naive: float | None = None,
            first: Awaitable[Grade] | None = None,
            runs: int = 2,
        ) -> Control:
            rest = asyncio.gather(*(graded(files) for _ in range(runs - (first is not None))))
            firsts, done = await asyncio.gather(asyncio.gather(*([first] if first is not None else [])), rest)
            grades = list(firsts) + [g for g, _, _ in done]
            timing = {"seconds": [secs for _, _, secs in done], "runner_seconds": [], "runner_cpu": []}
            for _, report, _ in done:
                if report and "seconds" in report:
                    timing["runner_seconds"].append(report["seconds"])
                    timing["runner_cpu"].append(report.get("cpu_seconds", 0.0))
            ok = all(
                g.score == want_score
                and not g.tampered
                and g.scoring_error is None
                and (want_naive is None or g.metrics.get("correct_but_naive") == want_naive)
                for g in grades
            )
            metrics = {k: grades[0].metrics.get(k, 0.0) for k in ("correct_but_naive", "suite_usable", "tests_passed")}
            return Control(
                name,
                grades[0].score,
                ok,
                " | ".join(g.reason for g in grades),
                {**metrics, **timing, "tampered": any(g.tampered for g in grades)},
            )

        ref = self.solution_files(folder)
        own_run = ""

        async def through_a_rollout() -> Grade:  # the reference written and tested as a model would
            nonlocal own_run
            run = await scripted_rollout(ctx.backend, ctx.image, task, self.reference_calls(folder))
            own_run = run.outputs[-1] if run.outputs else ""
            return run.grade

        runs = VARIED_DRAWS if task.grading.get("vary") else 2
        wanted = [twice("reference", ref, 1.0, first=through_a_rollout(), runs=runs)]
        wanted += [twice("empty", {p: "" for p in task.collect}, 0.0)]
        wanted += [twice("garbage", {p: GARBAGE for p in task.collect}, 0.0)]
        junk = self.solution_files(folder, "junk")
        if junk:
            wanted.append(twice("junk", {**ref, **junk}, 0.0))
        for wrong in sorted(p.name for p in folder.glob("wrong_*") if p.is_dir()):
            wanted.append(twice(wrong, {**ref, **self.solution_files(folder, wrong)}, 0.0))
        naive = self.solution_files(folder, "naive")
        if naive:
            wanted.append(twice("naive", {**ref, **naive}, 0.0, want_naive=1.0))
        controls = list(await asyncio.gather(*wanted))
        if " passed" not in own_run or "failed" in own_run or "error" in own_run.lower():
            controls[0].ok = False
            controls[0].detail += f" | the reference's own pytest run in the rollout: {own_run[-300:]}"
        return controls

    def summarize(self, rows: list[TaskRow], controls: dict[str, list[Control]]) -> tuple[list[str], bool]:
        """The verify table: each control's score per task (! = not what it must be), and grading times."""
        names = ("reference", "junk", "garbage", "empty", "naive")
        lines = [f"{'task':<8} {'difficulty':<10} " + " ".join(f"{n:>9}" for n in names) + "  median grading s"]
        ok, times = True, []
        for row in rows:
            by_name = {c.name: c for c in controls.get(row.task_id, [])}
            cells = []
            for n in names:
                c = by_name.get(n)
                cells.append(f"{'-':>9}" if c is None else f"{c.score:>8.2f}{'' if c.ok else '!'}".rjust(9))
            secs = [s for c in by_name.values() for s in (c.metrics or {}).get("seconds", [])]
            times += secs
            ok = ok and bool(by_name) and all(c.ok for c in by_name.values())
            med = f"{statistics.median(secs):.2f}" if secs else "-"
            lines.append(f"{row.task_id:<8} {row.difficulty:<10} " + " ".join(cells) + f"  {med:>16}")
        naive_rows = [c for cs in controls.values() for c in cs if c.name == "naive"]
        lines.append(
            f"naive controls: {sum(c.ok for c in naive_rows)}/{len(naive_rows)} give implemented 0.0 and correct_but_naive 1.0"
        )
        tampered = sum(bool((c.metrics or {}).get("tampered")) for cs in controls.values() for c in cs)
        lines.append(f"controls that tripped tampered: {tampered}")
        if times:
            runner = [s for cs in controls.values() for c in cs for s in (c.metrics or {}).get("runner_seconds", [])]
            cpu = [s for cs in controls.values() for c in cs for s in (c.metrics or {}).get("runner_cpu", [])]
            lines.append(
                f"grading: median {statistics.median(times):.2f} s wall on the host over {len(times)} runs"
                + (
                    f"; inside the container the runner took a median {statistics.median(runner):.2f} s "
                    f"({statistics.median(cpu):.2f} s CPU)"
                    if runner
                    else ""
                )
            )
        return lines, ok and tampered == 0


VERIFIER = DjangoVerifier()
