"""A rollout container struck from outside is a harness fault that trainers reschedule, never the model's zero.

Rollouts run through the classic front door (`env.rollout`, a scripted policy on loopback)
while a fault strikes the rollout container from outside, through the real engine
(tests/fault_kit.py): `docker kill`, `docker rm -f`, `docker pause`, SIGSTOP to the agent
by root on the host. Stages:
- setup: the orm session is starting (its preamble imports Django);
- a tool call: a `sleep` in bash is under way;
- between turns: the fault strikes while the policy is asked for its next turn (the
  rollout's `get_model_response` is wrapped to do it first, so the moment is exact);
- the final collect: likewise before the final answer, so the collect (orm: the probe of
  `result`; smoke: reading the file) meets the struck container.
A rollout container starved of CPU from outside (`docker update --cpus 0.02`) before a
CPU-bound tool call: the call's limit counts active time, so it reaches its wall-clock
backstop first, and the call is a harness fault, not the model's timeout.
Every verdict: score 0.0, `scoring_error` set and `state["error"]` a `HarnessFault` (a
`vf.InfraError`), and no container left behind.

A rollout container whose pids or memory limit is lowered from outside (`docker update`)
between turns: the model's next command would fail to start or run out of memory under a
limit the backend never set, so the call is a harness fault, not the model's failure.

A SIGSTOP to the agent while the model's own processes keep the CPU busy is still the
harness's: sandboxed code cannot stop a root process, so the busy CPU does not make the
silence the model's (docker/procs.py).
"""

from __future__ import annotations

import asyncio
import json

import pytest
import verifiers as vf
from fault_kit import FAULTS, Injector, kill, leftovers, lower_memory_limit, lower_pids_limit, starve, stop_agent
from verifiers.types import ClientConfig

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.constants import TASKS_DIR
from sandbox_env.doors.classic import HarnessFault
from sandbox_env.verify import get_verifier

pytestmark = pytest.mark.docker

SMOKE_ANSWER = {"tool": "bash", "args": {"command": "echo 'hello, sandbox' > /workspace/hello.txt"}}
SLEEPING_CALL = {"tool": "bash", "args": {"command": "sleep 4; echo slept"}}
# four processes of the model's own keep its CPU busy for 12 s
BUSY_CALL = {
    "tool": "bash",
    "args": {"command": "for i in 1 2 3 4; do (end=$((SECONDS+12)); while [ $SECONDS -lt $end ]; do :; done) & done; wait"},
}


@pytest.fixture(scope="module")
def envs(image):
    import websandbox

    made = {}

    def env(family: str):
        if family not in made:
            made[family] = websandbox.load_environment(family=family, image=image, pool_size=0, timeout_per_command_seconds=20)
        return made[family]

    yield env
    for e in made.values():
        e.backend.teardown()


def _orm_task() -> tuple[str, list[dict]]:
    folder = sorted((TASKS_DIR / "orm").iterdir())[0]
    return folder.name, get_verifier("orm").reference_calls(folder)


async def _rollout(env, task_id: str, calls: list[dict], tmp_path, monkeypatch, before_turn: dict | None = None):
    """Play `calls` then a final answer; `before_turn` = {n: fault}: strike the rollout container before turn n."""
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    script = tmp_path / "script.json"
    script.write_text(json.dumps({task_id: {"calls": calls, "final": "done"}}))
    server, url = start_policy_server("reference", script, "127.0.0.1", 0)
    turns = 0
    original = env.get_model_response

    async def get_model_response(state, prompt_messages, *args, **kwargs):
        nonlocal turns
        turns += 1
        fault = (before_turn or {}).get(turns)
        if fault is not None:
            await asyncio.to_thread(fault, state["sandbox_state"]["sandbox_id"])
        return await original(state, prompt_messages, *args, **kwargs)

    monkeypatch.setattr(env, "get_model_response", get_model_response)
    try:
        row = next(r for r in env.get_eval_dataset() if r["info"]["task_id"] == task_id)
        return await env.rollout(row, ClientConfig(api_base_url=url, api_key_var=POLICY_KEY_VAR, max_retries=0), "script")
    finally:
        server.should_exit = True


def _assert_harness_fault(state, env) -> None:
    grade = state["grade"]
    assert grade["score"] == 0.0 and grade["scoring_error"], grade["reason"]
    assert state.get("scoring_error"), grade
    assert isinstance(state.get("error"), HarnessFault) and isinstance(state["error"], vf.InfraError), state.get("error")
    assert leftovers(env.backend.client_id) == []


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_rollout_container_struck_during_setup_is_a_harness_fault(envs, fault, tmp_path, monkeypatch):
    env = envs("orm")
    task_id, calls = _orm_task()
    with Injector(env.backend.client_id, "rollout", "session.py", FAULTS[fault], delay=0.0) as injector:
        state = await _rollout(env, task_id, calls, tmp_path, monkeypatch)
    assert injector.hits and injector.errors == [], injector.errors
    _assert_harness_fault(state, env)


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_rollout_container_struck_during_a_tool_call_is_a_harness_fault(envs, fault, tmp_path, monkeypatch):
    env = envs("smoke")
    with Injector(env.backend.client_id, "rollout", "sleep 4", FAULTS[fault]) as injector:
        state = await _rollout(env, "smoke_hello", [SLEEPING_CALL, SMOKE_ANSWER], tmp_path, monkeypatch)
    assert injector.hits and injector.errors == [], injector.errors
    _assert_harness_fault(state, env)


