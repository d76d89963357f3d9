"""A run that failed says so: `websandbox eval` against a server that breaks every rollout.

The policy server answers the second request of every rollout with HTTP 500 (as a real
server does when it rejects the conversation verifiers resends). vf-eval itself exits 0
and its own table reads like a run of zeros; `websandbox eval` must show every rollout as
errored, name the error, exit non-zero, and leave no container behind.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from sandbox_env.cli.eval_report import RUN_ERRORED, family_table
from sandbox_env.cli.main import main
from sandbox_env.dataset import load_rows
from sandbox_env.sandbox.docker import leaked_containers

pytestmark = pytest.mark.docker


def _one_task_per_family() -> list[str]:
    first: dict[str, str] = {}
    for row in load_rows():
        first.setdefault(row["info"]["family"], row["info"]["task_id"])
    first.pop("smoke", None)
    return sorted(first.values())


def test_a_server_that_fails_the_second_request_makes_every_rollout_errored_and_the_exit_non_zero(image, capsys):
    tasks = _one_task_per_family()
    env_args = json.dumps({"task_ids": tasks, "image": image})
    code = main(["eval", "--fail-after", "1", "-a", env_args, "-c", "3"])
    out, err = capsys.readouterr()
    print(out, err)  # the table and the error line, for whoever reads the test log
    assert code == RUN_ERRORED
    run = Path(re.search(r"^saved to (\S+);", out, re.M).group(1))
    table = {r["family"]: r for r in family_table(run)}
    assert set(table) == {"orm", "django", "fastapi", "all"}
    kind = "ModelError -> InternalServerError"
    assert all(r["errored"] == r["rollouts"] == (3 if f == "all" else 1) for f, r in table.items())
    assert all(r["error_kinds"] == {kind: r["rollouts"]} and r["mean_finished"] is None for r in table.values())
    assert out.count(f"1 ({kind})") == 3 and f"3 ({kind})" in out  # the printed table's errored column
    assert f"3 of 3 rollouts ended with an error; the commonest, {kind}, ended 3" in err
    assert "Error code: 500" in err
    assert "[websandbox] 3 done · errored 3" in err  # the live count reached the end
    assert leaked_containers() == []
