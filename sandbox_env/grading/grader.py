"""Gradings: a fresh sandbox per grading, a grader program, and a report read back by nonce.

("Run" here is only ever a verb: a run is an eval run, sandbox/runs.py.) A grading's limit counts the grading
sandbox's own time, not the wall clock: the agent ends the program when the sandbox has been active (running,
or waiting on itself) for the limit (runtime/container/agent.py, CallLimit), and that is the submission's
timeout at any load. The wall clock is a backstop of GRADING_BACKSTOP_FACTOR limits. Every grading is measured
by the host while it runs (`result.usage`, a trace of the sandbox's CPU time, CPU pressure and limit events;
sandbox/usage.py), and a grading ended at the backstop is judged by it (blame.judge_backstop): if its
processes consumed the limit in CPU over the grading, or in its last seconds used their CPU, hit a limit or
waited on themselves, the timeout is the submission's; if they were starved it is a harness fault
(`StarvedGrading`), which `families.grade_final` retries in a fresh sandbox. So a busy wrong answer scores its
own 0 however busy the host is: it consumes its limit, slowly, before the backstop.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import secrets
from collections.abc import Iterator
from typing import Any

from sandbox_env.constants import CONTAINER_PYTHON, DEFAULTS, GRADER_MAX_OUTPUT, GRADING_BACKSTOP_FACTOR, REPORT_TAIL_CHARS
from sandbox_env.grading.programs import grader_argv, grader_files
from sandbox_env.sandbox import ExecResult, Sandbox, SandboxBackend
from sandbox_env.sandbox.blame import LIMIT_WINDOW, StarvedGrading, judge_backstop
from sandbox_env.sandbox.pool import WarmPool
from sandbox_env.sandbox.usage import TRACE_PERIOD, UsageTrace
from sandbox_env.text import valid_json_text

_GRADINGS: contextvars.ContextVar[list[UsageTrace] | None] = contextvars.ContextVar("websandbox_gradings", default=None)


@contextlib.contextmanager
def recording_gradings() -> Iterator[list[UsageTrace]]:
    """Collect the usage traces of every grading made inside the block, finished or failed."""
    traces: list[UsageTrace] = []
    token = _GRADINGS.set(traces)
    try:
        yield traces
    finally:
        _GRADINGS.reset(token)


class ReportError(RuntimeError):
    """No well-formed report came back from a grading; `result` is what the grader program gave, for its frames."""

    def __init__(self, message: str, result: ExecResult | None = None) -> None:
        super().__init__(message)
        self.result = result


def make_nonce() -> str:
    return secrets.token_hex(16)


def read_report(result: ExecResult, nonce: str) -> dict[str, Any]:
    """The last report framed by the nonce on the grader's stdout."""
    marker = f"\n{nonce}\n"
    text = result.stdout
    end = text.rfind(marker)
    start = text.rfind(marker, 0, end) if end > 0 else -1
    if start < 0 or end < 0:
        tail = (result.stderr or result.stdout)[-REPORT_TAIL_CHARS:].strip()
        state = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        raise ReportError(f"the grader sent no report ({state}){': ' + tail if tail else ''}", result)
    try:
        report = json.loads(text[start + len(marker) : end])
    except RecursionError as exc:  # not a ValueError: nesting past the parser's limit
        raise ReportError("the grader's report is JSON nested deeper than the parser allows", result) from exc
    except ValueError as exc:
        raise ReportError(f"the grader's report is not valid JSON: {exc}", result) from exc
    if not isinstance(report, dict):
        raise ReportError("the grader's report is not a JSON object", result)
    return valid_json_text(report)  # JSON escapes can carry lone surrogates, which no state can be sent with


def _judge_backstop(result: ExecResult, what: str, limit: float) -> None:
    """A grading its wall-clock backstop ended: the submission's timeout (`timed_out`), or StarvedGrading."""
    trace = result.usage
    whole = trace.whole() if trace is not None else None
    recent = trace.over_last(min(limit, LIMIT_WINDOW)) if trace is not None else None
    verdict = judge_backstop(whole, recent, limit)
    if not verdict.submission:
        raise StarvedGrading(f"{what} reached its wall-clock backstop, but not by the submission's doing: {verdict.why}")
    result.timed_out = True


