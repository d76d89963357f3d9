"""The verifiers env end to end: real rollouts driven by a scripted policy over HTTP, no model."""

from __future__ import annotations

import json

import pytest
from verifiers.types import ClientConfig

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.rollout.tools import ToolArgumentError, check_tool_args
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.docker.labels import LABEL


def test_tool_calls_with_missing_extra_or_mistyped_arguments_are_explained():
    with pytest.raises(ToolArgumentError, match="missing required argument.*'command'; it takes: command \\(string\\)"):
        check_tool_args("bash", {})
    with pytest.raises(ToolArgumentError, match="unexpected argument.*'timeout'"):
        check_tool_args("bash", {"command": "ls", "timeout": 5})
    with pytest.raises(ToolArgumentError, match="'code' must be a string, got int"):
        check_tool_args("execute_code", {"code": 5})
    with pytest.raises(ToolArgumentError, match="unknown tool 'python'; the tools are: bash, execute_code"):
        check_tool_args("python", {"code": "1"})
    check_tool_args("execute_code", {"code": "1"})


def test_unknown_task_ids_and_filters_are_errors_that_list_what_exists():
    from sandbox_env.dataset import load_rows, select_rows

    with pytest.raises(ValueError, match="unknown task id.*'nope'"):
        select_rows(load_rows(), task_ids=["nope"])
    with pytest.raises(ValueError, match="unknown family 'sql'; known:"):
        select_rows(load_rows(), family="sql")


def _containers() -> list[str]:
    return [c["Id"] for c in docker_client().api.containers(all=True, filters={"label": LABEL})]


@pytest.fixture(scope="module")
def smoke_script(tmp_path_factory):
    path = tmp_path_factory.mktemp("policy") / "script.json"
    path.write_text(
        json.dumps(
            {
                "smoke_sum": {
                    "calls": [
                        {"tool": "execute_code", "args": {"code": "total = sum(range(1, 101))"}},
                        {"tool": "execute_code", "args": {"code": "total"}},
                        {"tool": "bash", "args": {"command": "whoami; pwd"}},
                        {"tool": "bash", "args": {"command": "ls", "timeout": 3}},
                        {"tool": "execute_code", "args": {"code": "open('/workspace/sum.txt', 'w').write(str(total))"}},
                    ],
                    "final": "written",
                },
                "smoke_hello": {"calls": [{"tool": "bash", "args": {"command": "kill -9 -1"}}]},
            }
        )
    )
    return path


@pytest.fixture(scope="module")
def env(image):
    import websandbox

    e = websandbox.load_environment(family="smoke", image=image, pool_size=2)
    yield e
    e.backend.teardown()


async def _rollout(env, task_id: str, url: str, retries: int = 2):
    rows = env.get_eval_dataset()
    row = next(r for r in rows if r["info"]["task_id"] == task_id)
    client = ClientConfig(api_base_url=url, api_key_var=POLICY_KEY_VAR, max_retries=retries)
    return await env.rollout(row, client, "script")


async def _play(env, task_id: str, script):
    """One rollout of task_id against the scripted policy, served for the rollout's length."""
    server, url = start_policy_server("reference", script, "127.0.0.1", 0)
    try:
        return await _rollout(env, task_id, url)
    finally:
        server.should_exit = True


@pytest.mark.docker
async def test_scripted_rollout_runs_both_tools_keeps_the_namespace_and_leaves_nothing(env, smoke_script, monkeypatch):
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    state = await _play(env, "smoke_sum", smoke_script)
    tool_outputs = [m.content for m in state["completion"] if m.role == "tool"]
    assert tool_outputs[1] == "5050"  # the namespace survived between calls
    assert tool_outputs[2] == "sandbox\n/workspace"
    assert "unexpected argument" in tool_outputs[3]
    assert state["grade"]["score"] == 1.0 and state.get("scoring_error") is None
    assert state["sandbox_id"] not in _containers()  # only idle warm-pool sandboxes remain


