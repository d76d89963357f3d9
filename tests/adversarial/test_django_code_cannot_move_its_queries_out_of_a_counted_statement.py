"""A budget deliverable cannot move its N+1 loop out of the statement that counts it.

Every top-level statement of a graded test runs in `with _span(key):`; the query audit's hook
counts what SQLite runs and only a frozen test's own frame may start or end a span
(families/django_spans.py, runtime/grader/query_audit.py). Each attack below is dj09's naive
`post_activity()` (one query for the posts, two per post) dressed to leave the budget span
showing no more than the budget of one. Wrong code must score 0.0 (or be flagged tampered),
never 1.0.

Attacks that forge the hook's own events, or reach for the tools the hook forbids, must be
caught as tampering:
- `sys.audit("websandbox.tests", ...)` at import, before the real tests are named;
- `sys.audit("websandbox.span", "exit"/"enter", key, box)` around the loop, from the deliverable;
- `observations.span` found in `sys.modules` and ended around the loop from the deliverable;
- `gc.get_objects()` to look for the hook's state, and a second audit hook of its own.

Attacks through what the hook does not forbid must score 0.0 too: a copy of a frozen test's own
code object run with other globals, or a function of the deliverable added to the tests the guard
names (only the very frame that started a statement may end it: the hook keeps it); the hook's
own closure reached through frames from inside the hook (a CaptureQueriesContext on a stand-in
connection whose query log is a property: the hook reads only Django's own objects, by type);
`observations.observe` swapped for one call and put back (the hook checks, as each statement
ends, that what sends its count is the grader's); and a result that runs its loop on first use,
after the budget statement has ended (every later statement of a budget test may run none).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_env.families import grade_final
from sandbox_env.families.django import FAMILY
from sandbox_env.grading.grader import Grader
from sandbox_env.verify.django import VERIFIER

pytestmark = pytest.mark.docker

TASK = Path(__file__).resolve().parents[2] / "sandbox_env" / "tasks" / "django" / "dj09"
MODULE = "blog/reports.py"
NAIVE = VERIFIER.solution_files(TASK, "naive")[MODULE]
REFERENCE = VERIFIER.solution_files(TASK, "reference")

# The key of the counted statement a frame runs in, read from the rendered test's source.
KEY_OF = """
import linecache as _linecache
import re as _re
import sys as _sys


def _test_frame():
    frame = _sys._getframe(2)
    while frame is not None:
        if "_span" in frame.f_code.co_names and frame.f_globals.get("_span") is not None:
            return frame
        frame = frame.f_back
    return None


def _key_of(frame):
    lines = _linecache.getlines(frame.f_code.co_filename)
    for line in reversed(lines[: frame.f_lineno]):
        found = _re.search(r"_span\\('([0-9a-f]{16})'\\)", line)
        if found:
            return found.group(1)
    return None
"""


def _with_naive(template: str) -> str:
    return template.replace("@@KEY_OF@@", KEY_OF).replace("@@NAIVE@@", NAIVE)


async def _grade(backend, image, module: str):
    task = FAMILY.compile_task(TASK)
    return await grade_final(task, {"files": {**REFERENCE, MODULE: module}}, Grader(backend, image, 60))


def _assert_tampered_zero(grade, *reasons: str) -> None:
    assert grade.scoring_error is None, grade.scoring_error
    assert grade.score == 0.0, grade.reason
    assert grade.tampered, grade.reason
    assert any(r in grade.reason for r in reasons), grade.reason


def _assert_zero(grade) -> None:
    assert grade.scoring_error is None, grade.scoring_error
    assert grade.score == 0.0, grade.reason


async def test_the_naive_loop_as_it_is_scores_zero_for_its_budget(backend, image):
    grade = await _grade(backend, image, NAIVE)
    _assert_zero(grade)
    assert not grade.tampered and "over the query budget" in grade.reason, grade.reason


# -- forged events and forbidden tools: tampering ---------------------------------------------------

# Names its own per-row function as a frozen test, at import (during collection, before the guard does).
TESTS_NAMED_AT_IMPORT = """
import sys

@@NAIVE@@

_per_row = post_activity


def post_activity():
    return _per_row()


try:
    sys.audit("websandbox.tests", frozenset({post_activity.__code__, _per_row.__code__}))
except Exception:
    pass
