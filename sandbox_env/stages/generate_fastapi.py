"""Draw generated fastapi tasks from a seed, verify them in the real image, and store the ones that pass.

    python -m sandbox_env.stages.generate_fastapi [--seed S] [--target N] [--concurrency C] [--out FILE]
    websandbox tasks generate_fastapi --seed S --target N     (the same command)
    websandbox tasks generate_fastapi --respec                 (wording changes: re-render the stored specs, no container)

Candidates are api_store.candidate_record(seed, 0), (seed, 1), ... under the newest grammar
(api_tree.GRAMMAR): the same seed gives the same candidates in the same order; stored lines drawn
under an older grammar keep theirs (api_store.grammar_of). Each is screened on the host, then verified by execution:

  host:  its spec uses no API name and no FastAPI documentation string (families/fastapi_words.py);
         spec coverage (every requirement unit maps to checks that exist, verify/coverage.py);
         its tokens are sound (fastapi_vary.validate) and no check gives back a sent value without
         sending a drawn one (fastapi_vary.require_drawn_echoes); no check passes for the catch-all;
         at most MAX_CHECKS checks; at most PER_SIGNATURE tasks of one signature in the store;
  image: verify/execution.admit: the reference 1.0 on REFERENCE_DRAWS gradings (each a fresh draw),
         the empty app 0.0 and the catch-all at most 0.02, and every mutant of the reference
         (verify/mutants.py's fastapi operators) below 1.0.

A candidate that fails anything is dropped and counted by its first reason; nothing is patched by
hand and nothing is declared equivalent. `--concurrency` candidates are verified at once, each one's
gradings batched (verify/batched.py) one batch at a time. Resumable: stored lines are kept, their ids
are skipped, and the store is written after every wave of candidates. The run ends with tasks per
minute and the projection for 1,000 tasks.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import time
from pathlib import Path
from typing import Any

from sandbox_env.families.fastapi_checks import passes_for_catch_all
from sandbox_env.families.fastapi_vary import VaryError, require_drawn_echoes, validate
from sandbox_env.families.fastapi_words import refused_words
from sandbox_env.generate import api_store
from sandbox_env.verify.coverage import coverage_problems

REFERENCE_DRAWS = 3
MAX_CHECKS = 14  # the composed tier's cap (families/fastapi.py CHECK_CAPS)
PER_SIGNATURE = 3


def screen(record: dict[str, Any]) -> list[str]:
    """Host-side problems of a candidate record (no container)."""
    problems = [f"the spec uses {w!r}" for w in refused_words(record["spec"])]
    known = {c["name"] for c in record["checks"]}
    problems += coverage_problems(record["spec"], record["coverage"], known)
    try:
        validate(record["vary"], record["checks"], record["spec"], record["task_id"])
        require_drawn_echoes(record["checks"], record["vary"], record["spec"], record["task_id"])
    except VaryError as exc:
        problems.append(str(exc))
    problems += [f"{c['name']!r} passes for an app answering 200 {{}}" for c in record["checks"] if passes_for_catch_all(c)]
    if not 2 <= len(record["checks"]) <= MAX_CHECKS:
        problems.append(f"{len(record['checks'])} checks")
    return problems


def mutant_pool(record: dict[str, Any], row: Any, sample: bool = False) -> dict[str, tuple[Any, str]]:
    """Every mutant of the reference by name; `sample`: the first of each operator only (verify.mutants.one_per_operator)."""
    from sandbox_env.verify.mutants import FASTAPI_OPERATORS, generate, one_per_operator

    mutants = generate(record["reference"], FASTAPI_OPERATORS)
    return {m.name: (row, m.source) for m in (one_per_operator(mutants) if sample else mutants)}


async def verify_record(
    record: dict[str, Any], grader: Any, concurrency: int, sample: bool = False
) -> tuple[bool, str, dict[str, Any]]:
    """(admitted, why not, what was measured) for one record, by execution. `sample` grades one mutant of each
    operator instead of every one: for a quick look (the default test tier), never to admit a task."""
    from sandbox_env.verify.execution import admit

    row = api_store.compile_generated_fastapi(record)
    mutants = mutant_pool(record, row, sample)
    ok, why, measured = await admit(row, record["reference"], [("mutant", mutants)], grader, concurrency, REFERENCE_DRAWS)
    if not ok:
        return False, why, {}
    gradings = REFERENCE_DRAWS + 2 + len(mutants)  # the reference's draws, the two controls, every mutant
    return (
        True,
        "",
        {
            "mutants_killed": len(mutants),
            "catch_all": measured["catch_all"],
            "reference_draws": REFERENCE_DRAWS,
            "gradings": gradings,
        },
    )


def reason_class(why: str) -> str:
    """A dropped candidate's reason, without its particulars (for the counts printed at the end)."""
    if why.startswith("mutant "):
        return "mutant survives: " + why.split()[1].split("@")[0]
    return why.split("(")[0].split(":")[0].strip()[:60]


