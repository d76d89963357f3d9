"""No call hangs past its limit: a stopped, silent or vanished agent is named as such, at once.

The threat: with the agent's input stolen or the agent stopped, a call would hang for its
whole limit (+15 s) and every later call would name the wrong cause. The decision
(sandbox/channel.py): the agent sends a heartbeat every second while it works; nothing for
5 s means "stopped answering", a closed stream means "the stream to the agent broke", and
the sandbox keeps that first reason for every later call.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from sandbox_env.rollout.tools import run_bash, run_code
from sandbox_env.sandbox import SandboxError
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.docker.channel import SILENCE_LIMIT, ChannelError

LIMIT = 60.0  # the tool call's own limit: detection must not wait for it


def _root_exec(sandbox, cmd: str) -> None:
    """What no sandboxed code can do: act on the agent as root (here, from the host)."""
    api = docker_client().api
    exec_id = api.exec_create(sandbox.id, ["sh", "-c", cmd], user="0")
    api.exec_start(exec_id)


@pytest.mark.docker
async def test_a_stopped_agent_is_reported_long_before_the_limit_and_the_reason_sticks(sandbox, agent_pid):
    _root_exec(sandbox, f"kill -STOP {agent_pid}")
    started = time.monotonic()
    with pytest.raises(SandboxError, match="stopped answering") as first:
        await run_bash(sandbox, "echo hello", timeout=LIMIT)
    waited = time.monotonic() - started
    assert waited < LIMIT / 2, waited  # the heartbeat found it, not the call's deadline
    with pytest.raises(SandboxError, match="stopped answering") as later:
        await run_code(sandbox, "1", timeout=LIMIT)
    assert "cannot be used any more" in str(later.value) and "exited" not in str(later.value)
    assert "exited" not in str(first.value)


@pytest.mark.docker
async def test_a_busy_agent_keeps_the_call_alive_past_the_silence_limit(session):
    out = await run_bash(session, f"sleep {SILENCE_LIMIT * 2:g}; echo done", timeout=LIMIT)
    assert out == "done"
    assert await run_code(session, f"import time; time.sleep({SILENCE_LIMIT * 2:g}); 'done'", LIMIT) == "'done'"


@pytest.mark.docker
async def test_a_container_that_vanishes_mid_call_says_the_stream_broke(sandbox):
    task = asyncio.ensure_future(run_bash(sandbox, "sleep 30", timeout=LIMIT))
    await asyncio.sleep(1)
    await asyncio.to_thread(docker_client().api.kill, sandbox.id)
    with pytest.raises(SandboxError, match="stream to the sandbox agent broke"):
        await task
    with pytest.raises(SandboxError, match="stream to the sandbox agent broke.*cannot be used any more"):
        await run_bash(sandbox, "echo again", timeout=5)


def test_an_agent_that_answers_once_then_goes_silent_is_reported_after_the_silence_limit(fake_agent):
    calls = []

    def script(peer, req):
        calls.append(req)
        if len(calls) == 1:
            peer.line({"id": req["id"], "pong": True})

    agent = fake_agent(script)
    agent.channel.call({"op": "ping"}, wait=10)
    t0 = time.monotonic()
    with pytest.raises(ChannelError, match="stopped answering"):
        agent.channel.call({"op": "ping"}, wait=LIMIT)
    assert time.monotonic() - t0 < LIMIT / 2


def test_an_agent_that_beats_but_never_finishes_fails_at_the_calls_deadline(fake_agent):
    def script(peer, req):
        if req["op"] == "ping":
            peer.line({"id": req["id"], "pong": True})
            return
        for n in range(8):
            peer.line({"id": req["id"], "hb": n})
            time.sleep(1)

    agent = fake_agent(script)
    agent.channel.call({"op": "ping"}, wait=10)
    with pytest.raises(ChannelError, match="did not finish the call within 3s"):
        agent.channel.call({"op": "exec"}, wait=3)
