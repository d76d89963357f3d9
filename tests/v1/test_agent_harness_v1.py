"""Agents as harnesses: verifiers' own `bash` harness, its commands run in websandbox's sandbox.

Through the real v1 `vf-eval websandbox --env.agent.harness.id bash` (a subprocess) against the
scripted policies, one task per family: the harness's loop runs on the host, every tool call it
would run itself (`bash`, `edit`, the taskset's `execute_code`) runs in the rollout's hardened
sandbox, and the final state is graded as on the tool-calling door. Then: what such a command does
lands in the container, never on the host; the gate's answers fail closed (doors/v1/commands.py).
"""

from __future__ import annotations

import dataclasses
import json
import socket
import uuid
from pathlib import Path

import pytest
import verifiers.v1 as vf

from sandbox_env.cli.eval_v1 import load_run, run_eval_v1
from sandbox_env.doors.v1.commands import run_call, run_harness_call
from sandbox_env.doors.v1.taskset import task_row
from sandbox_env.doors.v1.toolset import WebSandboxToolset, WebSandboxToolsetConfig
from sandbox_env.rollout.core import close_rollouts, rollouts_for
from sandbox_env.rollout.settings import SandboxSettings
from sandbox_env.sandbox.docker import leaked_containers

ONE_PER_FAMILY = ["orm_adv_01", "dj01", "fastapi_body_embed"]
BASH_HARNESS = {"harness": {"id": "bash"}}


def _traces(run) -> dict:
    return {t.task.data.model_extra["task_id"]: t for e in load_run(run) for t in e.traces}


def _messages(trace) -> list:
    return trace.branches[-1].messages


def _tool_names(trace) -> list[str]:
    return [c.name for m in _messages(trace) for c in (getattr(m, "tool_calls", None) or [])]


@pytest.mark.docker
def test_verifiers_bash_harness_scores_the_reference_one_and_null_zero_with_no_container_left(image):
    code, run = run_eval_v1("reference", env_args={"task_ids": ONE_PER_FAMILY, "image": image}, concurrency=3, agent=BASH_HARNESS)
    assert code == 0, f"vf-eval exited with {code}"
    traces = _traces(run)
    assert set(traces) == set(ONE_PER_FAMILY)
    assert {t: (tr.reward, tr.ok) for t, tr in traces.items()} == {t: (1.0, True) for t in ONE_PER_FAMILY}, {
        t: (tr.reward, tr.info.get("grade", {}).get("reason"), tr.errors) for t, tr in traces.items()
    }
    assert all(tr.agent.config.harness.id == "bash" for tr in traces.values())
    assert all(tr.metrics["scoring_error"] == 0.0 for tr in traces.values())
    assert all(tr.metrics["sandbox_command_execution_time"] > 0.0 for tr in traces.values()), "every call ran in the sandbox"
    system = _messages(traces["dj01"])[0].content
    assert system.startswith("You are a coding agent. You have access to a bash tool"), "verifiers' bash harness spoke"
    assert "execute_code" in _tool_names(traces["orm_adv_01"]) and "bash" in _tool_names(traces["dj01"])
    assert leaked_containers() == []

    code, run = run_eval_v1("null", env_args={"task_ids": ONE_PER_FAMILY, "image": image}, concurrency=3, agent=BASH_HARNESS)
    assert code == 0
    traces = _traces(run)
    assert set(traces) == set(ONE_PER_FAMILY)
    assert {tr.reward for tr in traces.values()} == {0.0}
    assert all(tr.ok and not _tool_names(tr) for tr in traces.values())
    assert leaked_containers() == []


@pytest.mark.docker
def test_a_command_the_harness_runs_lands_in_the_container_not_on_the_host(image, tmp_path):
    probe = f"/tmp/websandbox-harness-probe-{uuid.uuid4().hex}"
    calls = [
        {"tool": "bash", "args": {"command": f"hostname; id -u; pwd; echo landed > {probe}"}},
        {"tool": "bash", "args": {"command": f"cat {probe}; ls /workspace"}},
    ]
    script = tmp_path / "probe.json"
    script.write_text(json.dumps({"smoke_hello": {"calls": calls}}))
    code, run = run_eval_v1("script", script=script, env_args={"task_ids": ["smoke_hello"], "image": image}, agent=BASH_HARNESS)
    assert code == 0
    trace = _traces(run)["smoke_hello"]
    outputs = [m.content for m in _messages(trace) if m.role == "tool"]
    assert len(outputs) == 2, outputs
    hostname, uid, cwd = outputs[0].splitlines()[:3]
    assert hostname != socket.gethostname() and uid == "1000" and cwd == "/workspace", outputs[0]
    assert outputs[1].splitlines()[0] == "landed", outputs[1]  # the file is in the container's /tmp ...
    assert not Path(probe).exists(), "a command of the harness ran on the host"  # ... and not in the host's
    assert trace.ok and trace.reward == 0.0  # graded as usual: the probe solved nothing
    assert leaked_containers() == []


