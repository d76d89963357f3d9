"""How long verifying generated fastapi or django tasks takes on this machine, beside the 2-hour bound.

    python bench/verify_app_bench.py --family fastapi [--sample 8] [--concurrency 2]
    python bench/verify_app_bench.py --family django  [--sample 4] [--concurrency 2]

Verifies a seeded sample of the stored generated tasks of the family as the generator admits them
(fastapi: stages/generate_fastapi.verify_record, every mutant, batched per task by verify/batched.py;
django: stages/generate_django.verify_record, its controls and every mutant, the mutants in kept
sandboxes, grading/reused.py), and grades the sample's first reference alone, in a fresh sandbox, as
one grading costs today. Prints the seconds, the tasks per minute, the time projected for the stored
set and for 1,000 tasks, beside the bound (2 hours for 1,000 tasks on this 2-core machine). Nothing
is asserted: the figures are read beside the bound.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox_env.families import grade_final  # noqa: E402
from sandbox_env.generate import api_store, dj_store  # noqa: E402
from sandbox_env.grading.grader import Grader  # noqa: E402
from sandbox_env.grading.reused import ReusedSandboxGrader  # noqa: E402
from sandbox_env.rollout.image import ensure_image  # noqa: E402
from sandbox_env.sandbox.registry import make_backend  # noqa: E402
from sandbox_env.verify.base import VerifyContext  # noqa: E402

BOUND_SECONDS = 2 * 3600  # 1,000 tasks of one family
TASKS_AT_BOUND = 1000


def row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<52} {value:>12}  {note}", flush=True)


async def one_grading(family: str, record: dict, grader: Grader) -> float:
    """Seconds of one grading of the record's reference in a fresh sandbox (the cost of a grading today)."""
    if family == "fastapi":
        task, final = api_store.compile_generated_fastapi(record), {"files": {"app.py": record["reference"]}}
    else:
        task, final = dj_store.compile_generated_django(record), {"files": dict(record["reference"])}
    t0 = time.perf_counter()
    grade = await grade_final(task, final, grader)
    if grade.score != 1.0:
        raise SystemExit(f"{record['task_id']}: the reference scored {grade.score} ({grade.reason})")
    return time.perf_counter() - t0


async def verify_all(family: str, chosen: list[dict], backend, image: str, concurrency: int) -> list[str]:
    """The dropped tasks' reasons (none expected: every stored task was admitted)."""
    failing: list[str] = []
    if family == "fastapi":
        from sandbox_env.stages.generate_fastapi import verify_record

        grader = Grader(backend, image)
        for record in chosen:
            ok, why, _ = await verify_record(record, grader, concurrency)
            failing += [] if ok else [f"{record['task_id']}: {why}"]
        return failing
    from sandbox_env.stages.generate_django import verify_record as verify_django

    grader = ReusedSandboxGrader(backend, image)
    sem = asyncio.Semaphore(concurrency)
    try:
        for record in chosen:
            ok, why, _ = await verify_django(record, VerifyContext(backend, image), grader, sem)
            failing += [] if ok else [f"{record['task_id']}: {why}"]
    finally:
        await grader.stop()
    return failing


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--family", choices=("fastapi", "django"), default="fastapi")
    ap.add_argument("--sample", type=int, default=8, help="verify this many stored tasks (seeded sample)")
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    records = api_store.read(api_store.GENERATED_FASTAPI_FILE) if args.family == "fastapi" else dj_store.read()
    chosen = random.Random(0).sample(records, min(args.sample, len(records)))
    print(f"generated {args.family} tasks: {len(chosen)} of {len(records)}; load average {os.getloadavg()[0]:.1f}")
    image, backend = ensure_image(), make_backend()
    try:
        alone = [asyncio.run(one_grading(args.family, chosen[0], Grader(backend, image))) for _ in range(3)]
        row("one grading today (fresh sandbox, median of 3)", f"{statistics.median(alone):.2f} s")
        t0 = time.perf_counter()
        failing = asyncio.run(verify_all(args.family, chosen, backend, image, args.concurrency))
        seconds = time.perf_counter() - t0
    finally:
        backend.teardown()
    row("verification in the image (references, controls, mutants)", f"{seconds:.0f} s", f"{len(failing)} failing")
    per_task = seconds / len(chosen)
    row("seconds per task", f"{per_task:.1f} s", f"bound {BOUND_SECONDS / TASKS_AT_BOUND:.1f} s")
    row("tasks verified per minute", f"{60 / per_task:.1f}")
    row("projected for every stored task", f"{per_task * len(records):.0f} s")
    projected = per_task * TASKS_AT_BOUND
    ratio = projected / BOUND_SECONDS
    row(f"projected for {TASKS_AT_BOUND} tasks", f"{projected:.0f} s", f"bound {BOUND_SECONDS} s ({ratio:.2f}x)")
    for line in failing:
        print("  !", line)
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
