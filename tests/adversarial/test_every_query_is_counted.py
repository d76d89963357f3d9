"""A query budget counts every statement SQLite runs in the grading process, whatever opened the connection.

Each exploit is dj04's N+1 report (one query for the authors, one per author for the books:
13 or more queries under a budget of two) sent by another route to the in-memory test
database, so that Django's query log never sees it. Before the audit hook of
runtime/grader/query_audit.py every one of them scored 1.0; each must now score 0.0 and be
`tampered`. Honest raw SQL through Django's own cursor must still score 1.0.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from sandbox_env.families.django import FAMILY
from sandbox_env.grading.grader import Grader
from sandbox_env.verify.django import VERIFIER

TASKS = Path(__file__).resolve().parents[2] / "sandbox_env" / "tasks" / "django"
DJ04_NAIVE = VERIFIER.solution_files(TASKS / "dj04", "naive")["library/reports.py"]
TEST_DB = "file:memorydb_default?mode=memory&cache=shared"

# The N+1 loop over a query function `_q(sql) -> rows` that each route defines (values may come back as text).
N_PLUS_ONE = """

def author_report():
    _q = _open()
    report = []
    for author_id, name in _q("SELECT id, name FROM library_author ORDER BY name"):
        books = _q("SELECT title, year, pages FROM library_book WHERE author_id = %d AND is_published "
                   "ORDER BY year, title" % int(author_id))
        report.append({"author": name, "books": [b[0] for b in books], "total_pages": sum(int(b[2]) for b in books),
                       "latest_year": max((int(b[1]) for b in books), default=None)})
    return report
"""

# The held-out exploit: a private sqlite3 connection to the shared in-memory test database.
PRIVATE_SQLITE = f"""
import sqlite3


def _open():
    conn = sqlite3.connect({TEST_DB!r}, uri=True)
    conn.execute("PRAGMA read_uncommitted = 1")
    return lambda sql: conn.execute(sql).fetchall()
{N_PLUS_ONE}"""

# The same through the C module, with a Connection subclass as the factory.
SUBCLASSED_C_MODULE = f"""
import _sqlite3


class _Quiet(_sqlite3.Connection):
    pass


def _open():
    conn = _sqlite3.connect({TEST_DB!r}, uri=True, factory=_Quiet)
    conn.execute("PRAGMA read_uncommitted = 1")
    return lambda sql: conn.execute(sql).fetchall()
{N_PLUS_ONE}"""

# A second Django connection to the same database, made by the handler but not kept in it: its
# debug cursor is off, so nothing it runs is logged where the budget looks.
SECOND_DJANGO_CONNECTION = f"""
from django.db import connections


def _open():
    other = connections.create_connection("default")
    other.ensure_connection()
    with other.cursor() as cursor:
        cursor.execute("PRAGMA read_uncommitted = 1")

    def q(sql):
        with other.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()

    return q
{N_PLUS_ONE}"""

# The ORM's own N+1 loop, in a thread: Django gives the thread a connection of its own.
IN_A_THREAD = f"""
from concurrent.futures import ThreadPoolExecutor

{DJ04_NAIVE.replace("def author_report():", "def _naive():")}

def _in_thread():
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("PRAGMA read_uncommitted = 1")
    return _naive()


def author_report():
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_in_thread).result()
"""

# Django's own raw handle, each statement behind a leading comment (the witness skipped lines that start
# with "--", which is how SQLite traces a trigger).
BEHIND_A_COMMENT = f"""
from django.db import connection


def _open():
    connection.ensure_connection()
    return lambda sql: connection.connection.execute("-- report\\n" + sql).fetchall()
{N_PLUS_ONE}"""

# Django's own raw handle with the statement trace taken off around each query and put back after: the
# guard's callback found in the runner's globals (or among the connection's referents).
TRACE_TAKEN_OFF = f"""
import gc
import sys

from django.db import connection


def _trace_of(raw):
    guard = getattr(sys.modules["__main__"], "guard", None)
    found = getattr(getattr(guard, "witness", None), "callbacks", {{}}).get(id(raw))
    if found is None:
        found = next((r for r in gc.get_referents(raw) if callable(r) and not isinstance(r, type)), None)
    return found


def _open():
    connection.ensure_connection()
    raw = connection.connection
    trace = _trace_of(raw)

    def q(sql):
        raw.set_trace_callback(None)
        try:
            return raw.execute(sql).fetchall()
        finally:
            raw.set_trace_callback(trace)

    return q
{N_PLUS_ONE}"""

# libsqlite3 through ctypes: a connection of its own that no Python object stands for.
THROUGH_CTYPES = f"""
import ctypes
import glob

_lib = ctypes.CDLL((glob.glob("/usr/lib/*/libsqlite3.so.0") or ["libsqlite3.so.0"])[0])
_ROW = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(ctypes.c_char_p),
                        ctypes.POINTER(ctypes.c_char_p))
_lib.sqlite3_open_v2.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int, ctypes.c_char_p]
_lib.sqlite3_exec.argtypes = [ctypes.c_void_p, ctypes.c_char_p, _ROW, ctypes.c_void_p, ctypes.c_void_p]


