"""The rollout core's lease logic, without containers: what is the model's, what is the harness's.

Both front doors (doors/classic.py for verifiers 0.3.x, doors/v1/ for 0.4.x) run their rollouts through
this one lease (sandbox_env/rollout/core.py), so these cases cover both.

The sandbox interface is played in memory (`PlayedBackend`) for the smoke family, with
failures on cue, so that each exit path can be taken on purpose: a sandbox ended from
inside during a tool call, a harness failure, a grading fault and its retry, a
cancelled setup, collect, grading or replacement. On real containers, through the env
server, test_prime_rl_path.py ends a rollout sandbox and a grading sandbox from inside;
grade_final's own rules (retry, limits hit) are in tests/test_grade_retry.py.
"""

from __future__ import annotations

import asyncio
import base64
import json
from typing import Any

import pytest

from sandbox_env.dataset import load_rows
from sandbox_env.doors.metrics import metric_values
from sandbox_env.families.base import TaskRow
from sandbox_env.rollout.core import Lease, LeaseError, Rollouts, SandboxSettings
from sandbox_env.rollout.tools import ToolArgumentError
from sandbox_env.sandbox import Evidence, SandboxBackend, SandboxEndedFromInside, SandboxError

ANSWER = {"command": "echo 'hello, sandbox' > /workspace/hello.txt"}
ENDED = "its processes ran out of memory: the kernel's OOM killer ended the agent"


def _task(task_id: str) -> TaskRow:
    return next(TaskRow.from_info(r["info"]) for r in load_rows() if r["info"]["task_id"] == task_id)


def _ended() -> SandboxEndedFromInside:
    return SandboxEndedFromInside(f"sandbox x: the stream closed ({ENDED})", ENDED)


class PlayedBackend(SandboxBackend):
    """The agent's side of the protocol for the smoke family, in memory; `fail` and `hold` cue what goes wrong."""

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[str, dict[str, str]] = {}  # sandbox id -> its files
        self.created: list[tuple[str, str]] = []  # (id, role)
        self.setups: list[str] = []  # sandboxes whose Python session was started
        self.live_when_grading: list[set[str]] = []
        self.failures: dict[str, list[BaseException]] = {}
        self.replies: dict[str, list[dict[str, Any]]] = {}  # the agent's replies, on cue
        self.holds: dict[str, asyncio.Event] = {}
        self.waiting: dict[str, int] = {}

    def fail(self, op: str, *errors: BaseException) -> None:
        self.failures.setdefault(op, []).extend(errors)

    def reply(self, op: str, *replies: dict[str, Any]) -> None:
        self.replies.setdefault(op, []).extend(replies)

    def hold(self, op: str) -> asyncio.Event:
        self.holds[op] = asyncio.Event()
        return self.holds[op]

    async def until_waiting(self, op: str) -> None:
        while not self.waiting.get(op):
            await asyncio.sleep(0.001)

    async def create(self, image: str, *, role: str = "rollout") -> str:
        sid = f"sandbox-{len(self.created) + 1}"
        if role == "grader":
            self.live_when_grading.append(set(self.live))
        self.created.append((sid, role))
        self.live[sid] = {}
        return sid

    async def call(self, sandbox_id: str, request: dict[str, Any], wait: float) -> dict[str, Any]:
        if sandbox_id not in self.live:
            raise SandboxError(f"no sandbox {sandbox_id!r} (deleted)")
        op = request["op"]
        if op in self.holds:
            self.waiting[op] = self.waiting.get(op, 0) + 1
            await self.holds[op].wait()
        if self.failures.get(op):
            raise self.failures[op].pop(0)
        if self.replies.get(op):
            return self.replies[op].pop(0)
        if sandbox_id not in self.live:
            raise SandboxError(f"sandbox {sandbox_id!r} was removed during the call")
        files = self.live[sandbox_id]
        if op == "py_start":
            self.setups.append(sandbox_id)
            return {"output": ""}
        if op == "exec":  # the model's bash: here it can only write the answer
            if "hello.txt" in request.get("command", ""):
                files["hello.txt"] = "hello, sandbox\n"
            return {"stdout": "", "stderr": "", "exit_code": 0, "timed_out": False, "truncated": 0}
        if op == "read":
            return {"files": {p: base64.b64encode(files[p].encode()).decode() if p in files else None for p in request["paths"]}}
        if op == "write":
            files.update({p: base64.b64decode(d).decode() for p, d in request["files"].items()})
            return {"written": len(request["files"])}
        if op == "spawn":
            return {"handle": 1}
        if op == "feed":
            nonce = json.loads(base64.b64decode(request["stdin_b64"]))["nonce"]
            report = json.dumps({"content": files.get("hello.txt")})
            return {"stdout": f"\n{nonce}\n{report}\n{nonce}\n", "stderr": "", "exit_code": 0, "timed_out": False, "truncated": 0}
        raise AssertionError(f"unexpected op {op}")

    async def delete(self, sandbox_id: str) -> None:
        self.live.pop(sandbox_id, None)

    def delete_later(self, sandbox_id: str) -> None:
        self.live.pop(sandbox_id, None)

    def teardown(self) -> None:
        self.live.clear()

    def rollouts(self) -> list[str]:
        return [sid for sid, role in self.created if role == "rollout"]

    def graders(self) -> list[str]:
        return [sid for sid, role in self.created if role == "grader"]


