"""The v1 front door without containers: what loads, what travels, what the model is offered."""

from __future__ import annotations

import dataclasses
import json

import pytest
import verifiers.v1 as vf
from mcp.server.mcpserver import MCPServer

from sandbox_env.dataset import load_rows, select_rows
from sandbox_env.doors.v1 import WebSandboxEnv, WebSandboxTaskset, WebSandboxToolset, WebSandboxToolsetConfig
from sandbox_env.doors.v1.taskset import task_row
from sandbox_env.rollout.core import Rollouts, SandboxSettings


def _taskset(**fields) -> vf.Taskset:
    return vf.load_taskset(vf.taskset_config_type("websandbox").model_validate({"id": "websandbox", **fields}))


def test_the_installed_environment_package_exposes_the_taskset_and_its_env():
    assert isinstance(_taskset(), WebSandboxTaskset)
    assert vf.environment_class("websandbox") is WebSandboxEnv


def test_the_taskset_loads_every_task_row_and_filters_like_load_environment():
    rows = select_rows(load_rows())  # every task but smoke, in turn by family and source
    assert {r["info"]["family"] for r in rows} == {"django", "fastapi", "orm"}
    assert len(rows) == sum(1 for r in load_rows() if r["info"]["family"] != "smoke")
    tasks = list(_taskset())
    assert [t.data.task_id for t in tasks] == [r["info"]["task_id"] for r in rows]
    assert [t.data.prompt for t in tasks] == [r["question"] for r in rows]
    assert {t.data.family for t in _taskset(family="fastapi", difficulty="hard")} == {"fastapi"}
    with pytest.raises(ValueError, match="unknown family 'sql'; known:"):
        list(_taskset(family="sql"))


def test_wire_task_data_carries_no_answer_key():
    row = next(r for r in load_rows() if r["info"]["family"] == "orm")
    task = next(t for t in _taskset(family="orm") if t.data.task_id == row["info"]["task_id"])
    wire = json.dumps(task.data.model_dump(mode="json"))
    assert "grading" not in wire and row["info"]["grading"] not in wire
    assert task.key == row["info"]["task_id"]


def test_a_request_whose_prompt_differs_from_the_installed_task_is_refused():
    with pytest.raises(ValueError, match="prompt differs"):
        task_row("dj01", "write me a poem")
    with pytest.raises(ValueError, match="unknown task id 'nope'"):
        task_row("nope")


async def test_the_toolset_offers_exactly_bash_and_execute_code_with_one_string_argument_each():
    server = MCPServer("websandbox")
    WebSandboxToolset(WebSandboxToolsetConfig()).register(server)
    tools = {t.name: t.input_schema for t in await server.list_tools()}
    assert set(tools) == {"bash", "execute_code"}
    assert tools["bash"]["required"] == ["command"] and tools["execute_code"]["required"] == ["code"]


def test_the_env_defaults_to_websandboxs_harness_on_the_host_and_refuses_a_harness_that_would_not_ask_the_gate():
    from verifiers.v1.utils.loaders import default_harness_id, harness_class

    from sandbox_env.doors.v1 import WebSandboxHarness

    config = vf.resolve_env_config({"taskset": {"id": "websandbox"}})
    assert config.agent.harness is None and config.agent.runtime.type == "subprocess"  # the taskset's default
    assert default_harness_id("websandbox") == "websandbox" and harness_class("websandbox") is WebSandboxHarness
    assert vf.load_environment(config).taskset.config.tools.bash is True  # the default harness uses the taskset's bash
    terminus = vf.resolve_env_config(
        {"taskset": {"id": "websandbox"}, "agent": {"harness": {"id": "terminus-2"}, "runtime": {"type": "docker"}}}
    )
    with pytest.raises(ValueError, match="never asks v1's tool gate"):
        vf.load_environment(terminus)


@pytest.mark.docker
def test_max_sandboxes_is_a_taskset_setting_that_bounds_the_hosts_containers():
    assert _taskset().config.task.settings().max_sandboxes is None  # the host's default (sandbox/budget.py)
    config = vf.resolve_env_config({"taskset": {"id": "websandbox", "task": {"max_sandboxes": 3}}})
    settings = config.taskset.task.settings()
    backend = Rollouts(dataclasses.replace(settings, image="any"))  # starts no container
    try:
        assert settings.max_sandboxes == 3 and backend.sandboxes.budget.limit == 3
    finally:
        backend.teardown()


def test_the_task_config_takes_every_setting_by_its_name_and_default():
    fields = _taskset().config.task.__class__.model_fields
    expected = {f.name: f.default for f in dataclasses.fields(SandboxSettings)}
    missing = [name for name in expected if name not in fields]
    assert missing == [], f"the v1 task config lacks settings {missing}"
    differ = {n: (fields[n].default, d) for n, d in expected.items() if fields[n].default != d}
    assert differ == {}, f"defaults differ from SandboxSettings: {differ}"
    assert _taskset().config.task.settings() == SandboxSettings()


def test_the_model_is_told_the_configured_per_call_limit():
    task = next(iter(_taskset(task={"timeout_per_command_seconds": 45})))
    assert "time limit of 45 seconds" in " ".join(task.data.system_prompt.split())


def test_load_environments_hint_on_verifiers_0_4_names_a_call_that_works():
    import websandbox

    with pytest.raises(RuntimeError) as caught:
        websandbox.load_environment()
    code = str(caught.value).split("`")[1]
    scope: dict = {}
    exec(code, scope)  # the hint's own code, as a user would paste it
    assert isinstance(scope["taskset"], WebSandboxTaskset)


def test_a_harness_that_runs_commands_itself_loads_with_its_own_bash_in_place_of_the_taskset_s():
    for runtime in ("subprocess", "docker"):
        config = vf.resolve_env_config(
            {"taskset": {"id": "websandbox"}, "agent": {"harness": {"id": "bash"}, "runtime": {"type": runtime}}}
        )
        env = vf.load_environment(config)
        assert env.taskset.config.tools.bash is False  # execute_code stays: the orm deliverable is the session's


@pytest.mark.docker
async def test_the_gold_check_plays_the_reference_through_the_real_grader(image):
    tasks = {t.data.task_id: t for t in _taskset(task_ids=["smoke_hello", "fastapi_path_order"], task={"image": image})}
    assert await tasks["smoke_hello"].validate() is True
    assert await tasks["fastapi_path_order"].validate() is True


@pytest.mark.docker
async def test_the_gold_check_fails_when_the_played_answer_does_not_solve_the_task(image, monkeypatch):
    import sandbox_env.verify

    monkeypatch.setattr(
        sandbox_env.verify, "reference_calls", lambda family, task_id: [{"tool": "bash", "args": {"command": "true"}}]
    )
    task = next(iter(_taskset(task_ids=["smoke_hello"], task={"image": image})))
    assert await task.validate() is False
