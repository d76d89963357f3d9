"""The Docker sandbox itself: tools, time limits, isolation, resource limits, clear errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

import pytest

from sandbox_env.rollout.tools import cap_output, run_bash, run_code
from sandbox_env.sandbox import SandboxError

pytestmark = pytest.mark.docker


async def test_bash_returns_stdout_stderr_and_exit_code(sandbox):
    out = await run_bash(sandbox, "echo out; echo err >&2; exit 3", timeout=10)
    assert out.splitlines() == ["out", "stderr:", "err", "[exit code 3]"]


async def test_execute_code_keeps_its_namespace_between_calls(sandbox):
    await sandbox.start_python()
    assert await run_code(sandbox, "x = 41\nprint('set')", timeout=10) == "set"
    assert await run_code(sandbox, "x + 1", timeout=10) == "42"
    tb = await run_code(sandbox, "undefined_name", timeout=10)
    assert "NameError" in tb and "undefined_name" in tb
    assert await run_code(sandbox, "x", timeout=10) == "41"


async def test_bash_loads_its_utf8_locale_from_one_archive_not_a_dozen_files(sandbox):
    # each file a program opens on the image's storage is a round trip to its file server:
    # the locale comes from /usr/lib/locale/locale-archive (images/Dockerfile), the same C.UTF-8
    script = "grep -o 'lib/locale/.*' /proc/$$/maps | sort -u; locale charmap; printf %s \u00e9 | wc -m"
    out = (await sandbox.exec(script, timeout=10)).stdout.split()
    assert out == ["lib/locale/locale-archive", "UTF-8", "1"], out


async def test_sleep_past_the_limit_is_killed_and_the_sandbox_stays_usable(sandbox):
    t0 = time.perf_counter()
    res = await sandbox.exec("sleep 100 & sleep 100", timeout=2)
    # the limit, not the command, ended the call (a bound that a busy machine cannot break)
    assert res.timed_out and time.perf_counter() - t0 < 50
    assert "timed out after 2s" in await run_bash(sandbox, "sleep 100", timeout=2)
    ps = await sandbox.exec("ls /proc | grep -c '^[0-9]'", timeout=5)
    assert (await sandbox.exec("echo alive", timeout=5)).stdout == "alive\n"
    # no sleep survives: only init, the agent, ls/grep's shell and themselves remain
    assert int(ps.stdout) <= 6, ps.stdout


async def test_runaway_cell_is_interrupted_and_the_namespace_survives(sandbox):
    await sandbox.start_python()
    await sandbox.run_python("kept = 'yes'")
    # the agent answered: the host did not give up (a wide backstop: a busy test machine may starve the loop)
    res = await sandbox.run_python("while True: pass", timeout=2, backstop=60)
    assert res.timed_out and not res.restarted
    assert "namespace is kept" in res.output
    assert (await sandbox.run_python("kept")).output.strip() == "'yes'"


async def test_cell_that_ignores_interrupts_restarts_the_session_and_says_so(sandbox):
    await sandbox.start_python()
    await sandbox.run_python("kept = 1")
    code = "import signal, time\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True: time.sleep(0.1)"
    res = await sandbox.run_python(code, timeout=1)
    assert res.timed_out and res.restarted and "namespace was lost" in res.output
    assert "NameError" in (await sandbox.run_python("kept")).output


async def test_session_that_exits_is_restarted_with_a_message(sandbox):
    await sandbox.start_python()
    await sandbox.run_python("kept = 1")
    died = await sandbox.run_python("import os; os._exit(0)")
    assert died.restarted and "namespace was lost" in died.output
    assert (await sandbox.run_python("1 + 1")).output == "2\n"
    assert "NameError" in (await sandbox.run_python("kept")).output


async def test_tool_output_is_capped_saying_how_much_was_cut(sandbox):
    out = await run_bash(sandbox, "head -c 50000 /dev/zero | tr '\\0' a", timeout=10, cap=1000)
    assert len(out) < 1200 and "49000 characters cut" in out


def test_cap_output_keeps_head_and_tail():
    text = "H" * 50 + "x" * 1000 + "T" * 50
    out = cap_output(text, cap=300)
    assert out.startswith("H" * 50) and out.endswith("T" * 50) and "800 characters cut" in out


async def test_sandbox_has_no_network(sandbox):
    res = await sandbox.exec(
        ["python", "-c", "import socket; s = socket.socket(); s.settimeout(2); s.connect(('1.1.1.1', 80))"], timeout=10
    )
    assert res.exit_code != 0 and "unreachable" in res.stderr.lower()
    assert (await sandbox.exec("ls /sys/class/net", timeout=5)).stdout.split() == ["lo"]


async def test_sandbox_runs_as_non_root_and_writes_only_workspace_and_tmp(sandbox):
    assert (await sandbox.exec("id -u", timeout=5)).stdout.strip() == "1000"
    for path in ("/etc/x", "/opt/venv/lib/x", "/usr/x", "/opt/websandbox/runtime/x", "/x"):
        res = await sandbox.exec(f"touch {path}", timeout=5)
        assert res.exit_code != 0, path
    assert (await sandbox.exec("touch /workspace/ok /tmp/ok && echo ok", timeout=5)).stdout == "ok\n"
    res = await sandbox.exec(["python", "-c", "import django, pathlib; pathlib.Path(django.__file__).write_text('')"])
    assert res.exit_code != 0 and ("Read-only" in res.stderr or "Permission" in res.stderr)


async def test_writable_space_is_bounded(sandbox):
    res = await sandbox.exec("head -c 400M /dev/zero > /workspace/big", timeout=30)
    assert res.exit_code != 0 and "No space left" in res.stderr


async def test_fork_bomb_and_huge_allocation_hit_limits_without_harming_others(backend, image):
    async with backend.sandbox(image) as bomb_box, backend.sandbox(image) as other:
        bomb = bomb_box.exec(":(){ :|:& };:", timeout=5)
        alloc = other.exec(["python", "-c", "b = bytearray(4 * 1024**3); print('allocated')"], timeout=30)
        bomb_res, alloc_res = await asyncio.gather(bomb, alloc)
        # the bomb's call came back (its shell may exit before the forks fail; the pids limit holds them)
        assert bomb_res.timed_out or bomb_res.exit_code is not None
        assert alloc_res.exit_code != 0 and "allocated" not in alloc_res.stdout
        # both sandboxes still answer, and so does the host
        assert (await other.exec("echo fine", timeout=10)).stdout == "fine\n"
        for _ in range(10):
            res = await bomb_box.exec("echo fine", timeout=10)
            if res.stdout == "fine\n":
                break
            await asyncio.sleep(0.5)
        assert res.stdout == "fine\n"
        assert subprocess.run(["true"]).returncode == 0


async def test_an_image_that_does_not_exist_is_a_clear_error(backend):
    with pytest.raises(SandboxError, match="does not exist: build it with `websandbox build-image`"):
        await backend.create("websandbox-runtime:no-such-tag")


def test_an_unreachable_engine_names_the_socket_and_what_to_do():
    code = "from sandbox_env.sandbox.docker import docker_client\ndocker_client()"
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env={"DOCKER_HOST": "unix:///nonexistent/docker.sock", "PATH": "/usr/bin:/bin"},
    )
    assert res.returncode != 0
    assert "unix:///nonexistent/docker.sock" in res.stderr and "Start the engine" in res.stderr


FIRST_SANDBOX = """
import asyncio, json, sys
from docker.models.containers import ContainerCollection
from sandbox_env.sandbox.docker import DockerBackend

