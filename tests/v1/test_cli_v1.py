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
        (["eval", "--resume"], "--resume"),
        (["eval", "--fail-after", "2"], "--fail-after"),
        (["eval", "--", "-n", "3"], "arguments after `--`"),
    ],
)
def test_classic_only_options_are_refused_with_what_to_do(argv, named, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert named in err and "vf-eval websandbox" in err and "Traceback" not in err


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
