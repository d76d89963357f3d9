"""Grading runs: a fresh container per run, a grader program, and a report read back by nonce."""

from __future__ import annotations

import json
import secrets
from typing import Any

from sandbox_env.grader_programs import grader_argv, grader_files
from sandbox_env.sandbox.docker_backend import DockerSandboxClient, ExecResult
from sandbox_env.sandbox.handle import Sandbox
from sandbox_env.sandbox.pool import WarmPool

RUNTIME = "/opt/websandbox/runtime"  # what the image carries for rollouts (grader_programs.IMAGE_RUNTIME)
PYTHON = "/opt/venv/bin/python"


class ReportError(RuntimeError):
    """No well-formed report came back from a grading run."""


def make_nonce() -> str:
    return secrets.token_hex(16)


def read_report(result: ExecResult, nonce: str) -> dict[str, Any]:
    """The last report framed by the nonce on the grader's stdout."""
    marker = f"\n{nonce}\n"
    text = result.stdout
    end = text.rfind(marker)
    start = text.rfind(marker, 0, end) if end > 0 else -1
    if start < 0 or end < 0:
        tail = (result.stderr or result.stdout)[-800:].strip()
        state = "timed out" if result.timed_out else f"exit code {result.exit_code}"
        raise ReportError(f"the grader sent no report ({state}){': ' + tail if tail else ''}")
    try:
        report = json.loads(text[start + len(marker) : end])
    except ValueError as exc:
        raise ReportError(f"the grader's report is not valid JSON: {exc}") from exc
    if not isinstance(report, dict):
        raise ReportError("the grader's report is not a JSON object")
    return report


class Grader:
    """Runs grader programs in fresh containers of the runtime image."""

    def __init__(self, client: DockerSandboxClient, image: str, timeout: float = 90, prewarm: int = 0) -> None:
        self.client = client
        self.image = image
        self.timeout = timeout  # default limit of one grading run (load_environment's timeout_seconds)
        self.prewarm = prewarm  # per grader program: sandboxes with the program started and importing
        self._pools: dict[str, WarmPool] = {}

    async def run_program(self, program: str, request: dict[str, Any], files: dict[str, bytes | str],
                          timeout: float | None = None) -> tuple[ExecResult, dict[str, Any]]:  # fmt: skip
        """Run runtime/<program> with the request on stdin; return the raw result and its report.

        The grader programs are written into the container first (they are not in the
        image: grader_programs.py), the program starts (ahead of time when prewarmed, so
        its imports are done), its files are laid out next, and only then does its
        request arrive on stdin.
        """
        nonce = make_nonce()
        stdin = json.dumps({**request, "nonce": nonce}).encode() + b"\n"
        argv = grader_argv(PYTHON, program)

        async def start(sid: str) -> int:
            await Sandbox(self.client, sid).write_files(grader_files())
            return await self.client.spawn(sid, argv)

        if self.prewarm > 0:
            pool = self._pools.get(program)
            if pool is None:
                pool = self._pools[program] = WarmPool(self.client, self.image, self.prewarm, prepare=start)
            sid, handle = await pool.acquire_prepared()
        else:
            sid = await self.client.acquire_ready(self.image)
            handle = None
        try:
            if handle is None:
                handle = await start(sid)
            await Sandbox(self.client, sid).write_files(files)
            limit = self.timeout if timeout is None else timeout
            result = await self.client.feed(sid, handle, stdin, limit, max_output=64 << 20)
        finally:
            self.client.delete_later(sid)  # the report is in hand: removal need not delay the grade
        return result, read_report(result, nonce)
