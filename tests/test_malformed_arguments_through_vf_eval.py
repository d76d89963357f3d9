"""A tool call whose arguments are not valid JSON, sent by a real chat server, is answered so the model resends it.

Driven through the real classic vf-eval: the scripted policy sends its first call with arguments
cut short (`raw_arguments`), then the call as it should be. The tool's answer to the first says the
arguments were not valid JSON and asks for the call again, nothing of it ran, and the rollout goes
on to score 1.0 (the v1 stack's twin: tests/v1/test_malformed_arguments_v1.py).
"""

from __future__ import annotations

import json

import pytest

from sandbox_env.cli.main import run_eval
from sandbox_env.sandbox.docker import run_containers
from sandbox_env.sandbox.runs import new_run_id
from sandbox_env.viewer.load import load_run

pytestmark = pytest.mark.docker

MALFORMED = '{"command": "printf \'hello, sandbox\\\\n\' > /workspace/hello.txt"'  # the closing brace is missing
GOOD = {"command": "printf 'hello, sandbox\\n' > /workspace/hello.txt"}


def script(tmp_path):
    path = tmp_path / "script.json"
    calls = [{"tool": "bash", "raw_arguments": MALFORMED}, {"tool": "bash", "args": GOOD}]
    path.write_text(json.dumps({"smoke_hello": {"calls": calls}}))
    return path


def test_malformed_arguments_are_answered_as_invalid_json_and_the_resent_call_runs(image, tmp_path):
    run_id = new_run_id()
    env_args = {"image": image, "family": "smoke", "task_ids": ["smoke_hello"]}
    code, run = run_eval(script=script(tmp_path), env_args=env_args, run_id=run_id, extra=["--max-retries", "0"])
    assert code == 0 and run is not None and run_containers(run_id) == []
    (rollout,) = load_run(run).rollouts
    tools = [m["content"] for m in rollout["completion"] if m["role"] == "tool"]
    assert len(tools) == 2, rollout["completion"]
    assert "not valid JSON" in tools[0] and "again" in tools[0], tools[0]
    assert rollout["reward"] == 1.0 and rollout["error"] is None
