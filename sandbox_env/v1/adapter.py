"""The v1 front door's only door into the sandbox layer.

Everything the taskset needs from websandbox's own machinery goes through this
module: a sandbox backend with its warm pool, the grader, the two tools and the
families' setup / collect / grade. Nothing here imports verifiers, so the module
is the one place that knows the sandbox interface (`SandboxBackend.acquire(image)`,
`Sandbox(backend, sid)`, `Grader(backend, image)`, `backend.delete(sid)`): the calls
below are the whole contract.

Decisions:
- One `Backend` per distinct sandbox configuration and per process, made on first
  use and torn down by `close_backends()` (the env's `stop()`) or at exit (the
  Docker backend registers its own `atexit` teardown). Containers, limits and
  hardening are exactly the classic front door's: same backend, same `Limits`,
  same pool, same grader.
- A `Lease` is one rollout's container. Tool calls, the final-state collection
  and grading are methods of the lease, so a rollout never sees a sandbox id.
- A failure of the harness (container gone, engine error, a collect that cannot
  read the final state) is recorded on the lease as `fault`; the front door turns
  it into the trace's error so trainers reschedule the rollout. What the model's
  code does inside its container (timeouts, crashes) is tool output, not a fault.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.constants import DEFAULTS, TOOL_NAMES
from sandbox_env.families import get_family
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.grading import Grader
from sandbox_env.image import ensure_image
from sandbox_env.sandbox import Limits, Sandbox
from sandbox_env.sandbox.docker import DockerBackend
from sandbox_env.sandbox.pool import default_pool_size
from sandbox_env.tools import run_bash, run_code

logger = logging.getLogger("websandbox.v1")


@dataclass(frozen=True)
class SandboxSettings:
    """Everything that shapes a sandbox and its grading; the classic `load_environment` arguments."""

    image: str | None = None
    build_image: bool = True
    cpus: float = DEFAULTS.cpus
    memory_mb: int = DEFAULTS.memory_mb
    pids_limit: int = DEFAULTS.pids_limit
    workspace_mb: int = DEFAULTS.workspace_mb
    tmp_mb: int = DEFAULTS.tmp_mb
    network: bool = DEFAULTS.network
    pool_size: int | None = None  # None: the classic default, no pool (sandbox/pool.py)
    grading_timeout_seconds: float = DEFAULTS.timeout_seconds
    timeout_per_command_seconds: float = DEFAULTS.timeout_per_command_seconds
    output_cap: int = DEFAULTS.output_cap

    def limits(self) -> Limits:
        return Limits(
            cpus=self.cpus,
            memory_mb=self.memory_mb,
            pids=self.pids_limit,
            workspace_mb=self.workspace_mb,
            tmp_mb=self.tmp_mb,
            network=self.network,
        )


class Backend:
    """One sandbox backend, its warm pool and its grader, for one `SandboxSettings`."""

    def __init__(self, settings: SandboxSettings) -> None:
        self.settings = settings
        self.image = settings.image or ensure_image(build_if_missing=settings.build_image)
        self.sandboxes = DockerBackend(settings.limits())
        pool_size = default_pool_size() if settings.pool_size is None else settings.pool_size
        self.sandboxes.keep_warm(self.image, pool_size)
        prewarm = max(1, pool_size // 2) if pool_size > 0 else 0
        self.grader = Grader(self.sandboxes, self.image, timeout=settings.grading_timeout_seconds, prewarm=prewarm)

    async def open(self, task: TaskRow) -> Lease:
        """A ready container with the task laid out; raises `LeaseError` when the harness fails."""
        try:
            sid = await self.sandboxes.acquire(self.image)
        except Exception as exc:
            raise LeaseError(f"no sandbox could be started for task {task.task_id}: {exc}") from exc
        lease = Lease(self, task, sid)
        try:
            await get_family(task.family).setup(Sandbox(self.sandboxes, sid), task)
        except Exception as exc:
            await lease.release()
            raise LeaseError(f"setting up task {task.task_id} failed: {exc}") from exc
        return lease

    def teardown(self) -> None:
        self.sandboxes.teardown()


class LeaseError(RuntimeError):
    """The harness, not the model, failed: no sandbox, or a sandbox that broke."""


@dataclass
class Lease:
    """One rollout's container: tools, then `finish()` (collect, release, grade)."""

    backend: Backend
    task: TaskRow
    sid: str
    fault: str | None = None
    command_seconds: list[float] = field(default_factory=list)
    released: bool = False

    def _sandbox(self) -> Sandbox:
        return Sandbox(self.backend.sandboxes, self.sid)

    async def call(self, tool: str, args: dict[str, Any]) -> str:
        """Run one tool call with the classic semantics (time limit, output cap, formatting)."""
        if tool not in TOOL_NAMES:
            raise ValueError(f"unknown tool {tool!r}; the tools are: {', '.join(TOOL_NAMES)}")
        if self.released:
            raise LeaseError("the rollout's sandbox was already released")
        settings = self.backend.settings
        t0 = time.perf_counter()
        try:
            if tool == "bash":
                return await run_bash(self._sandbox(), args["command"], settings.timeout_per_command_seconds, settings.output_cap)
            return await run_code(self._sandbox(), args["code"], settings.timeout_per_command_seconds, settings.output_cap)
        except Exception as exc:
            self.fault = self.fault or f"{tool} failed in the sandbox: {exc}"
            raise LeaseError(self.fault) from exc
        finally:
            self.command_seconds.append(time.perf_counter() - t0)

    async def finish(self) -> Grade:
        """Take the final state out, release the container, grade in fresh containers."""
        if self.fault is not None:
            await self.release()
            return Grade.harness_fault(self.fault)
        try:
            final = await get_family(self.task.family).collect(self._sandbox(), self.task)
        except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
            await self.release()
            return Grade.harness_fault(f"could not take the final state out of the sandbox: {exc}")
        await self.release()
        final = json.loads(json.dumps(final))  # plain data only crosses from run to grade
        try:
            return await get_family(self.task.family).grade(final, self.task, self.backend.grader)
        except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
            return Grade.harness_fault(f"{type(exc).__name__}: {exc}")

    async def release(self) -> None:
        if self.released:
            return
        self.released = True
        try:
            await self.backend.sandboxes.delete(self.sid)
        except Exception as exc:  # noqa: BLE001 - teardown and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", self.sid[:12], exc)


_backends: dict[SandboxSettings, Backend] = {}
_backend_lock: asyncio.Lock | None = None
_backend_loop: asyncio.AbstractEventLoop | None = None


async def backend_for(settings: SandboxSettings) -> Backend:
    """The process's backend for these settings, made on first use (off the event loop)."""
    global _backend_lock, _backend_loop
    loop = asyncio.get_running_loop()
    if _backend_lock is None or _backend_loop is not loop:
        _backend_lock, _backend_loop = asyncio.Lock(), loop
    async with _backend_lock:
        if settings not in _backends:
            _backends[settings] = await asyncio.to_thread(Backend, settings)
        return _backends[settings]


def close_backends() -> None:
    """Remove every container this process's backends made."""
    while _backends:
        _, backend = _backends.popitem()
        backend.teardown()
