"""Every statement SQLite runs in the django grader's process is counted, by an audit hook the code under test cannot remove.

A query budget (assertNumQueries, pytest-django's django_assert_num_queries) counts what
Django logs on one connection. Code under test can run its queries where that log never
looks: a private sqlite3 (or _sqlite3, or subclassed) connection to the shared in-memory
test database, a second Django connection, a thread (Django gives it a connection of its
own), Django's own raw handle, libsqlite3 through ctypes, a copy of the database read by
another process. So the count is not kept by Django, nor by any object the code under test
can reach by name.

Decision. `install()` runs in `integrity.Guard.arm()`, before the deliverable is imported
and before any database connection exists (the runner imports Django, but Django connects
lazily, in pytest-django's database setup). It adds one `sys.addaudithook` hook; audit hooks
cannot be removed from Python, and this one is referenced by nothing but the interpreter.
The hook

- sees every SQLite connection the process opens (the `sqlite3.connect/handle` event,
  raised inside `Connection.__init__` for the `sqlite3` and `_sqlite3` modules, factories and
  subclasses alike), keeps it, and gives it a statement trace as soon as it can take one: the
  event comes before the connection is initialized, so the trace is set at the hook's next
  event, and Django's backend reports each connection it opens the moment it has it (a
  wrapper around `get_new_connection`), before any query can run on it. The trace reports
  each statement as an audit event back to the hook, which alone holds the count. The trace
  carries a sentinel that only the connection references: taking the trace off or replacing
  it (`set_trace_callback`) frees the sentinel while the connection is still open, which is
  tampering at that moment;
- allows a connection only when Django's sqlite backend opens it, through that wrapper, in
  `connect()` of a database wrapper that the connection handler (`django.db.connections`)
  holds for that thread (the code objects on the stack say so); any other connection
  (a private one, `connections.create_connection`, a wrapper not in the handler) is
  tampering: the grading process has one test database and Django reaches it;
- counts the statements of every counted statement of a frozen test (`observations.span`, the
  query budgets: families/django_spans.py): only the span's own code may report where one
  starts and ends, and only when a frozen test's own frame calls it (the guard names the
  tests' code objects once, after collection, from its own code: `register_tests`), and at its
  end the hook hands the span its count, which the span sends to the host as an observation; a
  span restarted inside itself, ended without having started, or started or ended by any other
  code (a deliverable that ends its statement's span before its N+1 loop and starts it again
  after) is tampering. Only the very frame that started a statement may end it (the hook keeps
  it): while the statement runs its test's frame is suspended in it, so neither a copy of the
  test's code run with other globals nor a function of the code under test added to the tests
  the guard names can end it early. As a statement ends, what sends its count
  (read from `observations`' own dict) must be the
  grader's: every function and class of the module and every method of its classes, as the hook found them
  (the runner arms the sink before the hook is installed), so a count sent through an `observe`, an encoder
  or a sink swapped for one call and put back is tampering. Django's debug
  cursor and query log play no part, so code under test cannot see from them whether it is measured;
- compares, at the end of every CaptureQueriesContext (which Django's own budgets use; the wrappers
  below report its start and end, and the hook accepts those reports only from the wrappers'
  own code), the statements SQLite ran on any connection of any thread during the block with
  the queries the block's log shows, read from Django's own objects only (the block, the connection
  wrapper, `django.db.connection`'s proxy and the log, each by exact type, through their own dicts),
  so that no code of the deliverable runs inside the hook, where it could walk the hook's frames;
  a block over anything else is tampering. Fewer logged than ran is tampering (a trimmed log, a debug
  cursor switched off, a second connection, a thread, raw statements on Django's own handle).
  A block that is restarted while open, or ended without having started, is tampering too;
- treats as tampering, whenever it happens, what reads the database without a statement or
  reaches past these counts: `serialize()` of a connection (SQLite traces it as a quoted
  `PRAGMA "main".page_count`), SQLite extensions, ctypes (opening libraries, looking up
  symbols, calling C functions, reading memory at an address; `ctypes` itself is imported
  before the hook, so its own import is not counted), starting a process (a subprocess could
  query a copy), opening a process's memory (`/proc/*/mem`), searching the interpreter's
  objects with gc (which would find the sentinels and the hook), and a new audit hook, trace
  or profile function (which would see the hook's frames).

Statements not counted: transaction control (BEGIN, COMMIT, ROLLBACK, SAVEPOINT, RELEASE),
PRAGMA, the one-line `-- name` with which SQLite traces a trigger, and the `SELECT QUOTE(...)`
with which Django's SQLite backend formats a logged query's parameters. None of them reads a
table.

Honest code is unaffected: Django's own connection, its cursor (raw SQL included), the ORM,
transactions and threads that use Django's connections all run through traced connections,
and every query they make inside a budget is logged where the budget looks.

What this cannot see (recorded in docs/architecture.md): `Connection.blobopen()` on Django's
own handle reads one text or blob value of a row without a statement (SQLite does not trace
it); it cannot read integers, so it cannot follow a relation. Code written against this
module can still find the guard's other state through frames (sys._getframe) and edit it.
"""

