"""Local Docker sandboxes behind the prime-sandboxes client protocol that vf.SandboxEnv drives.

Every blocking engine call runs in this client's own thread pool, so the event loop
never waits on Docker. Tool calls travel over one exec stream kept open to the
in-container agent (channel.py) instead of a `docker exec` per call.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import logging
import os
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker
import docker.errors
import docker.types
from prime_sandboxes import (
    BulkDeleteSandboxResponse,
    CommandResponse,
    CommandTimeoutError,
    CreateSandboxRequest,
    FileUploadResponse,
    ReadFileResponse,
)

from sandbox_env.sandbox.channel import AGENT_ARGV, SANDBOX_USER, AgentChannel, ChannelError
from sandbox_env.sandbox.engine import docker_client
from sandbox_env.sandbox.hardening import create_kwargs, engine_grants_sys_resource
from sandbox_env.sandbox.pool import WarmPool

logger = logging.getLogger("websandbox.sandbox")

LABEL = "websandbox"
LABEL_CLIENT = "websandbox.client"
LABEL_PID = "websandbox.pid"
LABEL_ROLE = "websandbox.role"


class SandboxError(RuntimeError):
    """A sandbox could not be created, reached or used; the message says which and why."""


@dataclass
class Limits:
    """Container limits; every field is an argument of load_environment."""

    cpus: float = 1.0
    memory_mb: int = 1024
    pids: int = 256
    workspace_mb: int = 256
    tmp_mb: int = 256
    network: bool = False


@dataclass
class ExecResult:
    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False
    truncated: int = 0


@dataclass
class SandboxInfo:
    """What create() returns: the protocol only needs `.id`."""

    id: str
    name: str
    status: str = "RUNNING"
    labels: list[str] = field(default_factory=list)


@dataclass
class _Record:
    container: Any
    channel: AgentChannel
    ready: bool = False


def _engine_message(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0][:400] if text else type(exc).__name__


class DockerSandboxClient:
    """Sandboxes as local containers; the method names and arguments follow prime-sandboxes."""

    def __init__(self, limits: Limits | None = None, max_workers: int = 64) -> None:
        self.limits = limits or Limits()
        self.pool: WarmPool | None = None
        self._closed = False
        self.client_id = uuid.uuid4().hex[:12]
        self._docker = docker_client()
        self._api = self._docker.api
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="websandbox-docker")
        self._records: dict[str, _Record] = {}
        atexit.register(self.teardown)

    # -- plumbing -------------------------------------------------------------
    async def _run(self, fn, *args, **kwargs):
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._pool, lambda: fn(*args, **kwargs))

    def _record(self, sandbox_id: str) -> _Record:
        try:
            return self._records[sandbox_id]
        except KeyError:
            raise SandboxError(f"no sandbox {sandbox_id!r} in this client (deleted, or never created)") from None

    def labels(self, role: str = "rollout") -> dict[str, str]:
        return {LABEL: "1", LABEL_CLIENT: self.client_id, LABEL_PID: str(os.getpid()), LABEL_ROLE: role}

    # -- lifecycle ------------------------------------------------------------
    def enable_pool(self, image: str, size: int) -> None:
        """Keep `size` ready sandboxes of `image` (0 turns the pool off)."""
        self.pool = WarmPool(self, image, size) if size > 0 else None

    async def acquire_ready(self, image: str) -> str:
        """A started sandbox whose agent answers: from the warm pool when it holds this image."""
        if self.pool is not None and self.pool.image == image:
            return await self.pool.acquire()
        sid = await self._run(self.create_sync, image)
        try:
            await self._run(self.wait_sync, sid, 60.0)
        except BaseException:
            await self._run(self.delete_sync, sid)
            raise
        return sid

    def create_sync(self, image: str, env: dict[str, str] | None = None, role: str = "rollout",
                    extra_labels: dict[str, str] | None = None) -> str:  # fmt: skip
        if self._closed:
            raise SandboxError("this sandbox client was torn down; create a new one")
        lim = self.limits
        name = f"websandbox-{role}-{uuid.uuid4().hex[:10]}"
        labels = {**self.labels(role), **(extra_labels or {})}
        try:
            container = self._docker.containers.create(
                image,
                command=AGENT_ARGV,
                stdin_open=True,
                name=name,
                labels=labels,
                working_dir="/workspace",
                environment=env or {},
                **create_kwargs(lim, oom_protection=engine_grants_sys_resource(self._docker, image)),
                detach=True,
            )
        except docker.errors.ImageNotFound as exc:
            raise SandboxError(
                f"image {image!r} does not exist: build it with `websandbox build-image` "
                f"(or pass an existing image) ({_engine_message(exc)})"
            ) from exc
        except docker.errors.APIError as exc:
            raise SandboxError(f"cannot create a container from {image!r}: {_engine_message(exc)}") from exc
        self._records[container.id] = _Record(container, AgentChannel(self._api, container.id))
        try:
            container.start()
        except docker.errors.APIError as exc:
            self.delete_sync(container.id)
            raise SandboxError(f"cannot start a container from {image!r}: {_engine_message(exc)}") from exc
        return container.id

    def wait_sync(self, sandbox_id: str, timeout: float = 60) -> None:
        rec = self._record(sandbox_id)
        if rec.ready:
            return
        try:
            rec.channel.call({"op": "ping"}, timeout=timeout)
        except (ChannelError, docker.errors.APIError) as exc:
            raise SandboxError(f"sandbox {sandbox_id[:12]} did not become ready: {exc}") from exc
        rec.ready = True

    def delete_later(self, sandbox_id: str) -> None:
        """Remove a sandbox in the background; teardown still finds it if the process ends first."""
        self._pool.submit(self._delete_quietly, sandbox_id)

    def _delete_quietly(self, sandbox_id: str) -> None:
        try:
            self.delete_sync(sandbox_id)
        except Exception as exc:  # noqa: BLE001 - teardown and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", sandbox_id[:12], exc)

    def delete_sync(self, sandbox_id: str) -> None:
        rec = self._records.pop(sandbox_id, None)
        if rec is not None:
            rec.channel.close()
        try:
            self._api.remove_container(sandbox_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise

    def teardown(self) -> None:
        """Remove every container this client made, tracked or not (also from atexit/SIGTERM).

        After teardown the client creates nothing more, so a pool refill racing the
        shutdown cannot leave a container behind.
        """
        self._closed = True
        for sid in list(self._records):
            try:
                self.delete_sync(sid)
            except Exception:  # noqa: BLE001 - keep removing the rest
                pass
        try:
            leftovers = self._api.containers(all=True, filters={"label": f"{LABEL_CLIENT}={self.client_id}"})
            for c in leftovers:
                self._api.remove_container(c["Id"], force=True, v=True)
        except Exception:  # noqa: BLE001 - the engine may already be gone at exit
            pass

    # -- agent calls ----------------------------------------------------------
    def call_sync(self, sandbox_id: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        rec = self._record(sandbox_id)
        try:
            reply = rec.channel.call(request, timeout=timeout)
        except ChannelError as exc:
            state = self._container_state(rec)
            raise SandboxError(f"sandbox {sandbox_id[:12]} ({state}): {exc}") from exc
        if "error" in reply:
            raise SandboxError(f"sandbox {sandbox_id[:12]}: {reply['error']}")
        return reply

    def _container_state(self, rec: _Record) -> str:
        try:
            rec.container.reload()
            st = rec.container.attrs["State"]
            if st.get("OOMKilled"):
                return "container was killed for running out of memory"
            return f"container {st.get('Status', 'unknown')}"
        except docker.errors.NotFound:
            return "container no longer exists"
        except docker.errors.APIError as exc:
            return f"engine error: {_engine_message(exc)}"

    async def call(self, sandbox_id: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        return await self._run(self.call_sync, sandbox_id, request, timeout)

    async def exec(self, sandbox_id: str, cmd: str | list[str], *, stdin: bytes = b"", timeout: float = 30,
                   cwd: str | None = None, env: dict[str, str] | None = None,
                   max_output: int | None = None) -> ExecResult:  # fmt: skip
        req: dict[str, Any] = {"op": "exec", "timeout": timeout, "cwd": cwd, "env": env or {}}
        req["argv" if isinstance(cmd, list) else "command"] = cmd
        if stdin:
            req["stdin_b64"] = base64.b64encode(stdin).decode()
        if max_output:
            req["max_output"] = max_output
        reply = await self.call(sandbox_id, req, timeout=timeout + 15)
        return ExecResult(reply["stdout"], reply["stderr"], reply["exit_code"], reply["timed_out"], reply["truncated"])

    async def spawn(self, sandbox_id: str, argv: list[str], cwd: str | None = None) -> int:
        """Start a program that waits for its stdin; finish it later with feed()."""
        reply = await self.call(sandbox_id, {"op": "spawn", "argv": argv, "cwd": cwd}, timeout=30)
        return int(reply["handle"])

    async def feed(self, sandbox_id: str, handle: int, stdin: bytes, timeout: float,
                   max_output: int | None = None) -> ExecResult:  # fmt: skip
        req = {"op": "feed", "handle": handle, "stdin_b64": base64.b64encode(stdin).decode(), "timeout": timeout}
        if max_output:
            req["max_output"] = max_output
        reply = await self.call(sandbox_id, req, timeout=timeout + 15)
        return ExecResult(reply["stdout"], reply["stderr"], reply["exit_code"], reply["timed_out"], reply["truncated"])

    # -- the prime-sandboxes protocol ------------------------------------------
    async def create(self, request: CreateSandboxRequest) -> SandboxInfo:
        if self.pool is not None and self.pool.image == request.docker_image and not request.environment_vars:
            sid = await self.pool.acquire()
            return SandboxInfo(id=sid, name=request.name, labels=list(request.labels or []))
        labels = {f"websandbox.tag.{i}": t for i, t in enumerate(request.labels or [])}
        sid = await self._run(
            self.create_sync, request.docker_image, request.environment_vars, "rollout", labels
        )
        return SandboxInfo(id=sid, name=request.name, labels=list(request.labels or []))

    async def wait_for_creation(self, sandbox_id: str, max_attempts: int = 60, **_: Any) -> None:
        await self._run(self.wait_sync, sandbox_id, float(max_attempts))

    async def execute_command(self, sandbox_id: str, command: str, working_dir: str | None = None,
                              env: dict[str, str] | None = None, timeout: int | None = None,
                              user: str | None = None) -> CommandResponse:  # fmt: skip
        limit = float(timeout or 30)
        if user not in (None, "sandbox", "1000", SANDBOX_USER):
            raise SandboxError(f"user {user!r} is not available: sandboxes run commands as 'sandbox' (uid 1000)")
        res = await self.exec(sandbox_id, command, timeout=limit, cwd=working_dir, env=env)
        if res.timed_out:
            raise CommandTimeoutError(sandbox_id, command + " (its process group was killed)", int(limit))
        return CommandResponse(stdout=res.stdout, stderr=res.stderr, exit_code=res.exit_code)

    async def upload_bytes(self, sandbox_id: str, file_path: str, file_bytes: bytes, filename: str = "",
                           timeout: int | None = None) -> FileUploadResponse:  # fmt: skip
        await self.call(sandbox_id, {"op": "write", "files": {file_path: base64.b64encode(file_bytes).decode()}},
                        timeout=float(timeout or 60))  # fmt: skip
        return FileUploadResponse(success=True, path=file_path, size=len(file_bytes), timestamp=datetime.now(UTC))

    async def upload_file(self, sandbox_id: str, file_path: str, local_file_path: str,
                          timeout: int | None = None) -> FileUploadResponse:  # fmt: skip
        data = await self._run(Path(local_file_path).read_bytes)
        return await self.upload_bytes(sandbox_id, file_path, data, Path(local_file_path).name, timeout)

    async def read_bytes(self, sandbox_id: str, paths: list[str], timeout: float = 60) -> dict[str, bytes | None]:
        reply = await self.call(sandbox_id, {"op": "read", "paths": paths}, timeout=timeout)
        return {p: (None if v is None else base64.b64decode(v)) for p, v in reply["files"].items()}

    async def read_file(self, sandbox_id: str, file_path: str, timeout: int | None = None, **_: Any) -> ReadFileResponse:
        data = (await self.read_bytes(sandbox_id, [file_path], float(timeout or 60)))[file_path]
        if data is None:
            raise SandboxError(f"no file {file_path} in sandbox {sandbox_id[:12]}")
        text = data.decode("utf-8", "replace")
        return ReadFileResponse(content=text, size=len(data))

    async def download_file(self, sandbox_id: str, file_path: str, local_file_path: str,
                            timeout: int | None = None) -> None:  # fmt: skip
        data = (await self.read_bytes(sandbox_id, [file_path], float(timeout or 60)))[file_path]
        if data is None:
            raise SandboxError(f"no file {file_path} in sandbox {sandbox_id[:12]}")
        await self._run(Path(local_file_path).write_bytes, data)

    async def delete(self, sandbox_id: str) -> dict[str, Any]:
        await self._run(self.delete_sync, sandbox_id)
        return {"id": sandbox_id, "deleted": True}

    async def bulk_delete(self, sandbox_ids: list[str] | None = None, labels: list[str] | None = None,
                          **_: Any) -> BulkDeleteSandboxResponse:  # fmt: skip
        ids = list(sandbox_ids or [])
        if labels:
            wanted = set(labels)
            ids += [
                sid for sid, rec in self._records.items()
                if wanted <= {v for k, v in (rec.container.labels or {}).items() if k.startswith("websandbox.tag.")}
            ]  # fmt: skip
        ok, failed = [], []
        results = await asyncio.gather(*(self._run(self.delete_sync, s) for s in ids), return_exceptions=True)
        for sid, res in zip(ids, results, strict=True):
            if isinstance(res, Exception):
                failed.append({"id": sid, "error": str(res)})
            else:
                ok.append(sid)
        return BulkDeleteSandboxResponse(succeeded=ok, failed=failed, message=f"deleted {len(ok)} of {len(ids)}")

    def tracked(self) -> list[str]:
        return list(self._records)


def leaked_containers() -> list[dict[str, Any]]:
    """websandbox containers whose owning process has ended: what a crash left behind."""
    api = docker_client().api
    out = []
    for c in api.containers(all=True, filters={"label": LABEL}):
        pid = int((c.get("Labels") or {}).get(LABEL_PID, "0") or 0)
        if not (pid and _alive(pid)):
            out.append(c)
    return out


def gc(all_owners: bool = False) -> list[str]:
    """Remove containers left by runs that ended without cleaning up.

    By default only containers whose owning process is gone; with all_owners, every
    websandbox container on the engine.
    """
    api = docker_client().api
    victims = api.containers(all=True, filters={"label": LABEL}) if all_owners else leaked_containers()
    removed = []
    for c in victims:
        try:
            api.remove_container(c["Id"], force=True, v=True)
            removed.append(c["Id"][:12])
        except docker.errors.NotFound:
            pass
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
