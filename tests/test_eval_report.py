"""What `websandbox eval` says without starting anything: the error line, the exit status, live counts,
where vf-eval saves, and the arguments it passes on."""

from __future__ import annotations

import io
import json
import os
import time
from pathlib import Path

from sandbox_env.cli.eval_live import LiveCounts
from sandbox_env.cli.eval_report import RUN_ERRORED, error_line, report
from sandbox_env.cli.eval_runs import RunLocation, locate
from sandbox_env.cli.main import split_passthrough, vf_eval_command

FIVE_HUNDRED = {
    "error": "ModelError",
    "message": "ModelError",
    "error_chain_repr": "ModelError() -> InternalServerError('Error code: 500 - the server broke')",
    "error_chain_str": "ModelError -> InternalServerError",
}


def _row(example_id: int, family: str = "orm", reward: float = 0.0, error: dict | None = None, **metrics) -> dict:
    return {
        "example_id": example_id,
        "reward": reward,
        "error": error,
        "info": {"family": family, "task_id": f"t{example_id}"},
        "metrics": metrics,
    }


def _write(run: Path, rows: list[dict]) -> Path:
    run.mkdir(parents=True, exist_ok=True)
    (run / "metadata.json").write_text(json.dumps({"env_id": "websandbox", "model": "reference"}))
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return run


def test_more_than_half_errored_exits_non_zero_with_the_commonest_error_named(tmp_path, capsys):
    rows = [_row(0, error=FIVE_HUNDRED), _row(1, error=FIVE_HUNDRED), _row(2, reward=1.0)]
    assert report(_write(tmp_path / "run", rows), "t") == RUN_ERRORED
    out, err = capsys.readouterr()
    assert "2 of 3 rollouts ended with an error; the commonest, ModelError -> InternalServerError, ended 2" in err
    assert "Error code: 500 - the server broke" in err and len(err.strip().splitlines()) == 1
    assert "2 (ModelError -> InternalServerError)" in out and "mean, finished" in out


def test_a_few_errors_are_named_but_the_run_still_succeeds(tmp_path, capsys):
    sandbox = {
        **FIVE_HUNDRED,
        "error": "SandboxError",
        "error_chain_str": "SandboxError",
        "error_chain_repr": "SandboxError('gone')",
    }
    rows = [_row(0, error=FIVE_HUNDRED), _row(1, error=sandbox), _row(2, reward=1.0), _row(3, reward=1.0)]
    assert report(_write(tmp_path / "run", rows), "t") == 0
    err = capsys.readouterr().err
    assert "2 of 4 rollouts ended with an error; the commonest" in err and "(1 other kind)" in err


def test_a_clean_run_prints_no_error_line(tmp_path, capsys):
    assert report(_write(tmp_path / "run", [_row(0, reward=1.0), _row(1, family="django")]), "t") == 0
    assert capsys.readouterr().err == ""


def test_error_line_cuts_a_long_message():
    long = {**FIVE_HUNDRED, "error_chain_repr": "ModelError('" + "x" * 5000 + "')"}
    rollout = {"error": long["error_chain_repr"], "error_kind": "ModelError"}
    line = error_line([rollout])
    assert line.endswith("...") and len(line) < 500


def test_live_counts_print_a_line_as_groups_finish_and_wait_for_a_whole_line(tmp_path):
    runs = tmp_path / "evals" / "websandbox--reference"
    where = RunLocation(runs_dir=runs)
    where.snapshot(time.time())
    out = io.StringIO()
    live = LiveCounts(where, out=out)
    assert live.poll() == 0  # vf-eval has not started yet
    run = _write(runs / "abcd1234", [])
    assert live.poll() == 0
    with (run / "results.jsonl").open("a") as f:
        f.write(json.dumps(_row(0, reward=1.0)) + "\n" + json.dumps(_row(1, error=FIVE_HUNDRED))[:40])
    assert live.poll() == 1
    with (run / "results.jsonl").open("a") as f:
        f.write(json.dumps(_row(1, error=FIVE_HUNDRED))[40:] + "\n" + json.dumps(_row(2, scoring_error=1.0)) + "\n")
    assert live.poll() == 2
    lines = [line for line in out.getvalue().splitlines() if line]
    assert lines[0] == (
        "[websandbox] 1 done · errored 0 · scoring errors 0 · tampered 0 · tool calls 0 · mean reward 1.000 (finished 1.000)"
    )
    assert lines[1] == (
        "[websandbox] 3 done · errored 1 (ModelError -> InternalServerError) · scoring errors 1 · "
        "tampered 0 · tool calls 0 · mean reward 0.333 (finished 0.500)"
    )
    assert live.run == run