@pytest.mark.docker
async def test_a_rollout_that_kills_every_process_it_can_scores_zero_as_its_own_fault(env, smoke_script, monkeypatch):
    """`kill -9 -1` reaches only the model's own processes: the agent survives, so this is no harness fault."""
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    state = await _play(env, "smoke_hello", smoke_script)
    assert state["grade"]["score"] == 0.0 and "does not exist" in state["grade"]["reason"]
    assert not state.get("scoring_error") and not state.get("error")
    assert state["sandbox_id"] not in _containers()


@pytest.mark.docker
async def test_a_setup_that_fails_is_a_harness_fault_that_reaches_the_trainer(image, monkeypatch):
    import verifiers as vf
    import websandbox

    # two processes are docker-init and the agent: the Python session cannot start
    e = websandbox.load_environment(family="smoke", image=image, pool_size=0, pids_limit=2)
    try:
        monkeypatch.setenv(POLICY_KEY_VAR, "local")
        state = await _rollout(e, "smoke_sum", "http://127.0.0.1:9/v1", retries=0)
    finally:
        e.backend.teardown()
    assert isinstance(state["error"], vf.InfraError) and type(state["error"]).__name__ == "HarnessFault"
    assert state["grade"]["score"] == 0.0 and state["grade"]["scoring_error"]
    assert state["scoring_error"] and "smoke_sum" in state["scoring_error"]
    assert state.get("sandbox_id") not in _containers()


@pytest.mark.docker
async def test_a_sandbox_removed_from_outside_mid_call_is_a_harness_fault_the_trainer_sees(image, tmp_path, monkeypatch):
    import asyncio

    import verifiers as vf
    import websandbox

    env = websandbox.load_environment(family="smoke", image=image, pool_size=0)  # no pool: one rollout container

    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    script = tmp_path / "sleep.json"
    script.write_text(json.dumps({"smoke_hello": {"calls": [{"tool": "bash", "args": {"command": "sleep 20"}}]}}))
    api = docker_client().api
    rollouts = {"label": [f"websandbox.client={env.backend.client_id}", "websandbox.role=rollout"]}

    def sleeping() -> str | None:
        for c in api.containers(filters=rollouts):
            if any("sleep 20" in " ".join(p) for p in api.top(c["Id"]).get("Processes") or []):
                return c["Id"]
        return None

    async def remove_it():  # as `docker rm -f`, an engine restart or a careless gc would
        while (cid := sleeping()) is None:  # once the model's command runs
            await asyncio.sleep(0.3)
        api.remove_container(cid, force=True)

    remover = asyncio.ensure_future(remove_it())
    try:
        state = await _play(env, "smoke_hello", script)
        await remover
    finally:
        env.backend.teardown()
    assert isinstance(state["error"], vf.InfraError) and type(state["error"]).__name__ == "HarnessFault"
    assert state["grade"]["score"] == 0.0 and state["scoring_error"]
    assert "killed from outside" in state["scoring_error"]


@pytest.mark.docker
async def test_a_rollout_whose_model_call_raises_leaves_no_container(env, monkeypatch):
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    state = await _rollout(env, "smoke_sum", "http://127.0.0.1:9/v1", retries=0)  # nothing listens on port 9
    assert state.get("error") is not None
    assert state["grade"]["score"] == 0.0
    assert state["sandbox_id"] not in _containers()


@pytest.mark.docker
async def test_teardown_removes_every_container_of_the_env_pool_included(env):
    sid = await env.backend.create(env.image)
    await env.backend.wait_warm(env.image, timeout=60)
    mine = {"label": f"websandbox.client={env.backend.client_id}"}
    assert len(docker_client().api.containers(all=True, filters=mine)) >= 3
    await env.teardown_sandboxes()
    assert sid not in _containers()
    assert docker_client().api.containers(all=True, filters=mine) == []