class Grader:
    """Runs grader programs in fresh sandboxes of the runtime image."""

    def __init__(self, backend: SandboxBackend, image: str, timeout: float = DEFAULTS.timeout_seconds, prewarm: int = 0) -> None:
        self.backend = backend
        self.image = image
        self.timeout = timeout  # default limit of one grading (load_environment's timeout_seconds)
        self.prewarm = prewarm  # per grader program: sandboxes with the program started and importing
        self._pools: dict[str, WarmPool] = {}

    async def run_program(
        self, program: str, request: dict[str, Any], files: dict[str, bytes | str], timeout: float | None = None
    ) -> tuple[ExecResult, dict[str, Any]]:
        """Run runtime/<program> with the request on stdin; return the raw result and its report.

        The grader programs are written into the sandbox first (they are not in the
        image: grading/programs.py), the program starts (ahead of time when prewarmed, so
        its imports are done), its files are laid out next, and only then does its
        request arrive on stdin.
        """
        nonce = make_nonce()
        stdin = json.dumps({**request, "nonce": nonce}).encode() + b"\n"
        argv = grader_argv(CONTAINER_PYTHON, program)

        async def start(sid: str) -> int:
            sb = Sandbox(self.backend, sid)
            await self.backend.favour(sid)
            await sb.write_files(grader_files())
            return await sb.spawn(argv)

        sid, handle = await self._take_sandbox(program, start)
        result: ExecResult | None = None
        try:
            sb = Sandbox(self.backend, sid)
            if handle is None:
                handle = await start(sid)
            await sb.write_files(files)
            limit = self.timeout if timeout is None else timeout
            trace = UsageTrace(self.backend.limits.cpus)
            traces = _GRADINGS.get()
            if traces is not None:
                traces.append(trace)
            trace.add(self.backend.usage_point(sid))
            sampler = asyncio.get_running_loop().create_task(self._trace(sid, trace))
            try:
                backstop = GRADING_BACKSTOP_FACTOR * limit
                result = await sb.feed(handle, stdin, limit, max_output=GRADER_MAX_OUTPUT, backstop=backstop)
            finally:
                sampler.cancel()
                trace.add(self.backend.usage_point(sid))
            result.usage = trace
            result.report_nonce = nonce
        finally:
            await self._give_back(sid, result)
        if result.starved is not None:
            _judge_backstop(result, f"the grading ({program}, {limit:g} s)", limit)
        return result, read_report(result, nonce)

    async def _take_sandbox(self, program: str, start: Any) -> tuple[str, int | None]:
        """A fresh grading sandbox, with the program already started when prewarmed (else handle None)."""
        if self.prewarm > 0:
            pool = self._pools.get(program)
            if pool is None:
                pool = self._pools[program] = self.backend.warm_pool(self.image, self.prewarm, prepare=start, role="grader")
            return await pool.acquire_prepared()
        return await self.backend.acquire(self.image, role="grader"), None

    async def _give_back(self, sid: str, result: ExecResult | None) -> None:
        """A grading is over (`result` None: it failed before one came back): its sandbox is removed."""
        self.backend.delete_later(sid)  # the report is in hand: removal need not delay the grade

    async def _trace(self, sid: str, trace: UsageTrace) -> None:
        while True:
            await asyncio.sleep(TRACE_PERIOD)
            trace.add(self.backend.usage_point(sid))

    async def wait_warm(self, timeout: float = 60) -> None:
        """Wait until every prewarmed pool is full (benchmarks measure grading after this)."""
        for pool in list(self._pools.values()):
            await pool.wait_full(timeout)

    async def stop(self) -> None:
        """Stop the prewarmed pools and remove the sandboxes waiting in them."""
        for pool in list(self._pools.values()):
            await pool.stop()