@pytest.mark.docker
async def test_the_harness_tools_run_as_the_model_in_the_rollouts_sandbox_with_verifiers_messages(image):
    rollouts = await rollouts_for(dataclasses.replace(SandboxSettings(), image=image))
    lease = await rollouts.open(task_row("smoke_hello"))
    try:
        write = json.dumps({"command": "printf 'a = 1\\nb = 2\\n' > notes.py"})
        assert await run_call(lease, "bash", write) == "(no output)"
        edit = {"path": "notes.py", "old_str": "b = 2", "new_str": "b = 'it''s $(id)'"}
        assert await run_call(lease, "edit", json.dumps(edit)) == "Edited notes.py"
        assert await run_call(lease, "bash", json.dumps({"command": "cat /workspace/notes.py"})) == "a = 1\nb = 'it''s $(id)'"
        twice = {"path": "notes.py", "old_str": "=", "new_str": ":"}
        assert "must appear exactly once in notes.py (found 2)" in await run_call(lease, "edit", json.dumps(twice))
        assert "not found" in await run_call(lease, "edit", json.dumps({"path": "nope.py", "old_str": "x", "new_str": "y"}))
        assert await run_call(lease, "execute_code", json.dumps({"code": "import os; os.getuid()"})) == "1000"
        assert "missing required argument(s) 'command'" in await run_call(lease, "bash", "{}")
        assert "not valid JSON" in await run_call(lease, "bash", "{oops")
        refused = await run_call(lease, "search", json.dumps({"query": "x"}))
        assert refused.startswith("error: tool 'search' does not run in this sandbox")
    finally:
        await lease.release()
        close_rollouts()
    assert leaked_containers() == []


def _placeholder(name: str, arguments: str, call_id: str = "call_1") -> vf.Request:
    call = vf.ToolCall(id="call_1", name=name, arguments=arguments)
    return vf.Request(
        messages=[
            vf.UserMessage(content="task"),
            vf.AssistantMessage(content=None, tool_calls=[call]),
            vf.ToolMessage(tool_call_id=call_id, content="", name=name),
        ]
    )


async def test_the_gate_never_leaves_a_call_for_the_harness_to_run_itself():
    # no sandbox: an error in the call's place, never the empty placeholder (which would let the harness run it)
    answered = await run_harness_call(_placeholder("bash", '{"command": "id"}'), None)
    assert answered is not None and answered.messages[-1].content.startswith("error: this rollout has no sandbox")
    # a placeholder whose call is not in the turn before it: answered with an error too
    answered = await run_harness_call(_placeholder("bash", '{"command": "id"}', call_id="call_9"), None)
    assert answered is not None and "was not found" in answered.messages[-1].content
    assert answered.messages[-1].tool_call_id == "call_9" and len(answered.messages) == 3
    # anything else (a user turn, a result already there) is not the gate's question
    assert await run_harness_call(vf.Request(messages=[vf.UserMessage(content="task")]), None) is None


async def test_the_taskset_offers_no_bash_of_its_own_beside_a_harness_that_brings_one():
    from mcp.server.mcpserver import MCPServer

    server = MCPServer("websandbox")
    WebSandboxToolset(WebSandboxToolsetConfig(bash=False)).register(server)
    assert {t.name for t in await server.list_tools()} == {"execute_code"}


@pytest.mark.docker
async def test_prime_rls_env_server_runs_the_bash_harness_commands_in_the_sandbox_too(image):
    """prime-rl's path (tests/v1/test_prime_rl_path.py): a v1 env server, episodes through `EnvClient.run`."""
    import multiprocessing
    import os
    import sys

    from test_prime_rl_path import _episodes
    from verifiers.v1.serve import env_config_data, serve_env

    from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server

    task = {"image": image, "pool_size": 0}
    config = vf.resolve_env_config(
        {"taskset": {"id": "websandbox", "task_ids": ONE_PER_FAMILY, "task": task}, "agent": BASH_HARNESS}
    )
    os.environ.setdefault(POLICY_KEY_VAR, "local-policy")
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    ctx = multiprocessing.get_context("spawn")
    addresses = ctx.Queue()
    kwargs = {"max_workers": 1, "address": "tcp://127.0.0.1:0", "address_queue": addresses}
    proc = ctx.Process(target=serve_env, kwargs={**kwargs, "config_data": env_config_data(config)})
    proc.start()
    server, url = start_policy_server("reference", None, "127.0.0.1", 0)
    try:
        traces = await _episodes(config, (addresses.get(timeout=300), proc.pid), url, "reference", ONE_PER_FAMILY)
    finally:
        server.should_exit = True
        proc.terminate()
        proc.join(120)
        if proc.is_alive():
            proc.kill()
    assert {t: (tr.reward, tr.ok) for t, tr in traces.items()} == {t: (1.0, True) for t in ONE_PER_FAMILY}, {
        t: (tr.reward, tr.errors) for t, tr in traces.items()
    }
    assert all(tr.agent.config.harness.id == "bash" and _tool_names(tr) for tr in traces.values())
    assert leaked_containers() == []
