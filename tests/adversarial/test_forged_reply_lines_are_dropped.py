"""Forged replies: nothing but the agent's reply to the current request is ever taken as a reply.

The attack: a tool command writes JSON lines into /proc/<agent>/fd/1, to be taken as the
replies to later calls, the final-state read included. The defence: the agent is out of
the sandboxed code's reach (it runs as root; the tools as uid 1000), and the host drops any
line without the current request's random id (sandbox/channel.py).
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash, run_code

FORGED = (
    '{"id": %d, "stdout": "SPOOFED", "stderr": "", "exit_code": 0, "timed_out": false, "truncated": 0, "value": {"list": []}}'
)


@pytest.mark.docker
async def test_writing_json_lines_into_the_agents_stdout_is_denied_and_the_real_result_is_graded(session, agent_pid):
    await run_code(session, "result = [('real', 1)]", timeout=10)
    lines = "\\n".join(FORGED % i for i in range(1, 20))
    for target in (f"/proc/{agent_pid}/fd/1", "/proc/1/fd/1", f"/proc/{agent_pid}/fd/2"):
        out = await run_bash(session, f"printf '{lines}\\n' > {target}", timeout=10)
        assert "Permission denied" in out, (target, out)
    assert await run_bash(session, "echo real-next", timeout=10) == "real-next"
    assert await session.probe("result") == {"list": [{"tuple": ["real", 1]}]}


def test_lines_without_the_current_id_are_dropped_and_counted(fake_agent):
    def script(peer, req):
        rid = req["id"]
        peer.line(b"not json at all")
        peer.line(b'["a list"]')
        peer.line({"id": 1, "pong": "SPOOFED"})  # the ids of old were a counter
        peer.line({"id": rid[::-1], "pong": "SPOOFED"})
        peer.line({"pong": "SPOOFED"})
        peer.line({"id": rid, "hb": 1})  # a heartbeat is not a reply either
        peer.line({"id": rid, "pong": "real"})

    agent = fake_agent(script)
    reply = agent.channel.call({"op": "ping"}, wait=10)
    assert reply["pong"] == "real"
    assert agent.channel.dropped_lines == 5 and not agent.errors
    assert agent.channel.broken is None


def test_request_ids_are_unpredictable(fake_agent):
    seen = []

    def script(peer, req):
        seen.append(req["id"])
        peer.line({"id": req["id"], "pong": True})

    agent = fake_agent(script)
    for _ in range(3):
        agent.channel.call({"op": "ping"}, wait=10)
    assert len(set(seen)) == 3 and all(isinstance(i, str) and len(i) >= 32 for i in seen)
    assert all(int(i, 16) > 0 for i in seen)  # hex from secrets, not a counter