from __future__ import annotations

import re
import sqlite3
import sys
from collections import deque
from typing import Any

_audit = sys.audit
_getframe = sys._getframe
_set_trace = sqlite3.Connection.set_trace_callback
_changes = sqlite3.Connection.total_changes.__get__  # raises on a closed connection

UNCOUNTED = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE", "PRAGMA")
TRIGGER = re.compile(r"-- [^\n]*\Z")
_LITERAL = r"(?:'(?:[^']|'')*'|[-+0-9.eE]+|NULL|[xX]'[0-9a-fA-F]*')"
QUOTE_ONLY = re.compile(rf"SELECT QUOTE\({_LITERAL}\)(?:, QUOTE\({_LITERAL}\))*\Z", re.DOTALL)
SERIALIZE = re.compile(r'PRAGMA "(?:[^"]|"")*"\.page_count\Z')
PROCESS_MEMORY = re.compile(r"/proc/(?:self|thread-self|\d+)(?:/task/\d+)?/mem\Z")

FORBIDDEN = {
    "sqlite3.enable_load_extension": "turned on SQLite extension loading",
    "sqlite3.load_extension": "loaded an SQLite extension",
    "ctypes.dlopen": "opened a shared library with ctypes",
    "ctypes.dlsym": "looked up a C symbol with ctypes",
    "ctypes.dlsym/handle": "looked up a C symbol with ctypes",
    "ctypes.call_function": "called a C function through ctypes",
    "ctypes.cdata": "read memory at an address with ctypes",
    "ctypes.cdata/buffer": "read memory at an address with ctypes",
    "ctypes.string_at": "read memory at an address with ctypes",
    "ctypes.wstring_at": "read memory at an address with ctypes",
    "gc.get_objects": "searched the interpreter's objects (gc.get_objects)",
    "gc.get_referrers": "searched the interpreter's objects (gc.get_referrers)",
    "gc.get_referents": "searched the interpreter's objects (gc.get_referents)",
    "sys.addaudithook": "added an audit hook",
    "sys.settrace": "set a trace function",
    "sys.setprofile": "set a profile function",
    "sys._settraceallthreads": "set a trace function",
    "sys._setprofileallthreads": "set a profile function",
    "sys.monitoring.register_callback": "registered a sys.monitoring callback",
    "subprocess.Popen": "started a process",
    "os.system": "started a process",
    "os.exec": "started a process",
    "os.posix_spawn": "started a process",
    "os.spawn": "started a process",
    "os.fork": "started a process",
    "os.forkpty": "started a process",
}


WINDOW_CODES: set[Any] = set()


def wrap_capture_queries(capture_queries_context: type, audit: Any = _audit) -> None:
    """Make every CaptureQueriesContext report its start and end to the hook."""
    enter, exit_ = capture_queries_context.__enter__, capture_queries_context.__exit__

    def __enter__(self):  # noqa: N807 - the wrapped dunder
        result = enter(self)
        audit("websandbox.window", "enter", self)
        return result

    def __exit__(self, exc_type, exc_value, traceback):  # noqa: N807 - the wrapped dunder
        result = exit_(self, exc_type, exc_value, traceback)
        audit("websandbox.window", "exit" if exc_type is None else "abandon", self)
        return result

    for new, old in ((__enter__, enter), (__exit__, exit_)):
        new.__wrapped__, new.__doc__, new.__qualname__ = old, old.__doc__, old.__qualname__
    capture_queries_context.__enter__ = __enter__
    capture_queries_context.__exit__ = __exit__
    WINDOW_CODES.update((__enter__.__code__, __exit__.__code__))