async def generate_tasks(seed: int, target: int, concurrency: int, path: Path, limit: int, log=print) -> dict[str, Any]:
    """Draw candidates from `seed` until `target` are admitted or `limit` were drawn; `concurrency` candidates are
    verified at once (each one's gradings in turn, so its first survivor still ends it early)."""
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    records = {r["task_id"]: r for r in api_store.read(path)}
    per_signature = collections.Counter(r["signature"] for r in records.values())
    log(f"{len(records)} generated fastapi tasks stored in {path}")
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    grader = Grader(backend, image)
    out: dict[str, Any] = {"drawn": 0, "verified": 0, "admitted": 0, "seconds": 0.0, "gradings": 0}
    dropped: collections.Counter[str] = collections.Counter()
    index = 0
    try:
        while out["admitted"] < target and index < limit:
            wave: list[tuple[int, dict[str, Any]]] = []
            in_flight = collections.Counter()
            while len(wave) < max(1, min(concurrency, target - out["admitted"])) and index < limit:
                record = api_store.candidate_record(seed, index)
                index, out["drawn"] = index + 1, out["drawn"] + 1
                why = _screened_out(record, records, per_signature + in_flight)
                if why:
                    dropped[why] += 1
                    if why.startswith("host: "):
                        log(f"  #{index - 1} {record['task_id']}: dropped on the host, {why[6:200]}")
                    continue
                in_flight[record["signature"]] += 1
                wave.append((index - 1, record))
            if not wave:
                continue
            t0 = time.perf_counter()
            results = await asyncio.gather(*(_timed_verify(record, grader) for _, record in wave))
            out["seconds"] += time.perf_counter() - t0
            out["verified"] += len(wave)
            for (at, record), (ok, why, measured, secs) in zip(wave, results, strict=True):
                kinds = "+".join(record["measures"]["node_kinds"])
                if not ok:
                    dropped[reason_class(why)] += 1
                    log(f"  #{at} {record['task_id']} ({kinds}): dropped, {why[:200]} ({secs:.0f} s)")
                    continue
                record["verified"] = {**measured, "seconds": round(secs, 1)}
                records[record["task_id"]] = record
                per_signature[record["signature"]] += 1
                out["admitted"] += 1
                out["gradings"] += measured["gradings"]
                killed = measured["mutants_killed"]
                log(f"  #{at} {record['task_id']} ({kinds}): admitted, {killed} mutants killed ({secs:.0f} s)")
            api_store.write(path, list(records.values()))
    finally:
        backend.teardown()
    return {**out, "dropped": dict(dropped)}


def _screened_out(record: dict[str, Any], records: dict[str, Any], per_signature: collections.Counter) -> str:
    """Why a drawn candidate goes no further than the host ("" when it goes on to the image)."""
    if record["task_id"] in records:
        return "already stored"
    if per_signature[record["signature"]] >= PER_SIGNATURE:
        return "signature full"
    problems = screen(record)
    return "host: " + problems[0].split(": ", 1)[-1][:60] if problems else ""


async def _timed_verify(record: dict[str, Any], grader: Any) -> tuple[bool, str, dict[str, Any], float]:
    """verify_record with its own wall seconds; its gradings one batch at a time (the wave runs beside it)."""
    t0 = time.perf_counter()
    ok, why, measured = await verify_record(record, grader, concurrency=1)
    return ok, why, measured, time.perf_counter() - t0


async def reverify(rows: list[Any], concurrency: int) -> dict[str, str]:
    """Every given stored generated fastapi task verified again by execution, as when admitted; {task_id: problem}."""
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    records = {r["task_id"]: r for r in api_store.read()}
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    problems: dict[str, str] = {}
    try:
        grader = Grader(backend, image)
        for row in rows:
            record = records[row.task_id]
            host = screen(record)
            ok, why, _ = (False, host[0], {}) if host else await verify_record(record, grader, concurrency)
            if not ok:
                problems[row.task_id] = why
    finally:
        backend.teardown()
    return problems


def main_reverify(rows: list[Any], concurrency: int = 2) -> int:
    """build_tasks.py --verify for generated fastapi tasks: prints failures, counts and time."""
    t0 = time.perf_counter()
    problems = asyncio.run(reverify(rows, concurrency))
    for task_id, why in sorted(problems.items()):
        print(f"  {task_id} FAIL: {why[:300]}")
    secs = time.perf_counter() - t0
    print(f"generated fastapi tasks: {len(rows) - len(problems)}/{len(rows)} verified again ({secs:.0f} s)")
    return 1 if problems else 0


