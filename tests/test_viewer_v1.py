"""The viewer's reader of verifiers 0.4.x runs (`traces.jsonl`), without a browser and without verifiers v1.

The fixtures under tests/fixtures/v1_runs/ are real `websandbox eval` runs on verifiers
0.4.0 (`run_eval_v1`), copied with each node's repeated tool list dropped and the task
prompts cut to 300 characters: `reference` (the reference policy on two tasks of each
family, all 1.0), `null` (the null policy on the same tasks, all 0.0, no tool call) and
`smoke` (two one-task runs in one file: a finalize deadline that left the rollout
ungraded, a SandboxError; and a rollout stopped by max_total_tokens after one turn).
"""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path

from sandbox_env.cli.eval_v1 import family_table_v1
from sandbox_env.cli.main import main as cli_main
from sandbox_env.viewer import load_run
from sandbox_env.viewer.runs import newest_run, search_roots
from sandbox_env.viewer.summary import family_table
from sandbox_env.viewer.v1 import V1Loader, final_branch, reward_of

RUNS = Path(__file__).parent / "fixtures" / "v1_runs"
REFERENCE, NULL, SMOKE = RUNS / "reference", RUNS / "null", RUNS / "smoke"


def _by_task(run) -> dict[str, dict]:
    return {r["task_id"]: r for r in run.rollouts}


def _traces(run_dir: Path) -> list[dict]:
    return [t for line in (run_dir / "traces.jsonl").read_text().splitlines() for t in json.loads(line)["traces"]]


def test_a_v1_run_is_read_by_the_v1_loader_with_one_record_a_trace():
    run = load_run(REFERENCE)
    assert run.format == "v1" and run.problems == []
    assert [r["task_id"] for r in run.rollouts] == [t["task"]["data"]["task_id"] for t in _traces(REFERENCE)]
    assert {r["family"] for r in run.rollouts} == {"orm", "django", "fastapi"}
    assert all(r["reward"] == 1.0 and r["error"] is None and r["grade"]["score"] == 1.0 for r in run.rollouts)


def test_a_trace_carries_its_grade_transcript_tool_calls_and_tool_results():
    orm = _by_task(load_run(REFERENCE))["orm_adv_01"]
    assert orm["grade"]["reason"] == "all 11 rows match, in order"
    assert orm["grade"]["checks"][-1]["rows"]["first"] is None
    call, output, answer = orm["completion"]
    assert call["tool_calls"][0]["name"] == "execute_code" and "OuterRef" in call["tool_calls"][0]["arguments"]["code"]
    assert output == {"role": "tool", "content": "(no output)", "tool_call_id": call["tool_calls"][0]["id"]}
    assert answer["content"] == "Done."
    assert orm["stop"] == "agent_completed" and orm["example_id"] == 0
    assert orm["metrics"]["checks_passed"] == 1.0


def test_the_prompt_is_what_came_before_the_first_model_turn_and_is_stored_once():
    run = load_run(REFERENCE)
    prompt = run.prompts[run.rollouts[0]["prompt"]]
    assert [m["role"] for m in prompt] == ["system", "user"]
    assert all(r["completion"][0]["role"] == "assistant" for r in run.rollouts)


def test_every_model_turn_shows_its_tokens_time_and_finish_reason():
    dj = _by_task(load_run(REFERENCE))["dj01"]
    turns = [m["usage"] for m in dj["completion"] if m["role"] == "assistant"]
    assert [(u["input_tokens"], u["output_tokens"], u["finish_reason"]) for u in turns] == [
        (2808, 782, "tool_calls"),
        (3686, 160, "tool_calls"),
        (4030, 28, "stop"),
    ]
    assert all(u["seconds"] >= 0 for u in turns)
    assert dj["turns"] == 3 and dj["tokens"] == {"input": 3088, "output": 970}
    assert dj["seconds"] > 0 and {"setup", "agent", "scoring", "agent: model"} <= set(dj["timing"])
    assert all("usage" not in m for m in dj["completion"] if m["role"] == "tool")


def test_an_errored_trace_keeps_its_error_kind_traceback_and_scoring_error():
    hello, budget = load_run(SMOKE).rollouts
    assert hello["error"].startswith("SandboxError: harness fault, not the model's: the rollout was not graded")
    assert hello["error_kind"] == "SandboxError" and "Traceback" in hello["traceback"]
    assert hello["scoring_error"].startswith("the rollout was not graded") and hello["stop"] == "finalize_timeout"
    assert (budget["error"], budget["stop"], budget["turns"]) == (None, "max_total_tokens", 1)


