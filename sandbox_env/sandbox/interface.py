"""The one small sandbox interface that families, graders, the pool and the front doors use.

A backend implements five things: `create` a started sandbox whose agent answers,
`call` that agent with one request, `delete` (now or in the background) and
`teardown` (remove everything it made). Everything else — running a command, starting
and feeding a program, writing and reading files, the persistent Python session — is
a request to the in-container agent (`runtime/container/agent.py`), so it is written once here,
on top of `call`. A second backend (hosted, Kubernetes) subclasses `SandboxBackend`
without touching families, graders or front doors.

Lifecycle: `async with backend.sandbox(image) as sb:` gives a ready `Sandbox` (from the
warm pool when one is kept for that image) and removes it on every exit path.

Every sandbox a backend holds counts against the host's container budget (budget.py):
`create` waits for a slot (pool refills only for a spare one) and `delete` gives it back.

Time limits: `exec`, `run_python` and `probe` count their `timeout` on the sandbox's
active time, with a wall-clock backstop of CALL_BACKSTOP_FACTOR limits (the agent's
CallLimit); a call that reaches the backstop before its limit is judged by the host's
evidence (`_settle_backstop`, blame.judge_backstop): the model's timeout when the
sandbox's processes consumed the limit in CPU since the call began (`usage_point` before
the call and after it), or in its last seconds used its CPU or waited on themselves
(`recent_usage`); else `SandboxStarved`, a harness fault. `feed` (a grader program) counts
the same way when given a `backstop`, and returns the agent's `starved` evidence on the
result for the grading to judge over its own trace (grading/grader.py).

Evidence: `usage_point` reads what a sandbox has consumed so far (CPU time, CPU pressure,
limit events; sandbox/usage.py, judged by sandbox/blame.py); a backend that cannot measure returns
None, which never counts against the submission. A lost agent is reported as
`SandboxEndedFromInside` when the sandbox's own processes did it, else `SandboxError`.
"""

from __future__ import annotations

import base64
import contextlib
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from sandbox_env.constants import (
    CALL_BACKSTOP_FACTOR,
    CALL_SLACK,
    FILE_IO_TIMEOUT,
    SESSION_START_TIMEOUT,
    SPAWN_TIMEOUT,
    short,
)
from sandbox_env.runtime.container import ops
from sandbox_env.sandbox.pool import WarmPool
from sandbox_env.sandbox.types import Evidence, ExecResult, Limits, PyResult, SandboxStarved
from sandbox_env.sandbox.usage import Usage, UsagePoint, between
from sandbox_env.sandbox.verdicts import LIMIT_WINDOW, Verdict, judge_backstop


def _limited(request: dict[str, Any], backstop: float | None) -> tuple[dict[str, Any], float]:
    """A tool call's request with its wall-clock backstop, and how long the host waits for the reply.

    `backstop` None: CALL_BACKSTOP_FACTOR times the limit; never less than the limit.
    """
    limit = float(request["timeout"])
    backstop = max(limit, limit * CALL_BACKSTOP_FACTOR if backstop is None else float(backstop))
    return {**request, "backstop": backstop}, backstop + CALL_SLACK


