"""`websandbox eval` on verifiers 0.4: classic-only options are refused, never ignored; runs go under the current folder."""

from __future__ import annotations

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
