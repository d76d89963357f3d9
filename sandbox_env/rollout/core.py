"""The rollout core: the one implementation of a rollout's sandbox life, for both front doors.

Acquire a container and lay the task out in it, run the model's tool calls, replace a
container the model's own processes ended, take the final state out, release the
container once, grade in fresh containers. The classic front door (doors/classic.py, verifiers
0.3.x) and the v1 front door (doors/v1/, verifiers 0.4.x) only translate between verifiers
and this module: nothing here imports verifiers, so both doors get the same behaviour,
and the in-memory backend tests of the lease logic (tests/v1/test_lease_blame.py) cover
both.

Decisions:
- One `Rollouts` per distinct sandbox configuration (`SandboxSettings`): a sandbox
  backend, its warm pool and the grader. The v1 door shares one per process
  (`rollouts_for`, torn down by `close_rollouts()` or at exit: the Docker backend
  registers its own `atexit` teardown); the classic door makes its own per environment.
- A `Lease` is one rollout's container. Tool calls, the final-state collection and
  grading are methods of the lease, so a front door never handles a sandbox id.
- The final state crosses from run to grade as plain data (a JSON round trip), whichever
  door asked.

Blame (sandbox_env/sandbox/blame.py):
- A failure of the harness (no container, a container lost by no doing of its own,
  a collect that cannot read the final state, a grading fault that a retry did not
  cure) is recorded on the lease as `fault` or comes back as a grade with
  `scoring_error`; each front door turns it into the error its trainers reschedule.
- What the model's code does inside its container (timeouts, crashes) is tool output.
  A tool call whose sandbox its own processes ended (`SandboxEndedFromInside`: every
  process killed where the agent is in reach, out of memory, the process limit, junk
  on the agent's stream) is the model's doing too: the lease swaps to a fresh sandbox
  set up like the first, removes the old one, and the call returns a message that
  says so. A call that was running in the old sandbox when another call's processes
  ended it gets the same message. Only when no fresh sandbox can be set up is it a
  fault.
- A final state that cannot be read because the model's processes ended the sandbox
  is the model's 0.0. Grading goes through `families.grade_final`: a harness fault is
  retried once in fresh sandboxes, and a grading sandbox that the code under test
  ended or pushed to its limits is the submission's 0.0, never a scoring error.
- A harness fault after the model's code ran, on a backend that cannot prove all of
  whose a fault is (`SandboxBackend.evidence()`), may be the code's own doing: the grade
  says so (`unproven_harness_fault`, its own reason and weight-0 metric) and stays a
  harness fault, so it is rescheduled in the open, never silently. Training refuses such
  a backend (`require_evidence`). Setup faults come before any model code: proven.
- The rollout's container is removed once its final state is out, before grading asks
  for a grading container, so a rollout never holds two budget slots at once. Every
  exit path removes it: a failed or cancelled setup, a fault, a failed collect,
  `finish()`, and `release_later()` for exit paths that must not wait (a cancelled
  await of a removal falls back to a removal in the background).
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.constants import short
from sandbox_env.families import ended_before_collect, get_family, grade_final
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.grading.grader import Grader
from sandbox_env.rollout.image import ensure_image
from sandbox_env.rollout.settings import SandboxSettings
from sandbox_env.rollout.tools import check_tool_args, run_tool, sandbox_replaced_message
from sandbox_env.sandbox import Sandbox, SandboxBackend, SandboxEndedFromInside
from sandbox_env.sandbox.pool import default_pool_size
from sandbox_env.sandbox.registry import make_backend

logger = logging.getLogger("websandbox.rollout")


class Rollouts:
    """One sandbox backend, its warm pool and its grader, for one `SandboxSettings`: leases come from here."""

    def __init__(self, settings: SandboxSettings, sandboxes: SandboxBackend | None = None) -> None:
        """`sandboxes`: a sandbox backend to use (default: the registry's `settings.backend` with these settings)."""
        self.settings = settings
        self.image = settings.image or ensure_image(build_if_missing=settings.build_image, backend=settings.backend)
        self.sandboxes = sandboxes or make_backend(settings.backend, settings.limits(), max_sandboxes=settings.max_sandboxes)
        refuse_without_evidence(self.sandboxes, settings)
        pool_size = default_pool_size() if settings.pool_size is None else settings.pool_size
        if sandboxes is None or pool_size > 0:  # a backend passed in keeps the warm pool its owner gave it
            self.sandboxes.keep_warm(self.image, pool_size)
        prewarm = max(1, pool_size // 2) if pool_size > 0 else 0
        self.grader = Grader(self.sandboxes, self.image, timeout=settings.timeout_seconds, prewarm=prewarm)

    async def open(self, task: TaskRow) -> Lease:
        """A ready container with the task laid out; raises `LeaseError` when the harness fails."""
        try:
            sid = await self.sandboxes.acquire(self.image)  # a cancelled start removes what it started
        except Exception as exc:
            raise LeaseError(f"no sandbox could be started for task {task.task_id}: {exc}") from exc
        lease = Lease(self, task, sid)
        try:
            await get_family(task.family).setup(Sandbox(self.sandboxes, sid), task)
        except BaseException as exc:  # cancelled too: the container must not outlive the attempt
            lease.release_later()
            if isinstance(exc, Exception):
                raise LeaseError(f"setting up task {task.task_id} failed: {exc}") from exc
            raise
        return lease

    async def fresh(self, task: TaskRow) -> str:
        """A new ready container set up like a lease's first one; nothing is left behind when it fails."""
        sid = None
        try:
            sid = await self.sandboxes.acquire(self.image)
            await get_family(task.family).setup(Sandbox(self.sandboxes, sid), task)
        except BaseException:
            if sid is not None:
                self.sandboxes.delete_later(sid)
            raise
        return sid

    def teardown(self) -> None:
        self.sandboxes.teardown()


def refuse_without_evidence(sandboxes: SandboxBackend, settings: SandboxSettings) -> None:
    """With `require_evidence`, refuse a backend that cannot prove whose a fault is; else warn once.

    Without evidence, the blame rule makes every hit backstop and every lost sandbox a
    harness fault: a wrong answer that hangs or ends its own grading sandbox is
    rescheduled instead of scored 0.0, which a policy in training can learn to use.
    """
    missing = sandboxes.evidence().missing()
    if not missing:
        return
    text = (
        f"the {settings.backend!r} sandbox backend cannot prove {', '.join(missing)}: every time limit hit and every "
        "sandbox lost there is a harness fault, so a wrong answer that hangs or ends its own sandbox is rescheduled "
        "instead of scoring 0.0"
    )
    if settings.require_evidence:
        sandboxes.teardown()
        raise ValueError(f"{text}. Use an engine on this machine (unset DOCKER_HOST), or set require_evidence=False.")
    logger.warning("%s; training should set require_evidence=True", text)


def unproven(grade: Grade, sandboxes: SandboxBackend, backend: str) -> Grade:
    """`grade` marked as an unproven harness fault when it is one and `sandboxes` lack evidence; else unchanged."""
    missing = sandboxes.evidence().missing()
    if not grade.scoring_error or not missing or grade.unproven_harness_fault:
        return grade
    lacks = f"the {backend!r} sandbox backend cannot prove {', '.join(missing)}"
    grade.unproven_harness_fault = lacks
    grade.reason = f"unproven harness fault ({lacks}, so the code under test may have caused it): {grade.scoring_error}"
    return grade


class LeaseError(RuntimeError):
    """The harness, not the model, failed: no sandbox, or a sandbox that broke."""


@dataclass
class Lease:
    """One rollout's container: tools, then `finish()` (collect, release, grade).

    `sid` is the current container: a tool call whose sandbox was ended from inside
    swaps it for a fresh one (`replaced` counts how often).
    """

    rollouts: Rollouts
    task: TaskRow
    sid: str
    fault: str | None = None
    command_seconds: list[float] = field(default_factory=list)
    released: bool = False
    replaced: int = 0
    cells: list[str] = field(default_factory=list)  # execute_code cells since the session began (orm_replay.py)
    final: dict[str, Any] = field(default_factory=dict)  # the final state `finish` graded (for scripted drivers)
    grade_seconds: float = 0.0  # how long `finish` took to grade it
    _replacing: asyncio.Lock = field(default_factory=asyncio.Lock, repr=False)
    _last_ending: str = ""

    def _sandbox(self, sid: str | None = None) -> Sandbox:
        return Sandbox(self.rollouts.sandboxes, sid or self.sid)

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        """Run one tool call with the classic semantics (argument checks, time limit, output cap, formatting).

        Raises `ToolArgumentError` (a `ValueError`) for a call the tools do not accept and
        `LeaseError` for a harness fault.
        """
        check_tool_args(tool, args)  # a call the tools do not accept is the model's to fix, not a fault
        if tool == "execute_code":
            self.cells.append(args["code"])  # the host's record of what the model ran: a family may run it again
        if self.released:
            raise LeaseError("the rollout's sandbox was already released")
        if self.fault is not None:
            raise LeaseError(self.fault)
        async with self._replacing:  # a call made while the sandbox is being replaced runs in the new one
            sid = self.sid
        settings = self.rollouts.settings
        t0 = time.perf_counter()
        try:
            return await run_tool(self._sandbox(sid), tool, args, settings.timeout_per_command_seconds, settings.output_cap)
        except SandboxEndedFromInside as exc:
            return await self._replace(sid, exc.evidence)
        except Exception as exc:
            if sid != self.sid or self._replacing.locked():  # another call's processes ended this sandbox
                return sandbox_replaced_message(self._last_ending or "its processes ended it")
            self.fault = self.fault or f"{tool} failed in the sandbox: {exc}"
            raise LeaseError(self.fault) from exc
        finally:
            self.command_seconds.append(time.perf_counter() - t0)

    async def _replace(self, old: str, evidence: str) -> str:
        """The model's own processes ended its sandbox: a fresh one, set up like the first, and a message."""
        async with self._replacing:
            if self.sid != old:  # a concurrent call already replaced it
                return sandbox_replaced_message(self._last_ending or evidence)
            self._last_ending = evidence
            self.rollouts.sandboxes.delete_later(old)
            try:
                new = await self.rollouts.fresh(self.task)
            except Exception as exc:
                self.fault = f"the sandbox was ended from inside ({evidence}) and no fresh one could be set up: {exc}"
                raise LeaseError(self.fault) from exc
            if self.released:  # the rollout ended while the fresh sandbox started
                self.rollouts.sandboxes.delete_later(new)
                raise LeaseError("the rollout's sandbox was released while it was being replaced")
            self.sid = new
            self.replaced += 1
            self.cells.clear()  # the fresh sandbox's session starts empty: what ran before is gone
        logger.info("task %s: sandbox replaced after it was ended from inside (%s)", self.task.task_id, evidence)
        return sandbox_replaced_message(evidence)

    def harness_fault(self, reason: str) -> Grade:
        """A harness fault of this rollout after its setup: said to be unproven where the backend lacks evidence."""
        return unproven(Grade.harness_fault(reason), self.rollouts.sandboxes, self.rollouts.settings.backend)

    async def finish(self) -> Grade:
        """Take the final state out, release the container, grade in fresh containers (`grade_final`)."""
        try:
            if self.fault is not None:
                return self.harness_fault(self.fault)
            try:
                final = await get_family(self.task.family).collect(self._sandbox(), self.task)
            except SandboxEndedFromInside as exc:
                return ended_before_collect(exc.evidence)
            except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
                return self.harness_fault(f"could not take the final state out of the sandbox: {exc}")
        finally:
            await self.release()  # before grading: a rollout holds one budget slot at a time
        if getattr(get_family(self.task.family), "replays_cells", False):
            final["cells"] = list(self.cells)
        final = self.final = json.loads(json.dumps(final))  # plain data only crosses from run to grade
        t0 = time.perf_counter()
        grade = await grade_final(self.task, final, self.rollouts.grader)
        self.grade_seconds = time.perf_counter() - t0
        return unproven(grade, self.rollouts.sandboxes, self.rollouts.settings.backend)

    async def release(self) -> None:
        """Remove the container now (once; later calls do nothing)."""
        if self.released:
            return
        self.released = True
        try:
            await self.rollouts.sandboxes.delete(self.sid)
        except asyncio.CancelledError:  # a removal that may not have begun: make sure it happens
            self.rollouts.sandboxes.delete_later(self.sid)
            raise
        except Exception as exc:  # noqa: BLE001 - teardown and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", short(self.sid), exc)

    def release_later(self) -> None:
        """Remove the container in the background (once): for exit paths that must not wait."""
        if self.released:
            return
        self.released = True
        self.rollouts.sandboxes.delete_later(self.sid)


_shared: dict[SandboxSettings, Rollouts] = {}
_backend_lock: asyncio.Lock | None = None
_backend_loop: asyncio.AbstractEventLoop | None = None


async def rollouts_for(settings: SandboxSettings) -> Rollouts:
    """The process's shared `Rollouts` for these settings, made on first use (off the event loop)."""
    global _backend_lock, _backend_loop
    loop = asyncio.get_running_loop()
    if _backend_lock is None or _backend_loop is not loop:
        _backend_lock, _backend_loop = asyncio.Lock(), loop
    async with _backend_lock:
        if settings not in _shared:
            _shared[settings] = await asyncio.to_thread(Rollouts, settings)
        return _shared[settings]


def close_rollouts() -> None:
    """Remove every container this process's shared `Rollouts` made."""
    while _shared:
        _, rollouts = _shared.popitem()
        rollouts.teardown()