"""


async def test_a_deliverable_that_names_itself_a_frozen_test_at_import_is_tampering(backend, image):
    grade = await _grade(backend, image, _with_naive(TESTS_NAMED_AT_IMPORT))
    _assert_tampered_zero(grade, "named by other code")


# Ends its statement's span with a raw audit event before the loop and starts it again after.
SPAN_EVENTS_RAISED_BY_HAND = """
import sys
@@KEY_OF@@
@@NAIVE@@

_per_row = post_activity


def post_activity():
    frame = _test_frame()
    key = _key_of(frame) if frame is not None else None
    if key is not None:
        sys.audit("websandbox.span", "exit", key, [])
    rows = _per_row()
    if key is not None:
        sys.audit("websandbox.span", "enter", key, None)
    return rows
"""


async def test_span_events_raised_by_the_deliverable_itself_are_tampering(backend, image):
    grade = await _grade(backend, image, _with_naive(SPAN_EVENTS_RAISED_BY_HAND))
    _assert_tampered_zero(grade, "reported by other code")


# The grader's span class found in sys.modules (not by its import name) and driven around the loop.
SPAN_FROM_SYS_MODULES = """
import sys
@@KEY_OF@@
@@NAIVE@@

_per_row = post_activity


def _span_class():
    for module in list(sys.modules.values()):
        found = getattr(module, "span", None)
        if isinstance(found, type) and hasattr(found, "__slots__") and "_key" in found.__slots__:
            return found
    return None


def post_activity():
    frame = _test_frame()
    key = _key_of(frame) if frame is not None else None
    span = _span_class()
    if key is None or span is None:
        return _per_row()
    span.__exit__(span(key))
    try:
        return _per_row()
    finally:
        span.__enter__(span(key))
"""


async def test_the_span_class_found_in_sys_modules_cannot_end_a_statement_around_the_loop(backend, image):
    grade = await _grade(backend, image, _with_naive(SPAN_FROM_SYS_MODULES))
    _assert_tampered_zero(grade, "none of the frozen tests")


# Looks through the heap for the hook's count (a list holding one int, next to dicts of open spans).
GC_SEARCH = """
import gc

@@NAIVE@@

_per_row = post_activity
_counts = []


def post_activity():
    if not _counts:
        try:
            _counts.extend(o for o in gc.get_objects() if type(o) is list and len(o) == 1 and type(o[0]) is int)
        except Exception:
            pass
    before = [c[0] for c in _counts]
    rows = _per_row()
    for c, b in zip(_counts, before):
        c[0] = b + 1
    return rows
"""


async def test_searching_the_heap_for_the_count_is_tampering(backend, image):
    grade = await _grade(backend, image, _with_naive(GC_SEARCH))
    _assert_tampered_zero(grade, "gc.get_objects")


# A hook of its own, added at import, that raises on the span events (trying to turn them off).
SECOND_AUDIT_HOOK = """
import sys

@@NAIVE@@


def _refuse(event, args):
    if event == "websandbox.span":
        raise RuntimeError("no count here")


try:
    sys.addaudithook(_refuse)
except Exception:
    pass
"""


async def test_a_second_audit_hook_added_by_the_deliverable_is_tampering(backend, image):
    grade = await _grade(backend, image, _with_naive(SECOND_AUDIT_HOOK))
    _assert_tampered_zero(grade, "added an audit hook")


# -- routes the hook does not forbid --------------------------------------------------------------

# A copy of the frozen test's own code object, run with globals of its own: the hook sees the
# span's enter/exit called from a frame running a frozen test's code, which is all it checks.
# Run once with the statement's `_span` bound to a class whose __enter__ is span.__exit__ (the
# statement's span ends), the loop runs uncounted, then once more with a class whose __enter__ is
# span.__enter__ (it starts again). Every other name of the copy is a harmless stand-in, and the
# copy stops at the counted statement's own body.
TEST_CODE_RUN_AGAIN = """
import types as _types

from observations import span as _real_span
@@KEY_OF@@
@@NAIVE@@

_per_row = post_activity


class _Stop(Exception):
    pass


class _Anything:
    def __init__(self, *a, **k):
        pass

    def __getattr__(self, name):
        return _Anything()

    def __call__(self, *a, **k):
        if _reached:  # inside the counted statement's body: the copy has done its part
            raise _Stop
        return _Anything()

    def __iter__(self):
        return iter(())

    def __len__(self):
        return 0

    def __getitem__(self, key):
        return _Anything()

    def __enter__(self):
        return _Anything()

    def __exit__(self, *exc):
        return False

    def __bool__(self):
        return True

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


