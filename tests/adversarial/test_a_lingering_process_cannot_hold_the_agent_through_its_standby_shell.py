"""What the model's lingering processes do to the standby shell changes only the model's own next call.

The agent starts the next bash after a plain command (runtime/container/standby.py). That
shell is the sandbox's process, uid 1000: a process the model left running (in its own
session, so the call's group kill spares it) can kill it, stop it or write into its command
pipe through /proc/PID/fd/N. None of it may hold the agent or turn into a harness fault:
a killed, stopped or ended standby is discarded and the command starts its own bash (a line
written into its pipe between calls ends it: it runs that line, unread, and exits); a pipe
filled so that the agent's write is refused is discarded too. Junk written just as a call
arrives is read by the shell with the model's command, the model's doing, and the call
after that one is clean again.
"""

from __future__ import annotations

import asyncio

import pytest

pytestmark = pytest.mark.docker

SHELL_OF_THIS_COMMAND = "tr '\\0' ' ' < /proc/$$/cmdline"
# The lingering process: half a second after the call that left it, it finds the standby by its
# command line and acts on it; the command pipe is the descriptor the standby's script reads
# from (`<&N` in that command line).
LINGER = """
import os, re, signal, sys, time

time.sleep(0.5)
act = sys.argv[1]
for pid in filter(str.isdigit, os.listdir("/proc")):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read()
    except OSError:
        continue
    if b"__websandbox_command" not in cmd:
        continue
    if act in ("kill", "stop"):
        os.kill(int(pid), signal.SIGKILL if act == "kill" else signal.SIGSTOP)
        continue
    fd = re.search(rb"<&(\\d+)", cmd).group(1).decode()
    w = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
    data = b"x" * 70000 if act == "fill" else b"echo injected\\0"
    try:
        while data:
            data = data[os.write(w, data) :]
    except BlockingIOError:
        pass
"""


async def _after_lingering(sandbox, act: str):
    await sandbox.write_files({"/workspace/linger.py": LINGER})
    await sandbox.exec(
        f"setsid python /workspace/linger.py {act} </dev/null >/dev/null 2>&1 & sleep 0.3"
    )  # out of the group before it is killed
    await asyncio.sleep(2.0)  # the agent has started the next standby; the lingering process has acted
    return await sandbox.exec(SHELL_OF_THIS_COMMAND + "; echo; echo alive", timeout=20)


@pytest.mark.parametrize(
    "act",
    ["kill", "stop"],
)
async def test_a_standby_killed_or_stopped_is_replaced_by_a_fresh_bash(sandbox, act):
    got = await _after_lingering(sandbox, act)
    assert got.exit_code == 0 and not got.timed_out, got
    assert got.stdout.endswith("\nalive\n") and "__websandbox_command" not in got.stdout, got


async def test_a_standby_pipe_filled_from_outside_never_holds_the_agent(sandbox):
    got = await _after_lingering(sandbox, "fill")
    assert got.exit_code is not None, got  # an answer, the model's to read (its own junk ran first)
    clean = await sandbox.exec(SHELL_OF_THIS_COMMAND + "; echo; echo alive", timeout=20)
    assert clean.exit_code == 0 and clean.stdout.endswith("\nalive\n"), clean


async def test_a_command_written_into_the_standby_between_calls_is_not_the_next_calls_answer(sandbox):
    got = await _after_lingering(sandbox, "inject")
    # the standby ran the injected line on its own and ended: the agent discards it, unread
    assert got.exit_code == 0 and got.stdout.endswith("\nalive\n"), got
    assert "injected" not in got.stdout and "__websandbox_command" not in got.stdout, got
