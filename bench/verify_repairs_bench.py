"""How long verifying the stored repair tasks and composed tasks takes on this machine.

    python bench/verify_repairs_bench.py [--sample N] [--concurrency 2] [--only repairs|composed] [--no-alts]

Runs `build_tasks.py --verify`'s paths over a seeded sample of N stored tasks of each group (all
of a group when it has fewer): repair tasks per family through stages/repair.py
`reverify_controls` (the base task's reference once per base, the broken files, and every alt_*
answer of the base under the repair row: orm cells batched per fixture variant, fastapi and
django through grade_final in fresh grading containers), and the generated composed fastapi
tasks through stages/compose.py `reverify` (the reference on two gradings, the empty and
catch-all apps, the interaction wrong answers, every lifted and own mutant). Prints, per group,
the seconds, the tasks per minute and the time projected for the group's whole stored set, the
load average before and after it, and the projected total. `--no-alts` leaves the repairs' alt
answers out, to see what they cost. Nothing is asserted: no bound is set for these sets yet
(bench/verify_bench.py holds the generated orm tasks' 15-minute bound).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox_env.rollout.image import ensure_image  # noqa: E402
from sandbox_env.sandbox.registry import make_backend  # noqa: E402
from sandbox_env.stages.compile import compile_all  # noqa: E402
from sandbox_env.stages.compose import reverify as reverify_composed  # noqa: E402
from sandbox_env.stages.repair import reverify_controls  # noqa: E402

FAMILIES = ("orm", "fastapi", "django")


def row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<52} {value:>12}  {note}", flush=True)


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


def sample(rows: list, n: int | None) -> list:
    return random.Random(0).sample(rows, min(n, len(rows))) if n else list(rows)


def report(label: str, chosen: list, stored: int, seconds: float, failing: int, note: str = "") -> float:
    """Prints a group's figures; returns the seconds projected for the group's whole stored set."""
    projected = seconds * stored / max(len(chosen), 1)
    row(f"{label}: {len(chosen)} of {stored} verified", f"{seconds:.0f} s", f"{failing} failing{note}")
    row(f"{label}: tasks verified per minute", f"{60 * len(chosen) / seconds:.1f}" if seconds else "-")
    row(f"{label}: projected for every stored task", f"{projected:.0f} s", f"load average after: {load()}")
    return projected


def bench_repairs(rows: list, n: int | None, concurrency: int, alts: bool) -> tuple[float, int]:
    projected, failing_all = 0.0, 0
    image = ensure_image()
    for family in FAMILIES:
        stored = [r for r in rows if r.source == "repair" and r.family == family]
        if not stored:
            continue
        chosen = sample(stored, n)
        print(f"repair tasks, {family}: {len(chosen)} of {len(stored)}; load average before: {load()}", flush=True)
        backend = make_backend()
        t0 = time.perf_counter()
        try:
            controls = asyncio.run(reverify_controls(backend, image, chosen, concurrency, alts=None if alts else {}))
        finally:
            backend.teardown()
        seconds = time.perf_counter() - t0
        failing = sum(1 for cs in controls.values() if not all(c.ok for c in cs))
        graded_alts = [c for cs in controls.values() for c in cs if c.name.startswith("alt_")]
        bad_alts = sum(not c.ok for c in graded_alts)
        for task_id, cs in sorted(controls.items()):
            for c in cs:
                if not c.ok:
                    print(f"    {task_id} {c.name}={c.score:.2f}: {c.detail[:200]}", flush=True)
        note = f"; {len(graded_alts)} alt answers graded, {bad_alts} below 1.0" if alts else "; alt answers left out"
        projected += report(f"repair {family}", chosen, len(stored), seconds, failing, note)
        if family == "orm":  # one container per fixture variant runs every cell: the cost grows slower than the count
            print("    (orm cells run batched, one container per fixture variant: the linear projection is an upper bound)")
        failing_all += failing
    return projected, failing_all


def bench_composed(rows: list, n: int | None, concurrency: int) -> tuple[float, int]:
    stored = [r for r in rows if r.source == "composed"]
    if not stored:
        return 0.0, 0
    chosen = sample(stored, n)
    print(f"composed fastapi tasks: {len(chosen)} of {len(stored)}; load average before: {load()}", flush=True)
    t0 = time.perf_counter()
    problems = asyncio.run(reverify_composed(chosen, concurrency))
    seconds = time.perf_counter() - t0
    for task_id, why in sorted(problems.items()):
        print(f"    {task_id}: {why[:200]}", flush=True)
    return report("composed", chosen, len(stored), seconds, len(problems)), len(problems)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, help="verify this many stored tasks per group (seeded sample) instead of all")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--only", choices=("repairs", "composed"), help="time one group only")
    ap.add_argument("--no-alts", action="store_true", help="leave the repairs' alt answers out")
    args = ap.parse_args()
    rows = compile_all()
    print(f"load average at start: {load()}; concurrency {args.concurrency}", flush=True)
    total, failing = 0.0, 0
    if args.only in (None, "repairs"):
        projected, bad = bench_repairs(rows, args.sample, args.concurrency, not args.no_alts)
        total, failing = total + projected, failing + bad
    if args.only in (None, "composed"):
        projected, bad = bench_composed(rows, args.sample, args.concurrency)
        total, failing = total + projected, failing + bad
    row("projected for every stored task of the groups timed", f"{total:.0f} s", f"{total / 60:.1f} min")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
