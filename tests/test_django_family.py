"""The django family's host-side logic: task compilation, canaries and the grade of a runner report."""

from __future__ import annotations

import ast
import random
import re
import subprocess

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import django_evidence as evidence
from sandbox_env.families import django_vary
from sandbox_env.families.django import FAMILY, collect_test_ids, grade_report, make_canaries
from sandbox_env.families.django_suite import Suite, perturb
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
    src = (
        "def test_a():\n    pass\n\ndef helper():\n    pass\n\nclass TestB:\n    def test_c(self):\n"
        "        pass\n    def setup_method(self):\n        pass\n\nclass Other:\n    def test_d(self):\n        pass\n"
    )
    assert collect_test_ids("tests/test_x.py", src) == ["tests/test_x.py::test_a", "tests/test_x.py::TestB::test_c"]


def _grading(task: str = "dj04") -> dict:
    return FAMILY.compile_task(TASKS / task).grading


def _body(suite: Suite, nodeid: str) -> str:
    """The body of the test a node id names, from the module the suite wrote."""
    path, *names = nodeid.split("::")
    scope = ast.parse(suite.files[path]).body
    for name in names:
        scope = next(n for n in scope if isinstance(n, (ast.ClassDef, ast.FunctionDef)) and n.name == name).body
    return ast.unparse(scope)


def test_hidden_tests_are_graded_but_never_laid_out_nor_shown():
    for folder in FOLDERS:
        row = FAMILY.compile_task(folder)
        g = row.grading
        hidden = [i for i in g["test_ids"] if i.startswith("hidden/")]
        visible = [i for i in g["test_ids"] if i.startswith("tests/")]
        assert len(hidden) >= len(visible) > 0
        assert not any(p.startswith("hidden/") for p in row.files)
        assert not any(i.split("::")[-1] in row.prompt for i in hidden)
        assert "more tests than the visible ones decide" in row.prompt


def test_canaries_are_clones_named_like_real_tests_in_modules_named_like_real_ones():
    g = _grading()
    a = make_canaries(g, random.Random(1))
    b = make_canaries(g, random.Random(2))
    assert set(a.canaries) != set(b.canaries) or a.files != b.files
    real_names = {n.split("::")[-1] for n in a.real.values()}
    assert {n.split("::")[-1] for n in a.canaries} <= real_names
    assert set(a.real) == set(g["test_ids"])
    assert all(re.fullmatch(r"tests/test_[a-z_]+\.py", p) for p in a.files)
    assert set(g["tests"]) <= set(a.files)  # the visible path holds real tests and canaries alike
    visible_path = next(iter(g["tests"]))
    assert any(a.module_of(n) == visible_path for n in a.canaries)
    assert any(n.startswith(visible_path) for n in a.real.values())
    for path, text in a.files.items():
        ast.parse(text, path)


