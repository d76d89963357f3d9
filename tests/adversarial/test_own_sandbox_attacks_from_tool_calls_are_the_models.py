"""What the model does to its own sandbox from a tool call is its own: a tool message, never a scoring error.

Each rollout plays an attack and then the task's answer. Whether the attack ended the
sandbox (the agent killed with everything else, the OOM killer, junk on its stream) or
only what the sandboxed code owns, the rollout goes on (in a fresh sandbox when the old
one ended, which the tool message says) and the answer still scores 1.0: no scoring
error, no `state["error"]`, nothing left behind.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from own_sandbox_kit import FROM_A_TOOL_CALL
from verifiers.types import ClientConfig

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.sandbox.docker import docker_client

pytestmark = pytest.mark.docker

ANSWER = {"tool": "bash", "args": {"command": "echo 'hello, sandbox' > /workspace/hello.txt"}}


@pytest.fixture(scope="module")
def env(image):
    import websandbox

    e = websandbox.load_environment(family="smoke", image=image, pool_size=0, timeout_per_command_seconds=10)
    yield e
    e.backend.teardown()


async def _play(env, calls: list[dict], tmp_path, monkeypatch):
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"smoke_hello": {"calls": calls, "final": "done"}}))
    server, url = start_policy_server("reference", script, "127.0.0.1", 0)
    try:
        row = next(r for r in env.get_eval_dataset() if r["info"]["task_id"] == "smoke_hello")
        return await env.rollout(row, ClientConfig(api_base_url=url, api_key_var=POLICY_KEY_VAR, max_retries=0), "script")
    finally:
        server.should_exit = True


@pytest.mark.parametrize("attack", sorted(FROM_A_TOOL_CALL))
async def test_an_attack_on_its_own_sandbox_leaves_the_rollout_to_the_model(env, attack, tmp_path, monkeypatch):
    tool, args = FROM_A_TOOL_CALL[attack]
    state = await _play(env, [{"tool": tool, "args": args}, ANSWER], tmp_path, monkeypatch)
    grade = state["grade"]
    assert state.get("error") is None, state.get("error")
    assert grade["scoring_error"] is None and state.get("scoring_error") is None, grade["reason"]
    assert grade["score"] == 1.0, grade["reason"]
    said = [m.content for m in state["completion"] if m.role == "tool"][0]
    if state["sandbox_state"]["replaced"]:
        assert "replaced by a fresh sandbox" in said and "the task's starting files" in said, said
    assert await _none_left(env.backend.client_id)


async def _none_left(client_id: str, within: float = 60) -> bool:
    """No container of this backend remains (grading containers are removed in the background)."""
    mine = {"label": f"websandbox.client={client_id}"}
    deadline = time.monotonic() + within
    while docker_client().api.containers(all=True, filters=mine):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.5)
    return True