def _settle_backstop(sandbox_id: str, reply: dict[str, Any], judge: Callable[[], Verdict]) -> dict[str, Any]:
    """The reply of a call the agent ended at its wall-clock backstop, judged by the host's own evidence.

    The agent's clock (runtime/container/agent.py, CallLimit) runs inside the sandbox, where the
    sandboxed code can make it read "starved": threads pinned to every CPU at nice 19,
    junk for the agent to parse on a pipe the code can write. So the host confirms the
    verdict with what it measured of the sandbox itself (`usage()`, over the last
    LIMIT_WINDOW seconds; blame rule 2, docs/architecture.md): when the sandbox's own processes used its
    CPU, hit its limits or waited on themselves, or consumed the call's limit in CPU since it
    began however busy the host was (`judge`, blame.judge_backstop), the call is the model's
    timeout (the reply says so, as for any timed-out call); only when the host's evidence
    shows the sandbox held back, or cannot be had, is it `SandboxStarved`, a harness fault.
    """
    evidence = reply.get("starved")
    if not isinstance(evidence, dict):
        return reply
    verdict = judge()
    if verdict.submission:
        settled = {k: v for k, v in reply.items() if k != "starved"}
        settled["timed_out"] = True
        note = f"[the call was ended at its wall-clock backstop and counts as its timeout: {verdict.why}]"
        if "output" in settled:
            settled["output"] = f"{settled['output']}\n{note}"
        else:
            settled["stderr"] = f"{settled.get('stderr', '')}\n{note}".lstrip("\n")
        return settled
    raise SandboxStarved(
        f"sandbox {short(sandbox_id)} was starved of CPU: in {evidence.get('wall')} s of wall clock its processes "
        f"were active {evidence.get('active')} s (CPU {evidence.get('cpu')} s) of the call's {evidence.get('limit')} s "
        f"limit, so the call was ended by its wall-clock backstop ({verdict.why}). The host is overloaded: lower the "
        "concurrency (-c, max_sandboxes) or give the containers more CPU.",
        evidence,
    )


def _exec_result(reply: dict[str, Any]) -> ExecResult:
    return ExecResult(reply["stdout"], reply["stderr"], reply["exit_code"], reply["timed_out"], reply["truncated"])


