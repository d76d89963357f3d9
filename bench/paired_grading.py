"""Two versions of the grader programs side by side in one process, their gradings alternated.

    python bench/paired_grading.py REV [--family fastapi] [--tasks 4] [--rounds 3] [--cold]

The grader programs (sandbox_env/runtime/grader/) reach a grading container with each
grading, not through the image, so two versions can grade on the same image in one run:
this checkout's ("new") and those of git revision REV ("old"). Each reference final state of
the family's first single-feature tasks is graded by both, alternating which goes first, with
the grader prewarmed (a pool per version; `--cold` for fresh containers). On a machine that
others load, figures taken minutes apart compare loads, not code; paired gradings see the
same load. Prints the median of each and the median of the per-pair ratios new/old, with the
load average before and after.
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import sandbox_env.grading.grader as runs  # noqa: E402
from sandbox_env.grading.programs import GRADER_DIR, grader_files, grader_paths  # noqa: E402

SETTLE = 1.5  # seconds after a pool refill: its grader program's imports are done
VERSION: contextvars.ContextVar[str] = contextvars.ContextVar("grader_version", default="new")


def files_at(rev: str) -> dict[str, bytes]:
    """The grader programs as they are at `rev` (a file that did not exist there keeps this checkout's)."""
    out = dict(grader_files())
    for path in grader_paths():
        rel = path.relative_to(ROOT).as_posix()
        shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{rel}"], capture_output=True)
        if shown.returncode == 0:
            out[f"{GRADER_DIR}/{path.name}"] = shown.stdout
    return out


async def measure(args: argparse.Namespace) -> dict[str, list[float]]:
    from sandbox_env.families import grade_final
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.docker import DockerBackend
    from sandbox_env.stages.compile import compile_all
    from sandbox_env.verify import reference_calls
    from sandbox_env.verify.scripted import scripted_rollout

    backend, image = DockerBackend(), ensure_image()
    times: dict[str, list[float]] = {"old": [], "new": []}
    try:
        rows = [r for r in compile_all() if r.family == args.family and (r.measures or {}).get("tier") != "composed"]
        finals = []
        for task in rows[: args.tasks]:
            run = await scripted_rollout(backend, image, task, reference_calls(args.family, task.task_id))
            finals.append((task, run.final))
        graders = {}
        for version in times:  # each pool's refills run in the context it was made in: its version's files
            VERSION.set(version)
            graders[version] = Grader(backend, image, prewarm=0 if args.cold else 1)
            await grade_final(*finals[0], graders[version])
        for n in range(args.rounds):
            for task, final in finals:
                for version in ("old", "new") if n % 2 == 0 else ("new", "old"):
                    VERSION.set(version)
                    if not args.cold:
                        await graders[version].wait_warm(600)
                        await asyncio.sleep(SETTLE)
                    t0 = time.perf_counter()
                    grade = await grade_final(task, final, graders[version])
                    times[version].append(time.perf_counter() - t0)
                    if grade.score != 1.0:
                        raise RuntimeError(f"{version} graders gave {task.task_id}'s reference {grade.score}: {grade.reason}")
        for version, grader in graders.items():
            VERSION.set(version)
            await grader.stop()
    finally:
        backend.teardown()
    return times


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("rev", help="the git revision whose grader programs are 'old'")
    ap.add_argument("--family", choices=("fastapi", "django"), default="fastapi")
    ap.add_argument("--tasks", type=int, default=4)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cold", action="store_true", help="fresh grading containers instead of prewarmed ones")
    args = ap.parse_args()
    versions = {"old": files_at(args.rev), "new": dict(grader_files())}
    changed = sorted(Path(p).name for p in versions["new"] if versions["new"][p] != versions["old"][p])
    print(f"grader programs that differ from {args.rev}: {', '.join(changed) or 'none'}; load {os.getloadavg()[0]:.1f}")
    runs.grader_files = lambda: versions[VERSION.get()]  # what Grader.run_program writes into each container
    times = asyncio.run(measure(args))
    for version, got in times.items():
        print(f"  {version}: median {statistics.median(got) * 1000:.0f} ms over {len(got)} gradings")
    ratios = [b / a for a, b in zip(times["old"], times["new"], strict=True)]
    print(f"  new/old per pair: median {statistics.median(ratios):.3f}; load {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
