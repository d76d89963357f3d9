"""prime-rl's path, done the way its orchestrator does it.

prime-rl's launcher starts a v1 env server (`verifiers.v1.serve.serve_env` with the
env config's `env_config_data`, as its `env-server` entry point does); its
orchestrator loads the taskset client-side with `vf.load_taskset(config.taskset)`,
waits for the server's health, and runs each episode with
`EnvClient.run(task_data=..., client=..., model=..., sampling=...)`; it trains on the
traces' tokens and rewards and reschedules traces that carry an error.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import sys
from pathlib import Path

import pytest
import verifiers.v1 as vf
from conftest import SWEEP_TASKS
from verifiers.v1.serve import EnvClient, env_config_data, serve_env

from sandbox_env.cli import POLICY_KEY_VAR, start_policy_server
from sandbox_env.sandbox.docker import docker_client, leaked_containers
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID

pytestmark = pytest.mark.docker

TASKS = [*SWEEP_TASKS, "smoke_sum", "smoke_hello"]


@pytest.fixture(scope="module")
def env_config(image):
    # pool_size 0: every rollout container is started for its rollout, so none may remain after it
    task = {"image": image, "pool_size": 0}
    return vf.resolve_env_config({"taskset": {"id": "websandbox", "task_ids": TASKS, "task": task}})


@pytest.fixture(scope="module")
def env_server(env_config):
    """The env server in its own process, as prime-rl's launcher runs it."""
    os.environ.setdefault(POLICY_KEY_VAR, "local-policy")  # read by the server's model client
    os.environ["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"  # uv, for the harness
    ctx = multiprocessing.get_context("spawn")
    addresses = ctx.Queue()
    proc = ctx.Process(
        target=serve_env,
        kwargs={
            "max_workers": 1,
            "address": "tcp://127.0.0.1:0",
            "address_queue": addresses,
            "config_data": env_config_data(env_config),
        },
    )
    proc.start()
    try:
        yield addresses.get(timeout=300), proc.pid
    finally:
        proc.terminate()
        proc.join(120)
        if proc.is_alive():
            proc.kill()


@pytest.fixture(scope="module")
def policies(tmp_path_factory):
    script = tmp_path_factory.mktemp("policy") / "break.json"
    script.write_text(json.dumps({"smoke_hello": {"calls": [{"tool": "bash", "args": {"command": "kill -9 -1"}}]}}))
    reference, ref_url = start_policy_server("reference", None, "127.0.0.1", 0)
    breaker, break_url = start_policy_server("reference", script, "127.0.0.1", 0)
    yield {"reference": ref_url, "script": break_url}
    reference.should_exit = breaker.should_exit = True


async def _episodes(env_config, server: tuple[str, int], url: str, model: str, task_ids: list[str]) -> dict[str, vf.Trace]:
    address, _ = server
    tasks = [t for t in vf.load_taskset(env_config.taskset) if t.data.task_id in task_ids]  # client-side, as prime-rl
    client = EnvClient(address=address)
    try:
        await client.wait_for_server_startup(timeout=300)
        gate = asyncio.Semaphore(3)

        async def run(task):
            async with gate:
                return await client.run(
                    task_data=task.data.model_dump(mode="json"),
                    client=vf.EvalClientConfig(base_url=url, api_key_var=POLICY_KEY_VAR),
                    model=model,
                    sampling=vf.SamplingConfig(),
                )

        episodes = await asyncio.gather(*(run(t) for t in tasks))
    finally:
        await client.close()
    return {e.traces[0].task.data.model_extra["task_id"]: e.traces[0] for e in episodes}


def _tool_calls(trace: vf.Trace) -> list[str]:
    return [c.name for m in trace.branches[-1].messages for c in (getattr(m, "tool_calls", None) or [])]


async def test_episodes_through_the_env_server_score_one_with_tool_calls_in_the_trace(env_config, env_server, policies):
    wanted = [*SWEEP_TASKS, "smoke_sum"]
    traces = await _episodes(env_config, env_server, policies["reference"], "reference", wanted)
    assert set(traces) == set(wanted)
    bad = {t: (tr.reward, tr.errors) for t, tr in traces.items() if tr.reward != 1.0 or not tr.ok}
    assert bad == {}
    calls = {t: _tool_calls(tr) for t, tr in traces.items()}
    assert calls["smoke_sum"] == ["execute_code", "execute_code"]
    assert {"bash", "execute_code"} <= {n for names in calls.values() for n in names}
    assert all(tr.metrics["scoring_error"] == 0.0 for tr in traces.values())
    # the tool results the model read are in the trace, after each call
    tool_msgs = [m for m in traces["smoke_sum"].branches[-1].messages if m.role == "tool"]
    assert [str(m.content) for m in tool_msgs][0] == "5050"


async def test_a_model_that_kills_every_process_it_can_gets_its_own_zero_not_a_harness_fault(env_config, env_server, policies):
    # `kill -9 -1` reaches only the sandboxed code's own processes: the agent (root) survives,
    # so the rollout ends normally and the zero is the model's (see the blame rule)
    traces = await _episodes(env_config, env_server, policies["script"], "script", ["smoke_hello"])
    trace = traces["smoke_hello"]
    assert trace.ok, trace.errors
    assert trace.reward == 0.0 and trace.metrics["scoring_error"] == 0.0


async def test_a_rollout_that_fails_before_finalize_leaves_no_sandbox_behind(env_config, env_server):
    traces = await _episodes(env_config, env_server, "http://127.0.0.1:9/v1", "reference", ["smoke_sum"])  # no model
    assert not traces["smoke_sum"].ok
    assert await _server_containers_gone(env_server[1]), "a rollout container outlived its episode"
    assert leaked_containers() == []


async def _server_containers_gone(pid: int, timeout: float = 60) -> bool:
    api = docker_client().api
    mine = {"label": [LABEL, f"{LABEL_PID}={pid}"]}
    for _ in range(int(timeout)):
        if not api.containers(all=True, filters=mine):
            return True
        await asyncio.sleep(1)  # grading containers are removed in the background
    return False