class SandboxBackend(ABC):
    """Where sandboxes come from. Subclasses implement the abstract methods only."""

    def __init__(self, limits: Limits | None = None) -> None:
        self.limits = limits or Limits()
        self._warm: dict[str, WarmPool] = {}

    # -- what a backend implements ----------------------------------------------------
    @abstractmethod
    async def create(self, image: str, *, role: str = "rollout") -> str:
        """Start a sandbox from `image` and return its id once its agent answers."""

    @abstractmethod
    async def call(self, sandbox_id: str, request: dict[str, Any], wait: float) -> dict[str, Any]:
        """Send one request to the sandbox's agent and wait up to `wait` seconds for its reply (raises SandboxError)."""

    @abstractmethod
    async def delete(self, sandbox_id: str) -> None:
        """Remove a sandbox now; removing one that is already gone is not an error."""

    @abstractmethod
    def delete_later(self, sandbox_id: str) -> None:
        """Remove a sandbox in the background; teardown still finds it if the process ends first."""

    @abstractmethod
    def teardown(self) -> None:
        """Remove every sandbox this backend made (also from atexit); it creates nothing afterwards."""

    # -- evidence for blame (see sandbox/blame.py) ---------------------------------------------------
    def evidence(self) -> Evidence:
        """What this backend can prove about its sandboxes (none by default: a backend declares what it has)."""
        return Evidence()

    def usage_point(self, sandbox_id: str) -> UsagePoint | None:
        """What the sandbox has consumed so far, read without blocking (None: this backend cannot measure)."""
        return None

    def recent_usage(self, sandbox_id: str, seconds: float) -> Usage | None:
        """What the sandbox used over about its last `seconds`, as the backend sampled it (None: cannot tell).

        It judges a call that the agent ended at its wall-clock backstop (`_settle_backstop`):
        a backend that cannot tell leaves such a call a harness fault.
        """
        return None

    def _settled(self, sandbox_id: str, reply: dict[str, Any], start: UsagePoint | None, limit: float) -> dict[str, Any]:
        """The reply of a limited call begun at usage point `start`, its backstop judged by blame.judge_backstop."""

        def judge() -> Verdict:
            whole = between(start, self.usage_point(sandbox_id), self.limits.cpus)
            return judge_backstop(whole, self.recent_usage(sandbox_id, LIMIT_WINDOW), limit)

        return _settle_backstop(sandbox_id, reply, judge)

    # -- pools and the lifecycle ------------------------------------------------------------
    def warm_pool(
        self, image: str, size: int, prepare: Callable[[str], Awaitable[Any]] | None = None, role: str = "rollout"
    ) -> WarmPool:
        """A pool of `size` ready sandboxes of `image`; `prepare(sid)` runs on each new one.

        Refills take spare budget slots only (role "pool"); a caller that finds the pool
        empty starts its own sandbox as `role`, waiting for any slot.
        """
        return WarmPool(
            factory=lambda: self.create(image, role="pool"),
            destroy=self.delete,
            size=size,
            prepare=prepare,
            demand_factory=lambda: self.create(image, role=role),
        )

    async def favour(self, sandbox_id: str) -> None:
        """Give a grading sandbox the CPU weight that keeps busy rollouts from starving it (none by default)."""
        return None

    def keep_warm(self, image: str, size: int) -> None:
        """Let `acquire(image)` take from a pool of `size` ready sandboxes (0 turns it off)."""
        if size > 0:
            self._warm[image] = self.warm_pool(image, size)
        else:
            self._warm.pop(image, None)

    async def acquire(self, image: str, role: str = "rollout") -> str:
        """A started sandbox whose agent answers: from the warm pool when one is kept for `image`."""
        pool = self._warm.get(image)
        if pool is not None:
            return await pool.acquire()
        return await self.create(image, role=role)

    async def wait_warm(self, image: str, timeout: float = 60) -> None:
        """Wait until the warm pool kept for `image` is full (tests and benchmarks measure after this)."""
        pool = self._warm.get(image)
        if pool is not None:
            await pool.wait_full(timeout)

    async def stop_pools(self) -> None:
        """Stop refilling and remove the sandboxes waiting in this backend's pools."""
        for pool in list(self._warm.values()):
            await pool.stop()

    @contextlib.asynccontextmanager
    async def sandbox(self, image: str) -> AsyncIterator[Sandbox]:
        """`async with backend.sandbox(image) as sb`: a ready sandbox, removed on every exit path."""
        sid = await self.acquire(image)
        try:
            yield Sandbox(self, sid)
        finally:
            await self.delete(sid)

    # -- requests to the agent, written once for every backend -----------------------------
    async def exec(
        self,
        sandbox_id: str,
        cmd: str | list[str],
        *,
        stdin: bytes = b"",
        timeout: float = 30,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        max_output: int | None = None,
        backstop: float | None = None,
    ) -> ExecResult:
        """Run `cmd` (a str for bash -c, or an argv) in its own process group, killed at `timeout` of active time.

        Raises SandboxStarved when the wall-clock backstop (None: the default factor of
        `timeout`) passes first.
        """
        req: dict[str, Any] = {"op": ops.EXEC, "timeout": timeout, "cwd": cwd, "env": env or {}}
        req["argv" if isinstance(cmd, list) else "command"] = cmd
        if stdin:
            req["stdin_b64"] = base64.b64encode(stdin).decode()
        if max_output:
            req["max_output"] = max_output
        req, wait = _limited(req, backstop)
        start = self.usage_point(sandbox_id)
        return _exec_result(self._settled(sandbox_id, await self.call(sandbox_id, req, wait=wait), start, timeout))

    async def spawn(self, sandbox_id: str, argv: list[str], cwd: str | None = None) -> int:
        """Start a program that waits for its stdin; finish it later with feed()."""
        reply = await self.call(sandbox_id, {"op": ops.SPAWN, "argv": argv, "cwd": cwd}, wait=SPAWN_TIMEOUT)
        return int(reply["handle"])

    async def feed(
        self,
        sandbox_id: str,
        handle: int,
        stdin: bytes,
        timeout: float,
        max_output: int | None = None,
        backstop: float | None = None,
    ) -> ExecResult:
        """Give a spawned program its stdin and wait for it to end (killed at `timeout`).

        Without `backstop`, `timeout` is wall clock. With it, `timeout` counts the sandbox's
        active time and `backstop` is the wall clock; a run ended there comes back with
        `starved` (the agent's evidence), which the caller judges over its own measurements.
        """
        req = {"op": ops.FEED, "handle": handle, "stdin_b64": base64.b64encode(stdin).decode(), "timeout": timeout}
        if max_output:
            req["max_output"] = max_output
        if backstop is not None:
            req["backstop"] = max(timeout, backstop)
        reply = await self.call(sandbox_id, req, wait=max(timeout, backstop or 0) + CALL_SLACK)
        result = _exec_result(reply)
        if isinstance(reply.get("starved"), dict):
            result.starved = reply["starved"]
        return result

    async def write_files(self, sandbox_id: str, files: dict[str, bytes | str], wait: float = FILE_IO_TIMEOUT) -> None:
        """Write files; a relative path is under /workspace, parents are made."""
        if not files:
            return
        payload = {
            path: base64.b64encode(data.encode() if isinstance(data, str) else data).decode() for path, data in files.items()
        }
        await self.call(sandbox_id, {"op": ops.WRITE, "files": payload}, wait=wait)

    async def read_files(self, sandbox_id: str, paths: list[str], wait: float = FILE_IO_TIMEOUT) -> dict[str, bytes | None]:
        """Read files; a missing one comes back as None."""
        reply = await self.call(sandbox_id, {"op": ops.READ, "paths": paths}, wait=wait)
        return {p: (None if v is None else base64.b64decode(v)) for p, v in reply["files"].items()}


