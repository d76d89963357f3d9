"""The v1 main job: the real v1 `vf-eval websandbox` (a subprocess) against scripted policies.

The reference policy scores 1.0 on every task of the sweep, the null policy 0.0, the
saved run loads with v1's own reader, and no container is left behind. The sweep is a
handful of tasks per family (conftest.SWEEP_TASKS); `make eval-v1` runs every task.
"""

from __future__ import annotations

import pytest
from conftest import SWEEP_TASKS

from sandbox_env.cli.eval_v1 import family_table_v1, load_run, run_eval_v1
from sandbox_env.sandbox.docker import leaked_containers

pytestmark = pytest.mark.docker


def _traces(run) -> dict:
    return {t.task.data.model_extra["task_id"]: t for e in load_run(run) for t in e.traces}


def _tool_names(trace) -> list[str]:
    return [c.name for m in trace.branches[-1].messages for c in (getattr(m, "tool_calls", None) or [])]


def test_reference_policy_scores_one_on_every_swept_task_through_v1_vf_eval(image):
    code, run = run_eval_v1("reference", env_args={"task_ids": SWEEP_TASKS, "image": image}, concurrency=3)
    assert code == 0, f"vf-eval exited with {code}"
    traces = _traces(run)
    assert set(traces) == set(SWEEP_TASKS)
    wrong = {
        t: (tr.reward, tr.info.get("grade", {}).get("reason"), tr.errors)
        for t, tr in traces.items()
        if tr.reward != 1.0 or not tr.ok
    }
    assert wrong == {}
    assert all(_tool_names(tr) for tr in traces.values()), "every reference rollout calls a tool"
    assert {n for tr in traces.values() for n in _tool_names(tr)} <= {"bash", "execute_code"}
    table = family_table_v1(run)
    assert {r["family"] for r in table} == {"orm", "django", "fastapi", "all"}
    assert all(r["scoring_errors"] == r["tampered"] == r["errored"] == 0 for r in table)
    assert all(r["mean_finished"] == r["mean_reward"] == 1.0 for r in table)
    assert leaked_containers() == []


def test_null_policy_scores_zero_through_v1_vf_eval(image):
    code, run = run_eval_v1("null", env_args={"task_ids": SWEEP_TASKS, "image": image}, concurrency=3)
    assert code == 0
    traces = _traces(run)
    assert set(traces) == set(SWEEP_TASKS)
    assert {tr.reward for tr in traces.values()} == {0.0}
    assert all(tr.ok and not _tool_names(tr) for tr in traces.values())
    assert leaked_containers() == []


def test_a_rollout_stops_at_the_first_turn_past_its_token_budget(image):
    code, run = run_eval_v1("reference", env_args={"task_ids": ["smoke_sum"], "image": image}, agent={"max_total_tokens": 1})
    assert code == 0
    trace = _traces(run)["smoke_sum"]
    assert trace.stop_condition == "max_total_tokens"
    assert trace.num_turns == 1, "the turn that crossed the budget is the last one"
    assert len(_tool_names(trace)) == 1 and trace.reward == 0.0
    assert trace.metrics["sandbox_command_execution_time"] > 0.0  # the one tool call was timed


def test_a_finalize_deadline_that_cuts_grading_short_is_a_harness_fault_not_the_models_zero(image):
    agent = {"timeout": {"finalize": 0.01}}  # ends finalize before the final state is even out of the sandbox
    code, run = run_eval_v1("reference", env_args={"task_ids": ["smoke_hello"], "image": image}, agent=agent)
    trace = _traces(run)["smoke_hello"]
    assert not trace.ok and any("not graded" in e.message for e in trace.errors), trace.errors
    assert trace.reward == 0.0 and trace.metrics["scoring_error"] == 1.0
    assert leaked_containers() == []
