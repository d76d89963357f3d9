"""The orm family: Django ORM queries over a fixed bookshop fixture, graded row by row.

The model works in the persistent Python session (execute_code) where Django is
configured over a private copy of the fixture database, and leaves `result`: a list
of tuples of plain values. Grading compares `result` on the host with the rows of the
rollout's database (the expected rows never leave the host), then grades the code: the
rollout's cells run again over grading worlds drawn per grading, in a fresh grading
sandbox (orm_replay.py), and must give each world's rows.

Task sources: sandbox_env/tasks/orm/<id>/ with task.toml (id, difficulty, category,
title, spec, columns, order, universe), reference.py (one execute_code cell that
leaves `result`), expected.json (the reference's rows, frozen by
`python -m sandbox_env.verify.orm --freeze`), and optional wrong_*.py variants
that must score 0.0 (verification controls).

Fixture variants (no answer key to replay). The image holds the hand-written fixture
(variant 0) and drawn variants of it (runtime/container/orm_fixture/variants.py: more books, sales
and reviews, from fixed seeds). `--freeze` also writes fixture_variants.json: the reference's
rows on every variant that verification admits for the task (the reference's rows agree
on two builds of the variant, and every wrong answer is still wrong there). Each rollout
works on one admitted variant, drawn on the host from its sandbox id with a key of this
process (`fixture_variant_for`): the model cannot choose it, and a `result` replayed from an
earlier grading, or learnt by heart over epochs, matches only when the draw lands on the
same rows. The final state records the variant; grading compares with its rows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path
from typing import Any

from sandbox_env.constants import REASON_CHARS
from sandbox_env.families.base import Grade, TaskRow, read_task_toml
from sandbox_env.families.orm_compare import ABS_TOL, REL_TOL, compare, row_evidence
from sandbox_env.families.orm_replay import replay_checks
from sandbox_env.families.orm_session import (  # noqa: F401 - the session's names, as the family's
    DB_NAMES,
    FUNCTION_NAMES,
    IMAGE_DB,
    MODELS,
    SESSION_DB,
    SESSION_ENV,
    image_db,
    session_preamble,
)
from sandbox_env.grading.grader import Grader
from sandbox_env.sandbox import Sandbox, SandboxError

_VARIANT_KEY = secrets.token_bytes(32)  # this process's: variants are drawn where the model cannot see the draw


def fixture_variant_for(sandbox_id: str, task: TaskRow) -> int:
    """The fixture variant a rollout in `sandbox_id` works on: one the task admits, keyed by this process."""
    admitted = sorted(int(k) for k in task.grading.get("fixture_variants") or {"0": None})
    digest = hmac.new(_VARIANT_KEY, f"{task.task_id}\0{sandbox_id}".encode(), hashlib.sha256).digest()
    return admitted[int.from_bytes(digest[:8], "big") % len(admitted)]


SETUP_CELL_SECONDS = 60  # a repair task's broken cell, run once at setup (its output is not kept)
CATEGORIES = {"filtering": 9, "aggregation": 8, "relations": 6, "expressions": 6, "advanced": 10}

SCHEMA = """\
The database is a small bookshop (SQLite, used through Django 6.1's ORM):

Publisher  name (str, unique), country (str), founded (int year, null when unknown), is_independent (bool)
           reverse: books (Book.publisher)
Author     name (str, unique), country (str), birth_date (date, nullable), email (str, nullable),
           mentor (FK Author, nullable: an author's mentor is another author)
           reverse: books (Book.authors), mentees (Author.mentor), contributions (Contribution.author),
           contributed_books (Book.contributors)
Genre      name (str, unique)
           reverse: books (Book.genre)
Book       title (str, unique), isbn (str, unique), publisher (FK Publisher), genre (FK Genre, nullable),
           authors (many-to-many Author), contributors (many-to-many Author through Contribution),
           published (date), price (Decimal, 2 places), sale_price (Decimal, 2 places, nullable), pages (int),
           in_print (bool)
           reverse: sales (Sale.book), reviews (Review.book), contributions (Contribution.book)
Store      name (str, unique), city (str, nullable: null for the online store), country (str),
           opened (date), is_online (bool)
           reverse: sales (Sale.store)
Sale       book (FK Book), store (FK Store), sold_on (date), quantity (int), unit_price (Decimal, 2 places),
           sold_at (datetime without time zone, nullable: the till's time, on the day sold_on)
Review     book (FK Book), reviewer (str), rating (int, 1 to 5), verified (bool), created (date)
Contribution  book (FK Book), author (FK Author), role (str: editor, translator, illustrator or foreword);
           the `through` model of Book.contributors (one row per book, author and role)

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
QuerySet, not a list of lists, not dicts or named tuples. `result` is graded when you stop: the row
count, the row order and every value must match. Then your code is graded: every execute_code cell
you ran is run again, in the same order, in a fresh session over other copies of the database (the
same schema, publishers, authors, genres and stores, with other books, sales and reviews), with your
/workspace files as you left them (bash commands are not run again), and `result` must come out
right on each. So compute it with ORM queries; rows typed in or looked up will not match.

How values are rendered:
- text: str, exactly as stored;
- whole numbers (counts, pages, quantities, years, ranks): int;
- money (Decimal prices and amounts computed from them): str with exactly two digits after the
  point, e.g. '7.50' (format(value, '.2f') does this for a Decimal or a float);
- dates: str in ISO form 'YYYY-MM-DD' (value.isoformat());
- averages and other fractions: float, not rounded unless the task says so
  (compared within a relative tolerance of {REL_TOL:g});
- booleans: bool; a missing value (SQL NULL): None."""


def read_orm_task(folder: Path) -> dict[str, Any]:
    meta = read_task_toml(folder)
    for key in ("title", "columns", "order", "universe"):
        if key not in meta:
            raise ValueError(f"{folder}/task.toml: missing required key {key!r}")
    if meta["category"] not in CATEGORIES:
        raise ValueError(f"{folder}/task.toml: category must be one of {sorted(CATEGORIES)}")
    if meta["universe"] not in MODELS:
        raise ValueError(f"{folder}/task.toml: universe must name a model, one of {MODELS}")
    return meta


COLLATION = "Text compares by character code: capitals before lower case."
TEXT_ORDER = ("A to Z", "Z to A")  # how an order names a text key


def order_text(order: str) -> str:
    """The task's order, with the collation stated wherever it orders by text (SQLite's default, BINARY):
    "A to Z" alone reads one way to a person and another to a case-insensitive sort."""
    order = order.strip()
    if any(words in order for words in TEXT_ORDER) and COLLATION not in order:
        order = f"{order.rstrip('.')}. {COLLATION}"
    return order


def build_prompt(meta: dict[str, Any]) -> str:
    """What the model reads: the schema, the task, the exact output shape and order, the contract."""
    cols = ", ".join(meta["columns"])
    return (
        f"{SCHEMA}\n\n## Task: {meta['title']}\n\n{meta['spec'].strip()}\n\n"
        f"Each row: ({cols})\nOrder: {order_text(meta['order'])}\n\n{CONTRACT}"
    )


def load_expected(folder: Path) -> list[list[Any]]:
    return json.loads((folder / "expected.json").read_text())["rows"]


def load_fixture_variants(folder: Path) -> dict[str, list[list[Any]]]:
    """The expected rows per admitted fixture variant: variant 0 from expected.json, the rest from fixture_variants.json."""
    path = folder / "fixture_variants.json"
    drawn = json.loads(path.read_text())["variants"] if path.is_file() else {}
    if "0" in drawn or not all(k.isdigit() for k in drawn):
        raise ValueError(f"{path}: variants must be keyed by drawn variant numbers (1 and up)")
    return {"0": load_expected(folder), **drawn}


async def start_session(sb: Sandbox, copy_image_db: bool, variant: int = 0) -> None:
    """Start the ORM session: Django over a private copy of the fixture (or a database already in place)."""
    out = await sb.start_python(preamble=session_preamble(copy_image_db, variant), env=SESSION_ENV)
    if out.strip():  # the preamble prints nothing when it works
        raise RuntimeError(f"the ORM session did not start: {out.strip()[-600:]}")


class OrmFamily:
    name = "orm"

    def compile_task(self, folder: Path) -> TaskRow:
        meta = {**read_orm_task(folder), "reference_cell": (folder / "reference.py").read_text()}
        row = self.compile_meta(meta, load_fixture_variants(folder), str(folder))
        row.signature = f"hand:{meta['id']}"
        return row

    def compile_generated(self, record: dict[str, Any]) -> TaskRow:
        """A task of the orm generator (generate/store.py's line): graded like a hand-written one."""
        meta = {k: record[k] for k in ("title", "spec", "columns", "order", "universe", "difficulty", "category")}
        meta["id"], meta["reference_cell"] = record["task_id"], record["reference"]
        row = self.compile_meta(meta, record["variants"], record["task_id"])
        row.source, row.split, row.signature = "generated", record["split"], record["signature"]
        row.measures = record["measures"]
        return row

    def compile_meta(self, meta: dict[str, Any], variants: dict[str, list[list[Any]]], where: str) -> TaskRow:
        """A task row from task.toml's keys and the expected rows per admitted fixture variant."""
        width = len(meta["columns"])
        if not variants or any(len(row) != width for rows in variants.values() for row in rows):
            raise ValueError(f"{where}: every expected row must have {width} values, as columns says")
        first = min(variants, key=int)
        expected = variants[first]
        return TaskRow(
            task_id=meta["id"],
            family=self.name,
            difficulty=meta["difficulty"],
            category=meta["category"],
            prompt=build_prompt(meta),
            files={},
            collect=["result"],
            grading={
                "expected": expected,
                "fixture_variants": variants,
                "rel_tol": REL_TOL,
                "abs_tol": ABS_TOL,
                "universe": meta["universe"],
                "reference_cell": meta["reference_cell"],
            },
            fixture_seeds=sorted(int(k) for k in variants),
        )

    async def setup(self, sb: Sandbox, task: TaskRow) -> None:
        await start_session(sb, copy_image_db=True, variant=fixture_variant_for(sb.id, task))
        if task.files:
            await sb.write_files(dict(task.files))
        if cell := task.grading.get("setup_cell"):  # a repair task: `result` starts as the broken cell's answer
            await sb.run_python(task.files[cell], timeout=SETUP_CELL_SECONDS)

    replays_cells = True  # the Lease adds the rollout's execute_code cells to the final state (orm_replay.py)

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]:
        variant = fixture_variant_for(sb.id, task)  # the host's draw, as setup made it: nothing the model wrote
        try:
            result = await sb.probe("result")
        except SandboxError:
            raise  # the container or its agent is gone: a harness fault, not an answer
        except RuntimeError as exc:  # the session could not encode `result` (e.g. far too large)
            result = {"unreadable": str(exc)[:REASON_CHARS]}
        return {"result": result, "fixture_variant": variant, "workspace": await workspace_files(sb)}

    async def grade(self, final: dict[str, Any], task: TaskRow, grader: Grader | None) -> Grade:
        """Compare on the host with the rows of the rollout's fixture variant, then (given a grader) run the
        rollout's cells again over fresh grading worlds (orm_replay.py): 1.0 only when every comparison holds."""
        if "result" not in final:
            return Grade.harness_fault("the final state holds no `result` probe")
        variants = task.grading.get("fixture_variants") or {"0": task.grading["expected"]}
        expected = variants.get(str(final.get("fixture_variant", min(variants, key=int))))
        if expected is None:
            variant = final.get("fixture_variant")
            return Grade.harness_fault(f"the final state names fixture variant {variant!r}, which the task lacks")
        outcome = compare(final["result"], expected)
        if (evidence := row_evidence(final["result"], expected)) is not None:
            outcome.checks[-1]["rows"] = evidence  # rows_in_order: what the viewer shows side by side
        checks, reason, passed = list(outcome.checks), outcome.reason, outcome.passed
        metrics = {"tampered": float(outcome.malformed)}
        if grader is not None and passed:  # rows that are wrong already score 0: their code need not run again
            replay = await replay_checks(final, task, grader, expected)
            checks += replay.checks
            metrics["replay_worlds"] = float(len(replay.checks))
            if not replay.passed:
                failed = next(c for c in replay.checks if not c["passed"])
                passed, reason = False, f"the rows match, but the cells run again over a grading world do not: {failed['detail']}"
        metrics["checks_passed"] = sum(c["passed"] for c in checks) / len(checks)
        return Grade(score=1.0 if passed else 0.0, reason=reason, checks=checks, metrics=metrics, tampered=outcome.malformed)


WORKSPACE_FILES = 32  # Python files of /workspace carried into the replay (depth 2), each at most WORKSPACE_BYTES
WORKSPACE_BYTES = 256 << 10
LIST_FILES = (
    f"find /workspace -maxdepth 2 -type f -name '*.py' -size -{WORKSPACE_BYTES // 1024 + 1}k 2>/dev/null "
    f"| head -n {WORKSPACE_FILES}"
)


async def workspace_files(sb: Sandbox) -> dict[str, str]:
    """The final /workspace's Python files (relative path -> text), for the replay; what cannot be listed or read
    as text is left out (the model's own doing: its cells then run without it)."""
    try:
        listing = await sb.exec(["bash", "-c", LIST_FILES], timeout=20, max_output=64 << 10)
        paths = [p for p in listing.stdout.splitlines() if p.startswith("/workspace/") and "\n" not in p]
        contents = await sb.read_files(paths[:WORKSPACE_FILES]) if paths else {}
    except SandboxError:
        raise
    except Exception:  # noqa: BLE001 - a listing the model's files broke: the replay runs without them
        return {}
    out = {}
    for path, data in contents.items():
        if data is not None and len(data) <= WORKSPACE_BYTES:
            try:
                out[path.removeprefix("/workspace/")] = data.decode()
            except UnicodeDecodeError:
                continue
    return out


FAMILY = OrmFamily()
