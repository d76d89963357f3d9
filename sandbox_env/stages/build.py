"""The verify command: compile every task, and with --verify run each through the real grading path.

    python build_tasks.py                     # compile sandbox_env/tasks → sandbox_env/data/tasks.jsonl
    python build_tasks.py --verify            # also run references and controls in real containers
    python build_tasks.py --verify --family orm --task orm_agg_01 --concurrency 4
    python build_tasks.py --verify --mutants  # also every reference's mutants (sandbox_env/verify/sensitivity.py)

Generated orm tasks, repair tasks and composed tasks are verified by their own re-verification
(stages/generate_orm.py, stages/repair.py, stages/compose.py): the stored answers graded again in the
image; a repair task's base alt_* answers are graded under the repair row too (controls alt_<name>).

Each family's verifier (sandbox_env/verify/<family>.py) returns controls for a task and
summarizes the family; a task whose controls fail does not ship.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter

from sandbox_env.constants import DATA_FILE, DEFAULTS
from sandbox_env.dataset import load_rows, split_summary
from sandbox_env.families import FAMILY_NAMES
from sandbox_env.families.base import TaskRow
from sandbox_env.stages.compile import compile_all, write_dataset
from sandbox_env.verify import get_verifier
from sandbox_env.verify.answers import answer_controls
from sandbox_env.verify.base import Control, VerifyContext, task_folder
from sandbox_env.verify.coverage import coverage_controls


async def verify(rows: list[TaskRow], concurrency: int) -> bool:
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    ctx = VerifyContext(backend, image)
    sem = asyncio.Semaphore(concurrency)
    results: dict[str, list[Control]] = {}
    done = 0

    async def one(row: TaskRow) -> None:
        nonlocal done
        async with sem:
            t0 = time.perf_counter()
            try:
                folder = task_folder(row.family, row.task_id)
                controls = await get_verifier(row.family).verify_task(folder, row, ctx)
                controls += await answer_controls(folder, row, ctx)
                controls += coverage_controls(folder, row)
            except Exception as exc:  # noqa: BLE001 - report and go on with the rest
                controls = [Control("verify", 0.0, False, f"{type(exc).__name__}: {exc}")]
            results[row.task_id] = controls
            done += 1
            ok = all(c.ok for c in controls)
            cells = "  ".join(f"{c.name}={c.score:.2f}{'' if c.ok else '!'}" for c in controls)
            print(
                f"[{done:3d}/{len(rows)}] {row.task_id:<28} {'PASS' if ok else 'FAIL'}  {cells}  "
                f"({time.perf_counter() - t0:.1f}s)",
                flush=True,
            )
            for c in controls:
                if not c.ok:
                    print(f"        {c.name}: {c.detail}", flush=True)

    try:
        await asyncio.gather(*(one(r) for r in rows))
    finally:
        backend.teardown()
    all_ok = all(all(c.ok for c in cs) for cs in results.values())
    print("\nsummary")
    for name in dict.fromkeys(r.family for r in rows):
        fam_rows = [r for r in rows if r.family == name]
        passed = sum(all(c.ok for c in results[r.task_id]) for r in fam_rows)
        print(f"  {name:<8} {passed}/{len(fam_rows)} tasks pass every control")
        lines, ok = get_verifier(name).summarize(fam_rows, {r.task_id: results[r.task_id] for r in fam_rows})
        for line in lines:
            print(f"    {line}")
        all_ok = all_ok and ok
    print(f"\n{'ALL TASKS PASS' if all_ok else 'SOME TASKS FAIL'}")
    return all_ok


def count_lines(rows: list[TaskRow]) -> list[str]:
    """Task counts per family, source, split and difficulty, and per tier where a task has one (composed)."""
    lines = []
    for label, key in (("family", "family"), ("source", "source"), ("split", "split"), ("difficulty", "difficulty")):
        counts = Counter(getattr(r, key) for r in rows)
        lines.append(f"  per {label:<10} " + ", ".join(f"{k} {n}" for k, n in sorted(counts.items())))
    tiers = Counter(f"{r.family} {r.measures['tier']}" for r in rows if r.measures.get("tier"))
    if tiers:
        lines.append(f"  per {'tier':<10} " + ", ".join(f"{k} {n}" for k, n in sorted(tiers.items())))
    combos = Counter((r.family, r.source, r.split, r.difficulty) for r in rows)
    lines += [f"    {f:<8} {s:<9} {sp:<5} {d:<6} {n}" for (f, s, sp, d), n in sorted(combos.items())]
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--verify", action="store_true", help="run every task through the real grading path")
    ap.add_argument("--family", action="append", choices=FAMILY_NAMES, help="only this family (repeatable)")
    ap.add_argument("--task", action="append", help="only this task id (repeatable; verify only)")
    ap.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULTS.verify_concurrency,
        help=f"tasks verified at once (default {DEFAULTS.verify_concurrency})",
    )
    ap.add_argument("--mutants", action="store_true", help="grade every reference's mutants; ends with the sensitivity line")
    args = ap.parse_args(argv)
    rows = compile_all()
    write_dataset(rows)
    print(f"compiled {len(rows)} tasks into {DATA_FILE}")
    for line in count_lines(rows):
        print(line)
    print(f"  {split_summary(load_rows())}")  # the benchmark's version: a report of a run repeats it
    if not args.verify and not args.mutants:
        return 0
    chosen = [r for r in rows if (not args.family or r.family in args.family) and (not args.task or r.task_id in args.task)]
    api = [r for r in chosen if r.source == "generated" and r.family == "fastapi"]  # stages/generate_fastapi.py
    generated = [r for r in chosen if r.source == "generated" and r.family != "fastapi"]
    repairs = [r for r in chosen if r.source == "repair"]
    composed = [r for r in chosen if r.source == "composed"]
    chosen = [r for r in chosen if r.source not in ("generated", "repair", "composed")]
    if api and args.verify:
        from sandbox_env.stages.generate_fastapi import main_reverify as reverify_api

        if reverify_api(api, args.concurrency) != 0:
            return 1
        if not chosen and not generated and not repairs and not composed:
            return 0
    if composed and args.verify:
        from sandbox_env.stages.compose import main_reverify as reverify_composed

        if reverify_composed(composed, args.concurrency) != 0:
            return 1
        if not chosen and not generated and not repairs:
            return 0
    if repairs and args.verify:
        from sandbox_env.stages.repair import main_reverify as reverify_repairs

        if reverify_repairs(repairs, args.concurrency) != 0:
            return 1
        if not chosen and not generated:
            return 0
    if generated and args.verify:
        from sandbox_env.stages.generate_orm import main_reverify

        if main_reverify({r.task_id for r in generated}, args.concurrency) != 0:
            return 1
        if not chosen:
            return 0
    if not chosen:
        print("no task matches the filters", file=sys.stderr)
        return 2
    ok = asyncio.run(verify(chosen, args.concurrency)) if args.verify else True
    if args.mutants:
        from sandbox_env.verify.sensitivity import main_mutants

        ok = asyncio.run(main_mutants(chosen, args.concurrency)) and ok
    return 0 if ok else 1
