"""What the model's code does to its own Python session, after it ran, is never a harness fault.

The attack: with /workspace made unreadable (`chmod 000`, the model owns that tmpfs) or
every pid of the pids limit held, end the session, so that an unguarded restart raises
inside the agent; its error reply would become a SandboxError on the host, and a harness
fault: a tool call's HarnessFault, or, at the final orm probe, a scoring_error, so the
trainer would reschedule a rollout the model had lost. The defence: each restart path tells
the model in the call's output; the final probe then has
no value, which is the submission's 0.0.

A flood of junk on the session's reply pipe is bounded too: the agent reads at most
SESSION_JUNK_MAX bytes (or SESSION_JUNK_LINES lines) of it in one call, then gives that
session up and restarts it, so the model's code cannot keep the agent parsing until the
call's wall-clock backstop.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_env.families.orm import FAMILY
from sandbox_env.sandbox import SandboxEndedFromInside
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[2]
TASK_DIR = ROOT / "sandbox_env" / "tasks" / "orm" / "orm_filter_03"
END_THE_SESSION = {"tool": "execute_code", "args": {"code": "import os; os._exit(0)"}}
A_CELL = {"tool": "execute_code", "args": {"code": "print('still here')"}}
ANSWER = {"tool": "execute_code", "args": {"code": (TASK_DIR / "reference.py").read_text()}}

UNREADABLE_WORKSPACE = {"tool": "bash", "args": {"command": "chmod 000 /workspace && echo locked"}}
# Forks until the pids limit refuses one; each child leaves the session's group and takes any
# pid that is freed later (the session's own, when it ends), so every pid stays held.
HOLD_EVERY_PID = {
    "tool": "execute_code",
    "args": {
        "code": """
import os, time
held = 0
while True:
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        os.setsid()
        while True:
            try:
                os.fork()
            except OSError:
                time.sleep(0.2)
    held += 1
print("held", held)
"""
    },
}

FIND_SESSION = """
import gc
_session = next(o for o in gc.get_objects() if type(o).__name__ == "Session" and hasattr(o, "proto_out"))
"""
# junk on the session's own reply pipe, forever: from a cell, and from the final probe's repr()
FLOOD_FROM_A_CELL = (
    FIND_SESSION
    + """
while True:
    _session.proto_out.write(b"x" * 512 + b"\\n")
    _session.proto_out.flush()
"""
)
FLOOD_AT_THE_PROBE = (
    FIND_SESSION
    + """
import os, threading


def _spin():
    os.nice(19)
    while True:
        pass


class Flood:
    def __repr__(self):
        for cpu in sorted(os.sched_getaffinity(0)):
            threading.Thread(target=_spin, daemon=True).start()
        while True:
            _session.proto_out.write(b"x" * 512 + b"\\n")
            _session.proto_out.flush()


result = [(Flood(),)]
"""
)


async def _play(backend, image, calls):
    return await scripted_rollout(backend, image, FAMILY.compile_task(TASK_DIR), calls, timeout=20)


@pytest.mark.parametrize(
    "breaker",
    # the held pids race the restart (minutes on a busy host); the unreadable workspace shows the same verdict quickly
    [UNREADABLE_WORKSPACE, pytest.param(HOLD_EVERY_PID, marks=pytest.mark.slow)],
    ids=["an unreadable workspace", "every pid held"],
)
async def test_a_session_that_cannot_restart_is_said_to_the_model_and_its_zero_is_the_submissions(backend, image, breaker):
    try:
        run = await _play(backend, image, [breaker, END_THE_SESSION, A_CELL, ANSWER])
    except SandboxEndedFromInside as exc:
        # on a busy host the held pids can also starve the agent until the host judges the sandbox
        # ended by its own processes: the model's doing too (the rollout core swaps in a fresh
        # sandbox and says so to the model), never a harness fault
        assert breaker is HOLD_EVERY_PID, f"an unreadable workspace ended its sandbox: {exc}"
        return
    assert run.grade.scoring_error is None, run.grade.reason  # never a harness fault, whichever way it went
    if breaker is HOLD_EVERY_PID and "the Python session could not start" not in run.outputs[3]:
        # the race the attack runs against the restart: a pid the ended session freed went to the
        # restart before the held processes took it back (a busy host schedules them late), so
        # the session came back and the answer ran: the answer's 1.0. Gradings the cells again
        # over grading worlds (families/orm_replay.py), the pid bomb among them, and there the race
        # may go the other way: then the replay cannot read `result`, the submission's own 0.0
        assert "still here" in run.outputs[2] or "could not start" in run.outputs[2], run.outputs[2]
        replay_lost = "the cells run again over a grading world do not" in run.grade.reason
        assert run.grade.score == 1.0 or (replay_lost and "could not start" in run.grade.reason), run.grade.reason
        return
    for said in run.outputs[2:]:
        assert "the Python session could not start" in said and "the next call tries again" in said, said
    assert run.grade.score == 0.0, run.grade.reason


async def test_a_workspace_locked_after_the_answer_still_lets_the_answer_be_read(backend, image):
    run = await _play(backend, image, [ANSWER, UNREADABLE_WORKSPACE])
    assert run.grade.score == 1.0 and run.grade.scoring_error is None, run.grade.reason


async def test_a_flood_on_the_sessions_reply_pipe_restarts_only_that_session(backend, image):
    run = await _play(backend, image, [{"tool": "execute_code", "args": {"code": FLOOD_FROM_A_CELL}}, ANSWER])
    assert "were not its reply" in run.outputs[0] and "the session was restarted" in run.outputs[0], run.outputs[0]
    assert "timed out" not in run.outputs[0], run.outputs[0]
    assert run.grade.score == 1.0 and run.grade.scoring_error is None, run.grade.reason


async def test_a_flood_with_spinning_threads_at_the_final_probe_is_the_submissions_zero(backend, image):
    run = await _play(backend, image, [{"tool": "execute_code", "args": {"code": FLOOD_AT_THE_PROBE}}])
    assert run.grade.score == 0.0 and run.grade.scoring_error is None, run.grade.reason


# /tmp filled to its size (the session's copy of the database lives there), then the session ended:
# the restart's preamble cannot copy the fixture, which is the sandbox's own doing.
FILL_TMP = {
    "tool": "bash",
    "args": {"command": "rm -f /tmp/orm.sqlite3; dd if=/dev/zero of=/tmp/fill bs=1M 2>/dev/null; df -h /tmp | tail -1"},
}


async def test_a_session_whose_restart_cannot_copy_its_database_is_the_submissions_zero(backend, image):
    run = await _play(backend, image, [FILL_TMP, END_THE_SESSION, A_CELL, ANSWER])
    assert run.grade.score == 0.0 and run.grade.scoring_error is None, run.grade.reason


async def test_a_pid_bomb_left_by_the_cells_is_never_a_harness_fault_when_grading_runs_them_again(backend, image):
    # The rollout's session survives the bomb and the answer runs; grading runs the cells again over
    # its worlds in one sandbox, where the bomb may hold every pid before the next world's session can
    # start (the agent's standby process may also be there to start it): either the answer's 1.0, or,
    # by the host's evidence (its processes at the pids limit), the submission's 0.0. Never a scoring
    # error: that was a wrong answer's way out of its zero (seen in CI before the evidence was read).
    for _ in range(3):
        run = await _play(backend, image, [HOLD_EVERY_PID, ANSWER])
        assert run.grade.scoring_error is None, run.grade.reason
        assert run.grade.score == 1.0 or "after the submission's cells ran in this sandbox" in run.grade.reason, run.grade.reason
