"""Tool commands, the Python session and what they start run as uid 1000 with no capability.

The agent holds SETUID, SETGID, KILL and SYS_RESOURCE; a child it starts switches every uid to 1000,
which clears its capability sets (CapPrm = CapEff = CapAmb = 0).
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash, run_code

pytestmark = pytest.mark.docker

STATUS = "grep -E '^(Uid|Gid|Groups|CapInh|CapPrm|CapEff|CapAmb):' /proc/self/status"


def _fields(text: str) -> dict[str, list[str]]:
    out = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        out[key] = value.split()
    return out


def _assert_unprivileged(status: dict[str, list[str]]) -> None:
    assert status["Uid"] == ["1000"] * 4 and status["Gid"] == ["1000"] * 4, status
    assert status["Groups"] == [], status
    for cap in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert int(status[cap][0], 16) == 0, (cap, status)


async def test_a_tool_command_and_its_children_hold_nothing(session):
    _assert_unprivileged(_fields(await run_bash(session, STATUS, timeout=10)))
    _assert_unprivileged(_fields(await run_bash(session, f'bash -c "{STATUS}" &\nwait', timeout=10)))


async def test_the_python_session_holds_nothing(session):
    out = await run_code(
        session,
        f"import subprocess\nprint(subprocess.run({STATUS!r}, shell=True, capture_output=True, text=True).stdout)",
        timeout=10,
    )
    _assert_unprivileged(_fields(out))


async def test_taking_back_root_fails(session):
    out = await run_code(session, "import os\ntry:\n    os.setuid(0)\nexcept OSError as e:\n    print(e)", timeout=10)
    assert "Operation not permitted" in out
    out = await run_bash(session, "python -c 'import os; os.setgroups([0])'", timeout=10)
    assert "Operation not permitted" in out


async def test_a_tool_command_inherits_no_descriptor_of_the_agent(session):
    """Its stdin/stdout/stderr are its own pipes, and nothing else is open."""
    out = await run_bash(session, "ls -l /proc/$$/fd | tail -n +2 | awk '{print $(NF-2), $NF}'", timeout=10)
    fds = dict(line.split(" ", 1) for line in out.splitlines())
    assert set(fds) == {"0", "1", "2"} and all(t.startswith("pipe:") for t in fds.values()), fds
    code = (
        "import os\nfor f in os.listdir('/proc/self/fd'):\n"
        "    try: print(f, os.readlink('/proc/self/fd/' + f))\n"
        "    except OSError: pass"  # listdir's own descriptor, closed by now
    )
    fds = dict(line.split(" ", 1) for line in (await run_code(session, code, timeout=10)).splitlines())
    streams = {fd for fd, target in fds.items() if target.startswith(("pipe:", "socket:"))}
    assert streams == {"3", "4"}, fds  # the session's own request and reply pipes; 0-2 are /dev/null and a file