def test_no_test_a_grading_runs_carries_a_name_the_repository_gives_it_and_names_change_per_grading():
    g = _grading("dj01")
    repository = {part for i in g["test_ids"] for part in i.split("::")[1:]}
    seen = []
    for seed in range(3):
        suite = make_canaries(g, random.Random(seed))
        graded = {part for n in [*suite.real.values(), *suite.canaries] for part in n.split("::")[1:]}
        assert not graded & repository, graded & repository
        for path, text in suite.files.items():
            defined = {n.name for n in ast.walk(ast.parse(text)) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
            assert not defined & repository, (path, defined & repository)
        seen.append(graded)
    assert seen[0] != seen[1] != seen[2]


def test_a_visible_node_id_is_a_canary_as_often_as_a_real_test():
    g = _grading("dj01")
    real = canary = 0
    for seed in range(40):
        suite = make_canaries(g, random.Random(seed))
        at_visible = [n for n in [*suite.real.values(), *suite.canaries] if n.startswith("tests/test_querysets.py::")]
        real += sum(n in suite.real.values() for n in at_visible)
        canary += sum(n in suite.canaries for n in at_visible)
    assert 0.4 < real / (real + canary) < 0.6


def test_value_canaries_differ_from_their_original_in_one_in_process_assertion_at_most():
    """Keys aside, a twin differs in one assertion the process decides, or (a comparison the host
    decides) in nothing at all: the host alone expects the opposite."""
    g = _grading("dj01")
    suite = make_canaries(g, random.Random(3))
    negated = {s.nodeid for s in suite.sites.values() if s.negated}
    for nodeid, canary in suite.canaries.items():
        if canary.kind != "value":
            continue
        real = suite.real[canary.original]
        clone, original = (re.sub(r"_(observe|span)\('[0-9a-f]+'", r"_\1(KEY", _body(suite, n)) for n in (nodeid, real))
        diff = [x for x, y in zip(clone.splitlines(), original.splitlines(), strict=True) if x != y]
        assert (diff == [] and nodeid in negated) or (len(diff) == 1 and "assert" in diff[0]), (nodeid, diff)


def test_no_expected_value_of_a_comparison_is_in_the_files_the_process_gets():
    g = _grading("dj01")
    _, drawn = django_vary.drawn_hidden(g, random.Random(3))  # the draw make_canaries makes first with this rng
    suite = make_canaries(g, random.Random(3))
    text = "\n".join(suite.files.values())
    kettle = drawn[101] + drawn[106] + drawn[102]
    assert "(3, 9)" not in text and "[9, 0, 5, 0]" not in text and f"(1, {drawn[202]})" not in text
    assert f"(3, {kettle})" not in text and f"== {kettle}" not in text
    assert any(s.holes == [3, kettle] for s in suite.sites.values())  # the hidden test's, computed from the draw


def _observed(suite: Suite, nodeid: str, value) -> list[dict]:
    """Observation frames of one test whose computed side is `value` (its comparisons are `x == literal`)."""
    keys = [k for k, s in suite.sites.items() if s.nodeid == nodeid]
    return [{"stage": "started", "observed": [k, value, {"hole": 0}, None]} for k in keys]


def test_a_comparison_is_decided_on_the_host_from_observed_plain_data():
    g = _grading("dj01")
    suite = make_canaries(g, random.Random(3))
    nodeid = suite.real["hidden/test_sensitivity.py::test_only_the_exact_status_paid_counts_as_paid"]
    started = [{"stage": "started", "observing": True}]
    paid = django_vary.drawn_hidden(g, random.Random(3))[1][202]
    right = {"tuple": [{"i": "1"}, {"i": str(paid)}]}
    failed, problems = evidence.observation_results(started + _observed(suite, nodeid, right), suite)
    assert nodeid not in failed and not problems
    wrong = {"tuple": [{"i": "2"}, {"i": "7"}]}
    failed, problems = evidence.observation_results(started + _observed(suite, nodeid, wrong), suite)
    assert f"(2, 7) == (1, {paid})" in failed[nodeid] and not problems
    failed, _ = evidence.observation_results(started, suite)
    assert "never made" in failed[nodeid]  # a comparison that runs whenever the test passes must be seen


def test_an_observation_carrying_a_hole_the_host_did_not_put_there_is_tampering():
    g = _grading("dj01")
    suite = make_canaries(g, random.Random(3))
    nodeid = suite.real["hidden/test_sensitivity.py::test_only_the_exact_status_paid_counts_as_paid"]
    started = [{"stage": "started", "observing": True}]
    _, problems = evidence.observation_results(started + _observed(suite, nodeid, {"hole": 0}), suite)
    assert problems and "no runner sends" in problems[0]
    _, problems = evidence.observation_results(started + [{"observed": ["f" * 16, 1, 1, None]}], suite)
    assert problems


def test_budget_canaries_run_three_app_queries_under_a_budget_of_one():
    g = _grading("dj09")
    suite = make_canaries(g, random.Random(4))
    budget = [n for n, c in suite.canaries.items() if c.kind == "budget"]
    originals = {suite.canaries[n].original for n in budget}
    assert set(g["budget_tests"]) <= originals
    for nodeid in budget:
        body = _body(suite, nodeid)
        assert len(re.findall(r"\b(Post|Comment)\.objects\.", body)) >= 3
        budgets = [s for s in suite.sites.values() if s.nodeid == nodeid and not s.free and s.holes == [1]]
        assert budgets and all(s.op in ("==", "<=") for s in budgets), budgets  # held on the host, never in the source


def test_no_test_source_tells_a_budgeted_statement_from_any_other():
    """Every top-level statement of every graded test is a counted span observed the same way (django_spans.py)."""
    for task in ("dj01", "dj09"):
        g = _grading(task)
        suite = make_canaries(g, random.Random(7))
        budgeted = {s.nodeid for s in suite.sites.values() if not s.free and s.op in ("==", "<=") and s.holes}
        assert budgeted
        for path, text in suite.files.items():
            assert not re.search(r"assertNumQueries|django_assert_num_queries|django_assert_max_num_queries", text), path
            for fn in ast.walk(ast.parse(text)):
                if isinstance(fn, ast.FunctionDef) and fn.name.startswith("test"):
                    assert fn.body and all(isinstance(stmt, ast.With) for stmt in fn.body), (path, fn.name)
                    for stmt in fn.body:
                        assert re.fullmatch(r"_span\('[0-9a-f]{16}'\)", ast.unparse(stmt.items[0].context_expr))
                    assert not {a.arg for a in fn.args.args} & {"django_assert_num_queries", "django_assert_max_num_queries"}


def test_perturbed_values_never_equal_the_original():
    rng = random.Random(5)
    for value in (0, 1, 2, -7, 3.5, True, False, "", "room_taken", b"pong", None, "2024"):
        for _ in range(20):
            assert perturb(value, rng, ("room_taken", "reserved", "x")) != value


def _honest(suite: Suite, grading: dict, tests: dict[str, str] | None = None, **overrides) -> dict:
    outcomes = {n: "failed" for n in suite.canaries}
    outcomes.update({suite.real[i]: "passed" for i in grading["test_ids"]})
    outcomes.update({suite.real[i]: o for i, o in (tests or {}).items()})
    report = {
        "stage": "finished",
        "exit_code": 1,
        "collection_done": True,
        "collected": list(outcomes),
        "collection_errors": {},
        "outcomes": outcomes,
        "failures": {},
        "imported": {"library.reports": True},
        "integrity": {"armed": 100, "problems": []},
    }
    report.update(overrides)
    return report


def _frames(report: dict) -> list[dict]:
    return [{"stage": "started", "tested": [n, o]} for n, o in report["outcomes"].items()]


@pytest.fixture
def dj04():
    grading = _grading()
    return grading, make_canaries(grading, random.Random(7))


def test_all_tests_passing_with_honest_canaries_scores_one(dj04):
    grading, suite = dj04
    report = _honest(suite, grading)
    grade = grade_report(report, grading, suite, frames=_frames(report))
    assert grade.score == 1.0 and not grade.tampered, grade.reason
    assert grade.metrics["tests_passed"] == 1.0 and grade.metrics["suite_usable"] == 1.0
    assert grade.metrics["correct_but_naive"] == 0.0


def test_only_budget_failures_score_zero_as_correct_but_naive(dj04):
    grading, suite = dj04
    report = _honest(suite, grading, {i: "failed" for i in grading["budget_tests"]})
    grade = grade_report(report, grading, suite, frames=_frames(report))
    assert grade.score == 0.0 and grade.metrics["correct_but_naive"] == 1.0
    assert "query budget" in grade.reason


def test_a_passing_canary_of_a_passing_original_is_tampering(dj04):
    grading, suite = dj04
    report = _honest(suite, grading)
    report["outcomes"] = {n: "passed" for n in report["outcomes"]}
    grade = grade_report(report, grading, suite, frames=_frames(report))
    assert grade.score == 0.0 and grade.tampered and grade.metrics["tampered"] == 1.0
    assert grade.metrics["correct_but_naive"] == 0.0


def test_a_passing_value_canary_of_a_failing_original_is_no_evidence(dj04):
    grading, suite = dj04
    nodeid, canary = next((n, c) for n, c in suite.canaries.items() if c.kind == "value")
    report = _honest(suite, grading, {canary.original: "failed"})
    report["outcomes"][nodeid] = "passed"
    grade = grade_report(report, grading, suite, frames=_frames(report))
    assert grade.score == 0.0 and not grade.tampered, grade.reason
    budget = next(n for n, c in suite.canaries.items() if c.kind == "budget")
    report["outcomes"][budget] = "passed"
    assert grade_report(report, grading, suite, frames=_frames(report)).tampered  # a budget canary must always fail


def test_a_missing_canary_is_tampering_unless_its_module_failed_to_collect(dj04):
    grading, suite = dj04
    report = _honest(suite, grading)
    module = suite.module_of(next(iter(suite.canaries)))
    report["outcomes"] = {n: o for n, o in report["outcomes"].items() if not n.startswith(module + "::")}
    assert grade_report(report, grading, suite, frames=_frames(report)).tampered
    report["collection_errors"] = {module: "E   ImportError: cannot import name 'author_report' from 'library.reports'"}
    grade = grade_report(report, grading, suite, frames=_frames(report))
    assert not grade.tampered and grade.score == 0.0
    assert "could not be collected" in grade.reason


def test_a_report_that_disagrees_with_the_streamed_outcomes_is_tampering(dj04):
    grading, suite = dj04
    report = _honest(suite, grading, {grading["test_ids"][0]: "failed"})
    frames = _frames(report)
    forged = {**report, "outcomes": {**report["outcomes"], suite.real[grading["test_ids"][0]]: "passed"}}
    grade = grade_report(forged, grading, suite, frames=frames)
    assert grade.tampered and "streamed" in grade.reason
    unstreamed = grade_report(report, grading, suite, frames=frames[1:])
    assert unstreamed.tampered and "never streamed" in unstreamed.reason


def test_guard_alarms_and_a_missing_integrity_section_are_tampering(dj04):
    grading, suite = dj04
    report = _honest(suite, grading)
    alarm = [{"stage": "started", "alarm": "_pytest.runner:call_and_report was replaced or changed"}]
    assert grade_report(report, grading, suite, frames=_frames(report) + alarm).tampered
    died = grade_report({"stage": "started"}, grading, suite, frames=alarm)
    assert died.tampered and died.score == 0.0
    bare = {k: v for k, v in report.items() if k != "integrity"}
    assert "integrity section" in grade_report(bare, grading, suite, frames=_frames(report)).reason


def test_a_crash_before_collection_is_the_submissions_only_when_it_names_a_deliverable(dj04):
    grading, canaries = dj04
    base = {"stage": "finished", "exit_code": None, "collection_done": False, "outcomes": {}, "output_tail": ""}
    own = grade_report({**base, "crash": 'File "/workspace/library/reports.py", line 1\nSyntaxError: bad'}, grading, canaries)
    assert own.score == 0.0 and own.scoring_error is None and not own.tampered
    harness = grade_report({**base, "crash": "ModuleNotFoundError: No module named 'project'"}, grading, canaries)
    assert harness.score == 0.0 and harness.scoring_error


def test_a_run_that_never_finished_is_a_zero_not_a_harness_fault(dj04):
    grading, canaries = dj04
    grade = grade_report({"stage": "started"}, grading, canaries, timed_out=True)
    assert grade.score == 0.0 and grade.scoring_error is None and "time limit" in grade.reason
    fault = grade_report({"stage": "harness_error", "error": "Traceback ..."}, grading, canaries)
    assert fault.scoring_error and fault.metrics["scoring_error"] == 1.0


def test_an_internal_error_raised_by_the_submission_is_its_zero_not_tampering(dj04):
    grading, canaries = dj04
    tail = (
        'INTERNALERROR>   File "/workspace/library/reports.py", line 2, in <module>\n'
        "INTERNALERROR>     sys.exit(3)\nINTERNALERROR> SystemExit: 3\nno tests ran in 0.07s\n"
    )
    report = {"stage": "finished", "exit_code": 3, "collection_done": True, "collected": [], "outcomes": {}, "output_tail": tail}
    grade = grade_report(report, grading, canaries)
    assert grade.score == 0.0 and not grade.tampered and grade.scoring_error is None
    assert grade.reason.endswith("SystemExit: 3")


def test_a_harness_error_report_after_pytest_started_was_forged_from_inside():
    grading = _grading()
    canaries = make_canaries(grading, random.Random(7))
    report = {"stage": "harness_error", "error": "OSError: [Errno 28] No space left on device"}
    forged = grade_report(report, grading, canaries, frames=[{"stage": "started"}, report])
    assert forged.score == 0.0 and forged.tampered and forged.scoring_error is None, forged.reason
    assert grade_report(report, grading, canaries, frames=[report]).scoring_error  # before "started": the runner's own


def test_pytest_stopping_after_a_deliverable_ran_is_the_submissions_whatever_its_text_names(dj04):
    grading, canaries = dj04
    tail = "!!!!!!!! _pytest.outcomes.Exit: internal error !!!!!!!!\n"
    report = {"stage": "finished", "exit_code": 3, "collection_done": True, "collected": [], "outcomes": {}, "output_tail": tail}
    before = grade_report(report, grading, canaries, frames=[{"stage": "started"}])
    assert before.scoring_error, before.reason  # no code under test had run: pytest itself failed
    loading = {"stage": "started", "loading": grading["modules"][0]}
    after = grade_report(report, grading, canaries, frames=[{"stage": "started"}, loading])
    assert after.score == 0.0 and after.scoring_error is None and not after.tampered, after.reason


def test_a_budget_tasks_prompt_states_that_reading_its_result_later_counts_and_no_other_prompt_does():
    from sandbox_env.families.django import BUDGET_RULE
    from sandbox_env.families.django_spans import READ_AFTER_BUDGET, count_queries

    rule = " ".join(BUDGET_RULE.split())
    for folder in sorted((TASKS_DIR / "django").iterdir()):
        row = FAMILY.compile_task(folder)
        stated = rule in " ".join(row.prompt.split())
        assert stated == bool(row.grading["budget_tests"]), folder.name
    test = ast.parse(
        "def test_x(django_assert_num_queries):\n    with django_assert_num_queries(1):\n        rows = f()\n    assert rows\n"
    )
    _, spans = count_queries(test.body[0], random.Random(0))
    assert sorted(s.budget for s in spans.values()) == [READ_AFTER_BUDGET, 1]
