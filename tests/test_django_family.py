"""The django family's host-side logic: task compilation, canaries and the judge of a runner report."""

from __future__ import annotations

import ast
import random
import subprocess

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.django import FAMILY, Canaries, canary_problems, collect_test_ids, judge, make_canaries
from sandbox_env.verify.django import VERIFIER

TASKS = TASKS_DIR / "django"
FOLDERS = sorted(p for p in TASKS.iterdir() if (p / "task.toml").is_file())


def test_there_are_at_least_eight_tasks_with_the_first_four_as_specified():
    ids = [p.name for p in FOLDERS]
    assert len(ids) >= 8
    rows = {p.name: FAMILY.compile_task(p) for p in FOLDERS}
    assert [rows[i].difficulty for i in ("dj01", "dj02", "dj03", "dj04")] == ["easy", "medium", "medium", "hard"]
    assert rows["dj04"].grading["budget_tests"], "dj04 is the query-budget task"


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda p: p.name)
def test_task_compiles_to_a_tree_frozen_tests_and_deliverables(folder):
    row = FAMILY.compile_task(folder)
    g = row.grading
    assert row.collect == g["deliverables"]
    assert all(d in row.files and d in g["tree"] for d in g["deliverables"])
    assert set(g["tests"]) <= set(row.files) and not set(g["tests"]) & set(g["tree"])
    assert len(g["test_ids"]) >= 8
    assert all(b in g["test_ids"] for b in g["budget_tests"])
    assert (folder / "naive").is_dir() == bool(g["budget_tests"])
    assert all(f"`{d}`" in row.prompt for d in g["deliverables"])
    assert "python -m pytest" in row.prompt
    ref = VERIFIER.solution_files(folder)
    assert sorted(ref) == sorted(g["deliverables"])
    assert all(ref[d] != g["tree"][d] for d in ref), "the tree must hold stubs, not the solution"


def test_reference_calls_write_exactly_the_reference_files(tmp_path):
    for folder in FOLDERS:
        calls = VERIFIER.reference_calls(folder)
        assert [c["tool"] for c in calls] == ["bash", "bash"]
        assert calls[-1]["args"]["command"] == "cd /workspace && python -m pytest -q"
        root = tmp_path / folder.name
        script = calls[0]["args"]["command"].replace("/workspace", str(root))
        subprocess.run(["bash", "-c", script], check=True)
        written = {p.relative_to(root).as_posix(): p.read_text() for p in root.rglob("*") if p.is_file()}
        assert written == VERIFIER.solution_files(folder)


def test_collected_test_ids_follow_pytest_naming():
    src = "def test_a():\n    pass\n\ndef helper():\n    pass\n\nclass TestB:\n    def test_c(self):\n" \
          "        pass\n    def setup_method(self):\n        pass\n\nclass Other:\n    def test_d(self):\n        pass\n"
    assert collect_test_ids("tests/test_x.py", src) == ["tests/test_x.py::test_a", "tests/test_x.py::TestB::test_c"]


def _frozen() -> dict[str, str]:
    row = FAMILY.compile_task(TASKS / "dj04")
    return row.grading["tests"]


def test_canaries_get_fresh_names_a_new_module_and_keep_frozen_files_valid():
    frozen = _frozen()
    a = make_canaries(frozen, {"tests/test_report.py"}, random.Random(1))
    b = make_canaries(frozen, {"tests/test_report.py"}, random.Random(2))
    assert a.module not in frozen and a.module.startswith("tests/test_")
    assert set(a.expect) != set(b.expect)
    real = {i.split("::")[-1] for p, t in frozen.items() for i in collect_test_ids(p, t)}
    assert not {n.split("::")[-1] for n in a.expect} & real
    assert sorted(a.expect.values()).count("pass") == 2
    for path, source in frozen.items():
        assert a.files[path].startswith(source.rstrip("\n"))
        ast.parse(a.files[path])
        assert set(collect_test_ids(path, source)) < set(collect_test_ids(path, a.files[path]))
    budget_canaries = [n for n in a.expect if n.startswith("tests/test_report.py::")]
    assert len(budget_canaries) == 3  # a plain must-fail plus one per query-budget mechanism
    ast.parse(a.files[a.module])


def _honest(canaries: Canaries, tests: dict[str, str] | None = None, **overrides) -> dict:
    outcomes = {n: "passed" if w == "pass" else "failed" for n, w in canaries.expect.items()}
    outcomes.update(tests or {})
    report = {"stage": "finished", "exit_code": 1, "collection_done": True, "collected": list(outcomes),
              "collection_errors": {}, "outcomes": outcomes, "failures": {}, "imported": {"library.reports": True}}
    report.update(overrides)
    return report


@pytest.fixture
def dj04():
    row = FAMILY.compile_task(TASKS / "dj04")
    canaries = make_canaries(row.grading["tests"], {"tests/test_report.py"}, random.Random(7))
    return row.grading, canaries