class _End:
    __slots__ = ("_key",)
    __enter__ = _real_span.__exit__

    def __init__(self, key):
        self._key = key

    def __exit__(self, *exc):
        return False


class _Start:
    __slots__ = ("_key",)
    __enter__ = _real_span.__enter__

    def __init__(self, key):
        self._key = key

    def __exit__(self, *exc):
        return False


def _names(code):
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, _types.CodeType):
            names |= _names(const)
    return names


_reached = []


def _replay(frame, key, maker):
    code = frame.f_code

    def span_of(k):
        if k != key:
            return _Anything()
        _reached.append(k)
        return maker(k)

    fake = {name: _Anything() for name in _names(code)}
    fake["__builtins__"] = __builtins__
    fake["_span"] = span_of
    copy = _types.FunctionType(code, fake, code.co_name)
    try:
        copy(*[_Anything() for _ in range(code.co_argcount)])
    except _Stop:
        return True
    except Exception:
        return False
    finally:
        _reached.clear()
    return False


def post_activity():
    frame = _test_frame()
    key = _key_of(frame) if frame is not None else None
    if key is None or not _replay(frame, key, _End):
        return _per_row()
    try:
        return _per_row()
    finally:
        _replay(frame, key, _Start)
"""


async def test_a_copy_of_the_frozen_tests_code_cannot_end_its_statements_count(backend, image):
    grade = await _grade(backend, image, _with_naive(TEST_CODE_RUN_AGAIN))
    _assert_zero(grade)


# The hook's own closure, reached through frames from code the hook runs: at the end of a
# CaptureQueriesContext the hook reads the block's query log (`ctx.connection.queries_log`);
# on a stand-in connection that log is a property, which runs inside the hook, where
# sys._getframe reaches on_window's frame and its free variable `total`, the hook's count.
# The loop then puts the count back to where it was plus one.
HOOK_CLOSURE_THROUGH_A_QUERY_LOG = """
import sys as _sys

from django.test.utils import CaptureQueriesContext as _Capture

@@NAIVE@@

_per_row = post_activity
_stolen = []


class _StandIn:
    force_debug_cursor = False

    def ensure_connection(self):
        pass

    @property
    def queries_log(self):
        frame = _sys._getframe(1)
        while frame is not None and not _stolen:
            try:
                found = frame.f_locals.get("total")
            except Exception:
                found = None
            if type(found) is list and len(found) == 1 and type(found[0]) is int:
                _stolen.append(found)
            frame = frame.f_back
        return []


def _count():
    if not _stolen:
        with _Capture(_StandIn()):
            pass
    return _stolen[0] if _stolen else None


def post_activity():
    total = _count()
    if total is None:
        return _per_row()
    before = total[0]
    rows = _per_row()
    total[0] = before + 1
    return rows
"""


async def test_the_hooks_count_cannot_be_reached_from_a_query_log_it_reads(backend, image):
    grade = await _grade(backend, image, _with_naive(HOOK_CLOSURE_THROUGH_A_QUERY_LOG))
    _assert_zero(grade)


# The rows as a list that fills itself, with the N+1 loop, on first use: inside the budget statement
# (`rows = post_activity()`) nothing runs; the loop runs in the next statement (`len(rows)`), whose
# count is held to nothing. `data` makes the observation encoder read it as it iterates.
LOOP_ON_FIRST_USE = """
@@NAIVE@@

_per_row = post_activity


class _Rows(list):
    data = None

    def _fill(self):
        if not self.__dict__.get("filled"):
            self.__dict__["filled"] = True
            list.extend(self, _per_row())
        return self

    def __len__(self):
        return list.__len__(self._fill())

    def __iter__(self):
        return list.__iter__(self._fill())

    def __getitem__(self, i):
        return list.__getitem__(self._fill(), i)

    def __eq__(self, other):
        return list.__eq__(self._fill(), other)

    def __ne__(self, other):
        return list.__ne__(self._fill(), other)

    def __bool__(self):
        return list.__len__(self._fill()) > 0

    def __repr__(self):
        return list.__repr__(self._fill())

    __hash__ = None


def post_activity():
    return _Rows()
"""


async def test_rows_that_run_their_loop_on_first_use_after_the_budget_statement_score_zero(backend, image):
    grade = await _grade(backend, image, _with_naive(LOOP_ON_FIRST_USE))
    _assert_zero(grade)


# The span sends its count through `observations.observe`, looked up at its exit. The deliverable
# swaps that function for one that takes its own loop's extra queries off the count (counted with a
# Django execute wrapper, taken off again before the test ends) and puts the real one back at once:
# the guard compares the module's functions after each test, when the real one is back. A budget
# canary's own queries stay in the count, so the canaries still fail as they must.
OBSERVE_SWAPPED_AND_RESTORED = """
import observations as _observations
from django.db import connection as _connection