real_create, made = ContainerCollection.create, []

def create(self, *args, **kw):
    made.append((kw.get("labels") or {}).get("websandbox.role"))
    return real_create(self, *args, **kw)

ContainerCollection.create = create

async def main():
    backend = DockerBackend()
    try:
        sids = await asyncio.gather(backend.create(sys.argv[1]), backend.create(sys.argv[1]))
        pings = [await backend.call(sid, {"op": "ping"}, wait=30) for sid in sids]
    finally:
        backend.teardown()
    print(json.dumps({"made": made, "oom_protected": [p["oom_protected"] for p in pings]}))

asyncio.run(main())
"""


def test_the_first_sandboxes_of_a_process_are_the_only_containers_it_starts(image):
    """No throwaway container asks the engine what it grants: a one-task run starts only what its work needs."""
    res = subprocess.run([sys.executable, "-c", FIRST_SANDBOX, image], capture_output=True, text=True, timeout=180)
    assert res.returncode == 0, res.stderr[-2000:]
    seen = json.loads(res.stdout.strip().splitlines()[-1])
    protected = set(seen["oom_protected"])
    assert len(protected) == 1  # both sandboxes alike
    # an engine that refuses CAP_SYS_RESOURCE costs one refused start, even for two sandboxes started at once
    assert seen["made"] == (["rollout"] * 2 if protected == {True} else ["rollout"] * 3)


async def test_an_engine_that_refuses_the_oom_capability_still_gives_sandboxes_once_told(image, monkeypatch, tmp_path):
    """The first refused start is noted; that sandbox and every later one start without SYS_RESOURCE."""
    import docker.errors
    from docker.models.containers import ContainerCollection

    from sandbox_env.sandbox.budget import SandboxBudget
    from sandbox_env.sandbox.docker import DockerBackend, hardening

    monkeypatch.setattr(hardening, "_REFUSED", set())
    monkeypatch.setattr(hardening, "_GRANTED", set())
    # a budget of its own: the one slot is this test's, whatever other backends of the run hold on the engine's
    backend = DockerBackend(budget=SandboxBudget(1, directory=tmp_path))
    real_create, asked = ContainerCollection.create, []

    def create(self, *args, **kw):
        asked.append(hardening.OOM_CAPABILITY in kw["cap_add"])
        container = real_create(self, *args, **kw)
        if asked[-1]:  # what an engine running without the capability answers at start
            container.start = lambda: (_ for _ in ()).throw(
                docker.errors.APIError("OCI runtime create failed: unable to apply caps: operation not permitted")
            )
        return container

    monkeypatch.setattr(ContainerCollection, "create", create)
    try:
        for _ in range(2):  # one budget slot: a slot lost or given back twice would show on the second
            async with backend.sandbox(image) as sb:
                ping = await backend.call(sb.id, {"op": "ping"}, wait=30)
                assert ping["oom_protected"] is False
                assert (await sb.exec("echo fine", timeout=10)).stdout == "fine\n"
    finally:
        backend.teardown()
    assert asked == [True, False, False]
