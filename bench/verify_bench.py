"""How long verifying the generated orm tasks takes on this machine, beside the 15-minute bound.

    python bench/verify_bench.py [--sample N] [--concurrency 2]

Runs `build_tasks.py --verify`'s path for generated tasks (stages/generate_orm.py `reverify`: every
stored task's reference built twice, and every mutant, on each of its admitted fixture variants, in
the runtime image, batched per variant and build) over all stored tasks or a seeded sample, and the
pure-Python part of verification (the evaluator's rows re-derived on every variant) on its own.
Prints the seconds, the tasks per minute, the time projected for the whole stored set, and the
bound. Nothing is asserted: the figures are read beside the bound.
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

from sandbox_env.generate import store  # noqa: E402
from sandbox_env.generate.evaluate import evaluate  # noqa: E402
from sandbox_env.generate.fixture import world  # noqa: E402
from sandbox_env.generate.tree import from_canonical  # noqa: E402
from sandbox_env.rollout.image import ensure_image  # noqa: E402
from sandbox_env.sandbox.registry import make_backend  # noqa: E402
from sandbox_env.stages.generate_orm import reverify  # noqa: E402

BOUND_SECONDS = 15 * 60  # the whole stored set on this 2-core machine


def row(name: str, value: str, note: str = "") -> None:
    print(f"  {name:<52} {value:>12}  {note}", flush=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sample", type=int, help="verify this many stored tasks (seeded sample) instead of all")
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()
    records = store.read()
    chosen = random.Random(0).sample(records, args.sample) if args.sample else records
    print(f"generated orm tasks: {len(chosen)} of {len(records)}; load average {os.getloadavg()[0]:.1f}")
    t0 = time.perf_counter()
    for r in chosen:
        q = from_canonical(r["tree"])
        for v in r["variants"]:
            evaluate(q, world(int(v)))
    python_s = time.perf_counter() - t0
    row("evaluator rows on every admitted variant", f"{python_s:.1f} s")
    backend = make_backend()
    t0 = time.perf_counter()
    try:
        problems = asyncio.run(reverify(backend, ensure_image(), chosen, args.concurrency, log=lambda *_: None))
    finally:
        backend.teardown()
    seconds = time.perf_counter() - t0
    failing = sum(1 for v in problems.values() if v)
    row("verification in the image (references, builds, mutants)", f"{seconds:.0f} s", f"{failing} failing")
    per_minute = 60 * len(chosen) / seconds
    projected = seconds * len(records) / len(chosen)
    row("tasks verified per minute", f"{per_minute:.0f}")
    row("projected for every stored task", f"{projected:.0f} s", f"bound {BOUND_SECONDS} s ({projected / BOUND_SECONDS:.2f}x)")
    return 1 if failing else 0


if __name__ == "__main__":
    raise SystemExit(main())
