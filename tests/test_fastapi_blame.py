"""The host confirms the fastapi driver's harness verdicts with its own evidence before it retries.

The driver's clock and notes are measured inside the grading container, where the app runs:
a deadline it blames on the harness (`stalled`, blame "harness"), or its own death by a signal
while every app process was fenced, is a harness fault only when the host's cgroup trace of
the run (`result.usage`) does not show the sandbox's own processes using its CPU or pushing
its limits. Without a trace, today's harness verdict stands.
"""

from __future__ import annotations

from pathlib import Path

from sandbox_env.families.fastapi import FAMILY
from sandbox_env.sandbox import ExecResult
from sandbox_env.sandbox.usage import UsagePoint, UsageTrace

TASK = FAMILY.compile_task(Path(__file__).resolve().parents[1] / "sandbox_env" / "tasks" / "fastapi" / "fastapi_status_204")
STALLED = {
    "stage": "done",
    "imported": True,
    "has_app": True,
    "sessions": [],
    "stalled": {"what": "GET /notes", "limit": 67.5, "backstop": 810.0, "kind": "run", "blame": "harness", "active": 0.3},
}


class FakeGrader:
    timeout = 90

    def __init__(self, report, result):
        self.report, self.result = report, result

    async def run_program(self, program, request, files, timeout=None):
        return self.result, self.report


def trace(cpu_per_s: float, stall_per_s: float, seconds: int = 70, ooms: int = 0, memory_max: int | None = None) -> UsageTrace:
    """A run's cgroup trace: one point a second, the sandbox using `cpu_per_s` of its 1 CPU."""
    t = UsageTrace(cpus=1.0)
    for i in range(seconds + 1):
        t.add(
            UsagePoint(
                at=100.0 + i,
                cpu=cpu_per_s * i,
                stall=stall_per_s * i,
                fork_failures=0,
                oom_kills=ooms if i == seconds else 0,
                pids=8,
                pids_max=256,
                memory_max=memory_max,
            )
        )
    return t


async def grade(report, result):
    return await FAMILY.grade({"files": {"app.py": "x"}}, TASK, FakeGrader(report, result))


async def test_a_deadline_blamed_on_the_harness_while_the_sandbox_used_its_cpu_is_the_submissions():
    g = await grade(STALLED, ExecResult("", "", 0, usage=trace(cpu_per_s=0.97, stall_per_s=0.9)))
    assert g.score == 0.0 and g.scoring_error is None and not g.tampered, g.reason
    assert "the host's measure of the grading sandbox says it was not starved" in g.reason
    assert "of CPU in 70.0 s" in g.reason and g.metrics["module_imported"] == 1.0
    assert "the whole of the 67.5 s its limit grants" in g.reason and "810 s wall-clock backstop" in g.reason


async def test_a_backstop_blamed_on_the_harness_after_a_busy_loop_consumed_its_deadline_slowly_is_the_submissions():
    # a twelfth of a CPU over the backstop: starved by its last seconds, but 67.5 s of CPU consumed in all
    g = await grade(STALLED, ExecResult("", "", 0, usage=trace(cpu_per_s=0.084, stall_per_s=0.9, seconds=810)))
    assert g.score == 0.0 and g.scoring_error is None, g.reason
    assert "the whole of the 67.5 s its limit grants" in g.reason


async def test_a_deadline_blamed_on_the_harness_while_the_sandbox_waited_on_itself_is_the_submissions():
    g = await grade(STALLED, ExecResult("", "", 0, usage=trace(cpu_per_s=0.01, stall_per_s=0.0)))
    assert g.score == 0.0 and g.scoring_error is None, g.reason
    assert "waited on themselves" in g.reason


async def test_a_deadline_blamed_on_the_harness_in_a_starved_sandbox_stays_a_harness_fault():
    g = await grade(STALLED, ExecResult("", "", 0, usage=trace(cpu_per_s=0.05, stall_per_s=0.9)))
    assert g.scoring_error and "starved" in g.reason, g.reason


async def test_a_deadline_blamed_on_the_harness_without_the_hosts_evidence_stays_a_harness_fault():
    for usage in (None, UsageTrace(cpus=1.0)):
        g = await grade(STALLED, ExecResult("", "", 0, usage=usage))
        assert g.scoring_error and "could not be measured" in g.reason, g.reason


async def test_a_deadline_blamed_on_the_app_needs_no_confirmation():
    report = {**STALLED, "stalled": {**STALLED["stalled"], "blame": "app"}}
    g = await grade(report, ExecResult("", "", 0, usage=None))
    assert g.score == 0.0 and g.scoring_error is None and "did not finish within 67.5 s" in g.reason


async def test_a_fenced_driver_killed_while_the_sandbox_ran_out_of_memory_is_the_submissions():
    for stage, imported in (("importing", 0.0), ("serving", 1.0)):
        report = {"stage": stage, "fenced": True}
        g = await grade(report, ExecResult("", "", -9, usage=trace(cpu_per_s=0.2, stall_per_s=0.0, ooms=1)))
        assert g.score == 0.0 and g.scoring_error is None, g.reason
        assert "killed by signal 9" in g.reason and "out of memory" in g.reason
        assert g.metrics["module_imported"] == imported


async def test_a_fenced_driver_killed_without_the_sandbox_pushing_its_limits_stays_a_harness_fault():
    report = {"stage": "serving", "fenced": True}
    for usage in (None, trace(cpu_per_s=0.97, stall_per_s=0.0)):
        g = await grade(report, ExecResult("", "", -9, usage=usage))
        assert g.scoring_error and "cannot send" in g.reason, g.reason
    # an OOM kill under a memory limit lowered from outside proves nothing against the sandbox
    changed = trace(cpu_per_s=0.2, stall_per_s=0.0, ooms=1)
    changed.points[-1] = UsagePoint(**{**changed.points[-1].__dict__, "limits_changed": "its limits were changed"})
    g = await grade(report, ExecResult("", "", -9, usage=changed))
    assert g.scoring_error, g.reason


async def test_tampering_on_the_events_pipe_before_any_answer_is_tampering():
    report = {"stage": "done", "imported": False, "sessions": [], "cross_check": ["5 more line(s) on the witness's events pipe"]}
    g = await grade(report, ExecResult("", "", 0))
    assert g.score == 0.0 and g.tampered and g.scoring_error is None and "events pipe" in g.reason
