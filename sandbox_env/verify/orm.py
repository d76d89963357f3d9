"""Verification of the orm tasks, and freezing their expected rows.

Each reference runs twice over a database rebuilt from scratch (the fixture must be
the image's, the result deterministic and exact through JSON, and equal to the frozen
expected.json); then the reference, the empty and missing answers and every wrong_*.py
variant go through the real rollout and grading path.

Fixture variants (runtime/container/orm_fixture/variants.py): a drawn variant is admitted for a
task only when the reference's rows agree on two builds of it whose drawn rows are
inserted in opposite orders (no tie the spec leaves open decides them), are exact
through JSON and non-trivial, and every wrong_*.py answer gives other rows. `--freeze`
writes the admitted variants' rows to fixture_variants.json; verification replays the reference
and the wrong answers over every admitted variant (one container per variant and build,
every task in it) and fails a task whose frozen rows no longer come out. The `alt_*.py`
answers run there too: a rollout grades one variant, drawn per sandbox, so an alt that
matched variant 0 alone would pass the rollout control and fail a training rollout that
drew another variant; each alt must give the frozen rows, by the grader's comparison, on
every admitted variant (control `alt_variants`). Nothing is
declared by hand: a variant that fails a check is left out of the task, and a variant
whose rows equal variant 0's, or an admitted variant's, is left out too (it would not change
the answer key).

    python -m sandbox_env.verify.orm --freeze [--root DIR] [TASK_ID ...]
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from sandbox_env.constants import CONTAINER_PYTHON, CONTAINER_RUNTIME, TASKS_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.orm import (
    CATEGORIES,
    SESSION_DB,
    SESSION_ENV,
    image_db,
    load_expected,
    read_orm_task,
    start_session,
)
from sandbox_env.families.orm_compare import decode_result
from sandbox_env.runtime.container.orm_fixture.variants import VARIANTS
from sandbox_env.sandbox import SandboxBackend
from sandbox_env.verify.base import Control, VerifyContext
from sandbox_env.verify.scripted import scripted_rollout

REFERENCE_TIMEOUT = 60


def _exact(value: Any) -> str:
    """JSON text of a value: equal only when types and values are (True is not 1, 1 is not 1.0)."""
    return json.dumps(value, sort_keys=True)


async def _rebuild(sb, variant: int = 0, reverse: bool = False) -> tuple[str, str]:
    """Build the fixture of `variant` from scratch as the session's database; its digest and the image's copy's."""
    env = {**SESSION_ENV, "PYTHONPATH": CONTAINER_RUNTIME}
    argv = [CONTAINER_PYTHON, "-m", "orm_fixture.build", SESSION_DB, "--variant", str(variant)]
    built = await sb.exec(argv + (["--reversed"] if reverse else []), env=env, timeout=60)
    if built.exit_code != 0:
        raise RuntimeError(f"rebuilding the fixture failed: {built.stderr[-600:]}")
    image_digest = await sb.exec([CONTAINER_PYTHON, "-m", "orm_fixture.build", "--digest", image_db(variant)], env=env)
    return built.stdout.strip(), image_digest.stdout.strip()


async def rebuilt_run(backend: SandboxBackend, image: str, calls: list[dict[str, Any]], universe: str) -> dict[str, Any]:
    """Play calls in a fresh sandbox over a database rebuilt from scratch (not the image's copy).

    Returns the tagged `result`, the cell outputs, the row count of the universe model
    and the digests of the rebuilt and the image database.
    """
    async with backend.sandbox(image) as sb:
        digest, image_digest = await _rebuild(sb)
        await start_session(sb, copy_image_db=False)
        cells = [await sb.run_python(c["args"]["code"], timeout=REFERENCE_TIMEOUT) for c in calls]
        tagged = await sb.probe("result")
        await sb.run_python(f"__orm_universe_rows = {universe}.objects.count()")
        count = await sb.probe("__orm_universe_rows")
    return {
        "result": tagged,
        "cells": cells,
        "universe_rows": count,
        "digest": digest,
        "image_digest": image_digest,
    }


