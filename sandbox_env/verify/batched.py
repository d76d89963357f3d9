"""Verification's fastapi gradings, many deliverables to one grading sandbox: a task's own sources only.

Admitting a generated fastapi task grades its reference on several draws, two controls and every
mutant of its reference: about 25 gradings. Graded one by one (families.grade_final), each pays a
container's start and removal and the HTTP driver's and app host's imports of httpx, FastAPI,
Starlette, pydantic and uvicorn: about 0.45 s of CPU of a grading's 0.55 (the app's own share, its
import and its requests, is about 0.1 s). Here up to JOBS_PER_BATCH deliverables of one task share one
grading sandbox and one driver run: the driver takes a list of jobs (http_driver.run_jobs), each a
deliverable at its own path (/workspace/j<N>/app.py) with its own draws, canaries, layout and
limits planned on the host exactly as a single grading plans them (families/fastapi.plan_grading),
and reports each job as a single run's report, which the host judges with the same code
(families/fastapi.judge_report). Every session of every job still imports its app afresh in a new
forked process, and the driver kills whatever a job's app left running before the next job starts.

What a batch may not decide. A job whose report is missing (the batch stopped, or its report was
lost), whose run the driver blamed on the host (a backstop), whose responses passed the report's
shared budget, or any job of a batch whose sandbox pushed its limits, was changed from outside or
failed to run, is graded again alone, in a fresh sandbox, by families.grade_final, which owns the
blame rules. So a batch only ever gives a verdict a single grading would have given, and anything
uncertain costs time, not truth.

Threat model. Jobs of one batch share a container. The driver removes a job's processes and its
files in /workspace and /tmp before the next job, and each job's app lives in a folder of its own
(no bytecode cache is served across jobs); a batch whose leftovers cannot be removed stops there and
its later jobs are graded alone. A deliverable bent on reaching the next one could still try what
the driver does not clear (the kernel's caches, the sandbox's limits it spent), so batches are for
the project's own deliverables (a task's reference, its controls, the mutants of its reference),
never for a rollout's (tests/test_import_rules.py keeps them out of every rollout's path).
"""

from __future__ import annotations

import asyncio
from typing import Any

from sandbox_env.constants import WORKSPACE
from sandbox_env.families import grade_final
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.families.fastapi import APP_PATH, GradingPlan, judge_report, plan_grading
from sandbox_env.grading.grader import recording_gradings
from sandbox_env.sandbox.blame import limits_hit, outside_change

JOBS_PER_BATCH = 12


def decidable(report: dict[str, Any]) -> bool:
    """Whether a job's report is one a single grading would have judged the same way."""
    stalled = report.get("stalled") or {}
    if stalled.get("blame") == "harness" or report.get("stage") != "done":
        return False
    sessions = report.get("sessions") or []
    return not any(r.get("over_budget") for s in sessions for r in (s or {}).get("responses") or [])


async def _run_batch(task: TaskRow, sources: list[str], grader: Any) -> list[Grade | None]:
    """One driver run over the sources; None for every job the batch cannot decide."""
    plans: list[GradingPlan] = [plan_grading(task, grader.timeout) for _ in sources]
    jobs, files = [], {}
    for i, (plan, source) in enumerate(zip(plans, sources, strict=True)):
        folder = f"j{i}"  # each job's app in a folder of its own
        files[f"{folder}/{APP_PATH}"] = source
        jobs.append({**plan.request, "app_path": f"{WORKSPACE}/{folder}/{APP_PATH}"})
    undecided: list[Grade | None] = [None] * len(sources)
    with recording_gradings() as traces:
        try:
            result, report = await grader.run_program("http_driver.py", {"jobs": jobs}, files, timeout=grader.timeout * len(jobs))
        except Exception:  # noqa: BLE001 - a ReportError or any failure: every job is graded again alone
            return undecided
    whole = [t.whole() for t in traces]
    if result.timed_out or result.exit_code != 0 or any(limits_hit(w) or outside_change(w) for w in whole):
        return undecided
    out: list[Grade | None] = list(undecided)
    for i, job_report in enumerate((report.get("jobs") or [])[: len(sources)]):
        if isinstance(job_report, dict) and decidable(job_report):
            out[i] = judge_report(plans[i], task, job_report, result)
    return out


async def grade_batch(task: TaskRow, sources: list[str], grader: Any) -> list[Grade]:
    """The grades of sources under one task: one batch, then every undecided job alone (grade_final)."""
    if list(task.collect or [APP_PATH]) != [APP_PATH] or task.files:
        return [await grade_final(task, {"files": {APP_PATH: s}}, grader) for s in sources]
    grades = await _run_batch(task, sources, grader)
    for i, grade in enumerate(grades):
        if grade is None or grade.scoring_error:
            grades[i] = await grade_final(task, {"files": {APP_PATH: sources[i]}}, grader)
    return grades  # type: ignore[return-value]


async def grade_sources(task: TaskRow, sources: list[str], grader: Any, concurrency: int) -> list[Grade]:
    """The grades of many sources under one task, at most JOBS_PER_BATCH to a batch, `concurrency` batches at once."""
    if not sources:
        return []
    sem = asyncio.Semaphore(concurrency)

    async def one(chunk: list[str]) -> list[Grade]:
        async with sem:
            return await grade_batch(task, chunk, grader)

    # as even as the batches allow, so that `concurrency` batches keep as many CPUs busy to the end
    n_batches = max(-(-len(sources) // JOBS_PER_BATCH), min(concurrency, len(sources)))
    size = -(-len(sources) // n_batches)
    chunks = [sources[at : at + size] for at in range(0, len(sources), size)]
    graded = await asyncio.gather(*(one(c) for c in chunks))
    return [g for chunk in graded for g in chunk]
