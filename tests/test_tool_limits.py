"""A tool call's limit counts the sandbox's active time: the model's timeout is never the host's load.

The agent (runtime/container/agent.py, CallLimit over runtime/container/clock.py) ends a `bash` command or an
`execute_code` cell as "timed out" once the sandbox was active for the limit: a sleep, a
busy loop and a command that starves itself with its own forks all reach it. A sandbox
starved from outside (`docker update --cpus 0.02` through the engine) is not active while
it waits for a CPU: its call runs on until the wall-clock backstop and then raises
`SandboxStarved`, a harness fault, from the tools and from the classic front door. (At
such a quota the agent itself may fall silent first: that is a harness fault too, never
`SandboxEndedFromInside`, and never the model's timeout.)
"""

from __future__ import annotations

import pytest
from fault_kit import processes, starve

from sandbox_env.constants import CALL_BACKSTOP_FACTOR
from sandbox_env.rollout.tools import run_bash, run_code
from sandbox_env.sandbox import SandboxEndedFromInside, SandboxError, SandboxStarved

pytestmark = pytest.mark.docker

# about two seconds of CPU on this machine: at a hundredth of a CPU it needs minutes of wall clock
# A busy test machine may give a sandbox a sixth of a CPU or less, which the default backstop
# would rightly call starvation; the CPU-bound calls that must time out as the model's get a
# backstop wide enough for a thirtieth of a CPU.
WIDE = 60.0
STARVED = 20_000_000  # nano CPUs: `docker update --cpus 0.02`


def _harness_fault(exc: SandboxError) -> None:
    assert not isinstance(exc, SandboxEndedFromInside), exc
    if isinstance(exc, SandboxStarved):
        assert exc.evidence["active"] < exc.evidence["limit"] == 3, exc.evidence
        assert exc.evidence["wall"] >= 3 * CALL_BACKSTOP_FACTOR, exc.evidence
        assert "starved of CPU" in str(exc) and "overloaded" in str(exc)
    else:
        assert "stopped answering" in str(exc), exc


CPU_BOUND = "python -c 'n = 0\nwhile n < 2 * 10**7: n += 1\nprint(\"counted\", n)'"


@pytest.mark.slow  # the cell case below shows the same verdict
async def test_a_command_starved_from_outside_is_never_the_models_timeout(sandbox):
    starve(sandbox.id, STARVED)
    try:
        out = await run_bash(sandbox, CPU_BOUND, timeout=3)
    except SandboxError as exc:
        _harness_fault(exc)
    else:  # only if the quota let it finish within the backstop
        assert "counted 20000000" in out and "timed out" not in out, out


async def test_a_cell_starved_from_outside_is_never_the_models_timeout(sandbox):
    await sandbox.start_python()
    starve(sandbox.id, STARVED)
    code = "n = 0\nwhile n < 2 * 10**7: n += 1\nprint('counted', n)"
    try:
        out = await run_code(sandbox, code, timeout=3)
    except SandboxError as exc:
        _harness_fault(exc)
    else:
        assert "counted 20000000" in out and "timed out" not in out, out


async def test_a_sleep_times_out_at_its_limit_and_its_process_group_is_killed(sandbox):
    res = await sandbox.exec("sleep 30 & sleep 30; echo never", timeout=2)
    assert res.timed_out and res.exit_code == -9 and "never" not in res.stdout
    assert not [args for _, args in processes(sandbox.id) if args.startswith("sleep")]
    assert "timed out after 2s" in await run_bash(sandbox, "sleep 30", timeout=2)


async def test_a_busy_loop_times_out_at_its_limit(sandbox):
    res = await sandbox.exec("while :; do :; done", timeout=2, backstop=WIDE)
    assert res.timed_out and res.exit_code == -9


async def test_a_command_that_starves_itself_with_its_own_forks_times_out_as_the_models(sandbox):
    # eight busy loops on the sandbox's one CPU: each waits for a CPU its own siblings hold
    command = "for i in 1 2 3 4 5 6 7 8; do (while :; do :; done) & done; wait"
    res = await sandbox.exec(command, timeout=2, backstop=WIDE)
    assert res.timed_out and res.exit_code == -9
    assert (await sandbox.exec("echo alive", timeout=10)).stdout == "alive\n"
    # nothing of the loops is left: the one bash there may be is the idle standby for the next command
    shells = [args for _, args in processes(sandbox.id) if "bash" in args]
    assert len(shells) <= 1 and all("__websandbox_command" in args for args in shells), shells


async def test_a_busy_cell_is_interrupted_at_its_limit_and_the_namespace_is_kept(sandbox):
    await sandbox.start_python()
    await run_code(sandbox, "kept = 'yes'", timeout=10)
    res = await sandbox.run_python("while True: pass", timeout=2, backstop=WIDE)
    assert res.timed_out and not res.restarted
    assert "timed out after 2s: the cell was interrupted; the namespace is kept" in res.output
    assert await run_code(sandbox, "kept", timeout=10) == "'yes'"


async def test_a_cell_that_starves_itself_with_its_own_forks_times_out_as_the_models(sandbox):
    await sandbox.start_python()
    code = (
        "import os, time\n"
        "kids = [os.fork() for _ in range(3)]\n"  # 2**3 processes, all busy
        "while True: pass"
    )
    res = await sandbox.run_python(code, timeout=2, backstop=WIDE)
    assert res.timed_out, res.output
