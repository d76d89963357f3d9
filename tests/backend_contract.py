"""The sandbox backend contract: what every backend of sandbox/registry.py must do, as checks.

After Inspect AI's sandbox self-check: each check is an async function of a backend and
an image that raises AssertionError when the backend breaks the contract. They use the
public sandbox interface only (`SandboxBackend`, `Sandbox`), so a second backend is
checked by registering it and running tests/test_backend_contract.py, which runs every
check against every registered backend that can run on this machine.

What the contract holds: commands (output, exit code, stdin, argv, cwd), the per-call
time limit counted on active time (a sleeping command is timed out and the sandbox stays
usable), the output cap, files in and out (relative paths under /workspace, parents
made, a missing file read as None), the persistent Python session (namespace kept, a
runaway cell interrupted), spawned programs fed their stdin, evidence (`usage_point`
counters that grow with CPU use, or None where the backend declares it cannot measure),
deletion that is idempotent and leaves the sandbox unreachable, and a teardown that
leaves none of the backend's sandboxes reachable. Starvation and ending from inside need
an outside actor or a kernel's judgement: they are checked on Docker by
tests/test_tool_limits.py and the own-sandbox attacks of tests/adversarial/.
"""

from __future__ import annotations

import pytest

from sandbox_env.sandbox import Sandbox, SandboxBackend, SandboxError


async def commands_report_output_and_exit_code(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        res = await sb.exec("echo out; echo err >&2; exit 3", timeout=20)
        assert (res.stdout, res.stderr, res.exit_code, res.timed_out) == ("out\n", "err\n", 3, False)
        res = await sb.exec(["python3", "-c", "import os, sys; print(os.getcwd(), sys.stdin.read())"], stdin=b"fed", timeout=20)
        assert res.stdout.split() == ["/workspace", "fed"] and res.exit_code == 0


async def a_command_past_its_limit_is_timed_out_and_the_sandbox_stays_usable(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        res = await sb.exec("sleep 100", timeout=1, backstop=120)
        assert res.timed_out
        assert (await sb.exec("echo alive", timeout=20)).stdout == "alive\n"


async def output_past_the_cap_is_cut_and_counted(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        res = await sb.exec("head -c 100000 /dev/zero | tr '\\0' a", timeout=20, max_output=1000)
        assert len(res.stdout) <= 1000 and res.truncated > 0


async def files_go_in_and_come_out(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        await sb.write_files({"pkg/mod.py": "X = 1\n", "/tmp/blob.bin": bytes(range(256))})
        got = await sb.read_files(["pkg/mod.py", "/workspace/pkg/mod.py", "/tmp/blob.bin", "missing.txt"])
        assert got == {
            "pkg/mod.py": b"X = 1\n",
            "/workspace/pkg/mod.py": b"X = 1\n",
            "/tmp/blob.bin": bytes(range(256)),
            "missing.txt": None,
        }
        assert (await sb.exec("cat pkg/mod.py", timeout=20)).stdout == "X = 1\n"


async def the_session_keeps_its_namespace_and_a_runaway_cell_is_interrupted(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        await sb.start_python()
        await sb.run_python("kept = [1, 2]")
        res = await sb.run_python("while True: pass", timeout=1, backstop=120)
        assert res.timed_out
        assert (await sb.run_python("kept")).output.strip() == "[1, 2]"
        assert await sb.probe("kept") is not None


async def a_spawned_program_is_fed_its_stdin(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        handle = await sb.spawn(["python3", "-c", "import sys; print(sys.stdin.read()[::-1])"])
        res = await sb.feed(handle, b"abc", timeout=30)
        assert (res.stdout, res.exit_code) == ("cba\n", 0)


async def evidence_counts_the_sandboxs_cpu_or_is_declared_missing(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        before = backend.usage_point(sb.id)
        await sb.exec("python3 -c 'sum(range(3_000_000))'", timeout=60, backstop=300)
        after = backend.usage_point(sb.id)
        if before is None or after is None:
            return  # a backend that cannot measure says so; blame.py never holds that against a submission
        assert after.cpu is not None and before.cpu is not None and after.cpu > before.cpu
        assert after.at > before.at


async def deleting_is_idempotent_and_leaves_the_sandbox_unreachable(backend: SandboxBackend, image: str) -> None:
    sid = await backend.acquire(image)
    await backend.delete(sid)
    await backend.delete(sid)
    with pytest.raises(SandboxError):
        await Sandbox(backend, sid).exec("true", timeout=10)


async def teardown_leaves_none_of_its_sandboxes_reachable(backend: SandboxBackend, image: str) -> None:
    ids = [await backend.acquire(image) for _ in range(2)]
    backend.teardown()
    for sid in ids:
        with pytest.raises(SandboxError):
            await Sandbox(backend, sid).exec("true", timeout=10)


CHECKS = [
    commands_report_output_and_exit_code,
    a_command_past_its_limit_is_timed_out_and_the_sandbox_stays_usable,
    output_past_the_cap_is_cut_and_counted,
    files_go_in_and_come_out,
    the_session_keeps_its_namespace_and_a_runaway_cell_is_interrupted,
    a_spawned_program_is_fed_its_stdin,
    evidence_counts_the_sandboxs_cpu_or_is_declared_missing,
    deleting_is_idempotent_and_leaves_the_sandbox_unreachable,
    teardown_leaves_none_of_its_sandboxes_reachable,  # last: it ends the backend
]
