"""Django code in a given project tree, decided by a frozen pytest acceptance suite.

A task folder (sandbox_env/tasks/django/<id>/) holds task.toml, tree/ (the project the
model sees, deliverables present as stubs), tests/ (the visible acceptance tests, shown
to the model so that it can run them), hidden/ (held-out acceptance tests of the same
spec with other data, at least as many; host-only), reference/ (the deliverables
solved), and optionally junk/ (plausible but wrong deliverables) and naive/ (budget
tasks: correct results, too many queries; `budget_tests` and `hidden_budget_tests` in
task.toml name the tests that count queries).

The composed tier: a task with a [composed] table (`components`, the single tasks it
combines; `app_wide`, the one or two features that change the others; `interaction_checks`,
the test ids that test such a change) is one project over one domain; the table is read as
every family reads it (base.composed_measures) into the row's measures, and the task is hard.

Grading takes only the deliverable files out of the rollout. A fresh container gets the
pristine tree plus those files; the suite (visible and hidden tests, each module emitted
twice with look-alike canaries, see django_suite.py) travels on the runner's stdin and
is written just before pytest starts. The score counts visible and hidden tests alike:
1.0 only when every one passes.

Threat model. The policy has read this repository (the grader programs, this module, the
canary maker), controls every byte of its deliverables and everything in its rollout
container, and may target this grader specifically. What it cannot see: the hidden tests,
which canary is which, what each canary must do. The deliverable runs inside the pytest
process, where nothing is secret and any object can be changed, so the verdict rests on
evidence that a change cannot avoid leaving:
- observations: every comparison assertion's expected values stay on the host; the process
  sends the compared values as plain data and the host decides (django_suite.py,
  runtime/grader/observations.py), so a value that lies about its equality meets nothing;
- hidden tests: a patch keyed on what the policy knows (the visible tests, by name, file
  or source) leaves the hidden tests to be passed honestly; where a task declares
  `[[vary]]` tokens, the data its hidden tests insert is drawn per grading on the host,
  the expected values computed from the draw (django_vary.py), so an answer key memorized
  from the repository or replayed from another grading meets other data;
- canaries that look like the tests (same names, same kind of module paths, a clone with
  one expected value changed, budget clones running 3+ queries on the app's own tables
  under a budget of one): a patch keyed on anything observable hits them as often as
  real tests; a passing canary is evidence only where its original passed (a wrong but
  honest submission can satisfy a changed value by chance);
- the runner's guard (runtime/grader/integrity.py): identities and code of everything the
  verdict depends on, noted before the deliverable is imported; hook and fixture
  allowlists; the collected test functions; the test files; a witness that compares each
  query count with the statements SQLite really ran;
- evidence that leaves the process as it happens: every test's outcome and every guard
  finding is streamed as a frame; a final report that disagrees with the streamed
  outcomes, or lacks the guard's section, was forged (django_evidence.py).
Any of these makes the grade 0.0 and `tampered`. What stays open, on purpose recorded:
code written against the guard that finds its state with gc and edits it, or patches and
restores between two checks; a forger that exits before any test ran and guesses which
of each hidden pair is the canary (it must then also pass every hidden test honestly);
tests with no editable assertion have no twin (a few visible ones).

Blame: a runner that fails before pytest starts, or pytest failing to start with an error
that names no deliverable before any deliverable module ran (the runner streams a "loading"
frame just before the first one does), is a harness fault (scoring_error). A process that
dies or hangs after the "started" frame, pytest stopping with an internal or usage error
(an Exit, an INTERNALERROR) after a deliverable module ran, whatever its text names (code in
the process can raise from frames named after any file), Django failing to load a
deliverable, or a test module that does not collect (the host compiles every module it makes
first) is the submission's 0.0; a hang past the time limit only when the host's measurement
shows that the grading sandbox had its CPU (the Grader raises StarvedGrading otherwise;
sandbox_env/sandbox/blame.py). A "harness error" report after the "started" frame was forged from
inside the process (the runner sends one only before it): tampered. So is, after that frame, a
report the host cannot read or that the runner never writes (no JSON, nested past the parser's
limit, an unknown stage, fields of other types): before, each raised on the host or was taken
for the runner's failure, a scoring_error at the submission's will.
"""

from __future__ import annotations

import ast
import random
import re
import secrets
from pathlib import Path
from typing import Any

