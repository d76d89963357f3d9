"""`websandbox` refuses bad input with one clear line (exit 2), before it starts anything."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_env.cli.main import env_args_of, main, package_version


def test_env_args_that_are_not_json_say_what_to_write(capsys):
    assert main(["eval", "-a", "{family: orm}"]) == 2
    err = capsys.readouterr().err
    assert "-a/--env-args is not JSON" in err and "Traceback" not in err


def test_env_args_that_are_not_an_object_are_refused_even_with_a_family(capsys):
    assert main(["eval", "-a", "[1]", "--family", "orm"]) == 2
    assert "must be a JSON object" in capsys.readouterr().err


def test_a_family_joins_the_env_args():
    assert env_args_of('{"difficulty": "hard"}', "orm") == {"difficulty": "hard", "family": "orm"}


def test_a_script_naming_unknown_tasks_is_refused(tmp_path, capsys):
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"smoke_hello": {"calls": []}, "no_such_task": {"calls": []}}))
    assert main(["eval", "--script", str(script)]) == 2
    assert "no_such_task" in capsys.readouterr().err


def test_the_version_is_printed(capsys):
    with pytest.raises(SystemExit) as ended:
        main(["--version"])
    assert ended.value.code == 0 and capsys.readouterr().out.strip() == f"websandbox {package_version()}"
    assert package_version() != "unknown"


def websandbox(folder: Path, *argv: str, **env: str) -> tuple[int, list[str]]:
    """Run the installed `websandbox` command in `folder`: its exit code and the lines of stdout and stderr together."""
    command = [str(Path(sys.executable).with_name("websandbox")), *argv]
    done = subprocess.run(command, cwd=folder, env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    return done.returncode, (done.stdout + done.stderr).splitlines()


def refused_in_one_line(folder: Path, *argv: str, **env: str) -> str:
    """The one line `websandbox` refused with (exit 2), having left nothing in `folder` (no outputs/, no run)."""
    code, lines = websandbox(folder, *argv, **env)
    assert code == 2 and len(lines) == 1, lines
    assert "Traceback" not in lines[0] and lines[0].startswith("websandbox: ")
    assert list(folder.iterdir()) == []
    return lines[0]


def test_an_unknown_family_is_refused_naming_the_families(tmp_path):
    line = refused_in_one_line(tmp_path, "eval", "--family", "sql")
    assert "unknown family 'sql'; known: django, fastapi, orm, smoke" in line


def test_an_unknown_task_id_is_refused_naming_close_ids_and_where_to_list_them(tmp_path):
    line = refused_in_one_line(tmp_path, "eval", "-a", json.dumps({"task_ids": ["orm_adv_1"]}))
    assert "'orm_adv_1'" in line and "orm_adv_01" in line and "`websandbox tasks`" in line


def test_an_unknown_split_is_refused_naming_the_splits(tmp_path):
    line = refused_in_one_line(tmp_path, "eval", "-a", json.dumps({"split": "test", "family": "orm"}))
    assert "unknown split 'test'; known: train, eval, all" in line


def test_a_task_id_of_another_split_says_which_split_to_ask_for(tmp_path):
    line = refused_in_one_line(tmp_path, "eval", "-a", json.dumps({"task_ids": ["orm_adv_01"], "split": "eval"}))
    assert "not in split 'eval'" in line and '"all"' in line


def test_tasks_lists_every_task_with_its_family_source_split_and_difficulty(tmp_path):
    code, lines = websandbox(tmp_path, "tasks")
    assert code == 0 and lines[0].split() == ["task_id", "family", "source", "split", "difficulty", "category"]
    rows = {line.split()[0]: line.split() for line in lines[1:-1]}
    assert rows["orm_adv_01"][1:4] == ["orm", "hand", "train"] and rows["orm_adv_01"][4] in ("easy", "medium", "hard")
    assert "smoke_hello" in rows  # smoke tasks run only when named, so their ids are listed too
    assert lines[-1] == f"{len(rows)} tasks"


def test_tasks_filters_by_family_and_split_and_refuses_unknown_ones(tmp_path):
    code, lines = websandbox(tmp_path, "tasks", "--family", "orm", "--split", "eval")
    rows = [line.split() for line in lines[1:-1]]
    assert code == 0 and rows and all(row[1] == "orm" and row[3] == "eval" for row in rows)
    assert "unknown split 'test'" in refused_in_one_line(tmp_path, "tasks", "--split", "test")


def test_an_unreachable_engine_is_found_before_any_rollout(tmp_path):
    line = refused_in_one_line(tmp_path, "eval", "--family", "smoke", DOCKER_HOST="unix:///nonexistent.sock")
    assert "cannot reach the Docker engine at unix:///nonexistent.sock" in line


@pytest.mark.docker
def test_an_image_given_that_the_engine_lacks_is_found_before_any_rollout(tmp_path):
    image = "websandbox-runtime:no-such-tag"
    line = refused_in_one_line(tmp_path, "eval", "--family", "smoke", "-a", json.dumps({"image": image}))
    assert f"image {image!r} (from -a) is not on the Docker engine" in line