@@NAIVE@@

_per_row = post_activity


def post_activity():
    ran = []

    def counting(execute, sql, params, many, context):
        ran.append(sql)
        return execute(sql, params, many, context)

    with _connection.execute_wrapper(counting):
        rows = _per_row()
    extra = max(0, len(ran) - 1)
    real = _observations.observe

    def observe(key, op, left, right):
        _observations.observe = real
        if type(left) is int:
            left = max(0, left - extra)
        return real(key, op, left, right)

    if extra:
        _observations.observe = observe
    return rows
"""


async def test_a_count_sent_through_a_swapped_and_restored_observe_cannot_hide_the_loop(backend, image):
    grade = await _grade(backend, image, _with_naive(OBSERVE_SWAPPED_AND_RESTORED))
    _assert_zero(grade)


# The same rewrite one step further down: observe() is left alone and the module's sink (what observe
# hands each operand to on its way to the host) is swapped for one call and put back. Every function
# of observations is what sends a count: the hook compares them all as each statement ends.
SINK_SWAPPED_AND_RESTORED = """
import observations as _observations
from django.db import connection as _connection

@@NAIVE@@

_per_row = post_activity


def post_activity():
    ran = []

    def counting(execute, sql, params, many, context):
        ran.append(sql)
        return execute(sql, params, many, context)

    with _connection.execute_wrapper(counting):
        rows = _per_row()
    extra = max(0, len(ran) - 1)
    real = _observations._sink

    def sink(frame):
        _observations._sink = real
        observed = frame.get("observed") if type(frame) is dict else None
        count = observed[1].get("i") if observed and type(observed[1]) is dict else None
        if type(count) is str and count.isdigit():  # an int leaves as {"i": "<digits>"}
            observed[1] = {"i": str(max(0, int(count) - extra))}
        return real(frame)

    if extra and real is not None:
        _observations._sink = sink
    return rows
"""


async def test_a_count_sent_through_a_swapped_and_restored_sink_cannot_hide_the_loop(backend, image):
    grade = await _grade(backend, image, _with_naive(SINK_SWAPPED_AND_RESTORED))
    _assert_zero(grade)


# The guard names the frozen tests to the hook from its own `items` (register_tests, after
# collection); at import, during collection, the deliverable finds the guard among pytest's plugins
# (its frames hold the session) and adds an item of its own whose test function is its wrapper.
# Named by the guard's own code, the wrapper may then end and restart its statement's span.
OWN_CODE_ADDED_TO_THE_GUARDS_ITEMS = """
import sys as _sys
import types as _types

from observations import span as _span_class
@@KEY_OF@@
@@NAIVE@@

_per_row = post_activity


def post_activity():
    frame = _test_frame()
    key = _key_of(frame) if frame is not None else None
    if key is None or not _registered:
        return _per_row()
    _span_class.__exit__(_span_class(key))
    try:
        return _per_row()
    finally:
        _span_class.__enter__(_span_class(key))


def _guard():
    frame = _sys._getframe()
    while frame is not None:
        for value in list(frame.f_locals.values()):
            config = getattr(value, "config", None)
            manager = getattr(config, "pluginmanager", None) or getattr(value, "pluginmanager", None)
            if manager is not None and hasattr(manager, "get_plugins"):
                for plugin in manager.get_plugins():
                    if type(plugin).__name__ == "Guard" and isinstance(getattr(plugin, "items", None), dict):
                        return plugin
        frame = frame.f_back
    return None


_registered = False
_found = _guard()
if _found is not None:
    _item = _types.SimpleNamespace(
        cls=None,
        originalname="post_activity",
        name="post_activity",
        obj=post_activity,
        _fixtureinfo=_types.SimpleNamespace(name2fixturedefs={}),
    )
    _parts = _sys.modules["integrity"]._parts
    _found.items["blog/reports.py::post_activity"] = [_item, *_parts(post_activity, 1)]
    _registered = True
"""


async def test_a_deliverable_cannot_add_its_own_code_to_the_tests_the_guard_names(backend, image):
    grade = await _grade(backend, image, _with_naive(OWN_CODE_ADDED_TO_THE_GUARDS_ITEMS))
    _assert_zero(grade)
