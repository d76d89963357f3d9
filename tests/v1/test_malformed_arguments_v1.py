"""A tool call whose arguments are not valid JSON is answered so the model resends it, through the real v1 vf-eval.

The v1 twin of tests/test_malformed_arguments_through_vf_eval.py: the scripted policy's first call
has its arguments cut short, its second is right; the answer to the first says the arguments were
not valid JSON and asks for the call again, and the rollout scores 1.0.
"""

from __future__ import annotations

import json

import pytest

from sandbox_env.cli.eval_v1 import load_run, run_eval_v1
from sandbox_env.sandbox.docker import leaked_containers

pytestmark = pytest.mark.docker

MALFORMED = '{"command": "printf \'hello, sandbox\\\\n\' > /workspace/hello.txt"'  # the closing brace is missing
GOOD = {"command": "printf 'hello, sandbox\\n' > /workspace/hello.txt"}


def test_malformed_arguments_are_answered_as_invalid_json_and_the_resent_call_runs(image, tmp_path):
    path = tmp_path / "script.json"
    calls = [{"tool": "bash", "raw_arguments": MALFORMED}, {"tool": "bash", "args": GOOD}]
    path.write_text(json.dumps({"smoke_hello": {"calls": calls}}))
    code, run = run_eval_v1(script=path, env_args={"task_ids": ["smoke_hello"], "image": image})
    assert code == 0
    (trace,) = [t for e in load_run(run) for t in e.traces]
    tools = [m.content for m in trace.branches[-1].messages if getattr(m, "role", None) == "tool"]
    assert len(tools) == 2, tools
    said = str(tools[0])
    assert "JSON" in said and ("resend" in said or "again" in said), said
    assert trace.reward == 1.0 and trace.ok, trace.errors
    assert leaked_containers() == []