def test_all_tests_passing_with_honest_canaries_scores_one(dj04):
    grading, canaries = dj04
    grade = judge(_honest(canaries, {i: "passed" for i in grading["test_ids"]}), grading, canaries)
    assert grade.score == 1.0 and not grade.tampered
    assert grade.metrics["tests_passed"] == 1.0 and grade.metrics["suite_usable"] == 1.0
    assert grade.metrics["correct_but_naive"] == 0.0


def test_only_budget_failures_score_zero_as_correct_but_naive(dj04):
    grading, canaries = dj04
    tests = {i: "failed" if i in grading["budget_tests"] else "passed" for i in grading["test_ids"]}
    grade = judge(_honest(canaries, tests), grading, canaries)
    assert grade.score == 0.0 and grade.metrics["correct_but_naive"] == 1.0
    assert "query budget" in grade.reason


def test_a_passing_must_fail_canary_is_tampering(dj04):
    grading, canaries = dj04
    report = _honest(canaries, {i: "passed" for i in grading["test_ids"]})
    report["outcomes"] = {n: "passed" for n in report["outcomes"]}
    grade = judge(report, grading, canaries)
    assert grade.score == 0.0 and grade.tampered and grade.metrics["tampered"] == 1.0
    assert grade.metrics["correct_but_naive"] == 0.0


def test_a_missing_canary_is_tampering_unless_its_file_failed_to_import(dj04):
    grading, canaries = dj04
    report = _honest(canaries, {i: "passed" for i in grading["test_ids"]})
    in_frozen = [n for n in canaries.expect if n.startswith("tests/test_report.py::")]
    for n in in_frozen:
        del report["outcomes"][n]
    assert judge(report, grading, canaries).tampered
    report["outcomes"] = {n: o for n, o in report["outcomes"].items() if not n.startswith("tests/test_report.py")}
    report["collected"] = list(report["outcomes"])
    report["collection_errors"] = {"tests/test_report.py": "E   ImportError: cannot import name 'author_report'"}
    grade = judge(report, grading, canaries)
    assert not grade.tampered and grade.score == 0.0
    assert grade.metrics["suite_usable"] == 0.0 and "could not be collected" in grade.reason


def test_a_crash_before_collection_is_the_submissions_only_when_it_names_a_deliverable(dj04):
    grading, canaries = dj04
    base = {"stage": "finished", "exit_code": None, "collection_done": False, "outcomes": {}, "output_tail": ""}
    own = judge({**base, "crash": 'File "/workspace/library/reports.py", line 1\nSyntaxError: bad'}, grading, canaries)
    assert own.score == 0.0 and own.scoring_error is None and not own.tampered
    harness = judge({**base, "crash": "ModuleNotFoundError: No module named 'project'"}, grading, canaries)
    assert harness.score == 0.0 and harness.scoring_error


def test_a_run_that_never_finished_is_a_zero_not_a_harness_fault(dj04):
    grading, canaries = dj04
    grade = judge({"stage": "started"}, grading, canaries, timed_out=True)
    assert grade.score == 0.0 and grade.scoring_error is None and "time limit" in grade.reason
    fault = judge({"stage": "harness_error", "error": "Traceback ..."}, grading, canaries)
    assert fault.scoring_error and fault.metrics["scoring_error"] == 1.0


def test_canary_problems_accept_errors_for_must_fail_only():
    canaries = Canaries("tests/test_c.py", {}, {"tests/test_c.py::test_a": "fail", "tests/test_c.py::test_b": "pass"})
    ok = {"outcomes": {"tests/test_c.py::test_a": "error", "tests/test_c.py::test_b": "passed"}}
    assert canary_problems(ok, canaries) == []
    bad = {"outcomes": {"tests/test_c.py::test_a": "failed", "tests/test_c.py::test_b": "error"}}
    assert len(canary_problems(bad, canaries)) == 1


def test_a_canary_module_that_does_not_collect_is_a_harness_fault(dj04):
    grading, canaries = dj04
    report = _honest(canaries, {i: "passed" for i in grading["test_ids"]})
    report["outcomes"] = {n: o for n, o in report["outcomes"].items() if not n.startswith(canaries.module)}
    report["collection_errors"] = {canaries.module: "E   ImportError: cannot import name 'TestCase'"}
    grade = judge(report, grading, canaries)
    assert grade.score == 0.0 and grade.scoring_error and not grade.tampered


def test_an_internal_error_raised_by_the_submission_is_its_zero_not_tampering(dj04):
    grading, canaries = dj04
    tail = ('INTERNALERROR>   File "/workspace/library/reports.py", line 2, in <module>\n'
            "INTERNALERROR>     sys.exit(3)\nINTERNALERROR> SystemExit: 3\nno tests ran in 0.07s\n")
    report = {"stage": "finished", "exit_code": 3, "collection_done": True, "collected": [], "outcomes": {},
              "output_tail": tail}
    grade = judge(report, grading, canaries)
    assert grade.score == 0.0 and not grade.tampered and grade.scoring_error is None
    assert grade.reason.endswith("SystemExit: 3")