@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_rollout_container_struck_between_turns_is_a_harness_fault(envs, fault, tmp_path, monkeypatch):
    env = envs("smoke")
    state = await _rollout(env, "smoke_hello", [SMOKE_ANSWER, SMOKE_ANSWER], tmp_path, monkeypatch, {2: FAULTS[fault]})
    _assert_harness_fault(state, env)


@pytest.mark.parametrize("family", ["smoke", "orm"])
@pytest.mark.parametrize("fault", sorted(FAULTS))
async def test_a_rollout_container_struck_before_its_final_collect_is_a_harness_fault(envs, family, fault, tmp_path, monkeypatch):
    env = envs(family)
    task_id, calls = ("smoke_hello", [SMOKE_ANSWER]) if family == "smoke" else _orm_task()
    state = await _rollout(env, task_id, calls, tmp_path, monkeypatch, {len(calls) + 1: FAULTS[fault]})
    _assert_harness_fault(state, env)


async def test_an_agent_stopped_from_outside_while_the_models_processes_keep_the_cpu_busy_is_a_harness_fault(
    envs, tmp_path, monkeypatch
):
    env = envs("smoke")
    with Injector(env.backend.client_id, "rollout", "SECONDS+12", stop_agent, delay=1.0) as injector:
        state = await _rollout(env, "smoke_hello", [BUSY_CALL, SMOKE_ANSWER], tmp_path, monkeypatch)
    assert injector.hits and injector.errors == [], injector.errors
    assert state["sandbox_state"]["replaced"] == 0, "the harness's SIGSTOP was taken for the model's own doing"
    _assert_harness_fault(state, env)
    assert "stopped by a signal from outside" in state["scoring_error"], state["scoring_error"]


@pytest.mark.parametrize("tool", [pytest.param("bash", marks=pytest.mark.slow), "execute_code"])  # one tool shows it
async def test_a_tool_call_in_a_rollout_container_starved_from_outside_is_a_harness_fault(image, tool, tmp_path, monkeypatch):
    import websandbox

    # a 3 s limit: its backstop (18 s) passes long before a fiftieth of a CPU gives 3 s of active time
    env = websandbox.load_environment(family="smoke", image=image, pool_size=0, timeout_per_command_seconds=3)
    count = "n = 0\nwhile n < 2 * 10**7: n += 1\nprint(n)"
    call = {"tool": tool, "args": {"command": f"python -c '{count}'"} if tool == "bash" else {"code": count}}
    try:
        strike = {1: lambda cid: starve(cid, 20_000_000)}
        state = await _rollout(env, "smoke_hello", [call, SMOKE_ANSWER], tmp_path, monkeypatch, strike)
        _assert_harness_fault(state, env)
        # the backstop, or (at such a quota) an agent that fell silent first: the harness's either way
        assert any(why in state["scoring_error"] for why in ("starved of CPU", "stopped answering")), state["scoring_error"]
    finally:
        env.backend.teardown()


@pytest.mark.parametrize("cut", [lower_pids_limit, lower_memory_limit], ids=["pids", "memory"])
async def test_a_rollout_container_whose_limit_is_lowered_from_outside_between_turns_is_a_harness_fault(
    envs, cut, tmp_path, monkeypatch
):
    env = envs("smoke")
    state = await _rollout(env, "smoke_hello", [SMOKE_ANSWER], tmp_path, monkeypatch, {1: cut})
    _assert_harness_fault(state, env)
    assert "changed from outside" in state["scoring_error"], state["scoring_error"]


@pytest.mark.parametrize("times", [1, 2])
async def test_a_grading_container_killed_from_outside_reaches_the_rollout_as_a_retry_or_a_harness_fault(
    envs, times, tmp_path, monkeypatch
):
    env = envs("smoke")
    with Injector(env.backend.client_id, "grader", "runtime/agent.py", kill, times, delay=0.0) as injector:
        state = await _rollout(env, "smoke_hello", [SMOKE_ANSWER], tmp_path, monkeypatch)
    assert len(injector.hits) == times and injector.errors == [], (injector.hits, injector.errors)
    if times == 1:
        assert state["grade"]["score"] == 1.0 and state.get("error") is None, state["grade"]["reason"]
        assert leftovers(env.backend.client_id) == []
    else:
        _assert_harness_fault(state, env)
