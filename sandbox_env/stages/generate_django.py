"""Draw, verify and store generated django tasks: `websandbox tasks generate_django --seed N --target K`.

Candidates come from generate/dj_task.py (`candidate(seed, index)` for index = start, start+1,
...) under the newest grammar (dj_task.GRAMMAR), deterministic: the same seed gives the same
candidates in the same order; a stored line redraws under the grammar it carries (dj_store.grammar_of). Each goes
through the host screen (dj_task.screen), then is verified by execution in the real image,
through the functions every hand-written django task is verified with:
- the controls of verify/django.py (`DjangoVerifier.verify_task` over the task laid out as a
  folder): the reference written with bash and its visible tests run in a rollout, then graded
  directly on VARIED_DRAWS draws of the hidden tests' data (each must score 1.0); the empty
  deliverables, a syntax error and the junk deliverables, each graded twice (each must score 0.0);
- every mutant of the reference (verify/dj_mutants.py: the django operators plus the kind's own),
  graded once through the family's `grade_final` (again when the grading had a harness fault):
  each must score below 1.0 with no scoring error, and there must be at least MIN_MUTANTS.
A candidate that fails any of these is dropped with its reason: never patched, nothing declared
equivalent. An admitted candidate is appended to the store at once (the run resumes: a stored
task is not verified again, and `--start` skips indices already drawn). At the end the command
prints how many were drawn, admitted and dropped (by reason), and the verification time per
task and tasks per minute.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sandbox_env.generate import dj_store
from sandbox_env.generate.dj_features import KINDS
from sandbox_env.generate.dj_task import ScreenError, candidate, screen

MIN_MUTANTS = 3  # a reference with fewer mutants tells too little about its tests: dropped


def _prompt(record: dict[str, Any]) -> str:
    return dj_store.compile_generated_django(record).prompt


async def verify_record(
    record: dict[str, Any], ctx: Any, grader: Any, sem: asyncio.Semaphore, sample: bool = False
) -> tuple[bool, str, dict]:
    """(admitted, why not, what verification recorded) for one screened candidate. `sample` grades one mutant of
    each operator instead of every one: for a quick look (the default test tier), never to admit a task."""
    from sandbox_env.families import grade_final
    from sandbox_env.verify.dj_mutants import files_of, mutants_of
    from sandbox_env.verify.django import VERIFIER
    from sandbox_env.verify.mutants import one_per_operator

    t0 = time.perf_counter()
    task = dj_store.compile_generated_django(record)
    with tempfile.TemporaryDirectory(prefix="dj-gen-") as tmp:
        folder = dj_store.write_folder(record, Path(tmp) / record["task_id"])
        async with sem:
            controls = await VERIFIER.verify_task(folder, task, ctx)
    recorded: dict[str, Any] = {"controls": {c.name: c.score for c in controls}}
    bad = [c for c in controls if not c.ok]
    if bad:
        c = bad[0]
        return False, f"control {c.name} scored {c.score:.2f}: {c.detail[:300]}", recorded
    reference = record["reference"]
    pool = mutants_of(reference, record["deliverables"], record["measures"]["features"])
    mutants = one_per_operator(pool) if sample else pool

    async def one(m: Any) -> tuple[str, bool, str]:
        grade = None
        for _ in range(2):
            async with sem:
                grade = await grade_final(task, {"files": files_of(m, reference)}, grader)
            if not grade.scoring_error:
                break
        killed = grade.score < 1.0 and not grade.scoring_error
        return m.name, killed, grade.scoring_error or grade.reason

    outcomes = await asyncio.gather(*(one(m) for m in mutants))
    survivors = [(name, why) for name, killed, why in outcomes if not killed]
    recorded.update({"mutants": len(mutants), "killed": len(mutants) - len(survivors)})
    recorded["seconds"] = round(time.perf_counter() - t0, 1)
    if len(pool) < MIN_MUTANTS:
        return False, f"too few mutants ({len(pool)} < {MIN_MUTANTS}): the suite is barely tested", recorded
    if survivors:
        name, why = survivors[0]
        return False, f"{len(survivors)} mutant(s) survive, e.g. {name} ({why[:160]})", recorded
    return True, "", recorded


def _reason_key(why: str) -> str:
    return why.split(":", 1)[0] if why.startswith("control") else why.split(",", 1)[0].split("(", 1)[0].strip()


async def generate(
    seed: int,
    target: int,
    start: int,
    max_candidates: int,
    out: Path,
    concurrency: int,
    only: str | None = None,
    minutes: float | None = None,
    log=print,
) -> dict[str, Any]:
    """Verify candidates from `start` until `target` new tasks are stored or `max_candidates` were drawn."""
    from sandbox_env.grading.reused import ReusedSandboxGrader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend
    from sandbox_env.verify.base import VerifyContext

    stored = {r["task_id"]: r for r in dj_store.read(out)}
    prompts = {_prompt(r) for r in stored.values()}  # a twin prompt (other hidden data, one question) is a duplicate
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    ctx, grader = VerifyContext(backend, image), ReusedSandboxGrader(backend, image)  # the mutants' gradings
    sem = asyncio.Semaphore(concurrency)
    stats: dict[str, Any] = {"drawn": 0, "screened_out": 0, "duplicates": 0, "admitted": 0, "dropped": Counter()}
    verify_seconds: list[float] = []
    t_start = time.perf_counter()
    index = start
    try:
        while stats["admitted"] < target and stats["drawn"] < max_candidates:
            if minutes is not None and time.perf_counter() - t_start > 60 * minutes:
                log(f"  the time budget of {minutes} minutes is spent: no new candidates")
                break
            batch = []
            while len(batch) < concurrency and stats["drawn"] < max_candidates:
                record = candidate(seed, index, only)
                index += 1
                stats["drawn"] += 1
                if (
                    record["task_id"] in stored
                    or any(r["task_id"] == record["task_id"] for r in batch)
                    or _prompt(record) in prompts
                    or any(_prompt(r) == _prompt(record) for r in batch)
                ):
                    stats["duplicates"] += 1
                    continue
                try:
                    screen(record)
                except ScreenError as exc:
                    stats["screened_out"] += 1
                    log(f"  screened out {record['task_id']} (#{record['index']}): {exc}")
                    continue
                batch.append(record)
            t0 = time.perf_counter()
            results = await asyncio.gather(*(verify_record(r, ctx, grader, sem) for r in batch))
            for record, (ok, why, recorded) in zip(batch, results, strict=True):
                verify_seconds.append(recorded.get("seconds", time.perf_counter() - t0))
                if ok:
                    record["verified"] = recorded
                    stored[record["task_id"]] = record
                    prompts.add(_prompt(record))
                    stats["admitted"] += 1
                    dj_store.write(out, list(stored.values()))
                    log(
                        f"  admitted {record['task_id']} (#{record['index']}, {record['split']}, {record['difficulty']}): "
                        f"{recorded['killed']}/{recorded['mutants']} mutants killed, {recorded['seconds']} s"
                    )
                else:
                    stats["dropped"][_reason_key(why)] += 1
                    log(f"  dropped {record['task_id']} (#{record['index']}): {why}")
    finally:
        await grader.stop()
        backend.teardown()
    wall = time.perf_counter() - t_start
    stats.update(next_index=index, wall_seconds=wall, verify_seconds=verify_seconds, stored=len(stored))
    return stats


def rerender(path: Path) -> int:
    """Re-render the English (title, spec) of every stored line from its draw; refuse when anything else differs.

    The spec is not verified by execution, so a wording change needs no containers; a change to the
    tests, the reference or the tree does, and is refused here (regenerate those lines instead).
    """
    records = dj_store.read(path)
    changed = 0
    for r in records:
        again = candidate(r["seed"], r["index"], r.get("only"), dj_store.grammar_of(r))
        for key in ("task_id", "tree", "tests", "hidden", "reference", "junk", "vary"):
            if again[key] != r[key]:
                raise SystemExit(f"{r['task_id']}: its {key} no longer redraws: regenerate it, do not re-render")
        if (again["title"], again["spec"]) != (r["title"], r["spec"]):
            r["title"], r["spec"] = again["title"], again["spec"]
            changed += 1
    dj_store.write(path, records)
    print(f"re-rendered the English of {changed} of {len(records)} stored lines in {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="websandbox tasks generate_django", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, help="the seed the candidates are drawn from (a whole number)")
    ap.add_argument("--rerender", action="store_true", help="only re-render the stored lines' English (no containers)")
    ap.add_argument("--target", type=int, default=10, help="stop after this many new tasks are stored")
    ap.add_argument("--start", type=int, default=0, help="the first candidate index to draw")
    ap.add_argument("--max-candidates", type=int, default=10_000, help="stop after drawing this many candidates")
    ap.add_argument("--concurrency", type=int, default=2, help="gradings at once")
    ap.add_argument("--out", type=Path, default=dj_store.GENERATED_DJANGO_FILE)
    ap.add_argument("--minutes", type=float, help="draw no new candidates after this many minutes")
    ap.add_argument("--kind", choices=sorted(KINDS), help="draw only this feature kind (from a stream of its own)")
    args = ap.parse_args(argv)
    if args.rerender:
        return rerender(args.out)
    if args.seed is None:
        ap.error("--seed is required")
    if args.seed < 0 or args.target < 1 or args.start < 0 or args.concurrency < 1:
        ap.error("--seed and --start are whole numbers of zero or more; --target and --concurrency at least 1")
    stats = asyncio.run(
        generate(args.seed, args.target, args.start, args.max_candidates, args.out, args.concurrency, args.kind, args.minutes)
    )
    verified = len(stats["verify_seconds"])
    wall = stats["wall_seconds"]
    per_task = wall / verified if verified else 0.0
    dropped = sum(stats["dropped"].values())
    print(
        f"drawn {stats['drawn']} (indices {args.start}..{stats['next_index'] - 1}): admitted {stats['admitted']}, "
        f"dropped {dropped} {dict(stats['dropped'])}, screened out {stats['screened_out']}, "
        f"duplicates {stats['duplicates']}; stored {stats['stored']} in {args.out}"
    )
    print(
        f"verification: {verified} candidates in {wall:.0f} s wall, {per_task:.1f} s a candidate, "
        f"{60 * verified / wall if wall else 0:.2f} candidates a minute, "
        f"{60 * stats['admitted'] / wall if wall else 0:.2f} admitted tasks a minute (concurrency {args.concurrency})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
