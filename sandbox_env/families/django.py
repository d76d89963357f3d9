"""Django code in a given project tree, decided by a frozen pytest acceptance suite.

A task folder (sandbox_env/tasks/django/<id>/) holds task.toml, tree/ (the project the
model sees, deliverables present as stubs), tests/ (the frozen acceptance tests, also
shown to the model so that it can run them), reference/ (the deliverables solved),
and optionally junk/ (plausible but wrong deliverables) and naive/ (budget tasks:
correct results, too many queries).

Grading takes only the deliverable files out of the rollout. A fresh container gets the
pristine tree plus those files; the frozen tests travel on the runner's stdin together
with canary tests made up here at grading time, and are written just before pytest
starts. The host knows how every canary must end; a run whose canaries end otherwise
was tampered with from inside the pytest process and scores 0.0.

Canaries: a module with a random name (must-pass tests, must-fail tests, and must-fail
query budgets through django_assert_num_queries, django_assert_max_num_queries and
TestCase.assertNumQueries), plus must-fail tests appended to every frozen file (and budget
canaries to the files holding budget tests), so that sparing one known file betrays
itself too. What they catch: patched pytest reporting, disabled query counting, sparing
whole files. What no in-process scheme stops: code written against this grader that picks
the real tests out by name or source, or reads the report nonce from the runner's memory.

Blame: a runner that fails before pytest starts, or pytest failing to start with an error
that names no deliverable, is a harness fault (scoring_error). A process that dies or hangs
after the "started" frame, or Django failing to load a deliverable, is the submission's 0.0;
a hang past the time limit only when the host's measurement shows that the grading sandbox
had its CPU (the Grader raises StarvedRun otherwise; sandbox_env/blame.py).
"""

from __future__ import annotations

import ast
import random
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox_env.families.base import METRIC_NAMES, Grade, TaskRow, collect_files, read_task_toml
from sandbox_env.grading import Grader, ReportError
from sandbox_env.sandbox import Sandbox

RUNNER = "pytest_runner.py"
TESTS_DIR = "tests"
INI = "pytest.ini"
MAX_DELIVERABLE_BYTES = 512 * 1024


# -- compiling a task source --------------------------------------------------------------