async def variant_rows(
    backend: SandboxBackend, image: str, variant: int, reverse: bool, cells: dict[str, str], universes: dict[str, str]
) -> dict[str, Any]:
    """Run every cell (key -> code) over one rebuilt variant, all in one session of one sandbox.

    Each cell starts from the namespace the preamble left (sensitivity.py's reset, as the
    mutant session does), so one session serves hundreds of cells. Returns {"digest",
    "image_digest", "rows": {key: tagged result}, "failed": {key: output},
    "universe_rows": {model: count}}.
    """
    from sandbox_env.verify.sensitivity import BASE_CELL, RESET_CELL

    out: dict[str, Any] = {"rows": {}, "failed": {}, "universe_rows": {}}
    async with backend.sandbox(image) as sb:
        out["digest"], out["image_digest"] = await _rebuild(sb, variant, reverse)

        async def fresh() -> None:
            await start_session(sb, copy_image_db=False)
            await sb.run_python(BASE_CELL)

        await fresh()
        for key, code in cells.items():
            reset = await sb.run_python(RESET_CELL)
            if reset.restarted or reset.timed_out or reset.output.strip():
                await fresh()
            ran = await sb.run_python(code, timeout=REFERENCE_TIMEOUT)
            if ran.timed_out or ran.restarted or "Traceback (most recent call last)" in ran.output:
                out["failed"][key] = ran.output.strip()[-400:] or "timed out / restarted"
                await fresh()
                continue
            out["rows"][key] = await sb.probe("result")
        for model in sorted(set(universes.values())):
            await sb.run_python(f"__orm_universe_rows = {model}.objects.count()")
            out["universe_rows"][model] = await sb.probe("__orm_universe_rows")
    return out


def admit_variant(
    task_id: str, universe: str, wrongs: list[str], a: dict[str, Any], b: dict[str, Any], base: Any
) -> tuple[Any, str]:
    """The rows a task gets on a variant from its two builds (a, b), or None and why the variant is left out."""
    if a["digest"] != a["image_digest"] or not a["digest"]:
        return None, f"the rebuilt variant is not the image's ({a['digest'][:12]} vs {a['image_digest'][:12]})"
    key = f"{task_id}/reference"
    if key in a["failed"] or key in b["failed"]:
        return None, f"the reference failed: {(a['failed'].get(key) or b['failed'].get(key))}"
    if _exact(a["rows"][key]) != _exact(b["rows"][key]):
        return None, "the rows depend on the order the drawn rows were inserted in (a tie the spec leaves open)"
    rows, why = decode_result(a["rows"][key])
    if not rows:
        return None, why or "no rows"
    if not len(rows) < (a["universe_rows"].get(universe) or 0):
        return None, f"every row of {universe}"
    plain = [list(r) for r in rows]
    if json.loads(json.dumps(plain)) != plain:
        return None, "not exact through JSON"
    if _exact(plain) == _exact(base):
        return None, "the same rows as the hand-written fixture"
    for wrong in wrongs:
        got = a["rows"].get(f"{task_id}/{wrong}")
        if got is not None and _exact(got) == _exact(a["rows"][key]):
            return None, f"{wrong} gives the reference's rows"
    return plain, "admitted"


def alt_cells(folder: Path) -> dict[str, str]:
    """The task's alt_*.py answers as cells by name."""
    return {p.stem: p.read_text() for p in sorted(folder.glob("alt_*.py"))}


def alt_variant_problems(frozen: dict[str, Any], alt_rows: dict[int, dict[str, Any]], alts: list[str]) -> list[str]:
    """Why some alt answer misses the frozen rows of some drawn variant, by the grader's own comparison.

    `frozen` is fixture_variants.json's {variant: rows} (variant 0 is the rollout control's);
    `alt_rows` the alts' tagged results per variant, a failed run as {"failed": output}.
    """
    from sandbox_env.families.orm_compare import compare

    problems = []
    for k, rows in sorted(frozen.items(), key=lambda kv: int(kv[0])):
        if k == "0":
            continue
        for name in alts:
            got = alt_rows.get(int(k), {}).get(name)
            if got is None:
                problems.append(f"{name} on variant {k}: not run")
            elif isinstance(got, dict) and "failed" in got:
                problems.append(f"{name} on variant {k}: failed: {got['failed'][-200:]}")
            elif not (c := compare(got, rows)).passed:
                problems.append(f"{name} on variant {k}: {c.reason}")
    return problems


def _mutant_cells(folder: Path) -> dict[str, str]:
    """The reference's mutants as cells by name (those declared equivalent on the hand-written fixture left out)."""
    from sandbox_env.verify.sensitivity import declared_equivalents, orm_mutants

    skip = declared_equivalents(folder)
    return {f"mutant:{m.name}": m.source for m in orm_mutants(folder) if m.name not in skip}