def test_live_counts_of_a_v1_run_read_its_episodes_and_say_done_of_total_and_the_time_left(tmp_path):
    from sandbox_env.cli.eval_live import KnownRun, v1_records

    episodes = (Path(__file__).parent / "fixtures" / "v1_runs" / "reference" / "traces.jsonl").read_text().splitlines()
    run = tmp_path / "websandbox--reference--0000"
    out = io.StringIO()
    live = LiveCounts(KnownRun(run), out=out, results="traces.jsonl", records=v1_records, total=len(episodes) + 2)
    assert live.poll() == 0  # the run's folder is not there yet
    run.mkdir()
    (run / "traces.jsonl").write_text(episodes[0] + "\n" + episodes[1][:30])
    assert live.poll() == 1
    with (run / "traces.jsonl").open("a") as f:
        f.write(episodes[1][30:] + "\n" + "".join(e + "\n" for e in episodes[2:]))
    assert live.poll() == len(episodes) - 1
    lines = [line for line in out.getvalue().splitlines() if line]
    assert lines[0].startswith(f"[websandbox] 1/{len(episodes) + 2} done · errored 0 · ")
    assert "mean reward 1.000" in lines[-1] and lines[-1].endswith(" left")
    assert f"{len(episodes)}/{len(episodes) + 2} done" in lines[-1]


def _age(run: Path, seconds: float) -> None:
    then = time.time() - seconds
    for f in run.iterdir():
        os.utime(f, (then, then))


def test_the_run_is_the_new_folder_or_the_one_written_since_the_start_or_the_resumed_one(tmp_path):
    runs = tmp_path / "evals" / "websandbox--reference"
    old = _write(runs / "old00000", [_row(0)])
    _age(old, 100)
    where = RunLocation(runs_dir=runs)
    where.snapshot(time.time())
    assert where.find() is None
    new = _write(runs / "new00000", [])
    assert where.find() == new
    _age(new, 50)
    resumed = RunLocation(runs_dir=runs)
    resumed.snapshot(time.time())
    assert resumed.find() is None
    with (old / "results.jsonl").open("a") as f:  # a bare vf-eval --resume appends to the newest incomplete run
        f.write(json.dumps(_row(1)) + "\n")
    assert resumed.find() == old
    assert RunLocation(runs_dir=runs, resume_path=new).find() == new


def test_arguments_after_the_separator_go_to_vf_eval_last_and_decide_where_it_saves(tmp_path):
    ours, theirs = split_passthrough(["eval", "--policy", "null", "--", "-m", "other", "--output-dir", "out"])
    assert ours == ["eval", "--policy", "null"] and theirs == ["-m", "other", "--output-dir", "out"]
    assert split_passthrough(["eval"]) == (["eval"], None)
    cmd = vf_eval_command("http://x/v1", "null", 2, -1, 1, {"family": "orm"}, resume=True, extra=theirs)
    assert cmd[-7:] == ["-a", '{"family": "orm"}', "--resume", "-m", "other", "--output-dir", "out"]
    where = locate(cmd[1:], tmp_path)
    assert where.runs_dir == tmp_path / "out" / "evals" / "websandbox--other"
    assert where.resume_path is None
    cmd = vf_eval_command("http://x/v1", "null", 2, -1, 1, {}, resume="runs/abc")
    assert cmd[-2:] == ["--resume", "runs/abc"] and locate(cmd[1:], tmp_path).resume_path == tmp_path / "runs" / "abc"


def test_without_a_checkout_folder_runs_go_to_outputs_in_the_current_directory(tmp_path):
    cmd = vf_eval_command("http://x/v1", "reference", 2, -1, 1, {})
    assert locate(cmd[1:], tmp_path).runs_dir == tmp_path / "outputs" / "evals" / "websandbox--reference"
    (tmp_path / "environments" / "websandbox").mkdir(parents=True)
    assert locate(cmd[1:], tmp_path).runs_dir == tmp_path / "environments" / "websandbox" / "outputs" / "evals" / (
        "websandbox--reference"
    )


def test_only_eval_takes_arguments_after_the_separator(capsys):
    import pytest

    from sandbox_env.cli.main import main

    with pytest.raises(SystemExit):
        main(["gc", "--", "-x"])
    assert "only `websandbox eval` passes arguments after `--`" in capsys.readouterr().err
