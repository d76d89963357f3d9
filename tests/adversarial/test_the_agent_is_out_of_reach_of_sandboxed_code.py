"""The supervisor cannot be read, written, signalled or traced from a tool call or a cell.

The threat: an agent of the tools' uid, whose requests `cat /proc/<agent>/fd/0` steals,
which `kill -STOP` freezes and `kill -9 -1` kills. The decision: the agent runs as root with
SETUID/SETGID/KILL/SYS_RESOURCE only, and every sandboxed process is uid 1000.
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash, run_code

pytestmark = pytest.mark.docker


async def _graded_value_is_real(sb) -> None:
    await run_code(sb, "result = [('real',)]", timeout=10)
    assert await sb.probe("result") == {"list": [{"tuple": ["real"]}]}


async def test_reading_the_agents_input_is_denied_and_the_next_call_is_answered(session, agent_pid):
    for pid in (agent_pid, "1"):  # the agent, and docker-init which holds the same stream
        out = await run_bash(session, f"timeout 5 cat /proc/{pid}/fd/0", timeout=10)
        assert "Permission denied" in out, out
    out = await run_bash(session, f"(timeout 20 cat /proc/{agent_pid}/fd/0 > /tmp/stolen 2>&1 &); sleep 1", timeout=10)
    assert await run_bash(session, "echo answered; cat /tmp/stolen", timeout=5) == (
        f"answered\ncat: /proc/{agent_pid}/fd/0: Permission denied"
    )
    await _graded_value_is_real(session)


async def test_the_agents_descriptors_memory_and_environment_are_closed(session, agent_pid):
    for path in ("fd", "fdinfo", "cwd", "root", "map_files"):
        out = await run_bash(session, f"ls /proc/{agent_pid}/{path}/", timeout=10)
        assert "Permission denied" in out, (path, out)
    for path in ("fd/0", "fd/1", "mem", "environ", "maps", "stack"):
        out = await run_bash(session, f"head -c 1 /proc/{agent_pid}/{path}", timeout=10)
        assert "Permission denied" in out, (path, out)


async def test_signals_to_the_agent_are_refused(session, agent_pid):
    for sig in ("STOP", "KILL", "TERM", "INT"):
        out = await run_bash(session, f"kill -{sig} {agent_pid}", timeout=10)
        assert "Operation not permitted" in out, (sig, out)
    out = await run_bash(session, "kill -STOP 1", timeout=10)
    assert "Operation not permitted" in out
    assert await run_bash(session, "echo still-answering", timeout=5) == "still-answering"
    await _graded_value_is_real(session)


async def test_kill_all_kills_only_the_models_processes(session):
    await run_code(session, "kept = 1", timeout=10)
    await run_bash(session, "setsid sleep 300 > /dev/null 2>&1 < /dev/null & echo started", timeout=10)
    out = await run_bash(session, "kill -9 -1; echo survived-own-kill", timeout=10)
    assert "survived-own-kill" in out  # Linux spares the caller
    procs = await run_bash(session, "grep -l '^sleep' /proc/[0-9]*/comm 2>/dev/null | wc -l", timeout=10)
    assert procs == "0"
    cell = await run_code(session, "print('kept' in dir())", timeout=10)
    assert "the namespace was lost" in cell and cell.endswith("False")  # the session was the model's, it died
    await _graded_value_is_real(session)


async def test_tracing_the_agent_is_refused(session, agent_pid):
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"rc = libc.ptrace(16, {agent_pid}, 0, 0)\n"  # PTRACE_ATTACH
        "print(rc, os.strerror(ctypes.get_errno()))"
    )
    assert await run_code(session, code, timeout=10) == "-1 Operation not permitted"
    await _graded_value_is_real(session)


async def test_running_the_container_out_of_memory_kills_the_models_processes_not_the_agent(session):
    """Many hogs, each smaller than the agent: without its OOM score of -1000 the agent would be the victim."""
    ping = await session.backend.call(session.id, {"op": "ping"}, wait=10)
    if not ping.get("oom_protected"):
        pytest.skip("this engine cannot grant CAP_SYS_RESOURCE, so the agent cannot keep the OOM killer off itself")
    hog = "python -S -c 'import time; b = bytearray(6 << 20); b[::4096] = b\"x\" * (6 << 8); time.sleep(30)'"
    await run_bash(session, f"for i in $(seq 200); do {hog} & done; sleep 15", timeout=40)
    assert await run_bash(session, "echo still-answering", timeout=10) == "still-answering"
    await _graded_value_is_real(session)