@pytest.fixture
def played() -> PlayedBackend:
    return PlayedBackend()


@pytest.fixture
def backend(played) -> Rollouts:
    return Rollouts(SandboxSettings(image="image", pool_size=0), played)


async def _lease(backend: Rollouts) -> Lease:
    return await backend.open(_task("smoke_hello"))


async def test_a_tool_call_whose_sandbox_its_processes_ended_goes_on_in_a_fresh_sandbox_set_up_like_the_first(backend, played):
    lease = await _lease(backend)
    first = lease.sid
    played.fail("exec", _ended())
    said = await lease.call("bash", {"command": "python -c 'bomb'"})
    assert "replaced by a fresh sandbox" in said and ENDED in said and "the task's starting files" in said
    assert lease.sid != first and lease.replaced == 1 and lease.fault is None
    assert first not in played.live, "the ended sandbox is removed"
    assert played.setups == [first, lease.sid], "the fresh sandbox is set up like the first"
    await lease.call("bash", ANSWER)
    grade = await lease.finish()
    assert grade.score == 1.0 and grade.scoring_error is None, grade.reason
    assert played.live == {}


async def test_a_tool_call_that_fails_by_no_doing_of_the_model_is_a_harness_fault(backend, played):
    lease = await _lease(backend)
    played.fail("exec", SandboxError("the engine dropped the connection"))
    with pytest.raises(LeaseError, match="engine dropped the connection"):
        await lease.call("bash", ANSWER)
    assert lease.fault is not None and len(played.rollouts()) == 1, "a harness fault gets no fresh sandbox"
    with pytest.raises(LeaseError):
        await lease.call("bash", ANSWER)
    grade = await lease.finish()
    assert grade.score == 0.0 and "engine dropped the connection" in grade.scoring_error
    assert played.live == {} and played.graders() == [], "a faulted rollout is not graded"


# what the agent answers when a call's wall-clock backstop passed before its limit of active time
STARVED = {"limit": 30.0, "wall": 180.2, "active": 11.4, "cpu": 10.9}


@pytest.mark.parametrize(
    ("tool", "op", "reply"),
    [
        ("bash", "exec", {"stdout": "", "stderr": "", "exit_code": -9, "timed_out": False, "truncated": 0, "starved": STARVED}),
        ("execute_code", "py_exec", {"output": "", "timed_out": False, "restarted": False, "starved": STARVED}),
    ],
)
async def test_a_tool_call_starved_of_cpu_by_the_host_is_a_harness_fault_not_the_models_timeout(backend, played, tool, op, reply):
    lease = await _lease(backend)
    played.reply(op, reply)
    args = {"command": "python manage.py test"} if tool == "bash" else {"code": "import django"}
    with pytest.raises(LeaseError, match="starved of CPU") as info:
        await lease.call(tool, args)
    assert "active 11.4 s" in str(info.value) and lease.fault is not None and lease.replaced == 0
    grade = await lease.finish()
    assert grade.score == 0.0 and "starved of CPU" in grade.scoring_error
    assert played.live == {} and played.graders() == [], "a faulted rollout is not graded"


