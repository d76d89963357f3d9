"""Verification of generated orm tasks by execution, batched: many tasks per container.

For every fixture variant, one container rebuilds the variant's database from scratch (its
digest must equal the image's copy) and runs, in one Python program of the image (Django,
the fixture's models, the session's preamble), every candidate's reference and every mutant
that verify/mutants.py's orm operators make of it, and the mistake of every rule its spec
states (generate/traps.py, rendered to ORM code as the reference is), each cell in a fresh copy of the
preamble's namespace; a second container does the same for the references over a build whose
drawn rows are inserted in the opposite order. Rows come back as JSON.

A candidate is admitted on a variant when: the reference ran on both builds and gave the same
rows (no tie the spec leaves open); the rows equal the independent evaluator's (floats within
1e-9 relative); the evaluator's cheap checks held there (2-40 rows, under 75 % of the
universe, a tie on the first ordering key, every ablation gives other rows: sample.py); and
every mutant gives other rows or fails on both builds. Mutants run on the reversed build too
because a mutant that leaves a tie open (the tiebreak dropped) gives rows in whatever order the
engine meets them: killed on one insertion order only, it is killed by the engine's plan, not by
the data, and an image whose SQLite plans the query another way lets it through (eight stored
tasks' "drop tiebreak" mutants came to give the reference's rows that way on some variants).
A task ships with the variants of its split's pool
that admit it (train: 0-5, eval: 6-7, so no eval task's rows are drawn from a train fixture)
and needs at least MIN_VARIANTS of them. Survivors are never declared: the candidate is
dropped, and another draw of the same structure (other constants) may take its place.
Then dedup by tree hash and by the expected rows' fingerprint, at most PER_SIGNATURE tasks per
structural signature.

    websandbox generate --seed N [--target K] [--out FILE]
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import math
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sandbox_env.constants import CONTAINER_PYTHON, CONTAINER_RUNTIME
from sandbox_env.families.orm import SESSION_DB, SESSION_ENV, image_db, session_preamble
from sandbox_env.generate import store
from sandbox_env.generate.measure import category, difficulty, measures
from sandbox_env.generate.render_orm import render_orm
from sandbox_env.generate.render_spec import render_spec
from sandbox_env.generate.sample import candidate, screen_variant
from sandbox_env.generate.traps import trap_mistakes
from sandbox_env.generate.tree import Query, canonical, signature, tree_hash
from sandbox_env.sandbox import SandboxBackend
from sandbox_env.verify.mutants import ORM_OPERATORS, Context, generate, related_names_of
from sandbox_env.verify.sensitivity import MODELS_PY

PER_SIGNATURE = 3
MIN_VARIANTS = 2
EVAL_MIN_VARIANTS = 1
CHUNK = 4000  # cells per runner call
CELL_SECONDS = 20

RUNNER = r"""
import json, signal, sys
batch = json.load(open(sys.argv[1]))
base = {}
exec(batch["preamble"], base)

class Late(Exception):
    pass

def late(*_):
    raise Late("cell timed out")

signal.signal(signal.SIGALRM, late)
PLAIN = (str, int, float, bool, type(None))
out = {}
for key, code in batch["cells"].items():
    ns = dict(base)
    try:
        signal.alarm(CELL_SECONDS)
        exec(code, ns)
        signal.alarm(0)
        r = ns.get("result")
        if type(r) is not list or any(type(t) is not tuple or any(type(v) not in PLAIN for v in t) for t in r):
            out[key] = {"error": "result is not a list of tuples of plain values"}
        else:
            out[key] = [list(t) for t in r]
    except BaseException as exc:
        signal.alarm(0)
        out[key] = {"error": type(exc).__name__ + ": " + str(exc)[:200]}