def wrap_get_new_connection(database_wrapper: type, audit: Any = _audit) -> Any:
    """Make Django's SQLite backend report each connection it opens to the hook, once it is initialized."""
    original = database_wrapper.get_new_connection

    def get_new_connection(self, conn_params):
        conn = original(self, conn_params)
        audit("websandbox.opened", conn)
        return conn

    get_new_connection.__wrapped__, get_new_connection.__doc__ = original, original.__doc__
    get_new_connection.__qualname__ = original.__qualname__
    database_wrapper.get_new_connection = get_new_connection
    return get_new_connection.__code__


def install(alarm: Any, registrar: Any = None) -> None:
    """Add the hook; `alarm(problem)` reports a finding and must not depend on what the code under test can reach.

    `registrar`: the code object of the one function that may tell the hook, once, which code
    objects are the frozen tests' (`register_tests`); only a frame running one of them may
    start or end a counted statement.

    Everything the hook uses is bound here, so that rebinding a name of this module (or a builtin)
    later changes nothing it does.
    """
    import ctypes  # noqa: F401 - its import opens a library: done before the hook counts that
    import ctypes.util  # noqa: F401

    import observations
    from django.db import connections as handler
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.backends.sqlite3.base import DatabaseWrapper
    from django.test.utils import CaptureQueriesContext
    from django.utils.connection import ConnectionProxy

    wrap_capture_queries(CaptureQueriesContext)
    capture_class, wrapper_class, local_class = CaptureQueriesContext, DatabaseWrapper, type(handler._connections)
    proxy_class = ConnectionProxy
    span_globals = vars(observations)  # a module's dict cannot be swapped for another
    # what sends a statement's count: every function and class of the module (observe, its encoder, the sink
    # the runner armed before this hook), as they are now; compared as each statement ends
    span_needs = {name: v for name, v in span_globals.items() if callable(v) and not name.startswith("__")}
    span_needs_code = {name: getattr(v, "__code__", None) for name, v in span_needs.items()}
    class_needs = {
        (name, attr): f for name, v in span_needs.items() if isinstance(v, type) for attr, f in vars(v).items() if callable(f)
    }
    deque_type = deque  # BaseDatabaseWrapper.queries_log
    opener = DatabaseWrapper.get_new_connection
    opener_code = getattr(opener, "__wrapped__", opener).__code__
    wrapper_code = wrap_get_new_connection(DatabaseWrapper)
    connect = BaseDatabaseWrapper.connect
    connect_code = getattr(connect, "__wrapped__", connect).__code__
    window_codes = frozenset(WINDOW_CODES)
    span_codes = frozenset((observations.span.__enter__.__code__, observations.span.__exit__.__code__))
    spans: dict[Any, tuple[int, Any]] = {}  # an open span's key: (statements before it, the test frame that opened it)
    tests: set[Any] = set()  # the frozen tests' code objects, told once by `registrar`
    told = [False]
    forbidden = dict(FORBIDDEN)
    uncounted, trigger, quote_only = UNCOUNTED, TRIGGER.match, QUOTE_ONLY.match
    serialize, process_memory = SERIALIZE.match, PROCESS_MEMORY.match
    audit, getframe, set_trace, changes = _audit, _getframe, _set_trace, _changes
    object_dict, dict_get = object.__getattribute__, dict.get
    object_dict = lambda obj, _get=object_dict: _get(obj, "__dict__")  # noqa: E731 - bound once, here
    _type, _str, _int, _list, _dict, _getattr, _any = type, str, int, list, dict, getattr, any
    kept: list[Any] = []  # every connection seen opening, kept alive (compared by identity: id() raises an audit event)
    total = [0]
    windows: list[list[Any]] = []  # [ctx, statements before its block]
    stats = {"statements": 0, "query_contexts": 0, "connections": 0}
    pending: list[Any] = [None]
    untraced: list[Any] = []  # opened, not yet initialized when the hook saw them

    class Sentinel:
        """Referenced only by a connection's trace: freed while the connection is open = the trace was taken off."""

        __slots__ = ("conn",)

        def __init__(self, conn: Any) -> None:
            self.conn = conn

        def __del__(self) -> None:
            try:
                changes(self.conn)
            except Exception:  # noqa: BLE001 - a closed connection runs nothing more
                return
            alarm("the statement trace of a SQLite connection was taken off or replaced")

    def counted(statement: str) -> bool:
        text = statement.lstrip()
        return not (text.upper().startswith(uncounted) or trigger(text) or quote_only(text))

    def logged_count(ctx: Any) -> int:
        """The queries the block's log holds, an executemany counted once per row (as SQLite runs it).

        Read without running any code but Django's and the interpreter's: the block must be Django's own
        CaptureQueriesContext over Django's own SQLite connection wrapper, and its log Django's deque of dicts
        of text. Anything else (a subclass, a stand-in connection, a log or entry whose reading would call the
        code under test, which could then walk this hook's frames) is tampering."""
        fields = object_dict(ctx) if _type(ctx) is capture_class else None
        conn = held_wrapper(fields.get("connection")) if _type(fields) is _dict else None
        log = object_dict(conn).get("queries_log") if _type(conn) is wrapper_class else None
        first, last = (fields or {}).get("initial_queries"), (fields or {}).get("final_queries")
        if _type(log) is not deque_type or _type(first) is not _int or _type(last) is not _int:
            raise TypeError("not Django's own query count over Django's own connection")
        seen = 0
        for q in _list(log)[first:last]:
            head = dict_get(q, "sql", "") if _type(q) is _dict else ""
            head = head if _type(head) is _str else ""
            times = head.split(" times: ", 1)[0]
            seen += _int(times) if " times: " in head and times.isdigit() else 1
        return seen

    def held_wrapper(conn: Any) -> Any:
        """Django's connection wrapper itself, or the one `django.db.connection` (a ConnectionProxy of the
        handler) stands for, read from the handler's own Local; None for anything else."""
        if _type(conn) is wrapper_class:
            return conn
        if _type(conn) is not proxy_class:
            return None
        fields = object_dict(conn)
        alias, held_by = fields.get("_alias"), dict_get(object_dict(handler), "_connections")
        if fields.get("_connections") is not handler or _type(alias) is not _str or _type(held_by) is not local_class:
            return None
        return _getattr(held_by, alias, None)

    def caller() -> Any:
        frame = getframe(2)
        while frame is not None and frame.f_code in own:
            frame = frame.f_back
        return frame

    def opened_by_django() -> bool:
        """Django's sqlite backend opening it, through the wrapper above, in connect() of a wrapper the handler holds."""
        frame = caller()
        if frame is None or frame.f_code is not opener_code:
            return False
        through_wrapper = False
        for _ in range(6):
            frame = frame.f_back
            if frame is None:
                return False
            if frame.f_code is wrapper_code:
                through_wrapper = True
            elif frame.f_code is connect_code:
                wrapper = frame.f_locals.get("self")  # a dict, or the interpreter's own frame-locals proxy
                if _type(wrapper) is not wrapper_class:  # a subclass's attributes could run the code under test
                    return False
                alias = dict_get(object_dict(wrapper), "alias")
                held_by = dict_get(object_dict(handler), "_connections")  # Django may set up a new one: read it now
                if _type(held_by) is not local_class:  # asgiref's Local, whose lookups run none of the code under test
                    return False
                held = _type(alias) is _str and _getattr(held_by, alias, None) is wrapper
                return through_wrapper and held
        return False

    def trace_untraced() -> None:
        """Give each connection seen opening its trace, once it can take one (the handle event comes
        inside Connection.__init__, before the connection accepts a trace)."""
        for conn in _list(untraced):
            sentinel = Sentinel(conn)

            def trace(statement: str, _conn: Any = conn, _sentinel: Any = sentinel, _audit: Any = audit) -> None:
                _audit("websandbox.statement", _conn, statement)

            try:
                set_trace(conn, trace)
            except Exception as exc:  # noqa: BLE001 - not initialized yet, or closed before it ever was
                if "closed" in _str(exc):
                    untraced.remove(conn)
                continue
            untraced.remove(conn)

    def on_handle(conn: Any) -> None:
        kept.append(conn)
        untraced.append(conn)
        stats["connections"] += 1
        try:
            django = opened_by_django()
        except Exception:  # noqa: BLE001 - frames that cannot be read vouch for nothing
            django = False
        if not django:
            alarm(f"a SQLite connection to {_str(pending[0])[:120]!r} was opened outside Django's connections")

    def is_kept(conn: Any) -> bool:
        return _any(c is conn for c in kept)

    def on_statement(conn: Any, statement: Any) -> None:
        if _type(statement) is not _str or not is_kept(conn):
            return
        if serialize(statement.strip()):
            alarm("a database was copied with serialize()")
        if counted(statement):
            total[0] += 1
            stats["statements"] += 1

    def on_window(what: Any, ctx: Any) -> None:
        frame = caller()
        if frame is None or frame.f_code not in window_codes:
            alarm("a query count's start or end was reported by other code")
            return
        opened = None
        for i, window in enumerate(windows):
            if window[0] is ctx:
                opened = windows.pop(i)
                break
        if what == "enter":
            if opened is not None:
                alarm("a query count was restarted inside its block")
            windows.append([ctx, total[0]])
            return
        if opened is None:
            alarm("a query count ended that had not started")
            return
        if what != "exit":
            return
        stats["query_contexts"] += 1
        ran = total[0] - opened[1]
        try:
            seen = logged_count(ctx)
        except Exception as exc:  # noqa: BLE001 - a query log that cannot be read is itself evidence
            alarm(f"the query log could not be read: {_type(exc).__name__}")
            return
        if ran > seen:
            alarm(f"a query count saw {seen} queries while SQLite ran {ran}")

    def on_span(what: Any, key: Any, box: Any) -> None:
        """A counted statement of a frozen test starts or ends (observations.span); at its end, its count.

        The frame that ends a span must be the very frame that started it: while a statement runs, its
        test's frame is suspended in it, so no other frame (a copy of the test's code run with other
        globals, a function of the code under test named a test) can end it early."""
        frame = caller()
        if frame is None or frame.f_code not in span_codes:
            alarm("a counted statement's start or end was reported by other code")
            return
        outer = frame.f_back
        if outer is None or outer.f_code not in tests:  # a span the code under test made or ended itself
            alarm("a counted statement was started or ended by code that is none of the frozen tests")
            return
        if what == "enter":
            if key in spans:
                alarm("a counted statement was restarted inside itself")
            spans[key] = (total[0], outer)
            return
        start = spans.pop(key, None)
        if start is None:
            alarm("a counted statement ended that had not started")
            return
        if start[1] is not outer:
            alarm("a counted statement was ended by another frame than the test's that started it")
            return
        for name, value in span_needs.items():
            if dict_get(span_globals, name) is not value or _getattr(value, "__code__", None) is not span_needs_code[name]:
                alarm(f"observations.{name}, which sends a statement's count, was replaced")
        for (name, attr), f in class_needs.items():
            if object_dict(span_needs[name]).get(attr) is not f:  # a class's own mappingproxy
                alarm(f"observations.{name}.{attr}, which sends a statement's count, was replaced")
        if _type(box) is _list:
            box.append(total[0] - start[0])

    def on_tests(codes: Any) -> None:
        frame = caller()
        if told[0] or frame is None or frame.f_code is not registrar or _type(codes) is not frozenset:
            alarm("the frozen tests' code was named by other code, or twice")
            return
        told[0] = True
        tests.update(codes)

    def hook(event: str, args: tuple) -> None:
        if untraced and event != "sqlite3.connect/handle":
            trace_untraced()
        if event == "websandbox.statement":
            on_statement(*args)
        elif event == "open":
            path = args[0] if args else None
            if _type(path) is bytes:
                path = path.decode("utf-8", "replace")
            if _type(path) is _str and process_memory(path):
                alarm(f"the code under test opened {path}")
        elif event == "sqlite3.connect":
            pending[0] = args[0] if args else None
        elif event == "sqlite3.connect/handle":
            on_handle(args[0])
        elif event == "websandbox.window":
            on_window(*args)
        elif event == "websandbox.span":
            on_span(*args)
        elif event == "websandbox.tests":
            on_tests(*args)
        elif event == "websandbox.traced":
            if not is_kept(args[0]) or _any(c is args[0] for c in untraced):
                alarm("a database connection was opened without the statement trace")
        elif event == "websandbox.stats":
            args[0].update(stats)
        elif event in forbidden:
            alarm(f"the code under test {forbidden[event]} ({event})")

    own = frozenset(f.__code__ for f in (hook, on_window, on_span, on_tests, on_handle, opened_by_django, caller, trace_untraced))
    sys.addaudithook(hook)


def check_traced(raw: Any) -> None:
    """Ask the hook whether a database connection carries the statement trace (it alarms when not)."""
    _audit("websandbox.traced", raw)


def stats() -> dict[str, int]:
    out: dict[str, int] = {}
    _audit("websandbox.stats", out)
    return out