class Sandbox:
    """One sandbox as families and tools see it: commands, files and the Python session."""

    def __init__(self, backend: SandboxBackend, sandbox_id: str) -> None:
        self.backend = backend
        self.id = sandbox_id

    async def exec(
        self,
        cmd: str | list[str],
        *,
        stdin: bytes = b"",
        timeout: float = 30,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
        max_output: int | None = None,
        backstop: float | None = None,
    ) -> ExecResult:
        return await self.backend.exec(
            self.id, cmd, stdin=stdin, timeout=timeout, cwd=cwd, env=env, max_output=max_output, backstop=backstop
        )

    async def write_files(self, files: dict[str, bytes | str], wait: float = FILE_IO_TIMEOUT) -> None:
        await self.backend.write_files(self.id, files, wait)

    async def read_files(self, paths: list[str], wait: float = FILE_IO_TIMEOUT) -> dict[str, bytes | None]:
        return await self.backend.read_files(self.id, paths, wait)

    async def spawn(self, argv: list[str], cwd: str | None = None) -> int:
        return await self.backend.spawn(self.id, argv, cwd)

    async def feed(
        self, handle: int, stdin: bytes, timeout: float, max_output: int | None = None, backstop: float | None = None
    ) -> ExecResult:
        return await self.backend.feed(self.id, handle, stdin, timeout, max_output, backstop)

    async def start_python(
        self, preamble: str = "", env: dict[str, str] | None = None, wait: float = SESSION_START_TIMEOUT
    ) -> str:
        """(Re)start the persistent session and run `preamble` in it; returns what the preamble printed."""
        reply = await self.backend.call(self.id, {"op": ops.PY_START, "preamble": preamble, "env": env or {}}, wait)
        return reply.get("output", "")

    async def run_python(self, code: str, timeout: float = 30, backstop: float | None = None) -> PyResult:
        """Run a cell, interrupted at `timeout` of active time; raises SandboxStarved when the backstop passes first."""
        request, wait = _limited({"op": ops.PY_EXEC, "code": code, "timeout": timeout}, backstop)
        start = self.backend.usage_point(self.id)
        reply = self.backend._settled(self.id, await self.backend.call(self.id, request, wait), start, timeout)
        return PyResult(reply.get("output", ""), reply.get("timed_out", False), reply.get("restarted", False))

    async def probe(self, name: str, timeout: float = 30) -> Any:
        """A session variable as tagged JSON (see docs/architecture.md); raises RuntimeError when unreadable."""
        request, wait = _limited({"op": ops.PY_PROBE, "name": name, "timeout": timeout}, None)
        start = self.backend.usage_point(self.id)
        reply = self.backend._settled(self.id, await self.backend.call(self.id, request, wait), start, timeout)
        if "value" not in reply:
            raise RuntimeError(f"probe of {name!r} failed: {reply.get('output', reply)}")
        return reply["value"]