def test_the_v1_family_table_has_the_classic_columns_mean_finished_included():
    rows = family_table_v1(SMOKE)
    assert rows == family_table(load_run(SMOKE).rollouts)
    (smoke,) = rows
    assert (smoke["rollouts"], smoke["errored"], smoke["scoring_errors"]) == (2, 1, 1)
    assert smoke["mean_finished"] == 0.0 and smoke["error_kinds"] == {"SandboxError": 1}
    table = {r["family"]: r for r in family_table_v1(REFERENCE)}
    assert table["all"]["mean_finished"] == table["all"]["mean_reward"] == 1.0 and table["all"]["perfect"] == 6


def test_the_header_data_names_model_sampling_arguments_and_versions():
    meta = load_run(SMOKE).meta
    assert meta["model"] == "reference" and meta["env_id"] == "websandbox"
    assert meta["sampling_args"] == {} and meta["agent_args"] == {"timeout": {"finalize": 0.01}}
    assert meta["env_args"]["task_ids"] == ["smoke_hello"]
    assert meta["version_info"] == {"vf_version": "0.4.0"} and meta["rollouts_per_example"] == 1


def test_blank_malformed_and_non_object_lines_and_empty_episodes_are_skipped_and_said(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(SMOKE, run_dir)
    shutil.rmtree(run_dir / "configs")
    with (run_dir / "traces.jsonl").open("a") as f:
        f.write('\n{"traces": [{"task": {"data"\n[1, 2]\n{"id": "e", "traces": []}\n')
    run = load_run(run_dir)
    assert len(run.rollouts) == 2
    said = "\n".join(run.problems)
    assert "line 4 skipped: not JSON" in said and "line 5 skipped: a list" in said
    assert "episode 3 skipped: it holds no trace" in said and "configs/resolved/eval.json" in said


def test_a_trace_with_keys_missing_still_reads(tmp_path):
    episode = {"ok": False, "errors": [{"type": "ModelError", "message": "502"}]}
    trace = {"ok": False, "rewards": {"score": None}, "nodes": [{"message": {"role": "user", "content": "hi"}}]}
    (tmp_path / "traces.jsonl").write_text(json.dumps(episode | {"traces": [trace]}) + "\n")
    (record,) = V1Loader().read(tmp_path).rollouts
    assert record["reward"] is None, "scoring did not run: no reward rather than v1's 0.0"
    assert (record["error"], record["error_kind"]) == ("ModelError: 502", "ModelError")
    assert record["task_id"] == "example 0" and record["family"] == "?" and record["completion"] == []
    assert record["tokens"] is None and record["seconds"] is None and record["grade"] is None


def test_reward_is_the_weighted_sum_of_the_rewards_that_ran():
    assert reward_of({"rewards": {"a": {"score": 0.5, "weight": 2.0}, "b": {"score": 1.0}, "c": None}}) == 2.0
    assert reward_of({"rewards": {}}) is None and reward_of({}) is None


def test_the_transcript_is_the_last_branch_of_the_message_graph():
    nodes = [{}, {"parent": 0}, {"parent": 1}, {"parent": 1}, {"parent": 3}]  # 2 is an abandoned leaf
    assert final_branch(nodes) == [0, 1, 3, 4]
    assert final_branch([{"parent": 1}, {"parent": 0}]) == [0, 1], "a cycle reads in node order"


def test_newest_run_finds_v1_runs_beside_classic_ones(tmp_path):
    classic = tmp_path / "environments" / "websandbox" / "outputs" / "evals" / "websandbox--m" / "r1"
    v1 = tmp_path / "environments" / "websandbox" / "outputs" / "v1" / "websandbox--m--ab12"
    for d, name in ((classic, "results.jsonl"), (v1, "traces.jsonl")):
        d.mkdir(parents=True)
        (d / name).write_text("{}\n")
    os.utime(classic / "results.jsonl", (time.time() - 100,) * 2)
    assert newest_run(search_roots(tmp_path)) == v1.resolve()
    os.utime(classic / "results.jsonl", (time.time() + 100,) * 2)
    assert newest_run(search_roots(tmp_path)) == classic.resolve()


def test_view_command_writes_the_report_of_a_v1_run(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(REFERENCE, run)
    assert cli_main(["view", str(run), "--no-open"]) == 0
    assert (run / "report.html").is_file()
    assert "6 rollouts" in capsys.readouterr().out
