"""A tool call or final probe that the agent ended at its wall-clock backstop is starved only on the host's word.

The agent's clock runs inside the sandbox, where the model's code can make it read
"starved" (threads pinned to every CPU at nice 19, junk for the agent to parse). Taken at its
word, the agent's `starved` reply would be `SandboxStarved`, a harness fault, whatever the
sandbox had done (4 of 4 such final probes at load 7-17 would be rescheduled). So the host judges the
call by its own cgroup evidence (blame rule 2, docs/architecture.md, `blame.judge_backstop`): the
CPU its processes consumed since the call began reaching the limit, or over its last seconds
the sandbox's own use of its CPU, its limits hit, or a sandbox that waited on itself, make the
call its timeout; only a sandbox held back by the host, or evidence that cannot be had, is
starvation.
"""

from __future__ import annotations

import pytest

from sandbox_env.sandbox.blame import judge_backstop
from sandbox_env.sandbox.interface import _settle_backstop
from sandbox_env.sandbox.types import SandboxStarved
from sandbox_env.sandbox.usage import Usage

STARVED_EXEC = {
    "stdout": "partial",
    "stderr": "",
    "exit_code": -9,
    "timed_out": False,
    "truncated": 0,
    "starved": {"limit": 10, "wall": 60.2, "active": 1.1, "cpu": 0.4},
}
STARVED_CELL = {"output": "[the call reached its wall-clock backstop first]", "timed_out": False, "restarted": False}
STARVED_CELL["starved"] = STARVED_EXEC["starved"]

BUSY_ON_ITS_OWN = Usage(wall=10.0, cpus=1.0, cpu=9.6, cpu_pressure=0.9)
WAITED_ON_ITSELF = Usage(wall=10.0, cpus=1.0, cpu=0.1, cpu_pressure=0.02)
HIT_ITS_PIDS_LIMIT = Usage(wall=10.0, cpus=1.0, cpu=0.3, cpu_pressure=0.8, fork_failures=40)
HELD_BACK_BY_THE_HOST = Usage(wall=10.0, cpus=1.0, cpu=0.5, cpu_pressure=0.85)
LIMIT = 10
# a busy loop that got a twelfth of a CPU: starved by its last seconds, but the whole call used its limit
SLOW_BUT_WHOLE = Usage(wall=120.0, cpus=1.0, cpu=10.1, cpu_pressure=0.9)


def _judge(recent, whole=None):
    return lambda: judge_backstop(whole, recent, LIMIT)


@pytest.mark.parametrize(
    "usage", [BUSY_ON_ITS_OWN, WAITED_ON_ITSELF, HIT_ITS_PIDS_LIMIT], ids=["busy", "waited on itself", "pids limit"]
)
def test_a_backstop_the_sandboxes_own_processes_reached_is_the_calls_timeout(usage):
    settled = _settle_backstop("sb", STARVED_EXEC, _judge(usage))
    assert settled["timed_out"] is True and "starved" not in settled
    assert settled["stdout"] == "partial" and "counts as its timeout" in settled["stderr"]
    cell = _settle_backstop("sb", STARVED_CELL, _judge(usage))
    assert cell["timed_out"] is True and "starved" not in cell and "value" not in cell
    assert "counts as its timeout" in cell["output"]


@pytest.mark.parametrize("usage", [HELD_BACK_BY_THE_HOST, None], ids=["held back", "no evidence"])
def test_a_backstop_reached_while_the_host_held_the_sandbox_back_is_starvation(usage):
    with pytest.raises(SandboxStarved):
        _settle_backstop("sb", STARVED_EXEC, _judge(usage))


def test_a_busy_loop_that_consumed_its_limit_slowly_on_a_busy_host_is_the_calls_timeout():
    settled = _settle_backstop("sb", STARVED_EXEC, _judge(HELD_BACK_BY_THE_HOST, whole=SLOW_BUT_WHOLE))
    assert settled["timed_out"] is True and "the whole of the 10 s its limit grants" in settled["stderr"]
    with pytest.raises(SandboxStarved):  # short of its limit over the whole call: starved
        whole = Usage(wall=120.0, cpus=1.0, cpu=6.0, cpu_pressure=0.9)
        _settle_backstop("sb", STARVED_EXEC, _judge(HELD_BACK_BY_THE_HOST, whole=whole))


def test_a_reply_that_was_not_ended_at_its_backstop_is_left_as_it_is():
    reply = {k: v for k, v in STARVED_EXEC.items() if k != "starved"}
    assert _settle_backstop("sb", reply, lambda: pytest.fail("no evidence is read for an ordinary reply")) is reply


@pytest.mark.docker
async def test_the_docker_backend_gives_the_evidence_of_a_calls_last_seconds(sandbox):
    # two seconds of CPU, not of wall time: on a busy host a wall-clock loop gets a fraction of that
    await sandbox.exec(["python3", "-c", "import time\nwhile time.process_time() < 2: pass"], timeout=20)
    usage = sandbox.backend.recent_usage(sandbox.id, 10.0)
    assert usage is not None and usage.cpu is not None and usage.cpu_pressure is not None
    assert usage.cpu > 0.5, usage  # CPU time of the busy loop, not a wall time
