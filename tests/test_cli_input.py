"""`websandbox` refuses bad input with one clear line (exit 2), before it starts anything."""

from __future__ import annotations

import json

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