def _open():
    db = ctypes.c_void_p()
    _lib.sqlite3_open_v2({TEST_DB!r}.encode(), ctypes.byref(db), 0x02 | 0x40, None)

    def q(sql):
        rows = []

        def row(_arg, n, values, _names):
            rows.append(tuple(None if values[i] is None else values[i].decode() for i in range(n)))
            return 0

        _lib.sqlite3_exec(db, sql.encode(), _ROW(row), None, None)
        return rows

    q("PRAGMA read_uncommitted = 1")
    return q
{N_PLUS_ONE}"""

# A copy of the database, taken with serialize() (no query), queried by another process.
CHILD = f"""
import json, sqlite3, sys
conn = sqlite3.connect("/tmp/copy.db")
def _open():
    return lambda sql: conn.execute(sql).fetchall()
{N_PLUS_ONE}
print(json.dumps(author_report()))
"""
COPY_IN_A_SUBPROCESS = f"""
import json
import subprocess
import sys

from django.db import connection

_CHILD = {CHILD!r}


def author_report():
    connection.ensure_connection()
    with open("/tmp/copy.db", "wb") as fh:
        fh.write(connection.connection.serialize())
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, check=True).stdout
    return json.loads(out)
"""

# Honest: raw SQL through Django's own cursor, two queries.
RAW_CURSOR_REPORT = """
from django.db import connection


def author_report():
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, name FROM library_author ORDER BY name")
        authors = cursor.fetchall()
        cursor.execute(
            "SELECT author_id, title, year, pages FROM library_book WHERE is_published = %s ORDER BY year, title",
            [True],
        )
        books = cursor.fetchall()
    by_id = {}
    report = []
    for author_id, name in authors:
        by_id[author_id] = row = {"author": name, "books": [], "total_pages": 0, "latest_year": None}
        report.append(row)
    for author_id, title, year, pages in books:
        row = by_id[author_id]
        row["books"].append(title)
        row["total_pages"] += pages
        row["latest_year"] = year if row["latest_year"] is None else max(row["latest_year"], year)
    return report
"""


# Django's own backend asked for a fresh raw connection outside `connect()`: the stack shows Django's
# sqlite backend opening it, but for no wrapper the connection handler holds.
BACKEND_CALLED_DIRECTLY = f"""
from django.db import connection


def _open():
    raw = connection.get_new_connection(connection.get_connection_params())
    return lambda sql: raw.execute(sql).fetchall()
{N_PLUS_ONE}"""


@pytest.fixture(scope="module")
def grader(backend, image):
    return Grader(backend, image)


async def _grade(grader, sources: list[str]):
    task = FAMILY.compile_task(TASKS / "dj04")
    sem = asyncio.Semaphore(2)

    async def one(source: str):
        async with sem:
            return await FAMILY.grade({"files": {"library/reports.py": source}}, task, grader)

    return await asyncio.gather(*(one(s) for s in sources))


def _assert_tampered(idea: str, grade) -> None:
    print(json.dumps({"idea": idea, "score": grade.score, "tampered": grade.tampered, "reason": grade.reason[:400]}))
    assert grade.score == 0.0, (idea, grade.reason)
    assert grade.scoring_error is None, (idea, grade.reason)
    assert grade.tampered, (idea, grade.reason)


@pytest.mark.docker
async def test_a_private_sqlite_connection_cannot_hide_queries_from_the_budget(grader):
    (grade,) = await _grade(grader, [PRIVATE_SQLITE])
    _assert_tampered("PRIVATE_SQLITE", grade)


@pytest.mark.docker
async def test_a_connection_subclass_of_the_c_module_cannot_hide_queries_from_the_budget(grader):
    (grade,) = await _grade(grader, [SUBCLASSED_C_MODULE])
    _assert_tampered("SUBCLASSED_C_MODULE", grade)


@pytest.mark.docker
async def test_a_second_django_connection_cannot_hide_queries_from_the_budget(grader):
    (grade,) = await _grade(grader, [SECOND_DJANGO_CONNECTION])
    _assert_tampered("SECOND_DJANGO_CONNECTION", grade)


@pytest.mark.docker
async def test_queries_run_in_a_thread_count_against_the_budget(grader):
    (grade,) = await _grade(grader, [IN_A_THREAD])
    _assert_tampered("IN_A_THREAD", grade)


@pytest.mark.docker
async def test_a_statement_behind_a_comment_on_djangos_own_handle_is_counted(grader):
    (grade,) = await _grade(grader, [BEHIND_A_COMMENT])
    _assert_tampered("BEHIND_A_COMMENT", grade)


@pytest.mark.docker
async def test_taking_the_statement_trace_off_and_putting_it_back_is_tampering(grader):
    (grade,) = await _grade(grader, [TRACE_TAKEN_OFF])
    _assert_tampered("TRACE_TAKEN_OFF", grade)


@pytest.mark.docker
async def test_queries_through_ctypes_onto_libsqlite3_are_tampering(grader):
    (grade,) = await _grade(grader, [THROUGH_CTYPES])
    _assert_tampered("THROUGH_CTYPES", grade)


@pytest.mark.docker
async def test_a_serialized_copy_queried_in_a_subprocess_is_tampering(grader):
    (grade,) = await _grade(grader, [COPY_IN_A_SUBPROCESS])
    _assert_tampered("COPY_IN_A_SUBPROCESS", grade)


@pytest.mark.docker
async def test_honest_raw_sql_through_djangos_cursor_scores_full_marks(grader):
    (grade,) = await _grade(grader, [RAW_CURSOR_REPORT])
    assert grade.score == 1.0, grade.reason
    assert not grade.tampered and grade.scoring_error is None, grade.reason


@pytest.mark.docker
async def test_a_raw_connection_asked_of_djangos_backend_directly_cannot_hide_queries(grader):
    (grade,) = await _grade(grader, [BACKEND_CALLED_DIRECTLY])
    _assert_tampered("BACKEND_CALLED_DIRECTLY", grade)