def read_folder(folder: Path) -> dict[str, str]:
    if not folder.is_dir():
        return {}
    return {
        p.relative_to(folder).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted(folder.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".pyc"
    }


def collect_test_ids(path: str, source: str) -> list[str]:
    """The nodeids pytest will give the tests of one file: module functions and Test* class methods."""
    ids: list[str] = []
    for node in ast.parse(source, path).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            ids.append(f"{path}::{node.name}")
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            ids += [
                f"{path}::{node.name}::{sub.name}"
                for sub in node.body
                if isinstance(sub, (ast.FunctionDef, ast.AsyncFunctionDef)) and sub.name.startswith("test")
            ]
    return ids


def _module_name(path: str) -> str:
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", ".")


def _listing(paths: list[str]) -> str:
    return "\n".join(f"  {p}" for p in sorted(paths))


def _prompt(meta: dict[str, Any], files: dict[str, str], deliverables: list[str]) -> str:
    which = ", ".join(f"`{d}`" for d in deliverables)
    return f"""# {meta.get("title", meta["id"])}

{meta["spec"].strip()}

## The project

A Django 6.1 project is in /workspace:

{_listing(list(files))}

Write {which} ({"present now as a stub" if len(deliverables) == 1 else "each present now as a stub"}). \
Only {"this file is" if len(deliverables) == 1 else "these files are"} graded: the rest of the tree is reset \
to what you see now, and the acceptance tests in `tests/` are replaced by a frozen copy, so editing them \
or adding a `conftest.py` changes nothing in your grade.

Run the acceptance tests with `cd /workspace && python -m pytest` (pytest-django; the test database is an \
in-memory SQLite database built from the models, without migrations). You pass when every test passes.
"""


def compile_task(folder: Path, family: str = "django") -> TaskRow:
    meta = read_task_toml(folder)
    tree = read_folder(folder / "tree")
    tests = {f"{TESTS_DIR}/{p}": t for p, t in read_folder(folder / "tests").items()}
    deliverables = list(meta["deliverables"])
    if INI not in tree:
        raise ValueError(f"{folder}: tree/ has no {INI}")
    for d in deliverables:
        if d not in tree:
            raise ValueError(f"{folder}: deliverable {d} is not in tree/ (give it as a stub)")
        if not d.endswith(".py") or d.startswith(f"{TESTS_DIR}/") or Path(d).name in ("conftest.py", INI):
            raise ValueError(f"{folder}: {d} cannot be a deliverable")
        if not (folder / "reference" / d).is_file():
            raise ValueError(f"{folder}: reference/{d} is missing")
    if not tests or any(not Path(p).name.startswith("test_") for p in tests):
        raise ValueError(f"{folder}: tests/ must hold test_*.py files only")
    ids = [i for path, text in tests.items() for i in collect_test_ids(path, text)]
    budget = [f"{TESTS_DIR}/{b}" for b in meta.get("budget_tests", [])]
    for b in budget:
        if b not in ids:
            raise ValueError(f"{folder}: budget test {b} is not a test of tests/")
    if budget and not (folder / "naive").is_dir():
        raise ValueError(f"{folder}: a task with budget tests needs naive/")
    return TaskRow(
        task_id=meta["id"], family=family, difficulty=meta["difficulty"], category=meta["category"],
        prompt=_prompt(meta, {**tree, **tests}, deliverables),
        files={**tree, **tests},
        collect=deliverables,
        grading={
            "settings": meta.get("settings", "project.settings"),
            "deliverables": deliverables,
            "modules": [_module_name(d) for d in deliverables],
            "tree": {p: t for p, t in tree.items()},
            "tests": tests,
            "test_ids": ids,
            "budget_tests": budget,
        },
    )  # fmt: skip


# -- canaries -----------------------------------------------------------------------------

_WORDS = (
    "active", "amount", "annotates", "author", "blank", "budget", "chain", "clean", "comment", "count",
    "created", "default", "detail", "empty", "error", "field", "filter", "form", "groups", "handles",
    "header", "keeps", "latest", "ledger", "list", "lookup", "missing", "month", "name", "order",
    "ordering", "page", "price", "query", "range", "redirect", "rejects", "report", "returns", "rows",
    "slug", "status", "stock", "sum", "title", "total", "unique", "valid", "view", "year", "zero",
)  # fmt: skip


@dataclass
class Canaries:
    """Tests with outcomes only the host knows, and where they were put."""

    module: str
    files: dict[str, str]
    expect: dict[str, str] = field(default_factory=dict)  # nodeid -> "pass" | "fail"


class _Names:
    def __init__(self, rng: random.Random, taken: set[str]) -> None:
        self.rng = rng
        self.taken = set(taken)

    def _fresh(self, make) -> str:
        while True:
            name = make()
            if name not in self.taken:
                self.taken.add(name)
                return name

    def func(self) -> str:
        return self._fresh(lambda: "test_" + "_".join(self.rng.sample(_WORDS, 3)))

    def cls(self) -> str:
        return self._fresh(lambda: "Test" + "".join(w.capitalize() for w in self.rng.sample(_WORDS, 2)))

    def module(self) -> str:
        return self._fresh(lambda: f"{TESTS_DIR}/test_" + "_".join(self.rng.sample(_WORDS, 2)) + ".py")


def _canary_module(n: _Names, rng: random.Random, path: str) -> tuple[str, dict[str, str]]:
    a, b, c, d = (rng.randint(11, 97) for _ in range(4))
    expect: dict[str, str] = {}
    blocks: list[str] = []

    def fn(want: str, body: str, decorator: str = "", args: str = "") -> None:
        name = n.func()
        expect[f"{path}::{name}"] = want
        blocks.append(f"{decorator}def {name}({args}):\n{body}")

    fn("pass", f"    assert {a} * {b} == {a * b}\n")
    fn("fail", f"    assert {a} * {b} == {a * b + rng.randint(1, 9)}\n")
    fn("fail", "    with django_assert_num_queries(1):\n        _queries(2)\n",
       "@pytest.mark.django_db\n", "django_assert_num_queries")  # fmt: skip
    fn("fail", "    with django_assert_max_num_queries(1):\n        _queries(2)\n",
       "@pytest.mark.django_db\n", "django_assert_max_num_queries")  # fmt: skip
    simple, db = n.cls(), n.cls()
    ok_m, bad_m, budget_m = n.func(), n.func(), n.func()
    expect[f"{path}::{simple}::{ok_m}"] = "pass"
    expect[f"{path}::{simple}::{bad_m}"] = "fail"
    expect[f"{path}::{db}::{budget_m}"] = "fail"
    blocks.append(
        f"class {simple}(SimpleTestCase):\n"
        f"    def {ok_m}(self):\n        self.assertEqual({c} + {d}, {c + d})\n\n"
        f"    def {bad_m}(self):\n        self.assertEqual({c} + {d}, {c + d - rng.randint(1, 9)})\n"
    )
    blocks.append(
        f"class {db}(TestCase):\n"
        f"    def {budget_m}(self):\n        with self.assertNumQueries(1):\n            _queries(2)\n"
    )
    rng.shuffle(blocks)
    head = (
        "import pytest\nfrom django.db import connection\nfrom django.test import SimpleTestCase, TestCase\n\n\n"
        "def _queries(count):\n    with connection.cursor() as cursor:\n"
        "        for number in range(count):\n            cursor.execute(\"SELECT %s\", [number])\n"
    )
    return head + "".join(f"\n\n{b}" for b in blocks), expect


def _appended_canaries(n: _Names, rng: random.Random, path: str, budget: bool) -> tuple[str, dict[str, str]]:
    """Must-fail canaries put into a frozen file, so that sparing a whole file betrays itself."""
    a, b = rng.randint(20, 99), rng.randint(2, 19)
    name = n.func()
    expect = {f"{path}::{name}": "fail"}
    text = f"\n\ndef {name}():\n    assert {a} - {b} == {a - b + rng.randint(1, 9)}\n"
    if budget:
        fixture_test, cls, method = n.func(), n.cls(), n.func()
        expect[f"{path}::{fixture_test}"] = "fail"
        expect[f"{path}::{cls}::{method}"] = "fail"
        text += (
            f'\n\n@__import__("pytest").mark.django_db\n'
            f"def {fixture_test}(django_assert_max_num_queries):\n"
            "    from django.db import connection\n\n"
            "    with django_assert_max_num_queries(1), connection.cursor() as cursor:\n"
            '        cursor.execute("SELECT 1")\n'
            '        cursor.execute("SELECT 2")\n'
            f'\n\nclass {cls}(__import__("django.test", fromlist=["TestCase"]).TestCase):\n'
            f"    def {method}(self):\n"
            "        from django.db import connection\n\n"
            "        with self.assertNumQueries(1), connection.cursor() as cursor:\n"
            '            cursor.execute("SELECT 1")\n'
            '            cursor.execute("SELECT 2")\n'
        )
    return text, expect


def make_canaries(tests: dict[str, str], budget_files: set[str], rng: random.Random | None = None) -> Canaries:
    """Canary tests with fresh random names: a canary module, and must-fail tests added to each frozen file."""
    rng = rng or random.Random(secrets.randbits(64))
    taken = {i.split("::")[-1] for p, t in tests.items() for i in collect_test_ids(p, t)} | set(tests)
    taken |= {i.split("::")[-2] for p, t in tests.items() for i in collect_test_ids(p, t) if i.count("::") == 2}
    n = _Names(rng, taken)
    module = n.module()
    text, expect = _canary_module(n, rng, module)
    files = {module: text}
    for path, source in tests.items():
        extra, more = _appended_canaries(n, rng, path, path in budget_files)
        files[path] = source.rstrip("\n") + "\n" + extra
        expect.update(more)
    return Canaries(module, files, expect)


def canary_problems(report: dict[str, Any], canaries: Canaries) -> list[str]:
    """Canaries that did not end as they must; those of a frozen file that failed to import are exempt."""
    outcomes = report.get("outcomes") or {}
    errors = report.get("collection_errors") or {}
    problems = []
    for nodeid, want in canaries.expect.items():
        path = nodeid.split("::")[0]
        if path != canaries.module and path in errors:
            continue
        got = outcomes.get(nodeid)
        if (got == "passed") if want == "pass" else (got in ("failed", "error")):
            continue
        problems.append(f"canary {nodeid} must {want} but {'ended ' + got if got else 'has no outcome'}")
    return problems


# -- reading a report ---------------------------------------------------------------------


def _metrics(**values: float) -> dict[str, float]:
    return {name: float(values.get(name, 0.0)) for name in METRIC_NAMES}


def _fault(reason: str) -> Grade:
    grade = Grade.harness_fault(reason)
    grade.metrics = _metrics(scoring_error=1.0)
    return grade


_EXCEPTION_LINE = re.compile(r"\w(Error|Exception|Exit|Interrupt)\b")


def _first_line(text: str, limit: int = 300) -> str:
    """The line of a pytest or traceback text that says what went wrong."""
    lines = [ln.removeprefix("INTERNALERROR>").strip() for ln in (text or "").strip().splitlines()]
    lines = [ln for ln in lines if ln]
    pick = next((ln for ln in lines if ln.startswith("E ")), None)
    named = [ln for ln in lines if _EXCEPTION_LINE.search(ln) and "--full-trace" not in ln]
    pick = pick or (named or lines or [""])[-1]
    return pick[:limit]


def _blames_submission(text: str, grading: dict[str, Any]) -> bool:
    return any(d in text for d in grading["deliverables"]) or any(m in text for m in grading["modules"])


def _test_outcome(test_id: str, outcomes: dict[str, str]) -> str | None:
    """One outcome for a test, over its parametrized instances if it has any."""
    found = [o for nid, o in outcomes.items() if nid == test_id or nid.startswith(test_id + "[")]
    if not found:
        return None
    return "passed" if all(o == "passed" for o in found) else next(o for o in found if o != "passed")


def judge(report: dict[str, Any], grading: dict[str, Any], canaries: Canaries, timed_out: bool = False) -> Grade:
    """The grade of one runner report: host-side, with the expected test ids and the canaries."""
    stage = report.get("stage")
    if stage == "harness_error":
        return Grade(0.0, "scoring error: the test runner failed before pytest started",
                     metrics=_metrics(scoring_error=1.0), scoring_error=str(report.get("error", ""))[-800:])  # fmt: skip
    if stage == "started":
        why = "did not finish within the time limit" if timed_out else "ended before pytest finished"
        return Grade(0.0, f"the test process {why} (the code under test exited, crashed or hung)",
                     metrics=_metrics())  # fmt: skip
    if stage != "finished":
        return _fault(f"unexpected runner report stage {stage!r}")

    outcomes: dict[str, str] = report.get("outcomes") or {}
    collection_errors: dict[str, str] = report.get("collection_errors") or {}
    imported = report.get("imported") or {}
    module_imported = float(bool(imported) and all(v is True for v in imported.values()))
    exit_code = report.get("exit_code")
    started = report.get("collection_done") or outcomes
    if not started or exit_code in (2, 3, 4):  # never started, interrupted, internal error, usage error
        text = (report.get("crash") or "") + "\n" + (report.get("output_tail") or "")
        what = "was interrupted" if exit_code == 2 else "stopped with an internal error" if started else "could not start"
        if exit_code != 2 and not _blames_submission(text, grading):
            return _fault(f"pytest {what}: {_first_line(text)}")
        return Grade(0.0, f"pytest {what} (caused by the submitted code): {_first_line(text)}",
                     [{"name": "pytest run", "passed": False, "detail": text.strip()[-1500:]}],
                     _metrics(module_imported=module_imported))  # fmt: skip

    if canaries.module in collection_errors and not _blames_submission(collection_errors[canaries.module], grading):
        return _fault(f"the canary module did not collect: {_first_line(collection_errors[canaries.module])}")
    problems = canary_problems(report, canaries)
    ids: list[str] = grading["test_ids"]
    budget = set(grading["budget_tests"])
    results = {i: _test_outcome(i, outcomes) for i in ids}
    passed = {i for i, o in results.items() if o == "passed"}
    collected = set(report.get("collected") or [])
    suite_usable = float(any(i in collected or any(c.startswith(i + "[") for c in collected) for i in ids))
    correctness = [i for i in ids if i not in budget]
    naive = bool(budget) and all(i in passed for i in correctness) and not budget <= passed
    frac = len(passed) / len(ids) if ids else 0.0
    failures = report.get("failures") or {}
    checks = [{"name": i, "passed": i in passed,
               "detail": "" if i in passed else f"{results[i] or 'not run'}: {_first_line(failures.get(i, ''))}"}
              for i in ids]  # fmt: skip
    checks += [{"name": f"collect {p}", "passed": False, "detail": _first_line(t)} for p, t in collection_errors.items()
               if p != canaries.module]  # fmt: skip
    metrics = _metrics(module_imported=module_imported, suite_usable=suite_usable, tests_passed=frac,
                       checks_passed=frac, correct_but_naive=float(naive))  # fmt: skip
    if problems:
        metrics["tampered"] = 1.0
        metrics["correct_but_naive"] = 0.0
        grade = Grade.tamper("; ".join(problems[:3]), checks)
        grade.metrics = metrics
        return grade
    if len(passed) == len(ids) and ids:
        return Grade(1.0, f"all {len(ids)} acceptance tests pass", checks, metrics)
    frozen_errors = [p for p in collection_errors if p != canaries.module]
    if frozen_errors:
        p = frozen_errors[0]
        reason = f"{p} could not be collected: {_first_line(collection_errors[p])}"
    elif naive:
        b = next(i for i in grading["budget_tests"] if i not in passed)
        reason = f"correct results but over the query budget: {b}: {_first_line(failures.get(b, ''))}"
    else:
        first = next(i for i in ids if i not in passed)
        reason = f"{len(passed)} of {len(ids)} tests pass; first failure {first}: {checks[ids.index(first)]['detail']}"
    return Grade(0.0, reason, checks, metrics)


# -- the family ---------------------------------------------------------------------------


class DjangoFamily:
    name = "django"

    def compile_task(self, folder: Path) -> TaskRow:
        return compile_task(folder, self.name)

    async def setup(self, sb: Sandbox, task: TaskRow) -> None:
        await sb.write_files(task.files)
        await sb.start_python()

    async def collect(self, sb: Sandbox, task: TaskRow) -> dict[str, Any]:
        return await collect_files(sb, task.collect)

    async def grade(self, final: dict[str, Any], task: TaskRow, grader: Grader) -> Grade:
        grade, _ = await self.grade_with_report(final, task, grader)
        return grade

    async def grade_with_report(self, final: dict[str, Any], task: TaskRow,
                                grader: Grader) -> tuple[Grade, dict[str, Any] | None]:  # fmt: skip
        """The grade, and the runner's report it was judged from (None when no report came back)."""
        g = task.grading
        given = final.get("files") or {}
        files: dict[str, str] = dict(g["tree"])
        missing = []
        for path in g["deliverables"]:
            text = given.get(path)
            if not isinstance(text, str):
                missing.append(path)  # graded with the stub the tree gives
                continue
            if len(text.encode()) > MAX_DELIVERABLE_BYTES:
                return Grade(0.0, f"{path} is larger than {MAX_DELIVERABLE_BYTES} bytes", metrics=_metrics()), None
            files[path] = text
        budget_files = {b.split("::")[0] for b in g["budget_tests"]}
        canaries = make_canaries(g["tests"], budget_files)
        request = {
            "settings": g["settings"],
            "files": canaries.files,
            "tests": sorted(canaries.files),
            "modules": g["modules"],
            "ini": INI,
        }
        try:
            result, report = await grader.run_program(RUNNER, request, files)
        except ReportError as exc:
            return _fault(str(exc)), None
        grade = judge(report, g, canaries, timed_out=result.timed_out)
        if missing and grade.score == 0.0 and grade.scoring_error is None:
            grade.reason = f"{', '.join(missing)} missing from /workspace; {grade.reason}"
        return grade, report

FAMILY = DjangoFamily()
