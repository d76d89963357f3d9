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
leaves none of the backend's sandboxes reachable.

Two checks are about blame (docs/architecture.md, "Blame"), so they hold whatever a backend
can prove, and what it declares (`evidence()`) decides what is allowed:
- ended from inside: the sandbox's own processes kill its agent (`kill -9 $PPID`). A backend
  whose agent is out of their reach keeps the sandbox; one that loses it says
  `SandboxEndedFromInside` only if it declares that evidence, and a plain `SandboxError`
  ("cannot tell", a harness fault that training can refuse) if it does not. A backend that
  declares it never calls the sandbox's own doing a harness fault.
- starved: a busy loop that runs out its limit is the call's timeout; a call held back by
  the host (each backend's own way to starve a sandbox, `STARVED_CHECKS` take it) is never
  the call's timeout: `SandboxStarved`, an agent that stopped answering, or a call that
  finished (a quota that let it).

Commands start in the workspace: /workspace on Docker; a backend without that mount (the
local test backend) names it otherwise, so the checks ask where relative paths land, not
the directory's name. File requests take /workspace paths on every backend.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from sandbox_env.sandbox import Sandbox, SandboxBackend, SandboxEndedFromInside, SandboxError, SandboxStarved


async def commands_report_output_and_exit_code(backend: SandboxBackend, image: str) -> None:
    async with backend.sandbox(image) as sb:
        res = await sb.exec("echo out; echo err >&2; exit 3", timeout=20)
        assert (res.stdout, res.stderr, res.exit_code, res.timed_out) == ("out\n", "err\n", 3, False)
        await sb.write_files({"here.txt": "in the workspace"})
        code = "import sys; print(open('here.txt').read(), sys.stdin.read())"
        res = await sb.exec(["python3", "-c", code], stdin=b"fed", timeout=20)
        assert res.stdout.split() == ["in", "the", "workspace", "fed"] and res.exit_code == 0


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
            return  # a backend that cannot measure says so; sandbox/blame.py never holds that against a submission
        assert after.cpu is not None and before.cpu is not None and after.cpu > before.cpu
        assert after.at > before.at


async def a_sandbox_its_own_processes_end_is_theirs_only_where_the_backend_can_tell(backend: SandboxBackend, image: str) -> None:
    declared = backend.evidence().ended_from_inside
    sb = Sandbox(backend, await backend.acquire(image))
    try:
        try:
            await sb.exec("kill -9 $PPID; sleep 5", timeout=20)  # its agent, where the code can reach it
            await sb.exec("true", timeout=20)
        except SandboxEndedFromInside as exc:
            assert declared, f"ended from inside without declaring that evidence (an unproven zero): {exc}"
            assert exc.evidence, exc
        except SandboxError as exc:
            assert not declared, f"declares ended-from-inside evidence, yet called its own ending the harness's: {exc}"
        else:  # the agent is out of the sandboxed code's reach
            assert (await sb.exec("echo alive", timeout=20)).stdout == "alive\n"
    finally:
        await backend.delete(sb.id)


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


# about two seconds of CPU: at a fiftieth of a CPU it needs far more than its backstop of wall clock
CPU_BOUND = "python3 -c 'n = 0\nwhile n < 2 * 10**7: n += 1\nprint(\"counted\", n)'"


async def a_call_starved_of_cpu_is_told_apart_from_a_call_that_ran_out_its_time(
    backend: SandboxBackend, image: str, starve: Callable[[str], None]
) -> None:
    async with backend.sandbox(image) as sb:
        res = await sb.exec("while :; do :; done", timeout=2, backstop=60)
        assert res.timed_out and res.exit_code == -9, res  # its own code ran out its time
        starve(sb.id)
        try:
            res = await sb.exec(CPU_BOUND, timeout=3)
        except SandboxEndedFromInside as exc:
            raise AssertionError(f"a starved call was blamed on the sandbox: {exc}") from exc
        except SandboxStarved as exc:
            assert exc.evidence["active"] < exc.evidence["limit"], exc.evidence
        except SandboxError as exc:  # the starved agent fell silent: a harness fault too
            assert "stopped answering" in str(exc), exc
        else:  # only where the quota let it finish within the backstop
            assert not res.timed_out and "counted 20000000" in res.stdout, res


STARVED_CHECKS = [a_call_starved_of_cpu_is_told_apart_from_a_call_that_ran_out_its_time]

CHECKS = [
    commands_report_output_and_exit_code,
    a_command_past_its_limit_is_timed_out_and_the_sandbox_stays_usable,
    output_past_the_cap_is_cut_and_counted,
    files_go_in_and_come_out,
    the_session_keeps_its_namespace_and_a_runaway_cell_is_interrupted,
    a_spawned_program_is_fed_its_stdin,
    evidence_counts_the_sandboxs_cpu_or_is_declared_missing,
    a_sandbox_its_own_processes_end_is_theirs_only_where_the_backend_can_tell,
    deleting_is_idempotent_and_leaves_the_sandbox_unreachable,
    teardown_leaves_none_of_its_sandboxes_reachable,  # last: it ends the backend
]
