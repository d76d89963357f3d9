"""Integrity of the django grader's process: what the verdict depends on, noted before the code under test runs.

The code under test runs in the pytest process, so it can reach every object there.
This module cannot stop that; it makes it show. Before the deliverable is imported the
runner calls `Guard.arm()`, which notes:

- the identity of every object the verdict depends on: the recorder and this guard,
  the report channel, pytest's reports, runner, hook machinery (pluggy), fixtures and
  unittest support, Django's query counting (CaptureQueriesContext, assertNumQueries),
  pytest-django's query fixtures, the database wrappers and cursor wrappers, os._exit,
  sys.exit and the builtins a test leans on. For a function that is the function, its
  code object, defaults and closure (to depth 2); for a class, every entry of its dict,
  so that an added descriptor (a property shadowing an attribute of a report) shows too.
  References are kept, so no identity can be recycled; code objects are hashed at arm
  time and at the end, so an in-place rewrite of one shows as well;
- every function defined by a trusted module (the standard library, site-packages, the
  grader's own directory) at that moment: a hook implementation or fixture that is not
  one of these (or of the frozen test modules) was planted;
- the test files it wrote, to compare with the disk at the end.

It checks, after every test (the objects and their code objects) and after collection
and at the end (closures, defaults and code hashes too): the identities above; that the recorder and
the guard are still registered; every hook implementation and fixture; the test
functions pytest collected (their code objects); no trace or profile function and no
sys.monitoring tool; the database connection's own attributes (no instance attribute
shadowing a method, the query log a plain deque, no execute wrapper left, its raw
handle traced). Query budgets are witnessed by query_audit.py, armed here: an audit hook
that counts every statement SQLite runs on any connection of the process and compares it
with each CaptureQueriesContext's log, and makes every route around that count tampering
(see its docstring).

Every test's outcome is sent over the channel when its teardown ends, and every problem
as soon as it is found (a `note` frame), so that what the host holds cannot be taken back
by the code under test later, nor replaced by a report forged after an early exit.

What this cannot stop (recorded in docs/architecture.md): code written against this module
that finds its state in memory (gc) and edits it, or patches and restores between two
checks. The host's canaries and hidden tests stand behind it.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import importlib
import os
import sys
import sysconfig
import types
from typing import Any

import query_audit

WATCHED_MODULES = (
    "_pytest.runner",
    "_pytest.reports",
    "_pytest.main",
    "_pytest.python",
    "_pytest.fixtures",
    "_pytest.unittest",
    "_pytest.outcomes",
    "_pytest.skipping",
    "_pytest.nodes",
    "_pytest.config",
    "_pytest.assertion.rewrite",
    "_pytest.assertion.util",
    "_pytest.terminal",
    "_pytest.capture",
    "pluggy",
    "pluggy._callers",
    "pluggy._hooks",
    "pluggy._manager",
    "pluggy._result",
    "pytest_django.plugin",
    "pytest_django.fixtures",
    "django.test.utils",
    "django.test.testcases",
    "django.db",
    "django.db.utils",
    "django.db.backends.utils",
    "django.db.backends.base.base",
    "django.db.backends.sqlite3.base",
    "django.utils.connection",
    "unittest.case",
    "unittest.result",
    "report_channel",
    "pytest_report_plugin",
    "integrity",
    "query_audit",
    "observations",
)
WATCHED_CLASSES = (
    "_pytest.reports:BaseReport",
    "_pytest.reports:TestReport",
    "_pytest.reports:CollectReport",
    "_pytest.runner:CallInfo",
    "_pytest.runner:SetupState",
    "_pytest.nodes:Node",
    "_pytest.nodes:Item",
    "_pytest.python:Function",
    "_pytest.python:Module",
    "_pytest.python:Class",
    "_pytest.python:PyobjMixin",
    "_pytest.unittest:TestCaseFunction",
    "_pytest.unittest:UnitTestCase",
    "_pytest.main:Session",
    "_pytest.fixtures:FixtureDef",
    "_pytest.fixtures:FixtureRequest",
    "_pytest.fixtures:SubRequest",
    "_pytest.fixtures:FixtureManager",
    "_pytest.fixtures:FixtureFunctionDefinition",
    "_pytest.outcomes:OutcomeException",
    "_pytest.config:Config",
    "_pytest.config:PytestPluginManager",
    "pluggy._hooks:HookCaller",
    "pluggy._hooks:HookImpl",
    "pluggy._manager:PluginManager",
    "pluggy._result:Result",
    "django.test.utils:CaptureQueriesContext",
    "django.test.testcases:_AssertNumQueriesContext",
    "django.test.testcases:SimpleTestCase",
    "django.test.testcases:TransactionTestCase",
    "django.test.testcases:TestCase",
    "unittest.case:TestCase",
    "unittest.case:_Outcome",
    "django.db.backends.utils:CursorWrapper",
    "django.db.backends.utils:CursorDebugWrapper",
    "django.db.backends.base.base:BaseDatabaseWrapper",
    "django.db.backends.sqlite3.base:DatabaseWrapper",
    "django.db.backends.sqlite3.base:SQLiteCursorWrapper",
    "django.db.utils:ConnectionHandler",
    "django.utils.connection:BaseConnectionHandler",
    "django.utils.connection:ConnectionProxy",
    "report_channel:Channel",
    "pytest_report_plugin:Recorder",
    "integrity:Guard",
    "observations:_Encoder",
    "observations:span",
)
WATCHED_NAMES = (
    "os:_exit",
    "os:write",
    "os:dup2",
    "os:close",
    "os:kill",
    "posix:_exit",
    "sys:exit",
    "builtins:len",
    "builtins:isinstance",
    "builtins:issubclass",
    "builtins:type",
    "builtins:getattr",
    "builtins:setattr",
    "builtins:hasattr",
    "builtins:all",
    "builtins:any",
    "builtins:sorted",
    "builtins:list",
    "builtins:dict",
    "builtins:set",
    "builtins:tuple",
    "builtins:str",
    "builtins:int",
    "builtins:bool",
    "builtins:repr",
    "builtins:iter",
    "builtins:next",
    "builtins:AssertionError",
    "builtins:Exception",
    "builtins:BaseException",
    "builtins:__import__",
    "json:dumps",
    "django.db:connections",
    "django.db:connection",
)
# pytest's own plugins are imported now, so that their hook functions are known before the code under test runs
PYTEST_PLUGINS = (
    "mark",
    "main",
    "runner",
    "fixtures",
    "helpconfig",
    "python",
    "terminal",
    "debugging",
    "unittest",
    "capture",
    "skipping",
    "legacypath",
    "tmpdir",
    "monkeypatch",
    "recwarn",
    "pastebin",
    "assertion",
    "junitxml",
    "doctest",
    "cacheprovider",
    "setuponly",
    "setupplan",
    "stepwise",
    "unraisableexception",
    "threadexception",
    "warnings",
    "logging",
    "reports",
    "faulthandler",
    "subtests",
    "python_path",
)
DESCRIPTORS = (
    property,
    functools.cached_property,
    staticmethod,
    classmethod,
    types.MemberDescriptorType,
    types.GetSetDescriptorType,
)
MAX_PROBLEMS = 50
OBSERVE_NAMES = ("_observe", "_hole", "_span")  # django_suite.OBSERVE, HOLE, django_spans.SPAN
# pytest-django and Django's test cases swap these for functions of their own during a run: a function
# whose code is that of the named producer (or one nested in it) is expected there
ALTERNATIVES = {
    "django.db.backends.base.base:BaseDatabaseWrapper.ensure_connection": (
        "pytest_django.plugin:DjangoDbBlocker._blocking_wrapper",
        "django.test.testcases:SimpleTestCase.ensure_connection_patch_method",
    ),
    "_pytest.unittest:TestCaseFunction.runtest": ("pytest_django.plugin:_django_setup_unittest",),
}


def _pinned_alarm(channel: Any, problems: list[str]) -> Any:
    """Report a problem once, on the channel as it is now (its descriptor and nonce pinned), and into `problems`."""
    note, sent = channel.pinned_note(), set()

    def alarm(problem: str) -> None:
        if problem in sent or len(sent) >= MAX_PROBLEMS:
            return
        sent.add(problem)
        problems.append(problem)
        note({"stage": "started", "alarm": problem})

    return alarm


def _is(obj: Any, kind: type | tuple[type, ...]) -> bool:
    """isinstance without asking the object (a lazy object would set itself up when asked its __class__)."""
    return issubclass(type(obj), kind)


def _parts(obj: Any, depth: int = 2) -> list[Any]:
    """The objects whose identity stands for `obj`: a function's code, defaults and closure, a wrapper's target."""
    out = [obj]
    if depth <= 0:
        return out
    if _is(obj, types.FunctionType):
        out += [obj.__code__, obj.__defaults__, obj.__kwdefaults__]
        for cell in obj.__closure__ or ():
            try:
                out += _parts(cell.cell_contents, depth - 1)
            except ValueError:  # an empty cell
                out.append(None)
        if "__wrapped__" in obj.__dict__:
            out += _parts(obj.__dict__["__wrapped__"], depth - 1)
    elif _is(obj, (staticmethod, classmethod)):
        out += _parts(obj.__func__, depth - 1)
    elif _is(obj, property):
        for f in (obj.fget, obj.fset, obj.fdel):
            out += _parts(f, depth - 1)
    elif _is(obj, functools.cached_property):
        out += _parts(obj.func, depth - 1)
    elif _is(obj, types.MethodType):
        out += [obj.__self__, *_parts(obj.__func__, depth - 1)]
    elif _is(obj, functools.partial):
        out += [*_parts(obj.func, depth - 1), obj.args, obj.keywords]
    elif not _is(obj, type) and callable(obj) and isinstance(getattr(obj, "__dict__", None), dict):
        for value in list(vars(obj).values()):  # e.g. pytest's FixtureFunctionDefinition
            if callable(value):
                out += _parts(value, depth - 1)
    return out


def _test_function(item: Any) -> Any:
    """The function a collected test runs: from its class's dict for a method, else the module's function."""
    cls = getattr(item, "cls", None)
    name = getattr(item, "originalname", None) or getattr(item, "name", "")
    if cls is not None:
        return vars(cls).get(name)
    return getattr(item, "obj", None)


def _describe(parts: list[Any] | None) -> str:
    if parts is None:
        return "removed"
    obj = parts[0]
    fn = getattr(obj, "__func__", obj) if _is(obj, types.MethodType) else obj
    code = getattr(fn, "__code__", None) if _is(fn, types.FunctionType) else None
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
    return f"now {type(obj).__name__} {getattr(fn, '__qualname__', '?') if code else ''}{where}"[:200]


def _same(now: list[Any], then: list[Any]) -> bool:
    return len(now) == len(then) and all(a is b for a, b in zip(now, then, strict=True))


def _code_digest(code: types.CodeType, h: Any) -> None:
    h.update(code.co_code)
    h.update(
        repr(
            (
                code.co_names,
                code.co_varnames,
                code.co_freevars,
                code.co_cellvars,
                code.co_flags,
                code.co_argcount,
                code.co_kwonlyargcount,
                code.co_qualname,
            )
        ).encode()
    )
    for const in code.co_consts:
        if _is(const, types.CodeType):
            _code_digest(const, h)
        else:
            h.update(repr(const).encode())


def _code_hash(parts: list[Any]) -> str:
    """A digest of the code objects among the parts (marshal output depends on reference counts, so not that)."""
    h = hashlib.sha256()
    for p in parts:
        if _is(p, types.CodeType):
            _code_digest(p, h)
    return h.hexdigest()


_FUNCTION_TYPES = (types.FunctionType, types.BuiltinFunctionType)


def _functions_of(obj: Any, into: set[int], keep: list[Any], depth: int = 2) -> None:
    """Every function object defined in a module or class dict, by id (the objects are kept alive)."""
    try:
        items = list(vars(obj).values())
    except TypeError:
        return
    own = obj.__name__ if type(obj) is types.ModuleType else None
    for value in items:
        kind = type(value)
        found: tuple[Any, ...] = (value,)
        if kind is staticmethod or kind is classmethod:
            found = (value.__func__,)
        elif kind is property:
            found = (value.fget, value.fset, value.fdel)
        elif kind is functools.cached_property:
            found = (value.func,)
        elif kind.__name__ == "FixtureFunctionDefinition":
            found = (vars(value).get("_fixture_function"),)
        for fn in found:
            if type(fn) in _FUNCTION_TYPES:
                into.add(id(fn))
                keep.append(fn)
                inner = fn.__dict__.get("__wrapped__") if type(fn) is types.FunctionType else None
                if type(inner) is types.FunctionType:
                    into.add(id(inner))
                    keep.append(inner)
        if depth > 0 and issubclass(kind, type) and (own is None or value.__module__ == own):
            _functions_of(value, into, keep, depth - 1)


def _nested_in(fn: Any, trusted: set[int]) -> bool:
    """A function made at run time by a trusted function (pytest's per-module and per-class fixtures):
    its code object is one of the code constants of the trusted function its qualified name names."""
    if type(fn) is not types.FunctionType or "<locals>" not in fn.__qualname__:
        return False
    outer: Any = sys.modules.get(fn.__module__)
    for part in fn.__qualname__.split(".<locals>.")[0].split("."):
        outer = vars(outer).get(part) if outer is not None and hasattr(outer, "__dict__") else None
    outer = getattr(outer, "__func__", outer)
    if type(outer) is not types.FunctionType or id(outer) not in trusted:
        return False
    pending = [outer.__code__]
    while pending:
        code = pending.pop()
        for const in code.co_consts:
            if const is fn.__code__:
                return True
            if type(const) is types.CodeType:
                pending.append(const)
    return False


_MISSING = object()


def _entry(namespace: dict[str, Any], name: str) -> Any:
    return namespace.get(name, _MISSING)


def _class_entry(cls: type, name: str) -> Any:
    return vars(cls).get(name, _MISSING)


def _resolve(spec: str) -> Any:
    module, _, name = spec.partition(":")
    obj: Any = importlib.import_module(module)
    for part in name.split(".") if name else ():
        obj = getattr(obj, part)
    return obj


def _trusted_roots() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    roots = {
        paths.get("stdlib"),
        paths.get("platstdlib"),
        paths.get("purelib"),
        paths.get("platlib"),
        os.path.dirname(os.path.abspath(__file__)),
    }
    return tuple(os.path.realpath(r) + os.sep for r in roots if r)


class Guard:
    """A pytest plugin that checks the process after each test and streams outcomes as they are known."""

    def __init__(self, channel: Any, recorder: Any, frozen: dict[str, str], workspace: str) -> None:
        self.channel = channel
        self.recorder = recorder
        self.frozen = frozen
        self.workspace = workspace
        # where the frozen tests were written, resolved once, before any code under test runs: a link
        # swapped in later cannot make another file count as a frozen test, and the per-test check
        # pays no path walks (each a round trip to the image's file server)
        self.frozen_paths = frozenset(os.path.realpath(os.path.join(workspace, p)) for p in frozen)
        self.problems: list[str] = []
        self.watched: dict[str, list[Any]] = {}
        self.hashes: dict[str, str] = {}
        self.lookups: dict[str, Any] = {}
        self.alternatives: dict[str, list[Any]] = {}
        self.class_keys: dict[str, set[str]] = {}
        self.trusted: set[int] = set()
        self._keep: list[Any] = []
        self.items: dict[str, list[Any]] = {}
        self.outcomes: dict[str, str] = {}
        self.pluginmanager: Any = None
        self.session: Any = None
        self._raise = _pinned_alarm(channel, self.problems)
        self.checks = 0
        self.streamed = 0

    # -- arming, before the code under test exists ----------------------------------------

    def arm(self) -> None:
        for name in PYTEST_PLUGINS:
            try:
                importlib.import_module(f"_pytest.{name}")
            except ImportError:
                pass
        for name in WATCHED_MODULES:
            importlib.import_module(name)
        # every statement counted, by a hook nothing can remove; only the frozen tests may start a count
        query_audit.install(self._raise, Guard.register_tests.__code__)
        for name in WATCHED_MODULES:
            module = sys.modules[name]
            for attr, value in list(vars(module).items()):
                if callable(value) and not attr.startswith("__"):
                    self._watch(f"{name}:{attr}", value, functools.partial(_entry, vars(module), attr))
        for spec in WATCHED_CLASSES:
            cls = _resolve(spec)
            self.class_keys[spec] = set(vars(cls))
            for attr, value in list(vars(cls).items()):
                if attr not in ("__dict__", "__weakref__", "__doc__", "__annotations__", "__parameters__"):
                    self._watch(f"{spec}.{attr}", value, functools.partial(_class_entry, cls, attr))
        for label, producers in ALTERNATIVES.items():
            codes: list[Any] = []
            for spec in producers:
                fn = _resolve(spec)
                fn = getattr(fn, "__func__", None) or vars(fn).get("_fixture_function") or fn
                codes += [fn.__code__, *(c for c in fn.__code__.co_consts if _is(c, types.CodeType))]
            self.alternatives[label] = codes
        for spec in WATCHED_NAMES:
            self._watch(spec, _resolve(spec), functools.partial(_resolve, spec))
        roots = _trusted_roots()
        for module in list(sys.modules.values()):
            path = getattr(module, "__file__", None) or "/"
            if type(path) is str and path.startswith(roots):
                _functions_of(module, self.trusted, self._keep)
        for obj in (self, self.recorder):
            _functions_of(type(obj), self.trusted, self._keep)

    def _watch(self, label: str, obj: Any, lookup: Any) -> None:
        self.lookups[label] = lookup
        parts = _parts(obj)
        self.watched[label] = parts
        self.hashes[label] = _code_hash(parts)

    # -- evidence -------------------------------------------------------------------------

    def alarm(self, problem: str) -> None:
        self._raise(problem)

    def stream(self, nodeid: str, outcome: str) -> None:
        self.streamed += 1
        self.channel.note({"stage": "started", "tested": [nodeid, outcome]})

    # -- checks ---------------------------------------------------------------------------

    def check(self, final: bool = False, deep: bool = True) -> None:
        """All checks; `deep=False` (after each test) compares each watched object and its code object only."""
        self.checks += 1
        for label, parts in self.watched.items():
            if not deep and self._shallow_same(label, parts):
                continue
            current = self._current(label)
            if current is not None and label in ALTERNATIVES and self._is_alternative(label, current[0]):
                continue
            if current is None or not _same(current, parts):
                self.alarm(f"{label} was replaced or changed ({_describe(current)})")
            elif final and _code_hash(current) != self.hashes[label]:
                self.alarm(f"{label} had its code rewritten")
        for spec, keys in self.class_keys.items():
            now = vars(_resolve(spec))
            added = {k for k in set(now) - keys if callable(now[k]) or _is(now[k], DESCRIPTORS)}
            if added:
                self.alarm(f"{spec} gained {', '.join(sorted(added))}")
        if sys.gettrace() is not None or sys.getprofile() is not None:
            self.alarm("a trace or profile function was set")
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None and any(monitoring.get_tool(i) for i in range(6)):
            self.alarm("a sys.monitoring tool was registered")
        for part in (self._check_plugins, self._check_items, self._check_connections) + ((self._check_files,) if final else ()):
            try:
                part()
            except Exception as exc:  # noqa: BLE001 - a check that cannot run is itself a finding
                self.alarm(f"{part.__name__} could not run: {type(exc).__name__}: {exc}"[:300])

    def _shallow_same(self, label: str, parts: list[Any]) -> bool:
        try:
            obj = self.lookups[label]()
        except Exception:  # noqa: BLE001 - the deep comparison reports it
            return False
        if obj is not parts[0]:
            return False
        return type(obj) is not types.FunctionType or obj.__code__ is parts[1]

    def _current(self, label: str) -> list[Any] | None:
        lookup = self.lookups.get(label)
        try:
            found = lookup() if lookup else _MISSING
        except Exception:  # noqa: BLE001 - what cannot be looked up any more was changed
            found = _MISSING
        return None if found is _MISSING else _parts(found)

    def _is_alternative(self, label: str, obj: Any) -> bool:
        fn = obj.__func__ if _is(obj, types.MethodType) else obj
        return _is(fn, types.FunctionType) and any(fn.__code__ is c for c in self.alternatives.get(label, ()))

    def _allowed(self, fn: Any) -> bool:
        fn = getattr(fn, "__func__", fn)
        if id(fn) in self.trusted or _nested_in(fn, self.trusted):
            return True
        code = getattr(fn, "__code__", None)
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        return (
            code is not None
            and module is not None
            and code.co_filename in self.frozen_paths
            and os.path.realpath(getattr(module, "__file__", "") or "/") == code.co_filename
            and getattr(module, fn.__name__, None) is not None
        )

    def _check_plugins(self) -> None:
        pm = self.pluginmanager
        if pm is None:
            return
        for obj, name in ((self.recorder, "the recorder"), (self, "the guard")):
            if not pm.is_registered(obj):
                self.alarm(f"{name} was unregistered from pytest")
        for hook_name, caller in list(vars(pm.hook).items()):
            for impl in caller.get_hookimpls():
                if not self._allowed(impl.function):
                    self.alarm(f"a hook implementation of {hook_name} was planted ({impl.plugin_name})")
        defs: dict[int, tuple[str, Any]] = {}
        for parts in self.items.values():  # the fixtures each collected test resolves to
            for name, found in parts[0]._fixtureinfo.name2fixturedefs.items():
                defs.update((id(d), (name, d)) for d in found)
        manager = getattr(self.session, "_fixturemanager", None)
        for table in ("_arg2node2fixturedefs", "_arg2fixturedefs"):  # every fixture pytest knows (pytest 9, 8)
            for name, by_node in list(getattr(manager, table, {}).items()):
                for found in by_node.values() if isinstance(by_node, dict) else [by_node]:
                    defs.update((id(d), (name, d)) for d in found)
        for name, d in defs.values():
            if not self._allowed(d.func):
                self.alarm(f"the fixture {name} was planted or replaced")

    def _check_items(self) -> None:
        for nodeid, parts in self.items.items():
            item = parts[0]
            now = _parts(_test_function(item), 1)
            if not _same(now, parts[1:]):
                self.alarm(f"the test function of {nodeid} was replaced")

    def _check_connections(self) -> None:
        db = sys.modules.get("django.db")
        if db is None:
            return
        try:
            conns = db.connections.all(initialized_only=True)
        except Exception as exc:  # noqa: BLE001
            self.alarm(f"the database connections cannot be listed: {type(exc).__name__}")
            return
        for conn in conns:
            cls_attrs = {
                k
                for c in type(conn).__mro__
                for k, v in vars(c).items()
                if callable(v) or isinstance(v, (property, functools.cached_property))
            }
            shadow = sorted(set(vars(conn)) & cls_attrs)
            if shadow:
                self.alarm(f"the database connection's {', '.join(shadow)} was replaced on the instance")
            if type(conn.queries_log) is not collections.deque:
                self.alarm("the database connection's query log was replaced")
            if conn.execute_wrappers:
                self.alarm("an execute wrapper was left on the database connection")
            raw = conn.connection
            if raw is not None:
                query_audit.check_traced(raw)

    def _check_files(self) -> None:
        root = os.path.realpath(self.workspace)
        wanted = {os.path.realpath(os.path.join(root, p)): text for p, text in self.frozen.items()}
        dirs = {os.path.dirname(p) for p in wanted}
        for path, text in wanted.items():
            try:
                with open(path, encoding="utf-8") as fh:
                    same = fh.read() == text
            except OSError:
                same = False
            if not same:
                self.alarm(f"the test file {os.path.relpath(path, root)} was changed on disk")
        for d in dirs:
            for entry in os.listdir(d) if os.path.isdir(d) else ():
                full = os.path.join(d, entry)
                if full not in wanted and entry != "__pycache__":
                    self.alarm(f"a file was added next to the tests: {os.path.relpath(full, root)}")

    # -- pytest hooks ---------------------------------------------------------------------

    def pytest_sessionstart(self, session: Any) -> None:
        self.session = session
        self.pluginmanager = session.config.pluginmanager

    def register_tests(self) -> None:
        """Name the collected tests' code objects to the query audit, once: only they start and end counted statements."""
        codes = set()
        for parts in self.items.values():
            fn = _test_function(parts[0])
            while isinstance(fn, types.FunctionType):
                codes.add(fn.__code__)
                fn = fn.__dict__.get("__wrapped__")
        sys.audit("websandbox.tests", frozenset(codes))

    def pytest_collection_finish(self, session: Any) -> None:
        self.session = session
        for item in session.items:
            self.items[item.nodeid] = [item, *_parts(_test_function(item), 1)]
            module = getattr(item, "module", None)
            for name in OBSERVE_NAMES:  # what the frozen tests call their comparisons through
                if module is not None and name in vars(module):
                    bound = vars(module)[name]
                    if bound is not self.watched[f"observations:{name.lstrip('_')}"][0]:
                        self.alarm(f"{module.__name__}.{name} is not the grader's {name.lstrip('_')}")
                    self._watch(f"{module.__name__}:{name}", bound, functools.partial(_entry, vars(module), name))
        self.register_tests()
        self.check()

    def pytest_runtest_logreport(self, report: Any) -> None:
        nodeid = report.nodeid
        previous = self.outcomes.get(nodeid)
        if report.when == "setup":
            self.outcomes[nodeid] = "error" if report.failed else "skipped" if report.skipped else "incomplete"
        elif report.when == "call":
            self.outcomes[nodeid] = report.outcome
        elif report.failed and previous not in ("failed", "error"):
            self.outcomes[nodeid] = "error"
        if report.when == "teardown":
            self.check(deep=False)
            self.stream(nodeid, self.outcomes.get(nodeid, "incomplete"))

    def pytest_sessionfinish(self, session: Any) -> None:
        self.check()

    def final(self) -> dict[str, Any]:
        """The end-of-run check (code hashes and the files too), as the report's integrity section."""
        self.check(final=True)
        return {
            "armed": len(self.watched),
            "trusted_functions": len(self.trusted),
            "checks": self.checks,
            **query_audit.stats(),
            "streamed": self.streamed,
            "problems": list(self.problems),
        }
