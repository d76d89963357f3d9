"""Every stage of the task pipeline is one command, `websandbox tasks STAGE`, and docs/tasks.md names each."""

from __future__ import annotations

import re

import pytest

from sandbox_env.cli.main import main
from sandbox_env.cli.task_stages import STAGES
from sandbox_env.constants import DATA_FILE, REPO_ROOT


def test_tasks_build_compiles_the_dataset_as_build_tasks_py_does(capsys):
    assert main(["tasks", "build"]) == 0
    out = capsys.readouterr().out
    assert f"into {DATA_FILE}" in out and "per family" in out
    assert DATA_FILE.stat().st_size > 0


@pytest.mark.parametrize("stage", sorted(STAGES))
def test_every_stage_answers_help_without_running(stage, capsys):
    try:
        code = main(["tasks", stage, "--help"])
    except SystemExit as exc:  # argparse's own --help
        code = exc.code
    assert code == 0
    assert "usage:" in capsys.readouterr().out


def test_plain_tasks_still_lists_every_task(capsys):
    assert main(["tasks", "--family", "django"]) == 0
    assert capsys.readouterr().out.splitlines()[0].split()[:2] == ["task_id", "family"]


def test_the_docs_table_names_every_stage_and_no_other_command_style():
    text = (REPO_ROOT / "docs" / "tasks.md").read_text()
    named = set(re.findall(r"`websandbox tasks (\w+)", text))
    assert set(STAGES) <= named, set(STAGES) - named
    assert "python -m sandbox_env" not in text
