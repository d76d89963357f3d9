"""Verification of the orm tasks, and freezing their expected rows.

Each reference runs twice over a database rebuilt from scratch (the fixture must be
the image's, the result deterministic and exact through JSON, and equal to the frozen
expected.json); then the reference, the empty and missing answers and every wrong_*.py
variant go through the real rollout and grading path.

    python -m sandbox_env.verify.orm --freeze [--root DIR] [TASK_ID ...]
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from sandbox_env.constants import CONTAINER_PYTHON, CONTAINER_RUNTIME, TASKS_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.orm import CATEGORIES, IMAGE_DB, SESSION_DB, SESSION_ENV, read_orm_task, start_session
from sandbox_env.families.orm_compare import decode_result
from sandbox_env.sandbox import SandboxBackend
from sandbox_env.verify.base import Control, VerifyContext
from sandbox_env.verify.scripted import scripted_rollout

REFERENCE_TIMEOUT = 60


def _exact(value: Any) -> str:
    """JSON text of a value: equal only when types and values are (True is not 1, 1 is not 1.0)."""
    return json.dumps(value, sort_keys=True)


async def rebuilt_run(backend: SandboxBackend, image: str, calls: list[dict[str, Any]], universe: str) -> dict[str, Any]:
    """Play calls in a fresh sandbox over a database rebuilt from scratch (not the image's copy).

    Returns the tagged `result`, the cell outputs, the row count of the universe model
    and the digests of the rebuilt and the image database.
    """
    async with backend.sandbox(image) as sb:
        env = {**SESSION_ENV, "PYTHONPATH": CONTAINER_RUNTIME}
        built = await sb.exec([CONTAINER_PYTHON, "-m", "orm_fixture.build", SESSION_DB], env=env, timeout=60)
        if built.exit_code != 0:
            raise RuntimeError(f"rebuilding the fixture failed: {built.stderr[-600:]}")
        image_digest = await sb.exec([CONTAINER_PYTHON, "-m", "orm_fixture.build", "--digest", IMAGE_DB], env=env)
        await start_session(sb, copy_image_db=False)
        cells = [await sb.run_python(c["args"]["code"], timeout=REFERENCE_TIMEOUT) for c in calls]
        tagged = await sb.probe("result")
        await sb.run_python(f"__orm_universe_rows = {universe}.objects.count()")
        count = await sb.probe("__orm_universe_rows")
    return {
        "result": tagged,
        "cells": cells,
        "universe_rows": count,
        "digest": built.stdout.strip(),
        "image_digest": image_digest.stdout.strip(),
    }


class OrmVerifier:
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
        return controls

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
    from sandbox_env.image import ensure_image
    from sandbox_env.sandbox.docker import DockerBackend

    image = await asyncio.to_thread(ensure_image)
    backend = DockerBackend()
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
    finally:
        backend.teardown()


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
