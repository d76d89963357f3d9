"""Gradings that share a sandbox, one after another: for verifying our own deliverables, never a rollout's.

Verifying a generated task grades its reference on several draws, its controls and every mutant of
its reference: twenty to fifty gradings of one task. A grading in a fresh sandbox pays a container's
creation, start and removal on top of the grader's own work (on this 2-core machine about 0.6 s of a
0.9 s fastapi grading). `ReusedSandboxGrader` is a Grader whose gradings run in sandboxes it keeps:
each grading still starts its grader program afresh (a new driver and app host, or a new pytest
process) and gets a workspace emptied of the previous deliverable, so every graded deliverable runs
in fresh processes over its own files; only the container is shared. A sandbox is kept for at most
`uses` gradings, and only after a grading that ended cleanly (a report, exit code 0, no limit and no
backstop reached) and a cleanup that succeeded; anything else removes it, as Grader does.

The container budget (sandbox/budget.py) cannot deadlock only if no holder of a slot waits for
another: an idle kept sandbox holds a slot while a rollout or another grading may wait for one (the
django verifier's reference rollout runs beside its gradings). So a sandbox is kept only for the next
grading that comes within IDLE_SECONDS, which back-to-back gradings do; one left idle longer is
removed and its slot freed, so any waiter gets a slot within IDLE_SECONDS of the last grading.

Threat model: which deliverables may share a sandbox. A submission is untrusted: it could leave a
file, a cache or a process for the next grading to find, so rollouts and `grade_final` over a
model's work never use this class (grading/grader.Grader: one fresh sandbox per grading). The
deliverables graded here are the project's own (a task's reference, its controls, the mutants of its
reference), which write nothing outside the workspace and start nothing that outlives the grader's
own sweep; the cleanup between gradings removes the workspace's files (the bytecode cache with them:
a mutant of the same size and mtime must not be served the previous module's bytecode) and the
grader programs' scratch folders in /tmp, and each grading writes the grader programs afresh. A verdict this
class gives is used only to admit a task; a scoring error seen here is graded again in a fresh
sandbox by the caller (verify/execution.py), never taken as a verdict.
"""

from __future__ import annotations

import asyncio
from typing import Any

from sandbox_env.constants import DEFAULTS, WORKSPACE
from sandbox_env.grading.grader import Grader
from sandbox_env.grading.programs import GRADER_DIR
from sandbox_env.sandbox import ExecResult, Sandbox

USES = 40  # gradings per kept sandbox before it is replaced
IDLE_SECONDS = 1.0  # a kept sandbox no grading took within this long is removed
CLEANUP = (
    f"find {WORKSPACE} -mindepth 1 -maxdepth 1 -exec rm -rf {{}} + && "
    f"find /tmp -mindepth 1 -maxdepth 1 ! -path {GRADER_DIR} -exec rm -rf {{}} +"
)


class ReusedSandboxGrader(Grader):
    """A Grader that runs its gradings in sandboxes it keeps (at most `uses` each): for verification only."""

    def __init__(self, backend: Any, image: str, timeout: float = DEFAULTS.timeout_seconds, uses: int = USES) -> None:
        super().__init__(backend, image, timeout)
        self.uses = uses
        self._idle: list[tuple[str, int]] = []  # (sandbox id, gradings it has run)
        self._used: dict[str, int] = {}
        self._lock = asyncio.Lock()

    @property
    def kept(self) -> int:
        """How many sandboxes wait for their next grading."""
        return len(self._idle)

    async def _take_sandbox(self, program: str, start: Any) -> tuple[str, int | None]:
        async with self._lock:
            if self._idle:
                sid, used = self._idle.pop()
                self._used[sid] = used
                return sid, None
        sid = await self.backend.acquire(self.image, role="grader")
        self._used[sid] = 0
        return sid, None

    async def _give_back(self, sid: str, result: ExecResult | None) -> None:
        used = self._used.pop(sid, 0) + 1
        clean = (
            result is not None and result.exit_code == 0 and not result.timed_out and result.starved is None and used < self.uses
        )
        if clean and await self._cleaned(sid):
            async with self._lock:
                self._idle.append((sid, used))
            asyncio.get_running_loop().call_later(IDLE_SECONDS, self._expire, sid)
            return
        self.backend.delete_later(sid)

    def _expire(self, sid: str) -> None:
        """A kept sandbox still idle after IDLE_SECONDS gives its slot of the budget back."""
        for entry in self._idle:
            if entry[0] == sid:
                self._idle.remove(entry)
                self.backend.delete_later(sid)
                return

    async def _cleaned(self, sid: str) -> bool:
        """The previous deliverable's files and the graders' scratch gone (run_program writes the programs afresh)."""
        try:
            done = await Sandbox(self.backend, sid).exec(CLEANUP, timeout=30)
        except Exception:  # noqa: BLE001 - any failure here only costs this sandbox
            return False
        return done.exit_code == 0

    async def stop(self) -> None:
        """Remove every kept sandbox (and the prewarmed pools, of which this class has none)."""
        async with self._lock:
            idle, self._idle = self._idle, []
        for sid, _ in idle:
            self.backend.delete_later(sid)
        await super().stop()
