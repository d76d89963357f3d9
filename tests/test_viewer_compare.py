"""Comparing two runs of the same tasks: per-task score change and which tasks flipped.

Real runs (tests/fixtures/v1_runs/: the reference and the null policy on the same six
tasks) and hand-made records for the cases real runs here do not have (partial scores,
several rollouts a task, a task in one run only, errors).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from sandbox_env.cli.main import main as cli_main
from sandbox_env.viewer import load_run, render_html
from sandbox_env.viewer.compare import compare_runs, task_scores
from sandbox_env.viewer.record import Run

RUNS = Path(__file__).parent / "fixtures" / "v1_runs"
CLASSIC = Path(__file__).parent / "fixtures" / "view_run"


def _rollout(task: str, reward: float | None, error: str | None = None, family: str = "fastapi") -> dict:
    grade = {"reason": f"{task} scored {reward}"} if reward is not None else None
    return {
        "task_id": task,
        "family": family,
        "reward": reward,
        "error": error,
        "error_kind": error and error.split(":")[0],
        "scoring_error": None,
        "tampered": False,
        "grade": grade,
    }


def _run(*rollouts: dict) -> Run:
    return Run(format="v1", source="x", rollouts=list(rollouts))


def test_every_task_the_reference_solves_and_the_null_policy_does_not_is_a_gain():
    c = compare_runs(load_run(RUNS / "reference"), load_run(RUNS / "null"))
    assert [t["flip"] for t in c["tasks"]] == ["gained"] * 6
    assert all(t["change"] == 1.0 for t in c["tasks"])
    assert c["summary"] == {
        "shared": 6,
        "only_here": 0,
        "only_base": 0,
        "gained": 6,
        "lost": 0,
        "better": 6,
        "worse": 0,
        "same": 0,
        "mean_change": 1.0,
    }
    swapped = compare_runs(load_run(RUNS / "null"), load_run(RUNS / "reference"))
    assert {t["flip"] for t in swapped["tasks"]} == {"lost"} and swapped["summary"]["mean_change"] == -1.0


def test_the_change_is_this_runs_score_minus_the_baselines_and_a_partial_move_is_not_a_flip():
    here = _run(_rollout("a", 0.5), _rollout("b", 1.0), _rollout("c", 0.25))
    base = _run(_rollout("a", 0.25), _rollout("b", 0.75), _rollout("c", 0.25))
    tasks = {t["task_id"]: t for t in compare_runs(here, base)["tasks"]}
    assert (tasks["a"]["change"], tasks["a"]["flip"]) == (0.25, None)
    assert (tasks["b"]["change"], tasks["b"]["flip"]) == (0.25, "gained")
    assert (tasks["c"]["change"], tasks["c"]["flip"]) == (0.0, None)


def test_a_task_of_several_rollouts_scores_their_mean_and_is_solved_only_when_every_one_scored_one():
    scores = task_scores([_rollout("a", 1.0), _rollout("a", 0.0), _rollout("b", 1.0), _rollout("b", 1.0)])
    assert (scores["a"]["score"], scores["a"]["solved"], scores["a"]["rollouts"]) == (0.5, False, 2)
    assert scores["b"]["solved"] is True


def test_errors_are_counted_beside_the_score_and_a_task_without_any_reward_has_no_change():
    here = _run(_rollout("a", None, error="ModelError: 502"), _rollout("b", 0.0, error="ModelError: 502"))
    base = _run(_rollout("a", 1.0), _rollout("b", 1.0))
    tasks = {t["task_id"]: t for t in compare_runs(here, base)["tasks"]}
    assert tasks["a"]["here"]["score"] is None and tasks["a"]["change"] is None
    assert tasks["a"]["here"]["errored"] == 1 and tasks["a"]["here"]["reason"] == "ModelError: 502"
    assert (tasks["b"]["change"], tasks["b"]["flip"]) == (-1.0, "lost")


def test_tasks_in_one_run_only_are_listed_and_counted():
    c = compare_runs(_run(_rollout("a", 1.0), _rollout("new", 1.0)), _run(_rollout("a", 1.0), _rollout("old", 0.0)))
    tasks = {t["task_id"]: t for t in c["tasks"]}
    assert tasks["new"]["base"] is None and tasks["old"]["here"] is None
    assert tasks["new"]["flip"] is None and tasks["old"]["change"] is None
    assert (c["summary"]["only_here"], c["summary"]["only_base"], c["summary"]["shared"]) == (1, 1, 1)


def test_runs_of_either_stack_compare_by_task_id():
    c = compare_runs(load_run(RUNS / "reference"), load_run(CLASSIC))
    shared = {t["task_id"] for t in c["tasks"] if t["here"] and t["base"]}
    assert shared == {"orm_adv_01", "dj01"}
    assert c["base"]["format"] == "classic" and c["base"]["meta"]["model"] == "script"


def test_the_comparison_travels_in_the_page_and_a_plain_report_has_none():
    html = render_html(load_run(RUNS / "reference"), load_run(RUNS / "null"))
    assert "compared with null" in html
    data = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', html, re.S).group(1)
    assert '"compare":{"base"' in data and '"gained":6' in data
    assert '"compare":null' in render_html(load_run(RUNS / "null"))


def test_view_compare_writes_a_comparison_beside_the_run_and_says_what_flipped(tmp_path, capsys):
    run, base = tmp_path / "ref", tmp_path / "null"
    shutil.copytree(RUNS / "reference", run)
    shutil.copytree(RUNS / "null", base)
    assert cli_main(["view", str(run), "--compare", str(base), "--no-open"]) == 0
    assert (run / "compare-null.html").is_file() and not (run / "report.html").exists()
    out = capsys.readouterr().out
    assert "6 tasks in both, 6 solved here only, 0 solved there only, 6 better, 0 worse" in out
