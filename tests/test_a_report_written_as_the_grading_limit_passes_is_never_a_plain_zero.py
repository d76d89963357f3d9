"""A grader's final report written just before its limit passes reaches the host; a lost one is never the app's zero.

On a starved grading sandbox the agent looks at its limit seldom and late (runtime/container/agent.py,
CallLimit): the grader program can write its final report and exit between two of the agent's
reads, and the limit can pass at the next look. The report is then in the pipe, whole. The
fault is injected where it happens, inside the agent's read loop: its limit is replaced by one
that passes at the first look after the program, released by the test, has written its report
and exited (an outside fault, such as `docker update --cpus 0.01`, makes this interleaving
likely but cannot place it). Before, the agent stopped reading there and replied with the
program's exit code 0 and the output it had read so far, whose last frame said "importing":
the fastapi host took that for an app that ended its driver at import, a plain 0.0 for a
correct answer. Now the agent reads what is left in the pipes, and the fastapi host takes an
exit code 0 under an earlier progress note for a report lost on its way (the driver exits 0
only from its final report), a harness fault. An app that itself exits 0 at import ends only its
own process, and the driver reports that: its own 0.0 (tests/test_fastapi_docker.py,
test_exiting_early_after_a_fake_report_scores_zero_without_a_scoring_error).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox_env.families.fastapi import FAMILY
from sandbox_env.grading.grader import read_report
from sandbox_env.sandbox import ExecResult

RUNTIME = str(Path(__file__).resolve().parents[1] / "sandbox_env" / "runtime" / "container")
sys.path.insert(0, RUNTIME)  # the agent imports its neighbours as the image runs it
try:
    import agent
finally:
    sys.path.remove(RUNTIME)

TASK = FAMILY.compile_task(Path(__file__).resolve().parents[1] / "sandbox_env" / "tasks" / "fastapi" / "fastapi_status_204")
NONCE = "0123456789abcdef0123456789abcdef"

# A grader program that reports as the HTTP driver does: progress notes, a wait (here for the
# test's go on fd GO), then its final report, written whole, and exit code 0.
PROGRAM = r"""
import json, os, sys
nonce, go, ready = sys.argv[1].encode(), int(sys.argv[2]), int(sys.argv[3])
def note(payload):
    view = memoryview(b"\n" + nonce + b"\n" + json.dumps(payload).encode() + b"\n" + nonce + b"\n")
    while view:
        view = view[os.write(1, view):]
note({"stage": "started"})
note({"stage": "importing", "fenced": True})
os.write(ready, b"x")
os.read(go, 1)
note({"stage": "done", "imported": True, "has_app": True, "sessions": [], "padding": "x" * 40000})
os._exit(0)
"""


def _overtaking(proc: subprocess.Popen, ready: int, go: int, outcome: str) -> type:
    """A CallLimit that passes (`outcome`) at the first look after the program has reported and exited."""

    class Overtaken(agent.CallLimit):
        notes_sent = False

        def remaining(self) -> float:
            if self.outcome is not None:
                return 0.0
            if not self.notes_sent:  # until the notes are in the pipe, the agent reads on
                self.notes_sent = bool(os.read(ready, 1))
                return 0.01  # the agent's next select reads the notes
            os.write(go, b"x")
            os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # exited, not yet reaped
            self.outcome = outcome
            return 0.0

    return Overtaken


def _run_overtaken(monkeypatch, outcome: str) -> dict:
    """The agent's reply for the program above, its limit passing just after the program exited."""
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-c", PROGRAM, NONCE, str(go_r), str(ready_w)],
        pass_fds=(go_r, ready_w),
        start_new_session=True,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    os.close(go_r)
    os.close(ready_w)
    try:
        monkeypatch.setattr(agent, "CallLimit", _overtaking(proc, ready_r, go_w, outcome))
        return agent._finish(proc, {"timeout": 4, "backstop": 48})
    finally:
        os.close(ready_r)
        os.close(go_w)


@pytest.mark.parametrize("outcome", [agent.CallLimit.TIMED_OUT, agent.CallLimit.STARVED])
def test_a_report_written_just_before_the_limit_passes_reaches_the_host_whole(monkeypatch, outcome):
    reply = _run_overtaken(monkeypatch, outcome)
    assert reply["exit_code"] == 0 and not reply["timed_out"] and "starved" not in reply, reply
    result = ExecResult(reply["stdout"], reply["stderr"], reply["exit_code"], reply["timed_out"], reply["truncated"])
    report = read_report(result, NONCE)
    assert report["stage"] == "done" and len(report["padding"]) == 40000, report.get("stage")
    assert reply["truncated"] == 0


class _Grader:
    timeout = 90

    def __init__(self, result: ExecResult, report: dict) -> None:
        self.result, self.report = result, report

    async def run_program(self, program, request, files, timeout=None):
        return self.result, self.report


@pytest.mark.parametrize("stage", ["importing", "serving"])
async def test_a_driver_that_exited_0_under_an_earlier_note_lost_its_report_and_is_a_harness_fault(stage):
    grader = _Grader(ExecResult("", "", 0), {"stage": stage, "fenced": True})
    grade = await FAMILY.grade({"files": {"app.py": "app = None"}}, TASK, grader)
    assert grade.score == 0.0 and grade.scoring_error and "lost" in grade.scoring_error, grade.reason


@pytest.mark.parametrize("code, timed_out", [(0, True), (-9, True), (1, False)])
async def test_a_driver_that_outlasted_its_limit_or_crashed_at_import_stays_the_apps_zero(code, timed_out):
    grader = _Grader(ExecResult("", "", code, timed_out), {"stage": "importing", "fenced": True})
    grade = await FAMILY.grade({"files": {"app.py": "app = None"}}, TASK, grader)
    assert grade.score == 0.0 and grade.scoring_error is None, grade.reason
