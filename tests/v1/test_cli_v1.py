"""`websandbox eval` on verifiers 0.4: classic-only options and unknown tasks are refused, never ignored;
runs go under the current folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_env.cli.eval_v1 import output_dir
from sandbox_env.cli.main import main


@pytest.mark.parametrize(
    "argv, named",
    [
        (["eval", "--fail-after", "2"], "--fail-after"),
        (["eval", "--", "-n", "3"], "arguments after `--`"),
    ],
)
def test_classic_only_options_are_refused_with_what_to_do(argv, named, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert named in err and "vf-eval websandbox" in err and "Traceback" not in err


def test_resume_with_no_v1_run_here_says_so_in_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["eval", "--resume"]) == 2
    err = capsys.readouterr().err
    assert "no v1 run to go on with" in err and "Traceback" not in err


@pytest.mark.docker
def test_resume_runs_again_the_rollouts_a_v1_run_lacks_under_its_saved_config(tmp_path, image):
    """v1's own --resume underneath: a run missing one of its rollouts gets it back, at 1.0, in the same folder."""
    websandbox = str(Path(sys.executable).with_name("websandbox"))
    tasks = ["smoke_hello", "smoke_sum"]
    first = [websandbox, "eval", "-a", json.dumps({"task_ids": tasks, "image": image})]
    done = subprocess.run(first, cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (run,) = [p for p in (tmp_path / "outputs" / "v1").iterdir() if p.is_dir()]
    traces = run / "traces.jsonl"
    kept = traces.read_text().splitlines()[:1]
    traces.write_text(kept[0] + "\n")  # one rollout lost, as when a run is stopped
    again = subprocess.run(
        [websandbox, "eval", "--resume", str(run)], cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=600
    )
    assert again.returncode == 0, again.stderr[-2000:]
    assert "--resume" in again.stdout and "[websandbox] 2 done" in again.stderr
    from sandbox_env.viewer import load_run

    rollouts = load_run(run).rollouts
    assert sorted(r["task_id"] for r in rollouts) == sorted(tasks) and all(r["reward"] == 1.0 for r in rollouts)


def test_runs_are_saved_under_the_current_folder_not_the_installed_package(tmp_path):
    assert output_dir(tmp_path) == tmp_path / "outputs" / "v1"
    (tmp_path / "environments" / "websandbox").mkdir(parents=True)
    assert output_dir(tmp_path) == tmp_path / "environments" / "websandbox" / "outputs" / "v1"


def test_an_unknown_task_id_is_refused_in_one_line_before_anything_starts(tmp_path):
    command = [str(Path(sys.executable).with_name("websandbox")), "eval", "-a", json.dumps({"task_ids": ["orm_adv_1"]})]
    done = subprocess.run(command, cwd=tmp_path, env=os.environ, capture_output=True, text=True, timeout=300)
    lines = (done.stdout + done.stderr).splitlines()
    assert done.returncode == 2 and len(lines) == 1 and "Traceback" not in lines[0], lines
    assert "'orm_adv_1'" in lines[0] and "orm_adv_01" in lines[0] and "`websandbox tasks`" in lines[0]
    assert list(tmp_path.iterdir()) == []  # no outputs/v1/<run>: vf-eval never started
