"""The orm family: Django ORM queries over a fixed bookshop fixture, graded row by row.

The model works in the persistent Python session (execute_code) where Django is
configured over a private copy of the fixture database, and leaves `result`: a list
of tuples of plain values. Grading happens on the host, with no container: the
expected rows never leave it and nothing the model wrote is executed.

Task sources: sandbox_env/tasks/orm/<id>/ with task.toml (id, difficulty, category,
title, spec, columns, order, universe), reference.py (one execute_code cell that
leaves `result`), expected.json (the reference's rows, frozen by
`python -m sandbox_env.families.orm --freeze`), and optional wrong_*.py variants
that must score 0.0 (used by the tests).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from sandbox_env.families.base import Grade, TaskRow, read_task_toml
from sandbox_env.families.orm_compare import ABS_TOL, REL_TOL, compare, decode_result
from sandbox_env.grading import PYTHON, RUNTIME, Grader
from sandbox_env.sandbox.docker_backend import SandboxError
from sandbox_env.sandbox.handle import Sandbox

IMAGE_DB = "/opt/websandbox/orm.sqlite3"  # built by runtime/prepare_image.py
SESSION_DB = "/tmp/orm.sqlite3"  # each session's private copy
SESSION_ENV = {"DJANGO_SETTINGS_MODULE": "orm_fixture.settings", "ORM_FIXTURE_DB": SESSION_DB}
MODELS = ("Publisher", "Author", "Genre", "Book", "Store", "Sale", "Review")
CATEGORIES = {"filtering": 9, "aggregation": 8, "relations": 6, "expressions": 6, "advanced": 10}
REFERENCE_TIMEOUT = 60

DB_NAMES = ("Q", "F", "Count", "Sum", "Avg", "Max", "Min", "Value", "ExpressionWrapper", "Subquery", "OuterRef",
            "Exists", "Case", "When", "Window", "FloatField", "IntegerField", "DecimalField", "CharField")  # fmt: skip
FUNCTION_NAMES = ("Coalesce", "Cast", "ExtractYear", "ExtractMonth", "TruncMonth", "TruncYear", "Lower", "Upper",
                  "Length", "Concat", "Round", "NullIf", "RowNumber", "Rank", "DenseRank", "Lag", "Lead")  # fmt: skip


def session_preamble(copy_image_db: bool = True) -> str:
    """The session's first cell: a fresh copy of the database, Django set up, the usual names imported.

    It runs again whenever the session restarts, so a restart also restores the data.
    """
    copy = (f"import shutil as _sh; _sh.copyfile({IMAGE_DB!r}, {SESSION_DB!r}); del _sh\n"
            if copy_image_db else "")  # fmt: skip
    return (
        f"import sys as _sys; _sys.path.append({RUNTIME!r}); del _sys\n"
        + copy
        + "import django; django.setup()\n"
        "from datetime import date\n"
        "from decimal import Decimal\n"
        "from django.db import connection\n"
        f"from django.db.models import {', '.join(DB_NAMES)}\n"
        f"from django.db.models.functions import {', '.join(FUNCTION_NAMES)}\n"
        f"from orm_fixture.shop.models import {', '.join(MODELS)}\n"
    )


SCHEMA = """\
The database is a small bookshop (SQLite, used through Django 6.1's ORM):

Publisher  name (str, unique), country (str), founded (int year, null when unknown), is_independent (bool)
           reverse: books (Book.publisher)
Author     name (str, unique), country (str), birth_date (date, nullable), email (str, nullable)
           reverse: books (Book.authors)
Genre      name (str, unique)
           reverse: books (Book.genre)
Book       title (str, unique), isbn (str, unique), publisher (FK Publisher), genre (FK Genre, nullable),
           authors (many-to-many Author), published (date), price (Decimal, 2 places),
           sale_price (Decimal, 2 places, nullable), pages (int), in_print (bool)
           reverse: sales (Sale.book), reviews (Review.book)
Store      name (str, unique), city (str, nullable: null for the online store), country (str),
           opened (date), is_online (bool)
           reverse: sales (Sale.store)
Sale       book (FK Book), store (FK Store), sold_on (date), quantity (int), unit_price (Decimal, 2 places)
Review     book (FK Book), reviewer (str), rating (int, 1 to 5), verified (bool), created (date)

Every model has an integer primary key `id`. Related names are as listed (e.g. publisher.books,
book.sales, author.books, Book.objects.filter(authors__country=...))."""

CONTRACT = f"""\
Work with the `execute_code` tool: it runs Python in a persistent session where Django is already
configured over a private copy of this database. Already imported there: the models
({", ".join(MODELS)}),
Q, F, Count, Sum, Avg, Max, Min, Value, Subquery, OuterRef, Exists, Case, When, Window, Coalesce,
Cast, ExtractYear, TruncMonth, RowNumber, Rank, DenseRank, Lag, Lead, Decimal and date, among
other usual names from django.db.models and django.db.models.functions. Use the Django ORM.

Deliverable: leave the answer in the session as a variable named `result`: a plain `list` of plain
`tuple`s, one tuple per row, values in the column order given, rows in the order given. Not a
QuerySet, not a list of lists, not dicts or named tuples. Only `result` is graded, when you stop:
the row count, the row order and every value must match.

How values are rendered:
- text: str, exactly as stored;
- whole numbers (counts, pages, quantities, years, ranks): int;
- money (Decimal prices and amounts computed from them): str with exactly two digits after the
  point, e.g. '7.50' (format(value, '.2f') does this for a Decimal or a float);
- dates: str in ISO form 'YYYY-MM-DD' (value.isoformat());
- averages and other fractions: float, not rounded unless the task says so
  (compared within a relative tolerance of {REL_TOL:g});
- booleans: bool; a missing value (SQL NULL): None."""


def _read(folder: Path) -> dict[str, Any]:
    meta = read_task_toml(folder)
    for key in ("title", "columns", "order", "universe"):
        if key not in meta:
            raise ValueError(f"{folder}/task.toml: missing required key {key!r}")
    if meta["category"] not in CATEGORIES:
        raise ValueError(f"{folder}/task.toml: category must be one of {sorted(CATEGORIES)}")
    if meta["universe"] not in MODELS:
        raise ValueError(f"{folder}/task.toml: universe must name a model, one of {MODELS}")
    return meta


def build_prompt(meta: dict[str, Any]) -> str:
    """What the model reads: the schema, the task, the exact output shape and order, the contract."""
    cols = ", ".join(meta["columns"])
    return (f"{SCHEMA}\n\n## Task: {meta['title']}\n\n{meta['spec'].strip()}\n\n"
            f"Each row: ({cols})\nOrder: {meta['order'].strip()}\n\n{CONTRACT}")  # fmt: skip


def _exact(value: Any) -> str:
    """JSON text of a value: equal only when types and values are (True is not 1, 1 is not 1.0)."""
    return json.dumps(value, sort_keys=True)


def load_expected(folder: Path) -> list[list[Any]]:
    return json.loads((folder / "expected.json").read_text())["rows"]


class OrmFamily:
    name = "orm"

    def compile_task(self, folder: Path) -> TaskRow:
        meta = _read(folder)
        expected = load_expected(folder)
        width = len(meta["columns"])
        if any(len(row) != width for row in expected):
            raise ValueError(f"{folder}/expected.json: every row must have {width} values, as columns says")
        return TaskRow(
            task_id=meta["id"], family=self.name, difficulty=meta["difficulty"], category=meta["category"],
            prompt=build_prompt(meta), files={}, collect=["result"],
            grading={"expected": expected, "rel_tol": REL_TOL, "abs_tol": ABS_TOL, "universe": meta["universe"]},
        )  # fmt: skip

    def reference_calls(self, folder: Path) -> list[dict[str, Any]]:
        return [{"tool": "execute_code", "args": {"code": (folder / "reference.py").read_text()}}]

    def wrong_calls(self, folder: Path) -> dict[str, list[dict[str, Any]]]:
        """The task's wrong_*.py variants as tool calls, by variant name."""
        return {p.stem: [{"tool": "execute_code", "args": {"code": p.read_text()}}]
                for p in sorted(folder.glob("wrong_*.py"))}  # fmt: skip

    async def setup(self, sb: Sandbox, task: TaskRow) -> None:
        await self._start_session(sb, copy_image_db=True)

    async def _start_session(self, sb: Sandbox, copy_image_db: bool) -> None:
        out = await sb.start_python(preamble=session_preamble(copy_image_db), env=SESSION_ENV)
        if out.strip():  # the preamble prints nothing when it works
            raise RuntimeError(f"the ORM session did not start: {out.strip()[-600:]}")

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]:
        try:
            return {"result": await sb.probe("result")}
        except SandboxError:
            raise  # the container or its agent is gone: a harness fault, not an answer
        except RuntimeError as exc:  # the session could not encode `result` (e.g. far too large)
            return {"result": {"unreadable": str(exc)[:300]}}

    async def grade(self, final: dict[str, Any], task: TaskRow, grader: Grader | None) -> Grade:
        """Compare on the host; no container is started (grader is not used)."""
        if "result" not in final:
            return Grade.harness_fault("the final state holds no `result` probe")
        outcome = compare(final["result"], task.grading["expected"])
        passed = sum(c["passed"] for c in outcome.checks)
        return Grade(score=1.0 if outcome.passed else 0.0, reason=outcome.reason, checks=outcome.checks,
                     metrics={"checks_passed": passed / len(outcome.checks), "tampered": float(outcome.malformed)},
                     tampered=outcome.malformed)  # fmt: skip

    async def rebuilt_run(self, client: Any, image: str, calls: list[dict[str, Any]],
                          universe: str) -> dict[str, Any]:  # fmt: skip
        """Play calls in a fresh container over a database rebuilt from scratch (not the image's copy).

        Returns the tagged `result`, the cell outputs, the row count of the universe model
        and the digests of the rebuilt and the image database.
        """
        sid = await client._run(client.create_sync, image)
        try:
            await client._run(client.wait_sync, sid, 60.0)
            sb = Sandbox(client, sid)
            env = {**SESSION_ENV, "PYTHONPATH": RUNTIME}
            built = await sb.exec([PYTHON, "-m", "orm_fixture.build", SESSION_DB], env=env, timeout=60)
            if built.exit_code != 0:
                raise RuntimeError(f"rebuilding the fixture failed: {built.stderr[-600:]}")
            image_digest = await sb.exec([PYTHON, "-m", "orm_fixture.build", "--digest", IMAGE_DB], env=env)
            await self._start_session(sb, copy_image_db=False)
            cells = [await sb.run_python(c["args"]["code"], timeout=REFERENCE_TIMEOUT) for c in calls]
            tagged = await sb.probe("result")
            await sb.run_python(f"__orm_universe_rows = {universe}.objects.count()")
            count = await sb.probe("__orm_universe_rows")
        finally:
            await client._run(client.delete_sync, sid)
        return {"result": tagged, "cells": cells, "universe_rows": count,
                "digest": built.stdout.strip(), "image_digest": image_digest.stdout.strip()}  # fmt: skip

    async def verify_task(self, folder: Path, task: TaskRow, ctx: Any) -> list[Any]:
        from build_tasks import Control
        from sandbox_env.rollout import scripted_rollout

        calls = self.reference_calls(folder)
        universe = task.grading["universe"]
        runs = await asyncio.gather(*(self.rebuilt_run(ctx.client, ctx.image, calls, universe) for _ in range(2)))
        controls = []

        def add(name: str, ok: bool, detail: str) -> None:
            controls.append(Control(name, 1.0 if ok else 0.0, ok, detail))

        same_db = all(r["digest"] == r["image_digest"] != "" for r in runs)
        add("fixture", same_db, f"rebuilt {runs[0]['digest'][:12]} vs image {runs[0]['image_digest'][:12]}")
        bad_cells = [c.output.strip()[-400:] or "timed out / restarted" for r in runs for c in r["cells"]
                     if c.timed_out or c.restarted or "Traceback (most recent call last)" in c.output]  # fmt: skip
        add("clean_run", not bad_cells, bad_cells[0] if bad_cells else "the reference ran without an error, twice")
        tagged = runs[0]["result"]
        same = _exact(tagged) == _exact(runs[1]["result"])  # by JSON text, so True and 1 differ
        add("deterministic", same, "two rebuilt databases give the same `result`" if same else "the results differ")
        rows, why = decode_result(tagged)
        add("shape", bool(rows), why or ("a non-empty list of tuples of plain values" if rows else "no rows"))
        n_universe = runs[0]["universe_rows"]
        nontrivial = rows is not None and isinstance(n_universe, int) and len(rows) < n_universe
        add("nontrivial", nontrivial, f"{len(rows or [])} rows of {n_universe} in {universe}")
        round_trip = json.loads(json.dumps(tagged)) == tagged and rows is not None and (
            [list(r) for r in rows] == json.loads(json.dumps([list(r) for r in rows])))
        frozen = rows is not None and _exact([list(r) for r in rows]) == _exact(task.grading["expected"])
        add("round_trip", round_trip and frozen,
            "exact through JSON and equal to expected.json" if round_trip and frozen
            else "not exact through JSON" if not round_trip else "differs from the frozen expected.json")  # fmt: skip

        wrongs = self.wrong_calls(folder)
        ref, empty, missing, *wrong_runs = await asyncio.gather(
            scripted_rollout(ctx.client, ctx.image, task, calls, timeout=REFERENCE_TIMEOUT),
            scripted_rollout(ctx.client, ctx.image, task, [{"tool": "execute_code", "args": {"code": "result = []"}}]),
            scripted_rollout(ctx.client, ctx.image, task, []),
            *(scripted_rollout(ctx.client, ctx.image, task, c, timeout=REFERENCE_TIMEOUT) for c in wrongs.values()),
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

    def summarize(self, rows: list[TaskRow], controls: dict[str, list[Any]]) -> tuple[list[str], bool]:
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


FAMILY = OrmFamily()


async def freeze_expected(folders: list[Path]) -> None:
    """Run each reference over a rebuilt database and write its rows to expected.json."""
    from sandbox_env.image import ensure_image
    from sandbox_env.sandbox.docker_backend import DockerSandboxClient

    image = await asyncio.to_thread(ensure_image)
    client = DockerSandboxClient()
    sem = asyncio.Semaphore(2)

    async def one(folder: Path) -> None:
        async with sem:
            meta = _read(folder)
            run = await FAMILY.rebuilt_run(client, image, FAMILY.reference_calls(folder), meta["universe"])
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
        client.teardown()


def main(argv: list[str]) -> int:
    """python -m sandbox_env.families.orm --freeze [--root DIR] [TASK_ID ...]"""
    root = Path(__file__).resolve().parents[1] / "tasks" / "orm"
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