async def fixture_variant_table(
    backend: SandboxBackend,
    image: str,
    folders: list[Path],
    concurrency: int = 2,
    alt_rows: dict[str, dict[int, dict[str, Any]]] | None = None,
) -> dict[str, dict[int, tuple[Any, str]]]:
    """For every task folder and drawn variant: (its rows, "admitted") or (None, why it is left out).

    Every reference, wrong answer and mutant runs over every drawn variant (the references
    also over a second build whose drawn rows are inserted in the opposite order): one
    sandbox per variant and build, every task in it. Given `alt_rows` (verification, not
    freezing), the tasks' alt_*.py answers run on the first build too, and it is filled with
    {task_id: {variant: {alt name: tagged result, or {"failed": output}}}}.
    """
    references: dict[str, str] = {}
    cells: dict[str, str] = {}  # references, wrong answers and mutants: on the first build only
    universes: dict[str, str] = {}
    wrongs: dict[str, list[str]] = {}
    bases: dict[str, Any] = {}
    for folder in folders:
        task_id, universe = (meta := read_orm_task(folder))["id"], meta["universe"]
        universes[task_id], bases[task_id] = universe, load_expected(folder)
        references[f"{task_id}/reference"] = cells[f"{task_id}/reference"] = (folder / "reference.py").read_text()
        answers = {name: calls[0]["args"]["code"] for name, calls in VERIFIER.wrong_calls(folder).items()}
        answers.update(_mutant_cells(folder))
        cells.update({f"{task_id}/{name}": code for name, code in answers.items()})
        wrongs[task_id] = list(answers)
        if alt_rows is not None:
            cells.update({f"{task_id}/{name}": code for name, code in alt_cells(folder).items()})
    sem = asyncio.Semaphore(concurrency)

    async def run(variant: int, reverse: bool) -> dict[str, Any]:
        async with sem:
            return await variant_rows(backend, image, variant, reverse, references if reverse else cells, universes)

    drawn = range(1, VARIANTS)
    builds = await asyncio.gather(*(run(v, r) for v in drawn for r in (False, True)))
    if alt_rows is not None:
        for folder in folders:
            task_id = read_orm_task(folder)["id"]
            alt_rows[task_id] = {
                v: {
                    name: builds[2 * i]["rows"].get(key, {"failed": builds[2 * i]["failed"].get(key, "no result")})
                    for name in alt_cells(folder)
                    for key in [f"{task_id}/{name}"]
                }
                for i, v in enumerate(drawn)
            }
    return {
        task_id: {
            v: admit_variant(task_id, universes[task_id], wrongs[task_id], builds[2 * i], builds[2 * i + 1], bases[task_id])
            for i, v in enumerate(drawn)
        }
        for task_id in universes
    }


