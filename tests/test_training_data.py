"""What a trainer reads from a classic rollout: tokens on every step, the prefix invariant,
a stop at the first overlong step, serializable outputs, command times.

The scripted policy server answers with token ids and logprobs shaped as vLLM's
(`tokens=True`); the rollouts are real (containers, tools, grading).
"""

from __future__ import annotations

import json

import pytest
from verifiers.types import ClientConfig
from verifiers.utils.save_utils import make_serializable

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.policy.tokens import encode, render_prompt

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def env(image):
    import websandbox

    e = websandbox.load_environment(family="smoke", image=image, pool_size=2)
    yield e
    e.backend.teardown()


@pytest.fixture(scope="module")
def policy_url():
    server, url = start_policy_server("reference", None, "127.0.0.1", 0, tokens=True)
    yield url
    server.should_exit = True


async def _rollout(env, task_id: str, url: str):
    row = next(r for r in env.get_eval_dataset() if r["info"]["task_id"] == task_id)
    return await env.rollout(row, ClientConfig(api_base_url=url, api_key_var=POLICY_KEY_VAR), "reference")


def test_the_policy_server_tokenizes_prompts_so_that_each_turn_extends_the_last():
    msgs = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    call = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}],
    }
    first = render_prompt(msgs, None)
    second = render_prompt([*msgs, call, {"role": "tool", "tool_call_id": "c1", "content": "out"}], None)
    assert second.startswith(first) and encode(second)[: len(encode(first))] == encode(first)


async def test_every_step_carries_tokens_and_each_prompt_extends_the_previous_turn(env, policy_url, monkeypatch):
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    env.set_max_seq_len(None)
    state = await _rollout(env, "smoke_sum", policy_url)
    steps = state["trajectory"]
    assert len(steps) == 3 and state["grade"]["score"] == 1.0
    for step in steps:
        tokens = step["tokens"]
        assert tokens is not None, "a step without tokens trains on nothing"
        assert tokens["prompt_ids"] and tokens["completion_ids"]
        assert len(tokens["completion_logprobs"]) == len(tokens["completion_ids"])
        assert all(lp <= 0 for lp in tokens["completion_logprobs"])
    for before, after in zip(steps, steps[1:], strict=False):
        seen = before["tokens"]["prompt_ids"] + before["tokens"]["completion_ids"]
        assert after["tokens"]["prompt_ids"][: len(seen)] == seen


async def test_a_rollout_stops_at_its_first_overlong_step(env, policy_url, monkeypatch):
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    env.set_max_seq_len(None)
    full = await _rollout(env, "smoke_sum", policy_url)
    lengths = [len(s["tokens"]["prompt_ids"]) + len(s["tokens"]["completion_ids"]) for s in full["trajectory"]]
    env.set_max_seq_len(lengths[0] + 1)  # the first step fits, the second does not
    try:
        state = await _rollout(env, "smoke_sum", policy_url)
    finally:
        env.set_max_seq_len(None)
    assert len(state["trajectory"]) == 2
    assert state["trajectory"][-1]["tokens"]["is_truncated"]
    assert state["stop_condition"] == "overlong_step"
    tool_calls = [m for m in state["completion"] if m.role == "tool"]
    assert len(tool_calls) == 1, "the overlong step's tool call must not run"


async def test_scored_outputs_serialize_with_tokens_and_command_times(env, policy_url, monkeypatch):
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    row = next(r for r in env.get_eval_dataset() if r["info"]["task_id"] == "smoke_sum")
    client = ClientConfig(api_base_url=policy_url, api_key_var=POLICY_KEY_VAR)
    output = await env.run_rollout(row, client, "reference", {}, state_columns=["grade", "trajectory"])
    back = json.loads(json.dumps(output, default=make_serializable))  # as results.jsonl is written
    assert back["reward"] == 1.0 and back["grade"]["score"] == 1.0
    assert back["metrics"]["sandbox_command_execution_time"] > 0  # two tool calls were timed
    assert all(step["tokens"]["completion_ids"] for step in back["trajectory"])