json.dump(out, open(sys.argv[2], "w"))
""".replace("CELL_SECONDS", str(CELL_SECONDS))


def _exact(v: Any) -> str:
    return json.dumps(v, sort_keys=True)


def same_rows(a: list[list[Any]], b: list[list[Any]]) -> bool:
    """Equal rows: same length and types, text and ints exact, floats within 1e-9 relative."""
    if len(a) != len(b):
        return False
    for ra, rb in zip(a, b, strict=True):
        if len(ra) != len(rb):
            return False
        for x, y in zip(ra, rb, strict=True):
            if type(x) is not type(y):
                return False
            if isinstance(x, float):
                if not math.isclose(x, y, rel_tol=1e-9, abs_tol=1e-9):
                    return False
            elif x != y:
                return False
    return True


def mutants_of(code: str, q: Query | None = None) -> dict[str, str]:
    """The ORM operators' mutants of the reference, and (given its tree) each stated rule's mistake rendered as ORM code."""
    ctx = Context(related_names_of(MODELS_PY.read_text()))
    out = {m.name: m.source for m in generate(code, ORM_OPERATORS, ctx)}
    for i, (kind, mistake) in enumerate(trap_mistakes(q) if q is not None else []):
        try:
            out[f"trap:{kind}#{i}"] = render_orm(mistake)
        except TypeError:  # no ORM form (a range inside one related row's conditions): the evaluator's screen holds it
            continue
    return out


async def run_cells(backend: SandboxBackend, image: str, variant: int, reverse: bool, cells: dict[str, str]) -> dict[str, Any]:
    """Every cell over one rebuilt variant, in one container; {key: rows | {"error": ...}}."""
    env = {**SESSION_ENV, "PYTHONPATH": CONTAINER_RUNTIME}
    async with backend.sandbox(image) as sb:
        argv = [CONTAINER_PYTHON, "-m", "orm_fixture.build", SESSION_DB, "--variant", str(variant)]
        built = await sb.exec(argv + (["--reversed"] if reverse else []), env=env, timeout=120)
        if built.exit_code != 0:
            raise RuntimeError(f"rebuilding variant {variant} failed: {built.stderr[-600:]}")
        image_digest = await sb.exec([CONTAINER_PYTHON, "-m", "orm_fixture.build", "--digest", image_db(variant)], env=env)
        if not reverse and built.stdout.strip() != image_digest.stdout.strip():
            raise RuntimeError(f"variant {variant}: the rebuilt fixture is not the image's")
        out: dict[str, Any] = {}
        keys = list(cells)
        for start in range(0, len(keys), CHUNK):
            part = {k: cells[k] for k in keys[start : start + CHUNK]}
            batch = {"preamble": session_preamble(copy_image_db=False, variant=variant), "cells": part}
            await sb.write_files({"/tmp/gen/batch.json": json.dumps(batch), "/tmp/gen/runner.py": RUNNER})
            ran = await sb.exec(
                [CONTAINER_PYTHON, "/tmp/gen/runner.py", "/tmp/gen/batch.json", "/tmp/gen/out.json"],
                env=env,
                timeout=60 + len(part),
            )
            if ran.exit_code != 0:
                raise RuntimeError(f"the batch runner failed on variant {variant}: {ran.stderr[-800:]}")
            got = (await sb.read_files(["/tmp/gen/out.json"]))["/tmp/gen/out.json"]
            out.update(json.loads(got or b"{}"))
    return out


def pool(split: str, seeded: bool = False) -> tuple[int, ...]:
    return store.fixture_pool(split, seeded)


def candidates(
    seed: int, count: int, per_signature: int = 2 * PER_SIGNATURE, log=print, shape: str | None = None, seeded: bool = False
) -> list[dict[str, Any]]:
    """Draw and pre-screen candidates (of one shape if named) until `count` pass in Python (or 12x as many draws were made).

    `seeded`: draw over the seeded worlds (constants from store.DRAW_SEED's rows) and verify on fixture seeds.
    """
    draw_fixture = store.DRAW_SEED if seeded else None
    out: list[dict[str, Any]] = []
    seen_hash: set[str] = set()
    per_sig: dict[str, int] = defaultdict(int)
    i = 0
    t0 = time.perf_counter()
    while len(out) < count and i < 12 * count:
        q = candidate(seed, i, shape, draw_fixture)
        i += 1
        if q is None:
            continue
        try:
            h, sig = tree_hash(q), signature(q)
            if h in seen_hash or per_sig[sig] >= per_signature:
                continue
            split = store.split_of(sig)
            screened = {v: screen_variant(q, v)[0] for v in pool(split, seeded)}
            screened = {v: r for v, r in screened.items() if r is not None}
            if len(screened) < (EVAL_MIN_VARIANTS if split == "eval" else MIN_VARIANTS):
                continue
            code = render_orm(q)
            spec = render_spec(q)
        except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
            log(f"  draw {i - 1}: skipped ({type(exc).__name__}: {exc})")
            continue
        seen_hash.add(h)
        per_sig[sig] += 1
        out.append(
            dict(
                q=q,
                hash=h,
                signature=sig,
                split=split,
                screened=screened,
                code=code,
                spec=spec,
                mutants=mutants_of(code, q),
                index=i - 1,
                draw_fixture=draw_fixture,
            )
        )
        if len(out) % 200 == 0:
            log(f"  {len(out)} candidates pass the pre-screen ({i} draws, {time.perf_counter() - t0:.0f} s)")
    log(f"{len(out)} candidates from {i} draws pass the pre-screen in {time.perf_counter() - t0:.0f} s")
    return out


async def execute(backend: SandboxBackend, image: str, cands: list[dict[str, Any]], concurrency: int = 2, log=print):
    """{(variant, reverse): {key: rows}} for every variant any candidate needs."""
    jobs: dict[tuple[int, bool], dict[str, str]] = defaultdict(dict)
    for n, c in enumerate(cands):
        for v in c["screened"]:
            jobs[(v, False)][f"{n}/ref"] = c["code"]
            jobs[(v, True)][f"{n}/ref"] = c["code"]
            for name, src in c["mutants"].items():
                jobs[(v, False)][f"{n}/m/{name}"] = src
                jobs[(v, True)][f"{n}/m/{name}"] = src
    sem = asyncio.Semaphore(concurrency)
    results: dict[tuple[int, bool], dict[str, Any]] = {}
    t0 = time.perf_counter()

    async def one(key: tuple[int, bool]) -> None:
        async with sem:
            t = time.perf_counter()
            results[key] = await run_cells(backend, image, key[0], key[1], jobs[key])
            log(
                f"  variant {key[0]}{' (reversed build)' if key[1] else ''}: {len(jobs[key])} cells in "
                f"{time.perf_counter() - t:.0f} s ({len(results)}/{len(jobs)} builds, {time.perf_counter() - t0:.0f} s)"
            )

    await asyncio.gather(*(one(k) for k in sorted(jobs)))
    return results


def _gives(results: dict[str, Any], key: str, rows: list[list[Any]]) -> bool:
    """The cell ran and gave exactly these rows."""
    r = results.get(key)
    return isinstance(r, list) and same_rows(r, rows)


def admit(n: int, c: dict[str, Any], results: dict[tuple[int, bool], dict[str, Any]]) -> tuple[dict[int, Any], dict[int, str]]:
    """The variants that admit candidate n, with its rows there, and why the others do not."""
    ok: dict[int, Any] = {}
    why: dict[int, str] = {}
    for v, expected in c["screened"].items():
        a = results[(v, False)].get(f"{n}/ref")
        b = results[(v, True)].get(f"{n}/ref")
        if not isinstance(a, list) or not isinstance(b, list):
            why[v] = f"the reference failed: {(a if not isinstance(a, list) else b)}"
            continue
        if _exact(a) != _exact(b):
            why[v] = "the rows depend on insertion order (an open tie)"
            continue
        if not same_rows(a, expected):
            why[v] = "the reference's rows differ from the evaluator's"
            continue
        survivors = [(m, build) for m in c["mutants"] for build in (False, True) if _gives(results[(v, build)], f"{n}/m/{m}", a)]
        if survivors:
            m, build = survivors[0]
            why[v] = f"mutant survives: {m}{' (on the reversed build)' if build else ''}"
            continue
        ok[v] = a
    return ok, why


def fingerprint(variants: dict[int, Any]) -> str:
    return hashlib.sha256(_exact({str(k): v for k, v in sorted(variants.items())}).encode()).hexdigest()[:16]


def select(seed: int, cands: list[dict[str, Any]], results, log=print, shape: str | None = None) -> list[dict[str, Any]]:
    kept: list[dict[str, Any]] = []
    per_sig: dict[str, int] = defaultdict(int)
    prints: set[str] = set()
    reasons: dict[str, int] = defaultdict(int)
    for n, c in enumerate(cands):
        ok, why = admit(n, c, results)
        for w in why.values():
            reasons[w.split(":")[0]] += 1
        need = EVAL_MIN_VARIANTS if c["split"] == "eval" else MIN_VARIANTS
        if len(ok) < need or per_sig[c["signature"]] >= PER_SIGNATURE:
            continue
        fp = fingerprint(ok)
        if fp in prints:
            continue
        prints.add(fp)
        per_sig[c["signature"]] += 1
        q: Query = c["q"]
        m = measures(q, c["spec"]["traps"], killed=len(c["mutants"]))
        kept.append(store.record(seed, c["index"], q, c["code"], c["spec"], ok, m, difficulty(m), category(q), c["split"],
                                 shape, c.get("draw_fixture")))  # fmt: skip
    log("variants left out: " + ", ".join(f"{k} x{v}" for k, v in sorted(reasons.items(), key=lambda kv: -kv[1])))
    return kept


async def produce(backend: SandboxBackend, image: str, seed: int, count: int, concurrency: int = 2, log=print,
                  shape: str | None = None, seeded: bool = False):  # fmt: skip
    """Draw, pre-screen, execute and admit; returns (records, seconds of verification in containers)."""
    cands = candidates(seed, count, log=log, shape=shape, seeded=seeded)
    t0 = time.perf_counter()
    results = await execute(backend, image, cands, concurrency, log=log)
    seconds = time.perf_counter() - t0
    kept = select(seed, cands, results, log=log, shape=shape)
    return kept, seconds


def main_generate(seed: int, count: int, out: Path, concurrency: int = 2, shape: str | None = None, merge: bool = False,
                  seeded: bool = False) -> int:  # fmt: skip
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    image = ensure_image()
    backend = make_backend()
    t0 = time.perf_counter()
    try:
        kept, seconds = asyncio.run(produce(backend, image, seed, count, concurrency, shape=shape, seeded=seeded))
    finally:
        backend.teardown()
    if merge:
        before = store.read(out)
        kept = store.merge(before, kept, PER_SIGNATURE)
        print(f"{len(kept) - len(before)} new tasks merged into the {len(before)} of {out}")
    store.write(out, kept)
    sigs = {r["signature"] for r in kept}
    by = defaultdict(int)
    for r in kept:
        by[(r["split"], r["difficulty"])] += 1
    print(f"{len(kept)} tasks verified and kept from {len(sigs)} signatures, written to {out}")
    print("  " + ", ".join(f"{s}/{d} {n}" for (s, d), n in sorted(by.items())))
    print(f"verification in containers took {seconds:.0f} s; {time.perf_counter() - t0:.0f} s in all")
    return 0 if kept else 1


__all__ = ["admit", "candidates", "canonical", "execute", "main_generate", "produce", "same_rows", "select"]


def candidates_from_records(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored tasks as candidates again: the stored reference, its mutants, the stored rows as the evaluator's."""
    from sandbox_env.generate.tree import from_canonical

    out = []
    for r in records:
        q = from_canonical(r["tree"])
        out.append(
            dict(
                q=q,
                hash=r["tree_hash"],
                signature=r["signature"],
                split=r["split"],
                index=r["index"],
                screened={int(k): v for k, v in r["variants"].items()},
                code=r["reference"],
                spec={k: r[k] for k in ("title", "spec", "columns", "order", "traps")},
                mutants=mutants_of(r["reference"], q),
            )
        )
    return out


def host_problems(records: list[dict[str, Any]]) -> dict[str, dict[int, str]]:
    """The checks of the stored tasks that need no container: on every stored variant the evaluator still gives the
    stored rows, and every mistake of a rule the spec states (generate/traps.py) gives other rows."""
    from sandbox_env.generate.evaluate import evaluate
    from sandbox_env.generate.fixture import world
    from sandbox_env.generate.sample import unseparated_trap
    from sandbox_env.generate.tree import from_canonical

    problems: dict[str, dict[int, str]] = {}
    for r in records:
        q, why = from_canonical(r["tree"]), {}
        for v, rows in ((int(k), rows) for k, rows in r["variants"].items()):
            w = world(v)
            if not same_rows(evaluate(q, w), rows):
                why[v] = "the evaluator now gives other rows"
            elif (kind := unseparated_trap(q, w, evaluate(q, w))) is not None:
                why[v] = f"the data does not test a stated rule ({kind}): its mistake gives the same rows"
        problems[r["task_id"]] = why
    return problems


async def reverify(backend: SandboxBackend, image: str, records: list[dict[str, Any]], concurrency: int = 2, log=print):
    """Every stored task again through the image: {task_id: {variant: why it no longer admits it}} (empty: all hold)."""
    cands = candidates_from_records(records)
    results = await execute(backend, image, cands, concurrency, log=log)
    problems = host_problems(records)
    for n, (c, r) in enumerate(zip(cands, records, strict=True)):
        _, why = admit(n, c, results)
        problems[r["task_id"]] = {**why, **problems[r["task_id"]]}
    return problems


def pruned(records: list[dict[str, Any]], problems: dict[str, dict[int, str]]) -> tuple[list[dict[str, Any]], list[str]]:
    """The records with every variant that no longer admits its task left out; (kept, ids of tasks removed).

    A task left with fewer variants than its split needs is removed whole, as at admission: a
    survivor is never declared equivalent.
    """
    kept: list[dict[str, Any]] = []
    removed: list[str] = []
    for r in records:
        bad = problems.get(r["task_id"], {})
        variants = {k: v for k, v in r["variants"].items() if int(k) not in bad}
        need = EVAL_MIN_VARIANTS if r["split"] == "eval" else MIN_VARIANTS
        if len(variants) < need:
            removed.append(r["task_id"])
            continue
        kept.append({**r, "variants": variants} if bad else r)
    return kept, removed


def _prune_repairs_of(removed: set[str]) -> int:
    """Remove the stored repair tasks made from removed tasks (a repair is graded over its base task's rows)."""
    from sandbox_env.generate import repair_store

    records = repair_store.read()
    kept = [r for r in records if r["base_task"] not in removed]
    if len(kept) != len(records):
        repair_store.write(repair_store.REPAIR_FILE, kept)
    return len(records) - len(kept)


def main_reverify(task_ids: set[str] | None = None, concurrency: int = 2, prune: bool = False, host_only: bool = False) -> int:
    """build_tasks.py --verify for generated tasks: every stored one (or those named) verified again.

    `prune`: write the store back with the variants that fail left out (and a task with too few
    left removed); the run then succeeds when the rest holds. `host_only`: only the checks that need
    no container (host_problems), in seconds.
    """
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    everything = store.read()
    records = [r for r in everything if task_ids is None or r["task_id"] in task_ids]
    t0 = time.perf_counter()
    if host_only:
        problems = host_problems(records)
    else:
        backend = make_backend()
        try:
            problems = asyncio.run(reverify(backend, ensure_image(), records, concurrency))
        finally:
            backend.teardown()
    failing = {k: v for k, v in problems.items() if v}
    for task_id, bad in sorted(failing.items()):
        print(f"  {task_id} FAIL: {'; '.join(f'variant {v}: {w}' for v, w in sorted(bad.items()))[:300]}")
    print(
        f"generated orm tasks: {len(records) - len(failing)}/{len(records)} pass on every stored variant "
        f"({time.perf_counter() - t0:.0f} s)"
    )
    if prune and failing:
        kept, removed = pruned(everything, failing)
        store.write(store.GENERATED_FILE, kept)
        repairs = _prune_repairs_of(set(removed))
        print(
            f"pruned: {len(failing) - len(removed)} tasks keep their other variants, {len(removed)} removed "
            f"({', '.join(removed) or 'none'}) with {repairs} repair tasks made from them; {len(kept)} stored. "
            "Run `python build_tasks.py` to recompile the dataset."
        )
        return 0
    return 1 if failing else 0


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description="Verify the stored generated orm tasks again in the runtime image.")
    ap.add_argument("--task", action="append", help="only this task id (repeatable)")
    ap.add_argument("--concurrency", type=int, default=2)
    ap.add_argument("--prune", action="store_true", help="leave out the variants that fail (and tasks left with too few)")
    ap.add_argument("--host-only", action="store_true", help="only the checks that need no container (the evaluator's)")
    args = ap.parse_args(argv)
    return main_reverify(set(args.task) if args.task else None, args.concurrency, args.prune, args.host_only)


if __name__ == "__main__":
    raise SystemExit(main())