class OrmVerifier:
    def __init__(self) -> None:
        self._tables: dict[int, asyncio.Task] = {}
        self._alt_rows: dict[int, dict[str, dict[int, dict[str, Any]]]] = {}

    async def _fixture_variants(self, folder: Path, ctx: VerifyContext) -> dict[str, dict[int, tuple[Any, str]]]:
        """The table of every task beside `folder`, made once per verification run (all tasks in 14 sandboxes)."""
        key = id(ctx)
        if key not in self._tables:
            folders = sorted(p for p in folder.parent.iterdir() if (p / "task.toml").is_file())
            self._alt_rows[key] = {}
            self._tables[key] = asyncio.ensure_future(
                fixture_variant_table(ctx.backend, ctx.image, folders, alt_rows=self._alt_rows[key])
            )
        return await self._tables[key]

    async def variant_controls(self, folder: Path, task: TaskRow, ctx: VerifyContext) -> list[Control]:
        """Every frozen variant's rows come out again, on both builds, no wrong answer gives them, every alt does."""
        table = (await self._fixture_variants(folder, ctx))[task.task_id]
        alts = list(alt_cells(folder))
        frozen = {k: v for k, v in task.grading.get("fixture_variants", {}).items() if k != "0"}
        bad = []
        for k, rows in frozen.items():
            got, why = table.get(int(k), (None, "no such variant"))
            if got is None or _exact(got) != _exact(rows):
                bad.append(f"variant {k}: {why if got is None else 'rows differ from fixture_variants.json'}")
        ok = not bad
        detail = "; ".join(bad) if bad else f"{len(frozen)} drawn variants: the frozen rows, on both builds"
        controls = [Control("fixture_variants", 1.0 if ok else 0.0, ok, detail)]
        if alts:
            alt_rows = self._alt_rows[id(ctx)].get(task.task_id, {})
            problems = alt_variant_problems(task.grading.get("fixture_variants", {}), alt_rows, alts)
            n = len(frozen)
            detail = "; ".join(problems[:3]) if problems else f"{len(alts)} alt(s) give the frozen rows on {n} drawn variants"
            controls.append(Control("alt_variants", 0.0 if problems else 1.0, not problems, detail))
        return controls

    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        return [{"tool": "execute_code", "args": {"code": (folder / "reference.py").read_text()}}]

    def wrong_calls(self, folder: Path) -> dict[str, list[dict[str, Any]]]:
        """The task's wrong_*.py variants as tool calls, by variant name."""
        return {p.stem: [{"tool": "execute_code", "args": {"code": p.read_text()}}] for p in sorted(folder.glob("wrong_*.py"))}

    async def verify_task(self, folder: Path, task: TaskRow, ctx: VerifyContext) -> list[Control]:
        calls = self.reference_calls(folder)
        universe = task.grading["universe"]
        runs = await asyncio.gather(*(rebuilt_run(ctx.backend, ctx.image, calls, universe) for _ in range(2)))
        controls = []

        def add(name: str, ok: bool, detail: str) -> None:
            controls.append(Control(name, 1.0 if ok else 0.0, ok, detail))

        same_db = all(r["digest"] == r["image_digest"] != "" for r in runs)
        add("fixture", same_db, f"rebuilt {runs[0]['digest'][:12]} vs image {runs[0]['image_digest'][:12]}")
        bad_cells = [
            c.output.strip()[-400:] or "timed out / restarted"
            for r in runs
            for c in r["cells"]
            if c.timed_out or c.restarted or "Traceback (most recent call last)" in c.output
        ]
        add("clean_run", not bad_cells, bad_cells[0] if bad_cells else "the reference ran without an error, twice")
        tagged = runs[0]["result"]
        same = _exact(tagged) == _exact(runs[1]["result"])  # by JSON text, so True and 1 differ
        add("deterministic", same, "two rebuilt databases give the same `result`" if same else "the results differ")
        rows, why = decode_result(tagged)
        add("shape", bool(rows), why or ("a non-empty list of tuples of plain values" if rows else "no rows"))
        n_universe = runs[0]["universe_rows"]
        nontrivial = rows is not None and isinstance(n_universe, int) and len(rows) < n_universe
        add("nontrivial", nontrivial, f"{len(rows or [])} rows of {n_universe} in {universe}")
        round_trip = (
            json.loads(json.dumps(tagged)) == tagged
            and rows is not None
            and ([list(r) for r in rows] == json.loads(json.dumps([list(r) for r in rows])))
        )
        frozen = rows is not None and _exact([list(r) for r in rows]) == _exact(task.grading["expected"])
        add(
            "round_trip",
            round_trip and frozen,
            "exact through JSON and equal to expected.json"
            if round_trip and frozen
            else "not exact through JSON"
            if not round_trip
            else "differs from the frozen expected.json",
        )

        wrongs = self.wrong_calls(folder)
        b, img = ctx.backend, ctx.image
        ref, empty, missing, *wrong_runs = await asyncio.gather(
            scripted_rollout(b, img, task, calls, timeout=REFERENCE_TIMEOUT),
            scripted_rollout(b, img, task, [{"tool": "execute_code", "args": {"code": "result = []"}}]),
            scripted_rollout(b, img, task, []),
            *(scripted_rollout(b, img, task, c, timeout=REFERENCE_TIMEOUT) for c in wrongs.values()),
        )
        controls += [
            Control("reference", ref.grade.score, ref.grade.score == 1.0, ref.grade.reason),
            Control("empty", empty.grade.score, empty.grade.score == 0.0, empty.grade.reason),
            Control("missing", missing.grade.score, missing.grade.score == 0.0, missing.grade.reason),
        ]
        for name, run in zip(wrongs, wrong_runs, strict=True):  # a known mistake must not pass
            g = run.grade
            controls.append(Control(name, g.score, g.score == 0.0 and g.scoring_error is None, g.reason))
        return controls + await self.variant_controls(folder, task, ctx)

    def summarize(self, rows: list[TaskRow], controls: dict[str, list[Control]]) -> tuple[list[str], bool]:
        """Tasks passing per category and difficulty, and whether each category has its minimum."""
        by_cat: dict[str, list[bool]] = defaultdict(list)
        by_diff: dict[str, int] = defaultdict(int)
        for r in rows:
            by_cat[r.category].append(all(c.ok for c in controls[r.task_id]))
            by_diff[r.difficulty] += 1
        lines, ok = [], True
        for cat, minimum in CATEGORIES.items():
            passed = sum(by_cat.get(cat, []))
            enough = passed >= minimum or len(rows) < sum(CATEGORIES.values())  # a filtered run is not judged
            ok = ok and enough
            flag = "" if enough else "  TOO FEW"
            lines.append(f"{cat:<12} {passed}/{len(by_cat.get(cat, []))} pass (at least {minimum}){flag}")
        lines.append("difficulty   " + ", ".join(f"{d} {by_diff[d]}" for d in ("easy", "medium", "hard")))
        return lines, ok


