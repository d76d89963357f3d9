"""grade_final: a harness fault is retried once in fresh sandboxes; a sandbox ended from inside is the submission's."""

from __future__ import annotations

import base64
import json
from typing import Any

from sandbox_env.families import get_family, grade_final
from sandbox_env.grading.grader import Grader
from sandbox_env.sandbox import SandboxBackend, SandboxEndedFromInside, SandboxError
from sandbox_env.sandbox.usage import UsagePoint

SMOKE = get_family("smoke")


class ScriptedBackend(SandboxBackend):
    """Plays the smoke grader's side of the agent protocol; its first `failures` sandboxes fail as told.

    `memory_hits`: how often each sandbox's memory reached its limit, as the host would measure it.
    """

    def __init__(self, failures: list[Exception], memory_hits: int = 0) -> None:
        super().__init__()
        self.failures = list(failures)
        self.created = 0
        self.files: dict[str, str] = {}
        self.memory_hits = memory_hits
        self.clock = 0.0

    def usage_point(self, sandbox_id: str) -> UsagePoint | None:
        self.clock += 1.0
        hits = self.memory_hits if self.clock > 1 else 0
        return UsagePoint(at=self.clock, cpu=0.1, stall=0.0, fork_failures=0, oom_kills=0, memory_hits=hits, pids=3, pids_max=256)

    async def create(self, image: str, *, role: str = "rollout") -> str:
        self.created += 1
        return f"sandbox-{self.created}"

    async def call(self, sandbox_id: str, request: dict[str, Any], wait: float) -> dict[str, Any]:
        if request["op"] == "spawn":
            return {"handle": 1}
        if request["op"] == "write":
            self.files = {p: base64.b64decode(d).decode() for p, d in request["files"].items()}
            return {"written": len(self.files)}
        if self.failures:
            raise self.failures.pop(0)
        nonce = json.loads(base64.b64decode(request["stdin_b64"]))["nonce"]
        report = json.dumps({"content": self.files.get("hello.txt")})
        return {"stdout": f"\n{nonce}\n{report}\n{nonce}\n", "stderr": "", "exit_code": 0, "timed_out": False, "truncated": 0}

    async def delete(self, sandbox_id: str) -> None:
        return None

    def delete_later(self, sandbox_id: str) -> None:
        return None

    def teardown(self) -> None:
        return None


def _task():
    from sandbox_env.constants import TASKS_DIR

    return SMOKE.compile_task(TASKS_DIR / "smoke" / "smoke_hello")


FINAL = {"files": {"hello.txt": "hello, sandbox\n"}}


async def test_a_harness_fault_in_grading_is_retried_once_in_a_fresh_sandbox():
    backend = ScriptedBackend([SandboxError("the engine dropped the connection")])
    grade = await grade_final(_task(), FINAL, Grader(backend, "image"))
    assert grade.score == 1.0 and grade.scoring_error is None
    assert backend.created == 2


async def test_a_harness_fault_that_persists_is_reported_after_two_attempts():
    backend = ScriptedBackend([SandboxError("the engine dropped the connection")] * 2)
    grade = await grade_final(_task(), FINAL, Grader(backend, "image"))
    assert grade.score == 0.0 and "the same in 2 attempts" in grade.scoring_error
    assert backend.created == 2


async def test_a_grading_sandbox_ended_from_inside_is_the_submissions_zero_and_not_retried():
    ended = SandboxEndedFromInside("sandbox x: stream closed", "its processes ran out of memory")
    backend = ScriptedBackend([ended])
    grade = await grade_final(_task(), FINAL, Grader(backend, "image"))
    assert grade.score == 0.0 and grade.scoring_error is None
    assert "ran out of memory" in grade.reason and backend.created == 1


async def test_a_harness_fault_in_a_run_whose_sandbox_hit_its_memory_limit_is_the_submissions_zero():
    # e.g. a memory bomb at import starves the grader program until it gives up: the bomb did it
    backend = ScriptedBackend([SandboxError("the grader sent no report")], memory_hits=12)
    grade = await grade_final(_task(), FINAL, Grader(backend, "image"))
    assert grade.score == 0.0 and grade.scoring_error is None
    assert "filled the sandbox's memory to its limit (12 times)" in grade.reason and backend.created == 1