async def redraw(path: Path, concurrency: int, log=print) -> dict[str, int]:
    """Every stored line drawn again from its seed, index and grammar: a line the generator now draws the same is
    kept as it is; one it draws otherwise (its checks or reference changed) is verified again in full, as when it
    was admitted, and stored as drawn now, or dropped when it no longer passes. Counts by outcome."""
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    stored = api_store.read(path)
    records, counts = {r["task_id"]: r for r in stored}, collections.Counter()
    redrawn = [api_store.candidate_record(r["drawn"]["seed"], r["drawn"]["index"], api_store.grammar_of(r)) for r in stored]
    changed = [new for old, new in zip(stored, redrawn, strict=True) if {k: v for k, v in old.items() if k != "verified"} != new]
    counts["unchanged"] = len(stored) - len(changed)
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    try:
        grader = Grader(backend, image)
        for record in changed:
            t0 = time.perf_counter()
            host = screen(record)
            ok, why, measured = (False, host[0], {}) if host else await verify_record(record, grader, concurrency)
            secs = time.perf_counter() - t0
            if ok:
                record["verified"] = {**measured, "seconds": round(secs, 1)}
                records[record["task_id"]] = record
                counts["verified again"] += 1
                log(f"  {record['task_id']}: verified again, {measured['mutants_killed']} mutants killed ({secs:.0f} s)")
            else:
                records.pop(record["task_id"], None)
                counts["dropped"] += 1
                log(f"  {record['task_id']}: dropped, {why[:200]} ({secs:.0f} s)")
            api_store.write(path, list(records.values()))
    finally:
        backend.teardown()
    return dict(counts)


def respec(path: Path) -> int:
    """Title, spec and coverage of every stored line rendered again from its tree (wording changes need no container).

    The checks, tokens and reference are not touched (they are what verification admitted), so a line
    whose re-rendered text fails the host screen stops the command instead of being stored.
    """
    from sandbox_env.generate.api_spec import render_spec, title

    records = api_store.read(path)
    for record in records:
        record["spec"], record["coverage"] = render_spec(record["tree"])
        record["title"] = title(record["tree"])
        problems = screen(record)
        if problems:
            raise SystemExit(f"{record['task_id']}: {problems[0]}")
    api_store.write(path, records)
    print(f"re-rendered the spec of {len(records)} generated fastapi tasks in {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sandbox_env.stages.generate_fastapi", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", type=int, default=10, help="stop after admitting this many new tasks")
    ap.add_argument("--limit", type=int, default=100_000, help="draw at most this many candidates")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--out", type=Path, default=api_store.GENERATED_FASTAPI_FILE)
    ap.add_argument("--respec", action="store_true", help="only re-render the stored specs from their trees (no container)")
    ap.add_argument(
        "--redraw", action="store_true", help="draw every stored line again; verify again (or drop) each one drawn otherwise"
    )
    args = ap.parse_args(argv)
    if args.respec:
        return respec(args.out)
    if args.redraw:
        t0 = time.perf_counter()
        counts = asyncio.run(redraw(args.out, args.concurrency))
        print(f"redrawn {sum(counts.values())} stored lines: {counts} ({time.perf_counter() - t0:.0f} s)")
        return 0
    t0 = time.perf_counter()
    out = asyncio.run(generate_tasks(args.seed, args.target, args.concurrency, args.out, args.limit))
    wall = time.perf_counter() - t0
    stored = api_store.read(args.out)
    per_minute = out["admitted"] / (wall / 60) if wall > 0 else 0.0
    per_task = out["seconds"] / out["verified"] if out["verified"] else 0.0
    print(
        f"drawn {out['drawn']}, verified in the image {out['verified']}, admitted {out['admitted']}; "
        f"stored: {len(stored)} in {args.out}"
    )
    kinds = collections.Counter(k for r in stored for k in r["measures"]["node_kinds"])
    print("stored per node kind: " + ", ".join(f"{k} {n}" for k, n in sorted(kinds.items())))
    tiers = collections.Counter(r["measures"]["tier"] for r in stored)
    splits = collections.Counter(r["split"] for r in stored)
    print(f"stored per tier: {dict(sorted(tiers.items()))}; per split: {dict(sorted(splits.items()))}; "
          f"signatures: {len({r['signature'] for r in stored})}")  # fmt: skip
    for why, n in sorted(out["dropped"].items(), key=lambda kv: -kv[1]):
        print(f"  {'skipped' if why == 'already stored' else 'dropped'} {n}: {why}")
    print(f"{wall:.0f} s: {per_minute:.2f} tasks a minute admitted; {per_task:.1f} s of verification a verified candidate")
    if out["gradings"]:
        per_grading = out["seconds"] / out["gradings"]
        hours = 1000 * wall / out["admitted"] / 3600
        print(
            f"admitted tasks: {out['gradings'] / out['admitted']:.1f} gradings each, {per_grading:.2f} s of wall a grading "
            f"with {args.concurrency} candidates at once; 1,000 tasks at this rate: {hours:.1f} h (the issue's bound: 2 h)"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