VERIFIER = OrmVerifier()


async def freeze_expected(folders: list[Path]) -> None:
    """Run each reference over a rebuilt database and write its rows to expected.json."""
    from sandbox_env.rollout.image import ensure_image
    from sandbox_env.sandbox.registry import make_backend

    image = await asyncio.to_thread(ensure_image)
    backend = make_backend()
    sem = asyncio.Semaphore(2)

    async def one(folder: Path) -> None:
        async with sem:
            meta = read_orm_task(folder)
            run = await rebuilt_run(backend, image, VERIFIER.reference_calls(folder), meta["universe"])
            rows, why = decode_result(run["result"])
            errors = [c.output for c in run["cells"] if "Traceback" in c.output]
            if rows is None or errors:
                print(f"{folder.name}: NOT frozen: {why or errors[0][-600:]}", flush=True)
                return
            lines = ",\n".join("  " + json.dumps(list(r), ensure_ascii=False) for r in rows)
            (folder / "expected.json").write_text('{"rows": [\n' + lines + "\n]}\n")
            print(f"{folder.name}: {len(rows)} rows of {run['universe_rows']} {meta['universe']}", flush=True)

    try:
        await asyncio.gather(*(one(f) for f in folders))
        await freeze_fixture_variants(backend, image, folders)
    finally:
        backend.teardown()


async def freeze_fixture_variants(backend: SandboxBackend, image: str, folders: list[Path]) -> None:
    """Write each task's admitted drawn variants and their rows to fixture_variants.json (after expected.json)."""
    t0 = time.perf_counter()
    table = await fixture_variant_table(backend, image, folders)
    for folder in folders:
        task_id = read_orm_task(folder)["id"]
        admitted: dict[str, Any] = {}
        left_out: dict[int, str] = {}
        for v, (rows, why) in table[task_id].items():
            same = next((k for k, r in admitted.items() if rows is not None and _exact(r) == _exact(rows)), None)
            if rows is None or same is not None:  # a second draw of the same rows adds no key to guess
                left_out[v] = why if rows is None else f"the same rows as variant {same}"
            else:
                admitted[str(v)] = rows
        path = folder / "fixture_variants.json"
        if admitted:
            blocks = ",\n".join(
                f"  {json.dumps(v)}: [\n" + ",\n".join("    " + json.dumps(r, ensure_ascii=False) for r in rows) + "\n  ]"
                for v, rows in admitted.items()
            )
            path.write_text('{"variants": {\n' + blocks + "\n}}\n")
        elif path.exists():
            path.unlink()
        why = "; ".join(f"{v}: {w}" for v, w in left_out.items())
        print(f"{task_id}: fixture variants {sorted(map(int, admitted))} admitted{' (left out ' + why + ')' if why else ''}")
    print(f"fixture variants of {len(folders)} tasks frozen in {time.perf_counter() - t0:.0f} s", flush=True)


def main(argv: list[str]) -> int:
    """python -m sandbox_env.verify.orm --freeze [--root DIR] [TASK_ID ...]"""
    root = TASKS_DIR / "orm"
    if not argv or argv[0] != "--freeze":
        print(main.__doc__, file=sys.stderr)
        return 2
    ids = argv[1:]
    if ids[:1] == ["--root"]:
        root, ids = Path(ids[1]), ids[2:]
    folders = [p for p in sorted(root.iterdir()) if (p / "task.toml").is_file() and (not ids or p.name in ids)]
    asyncio.run(freeze_expected(folders))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
