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

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.sandbox.docker import docker_client, leaked_containers
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID, LABEL_ROLE

pytestmark = pytest.mark.docker

TASKS = [*SWEEP_TASKS, "smoke_sum", "smoke_hello"]

# Sandboxes ended from inside, for real: the model's code waits for its cue, then fills the memory.
# Before the cue the test makes the agent the OOM killer's first choice, as it is on an engine that
# cannot grant the agent SYS_RESOURCE (sandbox/docker/hardening.py); the engine then records an OOM
# death, which the backend diagnoses as the sandbox's own doing.
MEMORY_BOMB_ON_CUE_BASH = (
    "touch /tmp/waiting; until [ -e /tmp/go ]; do sleep 0.1; done; "
    "python -c \"chunks = []\nwhile True: chunks.append(b'x' * (64 << 20))\""
)
MEMORY_BOMB_ON_CUE_APP = """import os, time
open("/tmp/waiting", "w").close()
while not os.path.exists("/tmp/go"):
    time.sleep(0.1)
chunks = []
while True:
    chunks.append(b"x" * (64 << 20))
"""
ANSWER = {"tool": "bash", "args": {"command": "echo 'hello, sandbox' > /workspace/hello.txt"}}
FIND_AGENT = (
    "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -v docker-init "
    "| grep -q 'runtime/agent.py' && echo ${p#/proc/}; done | head -1"
)
UNPROTECT_AGENT_AND_CUE = (
    "for i in $(seq 600); do [ -e /tmp/waiting ] && break; sleep 0.1; done; "
    f"a=$({FIND_AGENT}); for i in 1 2 3; do echo 1000 > /proc/$a/oom_score_adj; echo 1000 > /proc/1/oom_score_adj; "
    "sleep 0.3; done; touch /tmp/go"
)


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
    folder = tmp_path_factory.mktemp("policy")
    script, bomb = folder / "break.json", folder / "bomb.json"
    script.write_text(json.dumps({"smoke_hello": {"calls": [{"tool": "bash", "args": {"command": "kill -9 -1"}}]}}))
    write_app = f"cat > /workspace/app.py <<'EOF'\n{MEMORY_BOMB_ON_CUE_APP}EOF"
    bomb.write_text(
        json.dumps(
            {
                "smoke_hello": {"calls": [{"tool": "bash", "args": {"command": MEMORY_BOMB_ON_CUE_BASH}}, ANSWER]},
                "fastapi_body_embed": {"calls": [{"tool": "bash", "args": {"command": write_app}}]},
            }
        )
    )
    servers, urls = {}, {}
    for name, policy, path in [("reference", "reference", None), ("script", "reference", script), ("bomb", "reference", bomb)]:
        servers[name], urls[name] = start_policy_server(policy, path, "127.0.0.1", 0)
    yield urls
    for server in servers.values():
        server.should_exit = True


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


async def test_a_model_whose_processes_end_its_sandbox_goes_on_in_a_fresh_one_where_its_answer_scores_one(
    env_config, env_server, policies
):
    episode = asyncio.ensure_future(_episodes(env_config, env_server, policies["bomb"], "script", ["smoke_hello"]))
    await _end_from_inside_on_cue(await _container(env_server[1], "rollout", episode))
    trace = (await episode)["smoke_hello"]
    assert trace.ok, trace.errors
    assert trace.reward == 1.0 and trace.metrics["scoring_error"] == 0.0, trace.info.get("grade")
    said = [str(m.content) for m in trace.branches[-1].messages if m.role == "tool"]
    assert "replaced by a fresh sandbox" in said[0] and "out of memory" in said[0], said
    assert await _server_containers_gone(env_server[1]), "the ended or the fresh sandbox outlived the episode"


async def test_graded_code_that_ends_its_grading_sandbox_scores_zero_with_no_trace_error(env_config, env_server, policies):
    # the submission's own zero: a trace error here would have the trainer reschedule it, and the policy escape it
    episode = asyncio.ensure_future(_episodes(env_config, env_server, policies["bomb"], "script", ["fastapi_body_embed"]))
    await _end_from_inside_on_cue(await _container(env_server[1], "grader", episode))
    trace = (await episode)["fastapi_body_embed"]
    grade = trace.info.get("grade") or {}
    assert trace.ok and not trace.errors, (trace.errors, grade.get("reason"))
    assert trace.reward == 0.0 and trace.metrics["scoring_error"] == 0.0 and grade["scoring_error"] is None
    assert "ended its grading sandbox" in grade["reason"] and "out of memory" in grade["reason"], grade["reason"]
    assert await _server_containers_gone(env_server[1])


async def _container(pid: int, role: str, episode: asyncio.Future, timeout: float = 300) -> str:
    """The id of the env server's first running container of `role`, once there is one."""
    api = docker_client().api
    mine = {"label": [LABEL, f"{LABEL_PID}={pid}", f"{LABEL_ROLE}={role}"]}
    for _ in range(int(timeout / 0.2)):
        found = await asyncio.to_thread(api.containers, filters=mine)
        if found:
            return found[0]["Id"]
        assert not episode.done(), f"the episode ended before a {role} sandbox was seen: {episode.result()}"
        await asyncio.sleep(0.2)
    raise AssertionError(f"no {role} container appeared")


async def _end_from_inside_on_cue(container_id: str) -> None:
    """Once the model's code waits for its cue: the agent first in the OOM killer's line, then the cue."""
    script = (
        "for i in $(seq 1200); do [ -e /tmp/waiting ] && break; sleep 0.1; done; [ -e /tmp/waiting ] || exit 3; "
        f"a=$({FIND_AGENT}); for i in 1 2 3; do echo 1000 > /proc/$a/oom_score_adj; echo 1000 > /proc/1/oom_score_adj; "
        "sleep 0.3; done; touch /tmp/go"
    )
    container = docker_client().containers.get(container_id)
    done = await asyncio.to_thread(container.exec_run, ["sh", "-c", script], user="0")
    assert done.exit_code == 0, done.output


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