async def test_a_sandbox_ended_from_inside_with_no_fresh_one_to_be_had_is_a_harness_fault(backend, played):
    lease = await _lease(backend)
    played.fail("exec", _ended())
    played.fail("py_start", SandboxError("the session did not start"))
    with pytest.raises(LeaseError, match="no fresh one could be set up"):
        await lease.call("bash", ANSWER)
    assert (await lease.finish()).scoring_error is not None
    assert played.live == {}, "neither the ended sandbox nor the half-made fresh one is left"


async def test_calls_running_when_the_sandbox_ended_all_say_so_and_one_fresh_sandbox_replaces_it(backend, played):
    lease = await _lease(backend)
    go = played.hold("exec")
    played.fail("exec", _ended(), SandboxError("it was being removed by this backend"))
    calls = [asyncio.ensure_future(lease.call("bash", {"command": "true"})) for _ in range(2)]
    await played.until_waiting("exec")
    go.set()
    said = await asyncio.gather(*calls)
    assert all("replaced by a fresh sandbox" in s for s in said), said
    assert len(played.rollouts()) == 2 and lease.replaced == 1 and lease.fault is None
    del played.holds["exec"]
    await lease.call("bash", ANSWER)
    assert (await lease.finish()).score == 1.0


async def test_a_bad_tool_call_is_the_models_to_fix_and_no_fault(backend, played):
    lease = await _lease(backend)
    with pytest.raises(ToolArgumentError, match="must be a string"):
        await lease.call("bash", {"command": 7})
    with pytest.raises(ToolArgumentError, match="unknown tool"):
        await lease.call("python", {"code": "1"})
    assert lease.fault is None
    await lease.release()


async def test_the_rollout_sandbox_is_removed_before_grading_asks_for_one(backend, played):
    lease = await _lease(backend)
    await lease.call("bash", ANSWER)
    assert (await lease.finish()).score == 1.0
    assert played.live_when_grading == [set()], "a rollout holds one budget slot at a time"


async def test_a_grading_harness_fault_is_retried_once_in_a_fresh_sandbox(backend, played):
    lease = await _lease(backend)
    await lease.call("bash", ANSWER)
    played.fail("feed", SandboxError("the engine dropped the connection"))
    grade = await lease.finish()
    assert grade.score == 1.0 and grade.scoring_error is None, grade.reason
    assert len(played.graders()) == 2 and played.live == {}


async def test_a_grading_fault_that_persists_is_a_scoring_error(backend, played):
    lease = await _lease(backend)
    await lease.call("bash", ANSWER)
    played.fail("feed", SandboxError("the engine dropped the connection"), SandboxError("again"))
    grade = await lease.finish()
    assert grade.score == 0.0 and "2 attempts" in grade.scoring_error


async def test_a_grading_sandbox_ended_from_inside_is_the_submissions_zero_and_not_a_scoring_error(backend, played):
    lease = await _lease(backend)
    await lease.call("bash", ANSWER)
    played.fail("feed", _ended())
    grade = await lease.finish()
    assert grade.score == 0.0 and grade.scoring_error is None and ENDED in grade.reason
    assert len(played.graders()) == 1, "the submission's own zero is not retried"


async def test_a_final_state_lost_because_the_models_processes_ended_the_sandbox_is_the_models_zero(backend, played):
    lease = await _lease(backend)
    played.fail("read", _ended())
    grade = await lease.finish()
    assert grade.score == 0.0 and grade.scoring_error is None and ENDED in grade.reason
    assert played.live == {}


async def test_a_final_state_that_cannot_be_read_by_no_doing_of_the_model_is_a_harness_fault(backend, played):
    lease = await _lease(backend)
    played.fail("read", SandboxError("the engine dropped the connection"))
    grade = await lease.finish()
    assert grade.scoring_error is not None and played.live == {}


