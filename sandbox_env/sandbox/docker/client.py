"""Sandboxes as containers on a Docker engine, reached through the `docker` SDK.

Every blocking engine call runs in this backend's own thread pool, so the event loop
never waits on Docker. Requests travel over one attach stream kept open to the
in-container agent (channel.py) instead of a `docker exec` per call.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import docker.errors

from sandbox_env.constants import ENGINE_MESSAGE_CHARS, READY_TIMEOUT, SHORT_ID, short
from sandbox_env.sandbox.docker.channel import AgentChannel, ChannelError
from sandbox_env.sandbox.docker.engine import docker_client
from sandbox_env.sandbox.docker.labels import LABEL_CLIENT, labels_for
from sandbox_env.sandbox.docker.spec import container_spec
from sandbox_env.sandbox.interface import SandboxBackend
from sandbox_env.sandbox.types import Limits, SandboxError

logger = logging.getLogger("websandbox.sandbox")


@dataclass
class _Record:
    container: Any
    channel: AgentChannel


def _engine_message(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0][:ENGINE_MESSAGE_CHARS] if text else type(exc).__name__


class DockerBackend(SandboxBackend):
    """One container a sandbox, its agent as the main process, spoken to over its attach stream."""

    def __init__(self, limits: Limits | None = None, max_workers: int = 64) -> None:
        super().__init__(limits)
        self._closed = False
        self.client_id = uuid.uuid4().hex[:SHORT_ID]
        self._docker = docker_client()
        self._api = self._docker.api
        self._threads = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="websandbox-docker")
        self._records: dict[str, _Record] = {}
        atexit.register(self.teardown)

    async def _in_thread(self, fn, *args):
        return await asyncio.get_running_loop().run_in_executor(self._threads, lambda: fn(*args))

    def _record(self, sandbox_id: str) -> _Record:
        try:
            return self._records[sandbox_id]
        except KeyError:
            raise SandboxError(f"no sandbox {sandbox_id!r} in this backend (deleted, or never created)") from None

    def tracked(self) -> list[str]:
        """Ids of the sandboxes this backend made and has not removed."""
        return list(self._records)

    # -- the interface ------------------------------------------------------------------------
    async def create(self, image: str, *, role: str = "rollout") -> str:
        sid = await self._in_thread(self._create, image, role)
        try:
            await self._in_thread(self._wait_ready, sid)
        except BaseException:
            await self.delete(sid)
            raise
        return sid

    async def call(self, sandbox_id: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        return await self._in_thread(self._call, sandbox_id, request, timeout)

    async def delete(self, sandbox_id: str) -> None:
        await self._in_thread(self._delete, sandbox_id)

    def delete_later(self, sandbox_id: str) -> None:
        self._threads.submit(self._delete_quietly, sandbox_id)

    def teardown(self) -> None:
        """Remove every container this backend made, tracked or not (also from atexit/SIGTERM).

        After teardown the backend creates nothing more, so a pool refill racing the
        shutdown cannot leave a container behind.
        """
        self._closed = True
        for sid in list(self._records):
            try:
                self._delete(sid)
            except Exception:  # noqa: BLE001 - keep removing the rest
                pass
        try:
            leftovers = self._api.containers(all=True, filters={"label": f"{LABEL_CLIENT}={self.client_id}"})
            for c in leftovers:
                self._api.remove_container(c["Id"], force=True, v=True)
        except Exception:  # noqa: BLE001 - the engine may already be gone at exit
            pass

    # -- blocking engine work, run in the thread pool --------------------------------------------
    def _create(self, image: str, role: str) -> str:
        if self._closed:
            raise SandboxError("this sandbox backend was torn down; create a new one")
        spec = container_spec(image, self.limits, labels_for(self.client_id, role), role)
        try:
            container = self._docker.containers.create(**spec)
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
            self._delete(container.id)
            raise SandboxError(f"cannot start a container from {image!r}: {_engine_message(exc)}") from exc
        return container.id

    def _wait_ready(self, sandbox_id: str) -> None:
        rec = self._record(sandbox_id)
        try:
            rec.channel.call({"op": "ping"}, timeout=READY_TIMEOUT)
        except (ChannelError, docker.errors.APIError) as exc:
            raise SandboxError(f"sandbox {short(sandbox_id)} did not become ready: {exc}") from exc

    def _call(self, sandbox_id: str, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        rec = self._record(sandbox_id)
        try:
            reply = rec.channel.call(request, timeout=timeout)
        except ChannelError as exc:
            state = self._container_state(rec)
            raise SandboxError(f"sandbox {short(sandbox_id)} ({state}): {exc}") from exc
        if "error" in reply:
            raise SandboxError(f"sandbox {short(sandbox_id)}: {reply['error']}")
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

    def _delete(self, sandbox_id: str) -> None:
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

    def _delete_quietly(self, sandbox_id: str) -> None:
        try:
            self._delete(sandbox_id)
        except Exception as exc:  # noqa: BLE001 - teardown and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", short(sandbox_id), exc)