from sandbox_env.families import django_evidence as evidence
from sandbox_env.families import django_vary
from sandbox_env.families.base import METRIC_NAMES, Grade, TaskRow, collect_files, composed_measures, read_task_toml
from sandbox_env.families.django_suite import Suite, make_suite
from sandbox_env.grading.grader import Grader, ReportError
from sandbox_env.sandbox import Sandbox

RUNNER = "pytest_runner.py"
TESTS_DIR = "tests"
HIDDEN_DIR = "hidden"
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
in-memory SQLite database built from the models, without migrations). They are not the whole grade: more \
tests than the visible ones decide (hidden tests of the same specification, with other data), and you pass \
only when every one of them passes. Write to the specification, not to the visible tests.
{BUDGET_RULE if meta.get("budget_tests") or meta.get("hidden_budget_tests") else ""}"""


BUDGET_RULE = """
A limit on the number of queries counts every query your code causes for that call, including any made \
later while the tests read its result: return finished values (lists, dicts, numbers), not objects that \
query when they are used.
"""


def compile_task(folder: Path, family: str = "django") -> TaskRow:
    meta = read_task_toml(folder)
    tree = read_folder(folder / "tree")
    tests = read_folder(folder / "tests")
    hidden = read_folder(folder / HIDDEN_DIR)
    reference = read_folder(folder / "reference")
    measures = (lambda ids: _composed(meta, folder, ids)) if "composed" in meta else None
    return compile_files(meta, tree, tests, hidden, reference, (folder / "naive").is_dir(), folder, family, measures)


def compile_files(
    meta: dict[str, Any],
    tree: dict[str, str],
    tests: dict[str, str],
    hidden: dict[str, str],
    reference: dict[str, str],
    has_naive: bool,
    folder: Path | str,
    family: str = "django",
    measures_of: Any = None,
) -> TaskRow:
    """A task row from a task's parts held in memory (a folder's, or a stored generated task's).

    `tests` and `hidden` are keyed by paths inside tests/ and hidden/; `folder` only names the task
    in errors; `measures_of(test_ids)` gives the row's measures (none when not given).
    """
    tests = {f"{TESTS_DIR}/{p}": t for p, t in tests.items()}
    hidden = {f"{HIDDEN_DIR}/{p}": t for p, t in hidden.items()}
    deliverables = list(meta["deliverables"])
    if INI not in tree:
        raise ValueError(f"{folder}: tree/ has no {INI}")
    for d in deliverables:
        if d not in tree:
            raise ValueError(f"{folder}: deliverable {d} is not in tree/ (give it as a stub)")
        if not d.endswith(".py") or d.startswith(f"{TESTS_DIR}/") or Path(d).name in ("conftest.py", INI):
            raise ValueError(f"{folder}: {d} cannot be a deliverable")
        if d not in reference:
            raise ValueError(f"{folder}: reference/{d} is missing")
    if not tests or any(not Path(p).name.startswith("test_") for p in tests):
        raise ValueError(f"{folder}: tests/ must hold test_*.py files only")
    ids = [i for path, text in tests.items() for i in collect_test_ids(path, text)]
    hidden_ids = [i for path, text in hidden.items() for i in collect_test_ids(path, text)]
    if not hidden or any(not Path(p).name.startswith("test_") for p in hidden) or len(hidden_ids) < len(ids):
        raise ValueError(f"{folder}: {HIDDEN_DIR}/ must hold test_*.py files with at least as many tests as tests/")
    ids += hidden_ids
    budget = [f"{TESTS_DIR}/{b}" for b in meta.get("budget_tests", [])]
    budget += [f"{HIDDEN_DIR}/{b}" for b in meta.get("hidden_budget_tests", [])]
    for b in budget:
        if b not in ids:
            raise ValueError(f"{folder}: budget test {b} is not a test of tests/ or {HIDDEN_DIR}/")
    if budget and not has_naive:
        raise ValueError(f"{folder}: a task with budget tests needs naive/")
    vary = django_vary.normalize(meta.get("vary", []), str(folder))
    django_vary.validate(vary, hidden, meta["spec"], str(folder))
    measures = measures_of(ids) if measures_of is not None else {}
    return TaskRow(
        task_id=meta["id"],
        family=family,
        difficulty=meta["difficulty"],
        category=meta["category"],
        prompt=_prompt(meta, {**tree, **tests}, deliverables),
        files={**tree, **tests},
        collect=deliverables,
        grading={
            "settings": meta.get("settings", "project.settings"),
            "deliverables": deliverables,
            "modules": [_module_name(d) for d in deliverables],
            "tree": {p: t for p, t in tree.items()},
            "tests": tests,
            "hidden": hidden,
            "test_ids": ids,
            "budget_tests": budget,
            **({"vary": vary, "spec": meta["spec"]} if vary else {}),
        },
        measures=measures,
    )


def _composed(meta: dict[str, Any], folder: Path, test_ids: list[str]) -> dict[str, Any]:
    """A composed task's measures: its [composed] table read as every family reads it (families/base.py).

    Its `components` are single django tasks beside it, its `interaction_checks` test ids
    (`tests/...` or `hidden/...`, as pytest names them) that test an app-wide feature's
    effect on a component.
    """
    measures = composed_measures(meta, test_ids, folder.name)
    unknown = [c for c in measures["components"] if not (folder.parent / c / "task.toml").is_file() or c == folder.name]
    if unknown:
        raise ValueError(f"{folder.name}: [composed] components must be single tasks of the family (unknown: {unknown})")
    return measures


# -- canaries ------------------------------------------------------------------------------


def make_canaries(grading: dict[str, Any], rng: random.Random | None = None) -> Suite:
    """The suite of one grading: visible and hidden tests with fresh look-alike canaries (django_suite.py)."""
    rng = rng or random.Random(secrets.randbits(64))
    hidden, _ = django_vary.drawn_hidden(grading, rng)  # this run's data for the hidden tests (django_vary.py)
    suite = make_suite({**grading["tests"], **hidden}, set(grading["budget_tests"]), rng)
    for path, text in suite.files.items():
        compile(text, path, "exec")  # a module the host made must load: a failure here is the harness's
    missing = set(grading["test_ids"]) - set(suite.real)
    if missing:
        raise ValueError(f"the suite lost real tests: {sorted(missing)[:3]}")
    return suite


# -- reading a report ---------------------------------------------------------------------


def _metrics(**values: float) -> dict[str, float]:
    return {name: float(values.get(name, 0.0)) for name in METRIC_NAMES}


def _fault(reason: str) -> Grade:
    grade = Grade.harness_fault(reason)
    grade.metrics = _metrics(scoring_error=1.0)
    return grade


def _code_ran(frames: list[dict[str, Any]]) -> bool:
    """Whether the runner streamed its "started" frame: from then on the code under test could write on the channel."""
    return any(f.get("stage") == "started" for f in frames)


def _forged(why: str) -> Grade:
    grade = Grade.tamper(why)
    grade.metrics = _metrics(tampered=1.0)
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


def _failure_of(nodeid: str, failures: dict[str, str]) -> str:
    return failures.get(nodeid) or next((t for n, t in failures.items() if n.startswith(nodeid + "[")), "")


def _blames_submission(text: str, grading: dict[str, Any]) -> bool:
    return any(d in text for d in grading["deliverables"]) or any(m in text for m in grading["modules"])


def grade_report(
    report: dict[str, Any],
    grading: dict[str, Any],
    suite: Suite,
    timed_out: bool = False,
    frames: list[dict[str, Any]] | None = None,
) -> Grade:
    """The grade of one runner report: host-side, with the real test ids, the canaries and the streamed frames."""
    stage = report.get("stage")
    frames = frames or []
    if problem := evidence.report_problem(report):
        if _code_ran(frames):  # only the code under test writes such a report on the channel
            return _forged(f"the final report is none the runner writes: {problem}")
        return _fault(f"the runner's report is malformed: {problem}")
    if stage == "harness_error" and _code_ran(frames):
        # the runner reports a harness error only before its "started" frame: after it, only the
        # code under test (which can reach the channel from inside the process) can have sent one
        return _forged("a report of a harness error came after pytest had started (forged by the code under test)")
    if stage == "harness_error":
        return Grade(
            0.0,
            "scoring error: the test runner failed before pytest started",
            metrics=_metrics(scoring_error=1.0),
            scoring_error=str(report.get("error", ""))[-800:],
        )
    alarms = evidence.alarm_problems(frames)
    if alarms and (stage != "finished" or report.get("exit_code") not in (0, 1)):
        grade = Grade.tamper("; ".join(alarms[:3]))
        grade.metrics = _metrics(tampered=1.0)
        return grade
    if stage == "started":
        why = "did not finish within the time limit" if timed_out else "ended before pytest finished"
        return Grade(0.0, f"the test process {why} (the code under test exited, crashed or hung)", metrics=_metrics())
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
        if exit_code != 2 and not evidence.loaded(frames) and not _blames_submission(text, grading):
            return _fault(f"pytest {what}: {_first_line(text)}")
        return Grade(
            0.0,
            f"pytest {what} (caused by the submitted code): {_first_line(text)}",
            [{"name": "pytest run", "passed": False, "detail": text.strip()[-1500:]}],
            _metrics(module_imported=module_imported),
        )

    observed_failures, observed_problems = evidence.observation_results(frames, suite)
    raw = report
    report = evidence.with_observations(report, observed_failures)
    outcomes = report["outcomes"]
    problems = observed_problems + evidence.problems(raw, suite, frames, report)
    ids: list[str] = grading["test_ids"]
    budget = set(grading["budget_tests"])
    results = {i: evidence.outcome_of(suite.real[i], outcomes) for i in ids}
    passed = {i for i, o in results.items() if o == "passed"}
    collected = set(report.get("collected") or [])
    suite_usable = float(
        any(suite.real[i] in collected or any(c.startswith(suite.real[i] + "[") for c in collected) for i in ids)
    )
    correctness = [i for i in ids if i not in budget]
    naive = bool(budget) and all(i in passed for i in correctness) and not budget <= passed
    frac = len(passed) / len(ids) if ids else 0.0
    failures = {i: _failure_of(suite.real[i], report.get("failures") or {}) for i in ids}
    checks = [
        {
            "name": i,
            "passed": i in passed,
            "detail": "" if i in passed else f"{results[i] or 'not run'}: {_first_line(failures[i])}",
        }
        for i in ids
    ]
    checks += [{"name": f"collect {p}", "passed": False, "detail": _first_line(t)} for p, t in collection_errors.items()]
    metrics = _metrics(
        module_imported=module_imported,
        suite_usable=suite_usable,
        tests_passed=frac,
        checks_passed=frac,
        correct_but_naive=float(naive),
    )
    if problems:
        metrics["tampered"] = 1.0
        metrics["correct_but_naive"] = 0.0
        grade = Grade.tamper("; ".join(problems[:3]), checks)
        grade.metrics = metrics
        return grade
    if len(passed) == len(ids) and ids:
        return Grade(1.0, f"all {len(ids)} acceptance tests pass", checks, metrics)
    frozen_errors = list(collection_errors)
    if frozen_errors:
        p = frozen_errors[0]
        reason = f"{p} could not be collected: {_first_line(collection_errors[p])}"
    elif naive:
        b = next(i for i in grading["budget_tests"] if i not in passed)
        reason = f"correct results but over the query budget: {b}: {_first_line(failures[b])}"
    else:
        first = next(i for i in ids if i not in passed)
        reason = f"{len(passed)} of {len(ids)} tests pass; first failure {first}: {checks[ids.index(first)]['detail']}"
    return Grade(0.0, reason, checks, metrics)


def _unreadable(exc: ReportError) -> Grade:
    """No readable report: a harness fault, unless the code under test had run by then.

    The runner writes only well-formed frames; after its "started" frame the code under test
    shares its process and can write on the channel too. A last frame that is no JSON object
    then came from it (tampered), or was cut short by the time limit killing the process
    in the middle of a write (the submission's hang).
    """
    result = exc.result
    frames = evidence.read_frames(result.stdout, result.report_nonce) if result is not None else []
    if not _code_ran(frames):
        return _fault(str(exc))
    if result is not None and result.timed_out:
        return Grade(0.0, f"the test process did not finish within the time limit ({exc})", metrics=_metrics())
    return _forged(f"the last frame on the runner's channel is none the runner writes ({exc})")


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

    async def grade_with_report(
        self, final: dict[str, Any], task: TaskRow, grader: Grader
    ) -> tuple[Grade, dict[str, Any] | None]:
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
        try:
            suite = make_canaries(g)
        except (SyntaxError, ValueError) as exc:
            return _fault(f"the test suite could not be made: {exc}"), None
        request = {
            "settings": g["settings"],
            "files": suite.files,
            "tests": sorted(suite.files),
            "modules": g["modules"],
            "ini": INI,
        }
        try:
            result, report = await grader.run_program(RUNNER, request, files)
        except ReportError as exc:
            return _unreadable(exc), None
        frames = evidence.read_frames(result.stdout, result.report_nonce)
        grade = grade_report(report, g, suite, timed_out=result.timed_out, frames=frames)
        if missing and grade.score == 0.0 and grade.scoring_error is None:
            grade.reason = f"{', '.join(missing)} missing from /workspace; {grade.reason}"
        return grade, report


FAMILY = DjangoFamily()
