"""The view of one sandbox that families and tools use: exec, files and the Python session."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from sandbox_env.sandbox.docker_backend import DockerSandboxClient, ExecResult

__all__ = ["ExecResult", "PyResult", "Sandbox"]


@dataclass
class PyResult:
    output: str
    timed_out: bool = False
    restarted: bool = False


class Sandbox:
    def __init__(self, client: DockerSandboxClient, sandbox_id: str) -> None:
        self.client = client
        self.id = sandbox_id

    async def exec(self, cmd: str | list[str], *, stdin: bytes = b"", timeout: float = 30,
                   cwd: str | None = None, env: dict[str, str] | None = None,
                   max_output: int | None = None) -> ExecResult:  # fmt: skip
        return await self.client.exec(self.id, cmd, stdin=stdin, timeout=timeout, cwd=cwd, env=env,
                                      max_output=max_output)  # fmt: skip

    async def write_files(self, files: dict[str, bytes | str], timeout: float = 60) -> None:
        if not files:
            return
        payload = {
            path: base64.b64encode(data.encode() if isinstance(data, str) else data).decode()
            for path, data in files.items()
        }
        await self.client.call(self.id, {"op": "write", "files": payload}, timeout=timeout)

    async def read_files(self, paths: list[str], timeout: float = 60) -> dict[str, bytes | None]:
        return await self.client.read_bytes(self.id, paths, timeout=timeout)

    async def start_python(self, preamble: str = "", env: dict[str, str] | None = None,
                           timeout: float = 90) -> str:  # fmt: skip
        reply = await self.client.call(self.id, {"op": "py_start", "preamble": preamble, "env": env or {}}, timeout)
        return reply.get("output", "")

    async def run_python(self, code: str, timeout: float = 30) -> PyResult:
        reply = await self.client.call(self.id, {"op": "py_exec", "code": code, "timeout": timeout}, timeout + 15)
        return PyResult(reply.get("output", ""), reply.get("timed_out", False), reply.get("restarted", False))

    async def probe(self, name: str, timeout: float = 30) -> Any:
        reply = await self.client.call(self.id, {"op": "py_probe", "name": name, "timeout": timeout}, timeout + 15)
        if "value" not in reply:
            raise RuntimeError(f"probe of {name!r} failed: {reply.get('output', reply)}")
        return reply["value"]