@pytest.mark.parametrize("stage", ["setup", "collect", "grading", "replacement"])
async def test_a_cancelled_episode_leaves_no_sandbox_at_any_stage(backend, played, stage):
    held = {"setup": "py_start", "collect": "read", "grading": "feed", "replacement": "py_start"}[stage]
    lease = None if stage == "setup" else await _lease(backend)
    if stage == "replacement":
        played.fail("exec", _ended())
    played.hold(held)
    if stage == "setup":
        work = asyncio.ensure_future(_lease(backend))
    elif stage == "replacement":
        work = asyncio.ensure_future(lease.call("bash", ANSWER))
    else:
        await lease.call("bash", ANSWER)
        work = asyncio.ensure_future(lease.finish())
    await played.until_waiting(held)
    work.cancel()
    with pytest.raises(asyncio.CancelledError):
        await work
    if lease is not None:
        lease.release_later()  # what the env's run() does with an episode's leases when it ends
    assert played.live == {}, f"left after a cancelled {stage}: {sorted(played.live)}"


# -- a harness fault the backend cannot prove is said to be unproven (docs/architecture.md, "Blame") --


class ProvingBackend(PlayedBackend):
    """The played backend declaring every kind of evidence (as Docker on this machine does)."""

    def evidence(self) -> Evidence:
        return Evidence(usage=True, limits_changed=True, ended_from_inside=True)


async def _fault_after_a_tool_call(lease: Lease, played: PlayedBackend) -> None:
    played.fail("exec", SandboxError("the agent's stream closed"))
    with pytest.raises(LeaseError):
        await lease.call("bash", ANSWER)


async def _fault_in_grading(lease: Lease, played: PlayedBackend) -> None:
    await lease.call("bash", ANSWER)
    played.fail("feed", SandboxError("the agent's stream closed"), SandboxError("again"))


async def _fault_in_collect(lease: Lease, played: PlayedBackend) -> None:
    played.fail("read", SandboxError("the agent's stream closed"))


FAULTS = [_fault_after_a_tool_call, _fault_in_grading, _fault_in_collect]


@pytest.mark.parametrize("fault", FAULTS, ids=[f.__name__.lstrip("_") for f in FAULTS])
async def test_a_harness_fault_on_a_backend_that_cannot_prove_it_says_so_in_its_reason_and_metric(backend, played, fault):
    assert played.evidence().missing() != []
    lease = await _lease(backend)
    await fault(lease, played)
    grade = await lease.finish()
    assert grade.score == 0.0 and grade.scoring_error, "still a harness fault: rescheduled in the open"
    assert "cannot prove" in grade.unproven_harness_fault and "'docker'" in grade.unproven_harness_fault
    assert grade.reason.startswith("unproven harness fault (") and grade.scoring_error in grade.reason
    values = metric_values(grade.to_dict())
    assert values["unproven_harness_fault"] == 1.0 and values["scoring_error"] == 1.0


@pytest.mark.parametrize("fault", FAULTS, ids=[f.__name__.lstrip("_") for f in FAULTS])
async def test_a_harness_fault_on_a_backend_that_proves_it_is_a_plain_scoring_error(fault):
    played = ProvingBackend()
    lease = await _lease(Rollouts(SandboxSettings(image="image", pool_size=0, require_evidence=True), played))
    await fault(lease, played)
    grade = await lease.finish()
    assert grade.scoring_error and grade.unproven_harness_fault is None
    assert grade.reason.startswith("scoring error: ")
    assert metric_values(grade.to_dict())["unproven_harness_fault"] == 0.0


async def test_the_models_own_zero_is_never_marked_unproven_on_a_backend_without_evidence(backend, played):
    lease = await _lease(backend)
    await lease.call("bash", ANSWER)
    played.fail("feed", _ended())
    grade = await lease.finish()
    assert grade.score == 0.0 and grade.scoring_error is None and grade.unproven_harness_fault is None
    assert metric_values(grade.to_dict())["unproven_harness_fault"] == 0.0


def test_training_refuses_a_backend_that_cannot_prove_whose_a_fault_is(played):
    with pytest.raises(ValueError, match="cannot prove"):
        Rollouts(SandboxSettings(image="image", pool_size=0, require_evidence=True), played)
