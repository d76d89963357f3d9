"""Compose fastapi tasks, verify them in the real image, and store the ones that pass.

    python -m sandbox_env.stages.compose [--seed S] [--target N] [--concurrency C] [--out FILE]
    python -m sandbox_env.stages.compose --respec     # wording changes: re-render the stored specs, no container

Combinations of parts are drawn from the seed (generate/compose_logic.draw_combinations);
each is composed, screened on the host, then verified by execution through the fastapi
family's real grader (grade_final, one fresh grading container per grading):

  host:  spec coverage of the composed text (every requirement sentence mapped to a check;
         a part's mapping may not start another part's sentence);
  image: the composed reference 1.0 on two gradings (two draws of the parts' tokens), with no
         scoring error and no tamper flag; the empty app 0.0 and the catch-all app at most
         0.02; every interaction wrong answer (compose_logic.wrong_answers: a rule left out,
         a rule applied to the wrong parts) below 1.0; every mutant of the composed reference
         (verify/mutants.py's fastapi operators: each part's mutants lifted into the
         composition, and the rules' own) below 1.0. A grading with a scoring error proves
         nothing either way: the task is dropped, never admitted on it.

Nothing is declared equivalent: a surviving mutant drops the combination. Resumable: lines in
the store are kept and their combinations are not drawn again; the store is written after
every admitted task.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import time
import tomllib
from pathlib import Path
from typing import Any

from sandbox_env.generate import compose_logic as logic
from sandbox_env.generate import compose_store
from sandbox_env.verify.coverage import coverage_problems, requirement_units
from sandbox_env.verify.execution import admit


def parts_available() -> list[logic.ComposableTask]:
    """Every hand-written fastapi task that can be a part, with its compiled checks and its coverage."""
    from sandbox_env.families import get_family
    from sandbox_env.verify.base import task_folders

    fam = get_family("fastapi")
    out = []
    for folder in task_folders("fastapi"):
        row = fam.compile_task(folder)
        source = (folder / "reference.py").read_text()
        if row.measures.get("tier") == "composed" or logic.part_problem(source, row.grading):
            continue
        meta = tomllib.loads((folder / "task.toml").read_text())
        out.append(
            logic.ComposableTask(
                task_id=row.task_id,
                source=source,
                spec=meta["spec"],
                checks=row.grading["checks"],
                vary=row.grading["vary"],
                coverage=meta.get("spec_coverage", []),
                split=row.split,
                names=logic.defined_names(source),
            )
        )
    return out


def screen(record: dict[str, Any], parts: list[logic.ComposableTask]) -> list[str]:
    """Host-side problems of a composed record: its spec coverage."""
    known = {c["name"] for c in record["checks"]}
    problems = coverage_problems(record["spec"], record["coverage"], known)
    units = requirement_units(record["spec"])
    for p in parts:
        own = requirement_units(p.spec)
        for e in p.coverage:
            says = " ".join(str(e["says"]).split())
            if sum(u.startswith(says) for u in units) > sum(u.startswith(says) for u in own):
                problems.append(f"{p.task_id}: {says!r} also starts another part's sentence")
    return problems


def _part_row(row: Any, index: int) -> Any:
    """The row graded on one part's checks and the rules' checks: where a mutant inside that part must fail."""
    keep = [c for c in row.grading["checks"] if c["name"].startswith((f"part {index + 1}: ", "rule: "))]
    return dataclasses.replace(row, grading={**row.grading, "checks": keep})


def mutant_plan(record: dict[str, Any], parts: list[logic.ComposableTask], row: Any) -> dict[str, tuple[Any, str]]:
    """{name: (row to grade on, source)}: every part's mutants lifted, then the composition's own.

    A part's mutant (verify/mutants.py over the part's own reference) is lifted by composing
    again with that part's source replaced, and graded on that part's checks and the rules'
    checks: failing there fails the whole task. The mutants its base task declares equivalent
    (with their reasons, in its task.toml) are lifted too and left out, as there. Every other
    mutant of the composed reference (the rules, the routers, the includes) is graded on all
    checks.
    """
    from sandbox_env.verify.base import task_folder
    from sandbox_env.verify.mutants import FASTAPI_OPERATORS, generate
    from sandbox_env.verify.sensitivity import declared_equivalents

    plan: dict[str, tuple[Any, str]] = {}
    lifted: set[str] = set()
    for i, p in enumerate(parts):
        declared = declared_equivalents(task_folder("fastapi", p.task_id))
        sub = _part_row(row, i)
        for m in generate(p.source, FASTAPI_OPERATORS):
            source = logic.record_source(record, parts, i, m.source)
            lifted.add(source.strip())
            if m.name not in declared:
                plan[f"part {i + 1} {m.name}"] = (sub, source)
    for m in generate(record["reference"], FASTAPI_OPERATORS):
        if m.source.strip() not in lifted:
            plan[f"composed {m.name}"] = (row, m.source)
    return plan


async def verify_record(
    record: dict[str, Any], parts: list[logic.ComposableTask], grader: Any, concurrency: int
) -> tuple[bool, str, dict]:
    """(admitted, why not, what was measured) for one composed record, by execution (verify/execution.py)."""
    row = compose_store.compile_composed(record)
    if logic.record_source(record, parts) != record["reference"]:
        return False, "the record's reference is not what its parts compose to", {}
    wrong = {name: (row, src) for name, src in logic.wrong_answers(record, parts).items()}
    mutants = mutant_plan(record, parts, row)
    ok, why, measured = await admit(row, record["reference"], [("wrong answer", wrong), ("mutant", mutants)], grader, concurrency)
    if not ok:
        return False, why, {}
    return True, "", {"wrong_answers": len(wrong), "mutants_killed": len(mutants), "catch_all": measured["catch_all"]}


async def generate_tasks(seed: int, target: int, concurrency: int, path: Path, log=print) -> int:
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    records = {r["task_id"]: r for r in compose_store.read(path)}
    taken = {tuple(sorted(r["parts"])) for r in records.values()}
    parts = parts_available()
    by_id = {p.task_id: p for p in parts}
    log(f"{len(parts)} hand-written fastapi tasks can be parts; {len(records)} composed tasks stored")
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    grader = Grader(backend, image)
    made = tried = 0
    try:
        for chosen, rng in logic.draw_combinations(parts, seed):
            if made >= target:
                break
            ids = tuple(sorted(p.task_id for p in chosen))
            if ids in taken:
                continue
            try:
                record = logic.compose(chosen, rng)
            except logic.ComposeError:
                continue
            problems = screen(record, chosen)
            if problems:
                continue
            tried += 1
            log(f"  {record['task_id']} ({'+'.join(record['parts'])}): verifying")
            t0 = time.perf_counter()
            ok, why, measured = await verify_record(record, [by_id[i] for i in record["parts"]], grader, concurrency)
            secs = time.perf_counter() - t0
            if not ok:
                log(f"  {record['task_id']} ({'+'.join(record['parts'])}): dropped, {why} ({secs:.0f} s)")
                continue
            record["verified"] = measured
            records[record["task_id"]] = record
            taken.add(ids)
            made += 1
            compose_store.write(path, list(records.values()))
            what = f"{'+'.join(record['parts'])}; {'+'.join(record['rules'])}"
            log(f"  {record['task_id']} ({what}): admitted, {measured['mutants_killed']} mutants killed ({secs:.0f} s)")
    finally:
        backend.teardown()
    log(f"admitted {made} of {tried} verified candidates")
    return made


async def reverify(rows: list[Any], concurrency: int) -> dict[str, str]:
    """Every stored composed task verified again by execution, as when it was admitted; {task_id: problem}."""
    from sandbox_env.grading.grader import Grader
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    records = {r["task_id"]: r for r in compose_store.read()}
    by_id = {p.task_id: p for p in parts_available()}
    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    problems: dict[str, str] = {}
    try:
        grader = Grader(backend, image)
        for row in rows:
            record = records[row.task_id]
            missing = [i for i in record["parts"] if i not in by_id]
            if missing:
                problems[row.task_id] = f"its parts {missing} can no longer be parts"
                continue
            ok, why, _ = await verify_record(record, [by_id[i] for i in record["parts"]], grader, concurrency)
            if not ok:
                problems[row.task_id] = why
    finally:
        backend.teardown()
    return problems


def main_reverify(rows: list[Any], concurrency: int = 2) -> int:
    """build_tasks.py --verify for composed tasks: prints failures, counts and time."""
    t0 = time.perf_counter()
    problems = asyncio.run(reverify(rows, concurrency))
    for task_id, why in sorted(problems.items()):
        print(f"  {task_id} FAIL: {why[:300]}")
    print(f"composed tasks: {len(rows) - len(problems)}/{len(rows)} verified again ({time.perf_counter() - t0:.0f} s)")
    return 1 if problems else 0


def respec(path: Path) -> int:
    """Spec and coverage of every stored line rendered again from its parts (wording changes need no container)."""
    by_id = {p.task_id: p for p in parts_available()}
    records = compose_store.read(path)
    for record in records:
        parts = [by_id[i] for i in record["parts"]]
        record["spec"], record["coverage"] = logic.record_text(record, parts)
        problems = screen(record, parts)
        if problems:
            raise SystemExit(f"{record['task_id']}: {problems[0]}")
    compose_store.write(path, records)
    print(f"re-rendered the spec of {len(records)} composed tasks in {path}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m sandbox_env.stages.compose", description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--target", type=int, default=10, help="stop after admitting this many new tasks")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--out", type=Path, default=compose_store.COMPOSED_FILE)
    ap.add_argument("--respec", action="store_true", help="only re-render the stored specs from their parts (no container)")
    args = ap.parse_args(argv)
    if args.respec:
        return respec(args.out)
    t0 = time.perf_counter()
    made = asyncio.run(generate_tasks(args.seed, args.target, args.concurrency, args.out))
    stored = compose_store.read(args.out)
    print(f"new composed tasks: {made}; stored: {len(stored)} in {args.out}; {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
