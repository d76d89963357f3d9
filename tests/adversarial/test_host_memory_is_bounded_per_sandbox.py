"""Whatever a sandbox sends, the host holds at most STREAM_BOUND bytes of its stream.

The threat: a flood on the agent's stream (100 MB on its stderr, 50 MB without a newline)
held whole by the host, which grows with it. The defence: no sandboxed code can write to
the agent's stream at all; and the host's own buffers are bounded: a ring of the last
64 KiB of stderr, one line of at most 16 MiB, frames consumed as they arrive whatever size
their header claims (sandbox/channel.py, sandbox/docker/channel.py). The floods are played
on a stand-in stream (nothing inside a sandbox can produce them) and the host's resident
memory is measured by the kernel's high-water mark.
"""

from __future__ import annotations

import json
import struct

import pytest

from sandbox_env.rollout.tools import run_bash, run_code
from sandbox_env.sandbox.docker.channel import LINE_MAX, STREAM_BOUND

FLOOD = 100 << 20
CHUNK = b"a" * (1 << 20)
SLACK = 8 << 20  # the interpreter's own allocations while the test runs


def test_a_100_mb_stderr_flood_grows_the_host_by_less_than_the_bound(flood_alone):
    def script(peer, req):
        for _ in range(FLOOD // len(CHUNK)):
            peer.stderr(CHUNK)
        peer.line({"id": req["id"], "pong": True})

    growth, said = flood_alone(script)
    assert "'pong': True" in said[0], said
    assert growth < STREAM_BOUND + SLACK, growth


def test_a_frame_after_the_reply_in_the_same_chunk_keeps_the_stream_in_step(fake_agent):
    """The reply ends a call, not the reading of its chunk: a frame behind it is read whole."""

    def script(peer, req):
        reply = json.dumps({"id": req["id"], "pong": True}).encode() + b"\n"
        stderr = b"after the reply"
        peer.raw(struct.pack(">BxxxI", 1, len(reply)) + reply + struct.pack(">BxxxI", 2, len(stderr)) + stderr)

    agent = fake_agent(script)
    for _ in range(3):
        assert agent.channel.call({"op": "ping"}, wait=60)["pong"] is True
    assert agent.channel.stderr_tail() == "after the reply" * 3 and agent.channel.broken is None


def test_100_mb_without_a_newline_breaks_the_stream_with_a_reason_and_a_bounded_host(flood_alone):
    def script(peer, req):
        for _ in range(FLOOD // len(CHUNK)):
            peer.frame(1, CHUNK)

    growth, said = flood_alone(script, calls=2)
    assert f"more than {LINE_MAX >> 20} MiB without a line end" in said[0], said
    assert growth < STREAM_BOUND + SLACK, growth
    assert "without a line end" in said[1], said  # later calls: the same reason, at once


def test_a_frame_header_claiming_4_gib_is_consumed_as_it_arrives(flood_alone):
    def script(peer, req):
        peer.raw(struct.pack(">BxxxI", 2, 0xFFFFFFF0))
        for _ in range(FLOOD // len(CHUNK)):
            peer.raw(CHUNK)
        # the rest of the claimed frame never comes: the agent stops answering
        peer.sock.shutdown(1)

    growth, said = flood_alone(script)
    assert "stream to the sandbox agent broke" in said[0], said
    assert growth < STREAM_BOUND + SLACK, growth


@pytest.mark.docker
async def test_floods_from_inside_a_sandbox_cannot_reach_the_host(session, agent_pid, peak_rss):
    peak_rss.reset()
    for fd in (1, 2):
        out = await run_bash(session, f"head -c 100M /dev/zero > /proc/{agent_pid}/fd/{fd}", timeout=30)
        assert "Permission denied" in out
    out = await run_bash(session, "head -c 100M /dev/zero | tr '\\0' a; head -c 100M /dev/zero >&2", timeout=60)
    assert "output were not read" in out
    out = await run_code(session, "import os\nfor _ in range(100): os.write(1, b'x' * (1 << 20))", timeout=60)
    assert out.startswith("xxx")
    assert peak_rss.growth() < STREAM_BOUND + SLACK, peak_rss.growth()
    await run_code(session, "result = [('real',)]", timeout=10)
    assert await session.probe("result") == {"list": [{"tuple": ["real"]}]}


@pytest.mark.docker
async def test_an_exec_reply_stays_under_the_line_limit_whatever_the_output(sandbox):
    """Control characters take 6 bytes in JSON: the agent measures and cuts, so a grader's output still fits."""
    res = await sandbox.exec("head -c 10M /dev/zero; head -c 10M /dev/zero >&2", timeout=60, max_output=64 << 20)
    assert res.exit_code == 0 and res.truncated > 0
    assert len(res.stdout) + len(res.stderr) < LINE_MAX // 6 + 1
