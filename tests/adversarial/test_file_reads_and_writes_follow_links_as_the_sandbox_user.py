"""The agent reads and writes /workspace with the sandbox user's rights, so planted links gain nothing.

The final-state read of the django and fastapi families (`read_files`) and the setup
writes (`write_files`) are done by the agent itself. A link the model plants is
followed with filesystem uid 1000, and only regular files are read or written, so a
FIFO or a device cannot hang or feed the agent. Whatever the model leaves at a
deliverable's path that cannot be read (a link loop, a socket, a link to a file whose
reads fail) reads as missing: before, the agent answered with an error, the host took
the final read for a harness fault, and a model could have any rollout rescheduled
instead of scored by leaving `ln -s app.py app.py` behind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_env.families.fastapi import FAMILY as FASTAPI
from sandbox_env.rollout.tools import run_bash
from sandbox_env.sandbox import SandboxError
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker


async def test_links_to_the_agents_private_files_read_as_missing(sandbox, agent_pid):
    await run_bash(
        sandbox,
        f"ln -s /proc/{agent_pid}/environ env; ln -s /proc/{agent_pid}/fd/0 stdin; ln -s /proc/1/environ init",
        timeout=10,
    )
    assert await sandbox.read_files(["env", "stdin", "init"], wait=10) == {"env": None, "stdin": None, "init": None}
    assert await run_bash(sandbox, "echo still-answering", timeout=5) == "still-answering"


async def test_fifos_and_devices_are_not_read_or_written(sandbox):
    await run_bash(sandbox, "mkfifo app.py; ln -s /dev/zero zero.py; ln -s /dev/null null.py", timeout=10)
    assert await sandbox.read_files(["app.py", "zero.py", "null.py"], wait=10) == {
        "app.py": None,
        "zero.py": None,
        "null.py": None,
    }
    with pytest.raises(SandboxError, match="app.py"):
        await sandbox.write_files({"app.py": "x"}, wait=10)
    with pytest.raises(SandboxError, match="not a regular file"):
        await sandbox.write_files({"null.py": "x"}, wait=10)


async def test_a_link_out_of_the_workspace_writes_only_where_uid_1000_may(sandbox):
    await run_bash(sandbox, "ln -s /dev/planted planted; ln -s /etc/passwd passwd", timeout=10)
    for name in ("planted", "passwd"):
        with pytest.raises(SandboxError, match="Permission denied|Read-only"):
            await sandbox.write_files({name: "x"}, wait=10)
    out = await run_bash(sandbox, "ls /dev/planted; grep -c sandbox /etc/passwd", timeout=10)
    assert "No such file" in out and out.splitlines()[0] == "1"


async def test_files_the_model_made_private_are_still_collected(sandbox):
    await run_bash(sandbox, "mkdir -p pkg && echo secret-ok > pkg/app.py && chmod 600 pkg/app.py && chmod 700 pkg", timeout=10)
    assert await sandbox.read_files(["pkg/app.py"], wait=10) == {"pkg/app.py": b"secret-ok\n"}
    await sandbox.write_files({"pkg/new.py": "x = 1\n"})
    assert await run_bash(sandbox, "stat -c '%u:%g' pkg/new.py", timeout=10) == "1000:1000"


async def test_link_loops_sockets_and_files_whose_reads_fail_read_as_missing(sandbox):
    await run_bash(
        sandbox,
        "ln -s loop.py loop.py; "
        "python3 -c \"import socket; socket.socket(socket.AF_UNIX).bind('sock.py')\"; "
        "python3 -c 'import os, time; os.setsid(); time.sleep(600)' > /dev/null 2>&1 & ln -s /proc/$!/mem mem.py",
        timeout=10,
    )
    paths = ["loop.py", "sock.py", "mem.py"]
    assert await sandbox.read_files(paths, wait=10) == dict.fromkeys(paths)
    assert await run_bash(sandbox, "echo still-answering", timeout=5) == "still-answering"


async def test_an_app_py_left_as_a_link_loop_is_the_models_zero_not_a_harness_fault(backend, image):
    root = Path(__file__).resolve().parents[2] / "sandbox_env" / "tasks" / "fastapi" / "fastapi_status_204"
    task = FASTAPI.compile_task(root)
    calls = [{"tool": "bash", "args": {"command": "rm -f app.py; ln -s app.py app.py"}}]
    run = await scripted_rollout(backend, image, task, calls)
    assert run.grade.score == 0.0 and run.grade.scoring_error is None, run.grade.reason
    assert "does not exist" in run.grade.reason
