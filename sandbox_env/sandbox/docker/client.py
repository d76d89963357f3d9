"""Sandboxes as containers on a Docker engine, reached through the `docker` SDK.

Every blocking engine call runs in this backend's own thread pool, so the event loop
never waits on Docker. Requests travel over one attach stream kept open to the
in-container agent (channel.py) instead of a `docker exec` per call.

Budget: every container holds a slot of the engine's container budget (budget.py) from
before it is created until it is removed, whatever its role (rollout, pool, grader). The
budget is kept per engine (its id) and sized by the engine's machine by default.

A remote engine (`DOCKER_HOST=tcp://...` or `ssh://...`, engine.py) works the same way:
containers, the attach stream, the reaper (it inherits `DOCKER_HOST`) and the labels do not
care where the engine runs. What does: the container's cgroup, the usage evidence, is read
only from the directory named by its full id on this machine (cgroup.py); a remote engine's
container has none here, so its evidence is missing, which sandbox/blame.py never counts against
the submission (a wall-clock backstop hit there is a harness fault, rescheduled).

Lifetime (spec.py): a container is attached before it starts and ends when that stream
closes; the first container also starts the reaper (reaper.py), which removes what is
left if this process dies. `teardown` (atexit, the env's SIGTERM handler) closes every
stream first, which alone ends every agent, then removes the containers in parallel.

A lost agent is diagnosed (diagnose.py) from the engine's events (events.py) and the
container's cgroup (cgroup.py): `SandboxEndedFromInside` when the container's own
processes did it, a plain `SandboxError` otherwise; a container paused or a supervisor
stopped from outside (procs.py), or one whose memory or pids limit is not the one this
backend set (`usage.changed_limits`: lowered by `docker update` from outside), is never
the sandbox's.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
import os
import threading
import time
import uuid
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import Any

import docker
import docker.errors

from sandbox_env.constants import ENGINE_MESSAGE_CHARS, GRADING_CPU_SHARES, READY_TIMEOUT, SANDBOX_USER, SHORT_ID, short
from sandbox_env.runtime.container import ops
from sandbox_env.sandbox.budget import SandboxBudget, Slot, default_max_sandboxes
from sandbox_env.sandbox.docker import cgroup, fuse, reaper
from sandbox_env.sandbox.docker.cgroup import Files as CgroupFiles
from sandbox_env.sandbox.docker.channel import AgentChannel, ChannelError
from sandbox_env.sandbox.docker.diagnose import diagnose
from sandbox_env.sandbox.docker.engine import docker_client, engine_info, engine_on_local_socket, engine_url
from sandbox_env.sandbox.docker.events import ContainerEvents
from sandbox_env.sandbox.docker.hardening import Grant, refuses_capability, sys_resource_grant
from sandbox_env.sandbox.docker.host_tree import HostTrees, refuses_mount
from sandbox_env.sandbox.docker.labels import LABEL_CLIENT, labels_for
from sandbox_env.sandbox.docker.procs import stopped_supervisor
from sandbox_env.sandbox.docker.spec import container_spec
from sandbox_env.sandbox.interface import SandboxBackend
from sandbox_env.sandbox.runs import current_run_id, hold_run
from sandbox_env.sandbox.types import Evidence, Limits, SandboxError
from sandbox_env.sandbox.usage import Usage, UsagePoint, between, changed_limits

logger = logging.getLogger("websandbox.sandbox")


SAMPLE_PERIOD = 0.5  # seconds between cgroup readings of a sandbox while a call to it runs
EVIDENCE_WINDOW = 2.0  # seconds before a lost agent over which its sandbox is judged


@dataclass
class _Record:
    container: Any
    channel: AgentChannel
    slot: Slot | None
    cgroup: cgroup.CgroupPaths | None = None
    files: CgroupFiles = field(default_factory=CgroupFiles)  # its cgroup's (and server's) files, kept open
    server: fuse.Server | None = None  # the host process serving its root filesystem, when there is one
    removing: bool = False
    agent_user: str | None = None  # the user the agent runs as (the container's)
    busy: int = 0  # calls in flight
    recent: deque = field(default_factory=lambda: deque(maxlen=16))  # UsagePoints taken while busy


def _engine_message(exc: Exception) -> str:
    text = str(exc)
    return text.splitlines()[0][:ENGINE_MESSAGE_CHARS] if text else type(exc).__name__


def _protocol_broken(exc: ChannelError) -> bool:
    """The stream carried something the agent never writes (not a transport failure)."""
    return isinstance(exc.__cause__, ValueError) or "broke the protocol" in str(exc)


class DockerBackend(SandboxBackend):
    """One container a sandbox, its agent as the main process, spoken to over its attach stream."""

    def __init__(
        self,
        limits: Limits | None = None,
        max_workers: int = 64,
        max_sandboxes: int | None = None,
        budget: SandboxBudget | None = None,
        client: docker.DockerClient | None = None,
        url: str | None = None,
    ) -> None:
        """`client`, `url`: an engine other than the one DOCKER_HOST names, and its address (Podman's: podman.py)."""
        super().__init__(limits)
        self._closed = False
        self.client_id = uuid.uuid4().hex[:SHORT_ID]
        self.run_id = current_run_id()
        hold_run(self.run_id)
        self._docker = client or docker_client()
        self._url = url or engine_url()
        self._own_url = url  # passed on to the reaper: None leaves it DOCKER_HOST's
        self._trees = HostTrees(self._docker)
        if budget is None:
            engine = engine_info(client)
            limit = max_sandboxes or default_max_sandboxes(
                cores=engine.cores or None, memory_bytes=engine.memory_bytes or None, memory_mb=self.limits.memory_mb
            )
            budget = SandboxBudget(limit, engine=engine.key)
        self.budget = budget
        self._api = self._docker.api
        self._threads = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="websandbox-docker")
        self._records: dict[str, _Record] = {}
        self._events = ContainerEvents(self._api, f"{LABEL_CLIENT}={self.client_id}")
        self._reaper_started = False
        self._lock = threading.Lock()
        self._sampler = threading.Thread(target=self._sample_busy, name="websandbox-usage", daemon=True)
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
        if self._closed:
            raise SandboxError("this sandbox backend was torn down; create a new one")
        slot = await self.budget.acquire(spare=role == "pool")
        future = asyncio.get_running_loop().run_in_executor(self._threads, self._start_ready, image, role, slot)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:  # the container may still come up: remove it when it does
            future.add_done_callback(
                lambda f: None if f.cancelled() or f.exception() is not None else self.delete_later(f.result())
            )
            raise

    async def call(self, sandbox_id: str, request: dict[str, Any], wait: float) -> dict[str, Any]:
        return await self._in_thread(self._call, sandbox_id, request, wait)

    async def delete(self, sandbox_id: str) -> None:
        await self._in_thread(self._delete, sandbox_id)

    async def favour(self, sandbox_id: str) -> None:
        """`docker update --cpu-shares`: GRADING_CPU_SHARES, against the engine's default for every other sandbox.

        A grading sandbox judges code by the CPU it consumes; weighed against the rollouts
        beside it (the model's busy loops among them), it gets that CPU first.
        """
        await self._in_thread(lambda: self._api.update_container(sandbox_id, cpu_shares=GRADING_CPU_SHARES))

    def delete_later(self, sandbox_id: str) -> None:
        self._threads.submit(self._delete_quietly, sandbox_id)

    def teardown(self) -> None:
        """Remove every container this backend made, tracked or not (also from atexit/SIGTERM).

        Closing the streams first ends every agent at once (and with it its container,
        which removes itself); the removals then run in parallel, so a SIGTERM'd worker
        gets through them well within the grace its parent gives it. After teardown the
        backend creates nothing more, so a pool refill racing the shutdown cannot leave a
        container behind.
        """
        self._closed = True
        records = list(self._records.items())
        for _, rec in records:
            rec.removing = True
            rec.channel.close()
        ids = [sid for sid, _ in records]
        try:
            ids += [
                c["Id"]
                for c in self._api.containers(all=True, filters={"label": f"{LABEL_CLIENT}={self.client_id}"})
                if c["Id"] not in ids
            ]
        except Exception:  # noqa: BLE001 - the engine may already be gone at exit
            pass
        if ids:
            try:
                with ThreadPoolExecutor(max_workers=min(16, len(ids))) as pool:
                    list(pool.map(self._delete_quietly, ids))
            except RuntimeError:  # at interpreter exit no new thread may start: one at a time then
                for sid in ids:
                    self._delete_quietly(sid)
        self._events.stop()

    def evidence(self) -> Evidence:
        """All of it for an engine of this machine whose cgroups the host reads; none for another host's engine.

        An engine behind `DOCKER_HOST` on another machine runs containers whose cgroups
        this host cannot read (docker/cgroup.py finds none), so it can prove neither what
        a sandbox consumed, nor a limit changed from outside, nor that a silent agent's own
        sandbox kept it busy: such an engine is a backend without evidence.
        """
        if engine_on_local_socket(self._url) and cgroup.ROOT.is_dir():
            return Evidence(usage=True, limits_changed=True, ended_from_inside=True)
        return Evidence()

    def usage_point(self, sandbox_id: str) -> UsagePoint | None:
        rec = self._records.get(sandbox_id)
        if rec is None:
            return None
        if rec.cgroup is None:
            rec.cgroup = cgroup.find(sandbox_id)
        point = cgroup.sample(rec.cgroup, rec.files)
        if point is None:
            return None
        if rec.server is not None:
            point = replace(point, served=fuse.served_cpu(rec.server, read=rec.files.read))
        changed = changed_limits(point, memory_bytes=self.limits.memory_mb << 20, pids=self.limits.pids)
        return replace(point, limits_changed=changed) if changed else point

    def recent_usage(self, sandbox_id: str, seconds: float) -> Usage | None:
        """Over the points sampled while its calls ran (`_sample_busy`, every SAMPLE_PERIOD) and one taken now."""
        rec = self._records.get(sandbox_id)
        if rec is None:
            return None
        return _window([*rec.recent, self.usage_point(sandbox_id)], seconds, self.limits.cpus)

    # -- blocking engine work, run in the thread pool --------------------------------------------
    def _start_ready(self, image: str, role: str, slot: Slot) -> str:
        """Create, attach, start and ping one container; on any failure nothing is left and the slot is free."""
        try:
            sid = self._create(image, role, slot)
        except BaseException:
            self.budget.release(slot)
            raise
        try:
            self._wait_ready(sid)
            if self._closed:
                raise SandboxError("this sandbox backend was torn down while the sandbox started")
        except BaseException:
            self._delete_quietly(sid)
            raise
        return sid

    def _ensure_watchers(self) -> None:
        with self._lock:
            if self._reaper_started:
                return
            self._reaper_started = True
        self._events.start()
        self._sampler.start()
        try:
            reaper.spawn(os.getpid(), f"{LABEL_CLIENT}={self.client_id}", self._own_url)
        except Exception as exc:  # noqa: BLE001 - teardown, stdin_once and gc still remove containers
            logger.warning("could not start the container reaper: %s", exc)

    def _create(self, image: str, role: str, slot: Slot) -> str:
        if self._closed:
            raise SandboxError("this sandbox backend was torn down; create a new one")
        self._ensure_watchers()
        with sys_resource_grant(self._docker, self._url) as grant:
            return self._create_with(image, role, slot, grant)

    def _create_with(self, image: str, role: str, slot: Slot, grant: Grant) -> str:
        source, mounts = self._trees.for_image(image)
        try:
            labels = labels_for(self.client_id, role, self.run_id)
            spec = self._spec(source, labels, role, oom_protection=grant.ask, mounts=mounts)
            container = self._docker.containers.create(**spec)
        except docker.errors.ImageNotFound as exc:
            if source != image:  # the id it was known by is gone: look the image up again
                self._trees.forget(image)
                return self._create_with(image, role, slot, grant)
            raise SandboxError(
                f"image {image!r} does not exist: build it with `websandbox build-image` "
                f"(or pass an existing image) ({_engine_message(exc)})"
            ) from exc
        except docker.errors.APIError as exc:
            if grant.ask and refuses_capability(exc):
                return self._without_oom_protection(image, role, slot, grant, exc)
            if mounts and refuses_mount(exc):
                self._trees.refuse(_engine_message(exc))
                return self._create_with(image, role, slot, grant)
            raise SandboxError(f"cannot create a container from {image!r}: {_engine_message(exc)}") from exc
        rec = _Record(container, AgentChannel(self._api, container.id), slot, agent_user=spec.get("user"))
        self._records[container.id] = rec
        try:
            rec.channel.open()  # attached before it starts: its stdin closes when this stream does
            container.start()
        except (docker.errors.APIError, ChannelError) as exc:
            refused = grant.ask and refuses_capability(exc)
            unmounted = not refused and bool(mounts) and refuses_mount(exc)
            if refused or unmounted:
                rec.slot = None  # the slot goes on to the sandbox started in its place
            self._delete(container.id)
            if refused:
                return self._without_oom_protection(image, role, slot, grant, exc)
            if unmounted:
                self._trees.refuse(_engine_message(exc))
                return self._create_with(image, role, slot, grant)
            raise SandboxError(f"cannot start a container from {image!r}: {_engine_message(exc)}") from exc
        if grant.ask:
            grant.granted()
        rec.server = self._server_of(container)
        return container.id

    def _spec(self, image: str, labels: dict[str, str], role: str, **kwargs: Any) -> dict[str, Any]:
        """The create arguments of one sandbox (spec.py); an engine that needs others says so by overriding this."""
        return container_spec(image, self.limits, labels, role, **kwargs)

    @staticmethod
    def _server_of(container) -> fuse.Server | None:
        """Its root filesystem's server, looked for now: started with it, before any code of the model runs."""
        try:
            return fuse.find_server(container.attrs)
        except Exception:  # noqa: BLE001 - evidence that cannot be had leaves the cgroup's alone
            return None

    def _without_oom_protection(self, image: str, role: str, slot: Slot, grant: Grant, exc: Exception) -> str:
        """The engine refused SYS_RESOURCE: this sandbox, and every later one, start without it."""
        grant.refused()
        logger.warning(
            "the Docker engine cannot grant CAP_SYS_RESOURCE (%s): sandboxes start without it, and their "
            "agents without protection from the OOM killer",
            _engine_message(exc),
        )
        return self._create_with(image, role, slot, grant)

    def _wait_ready(self, sandbox_id: str) -> None:
        rec = self._record(sandbox_id)
        try:
            rec.channel.call({"op": ops.PING}, wait=READY_TIMEOUT)
        except (ChannelError, docker.errors.APIError) as exc:
            raise SandboxError(f"sandbox {short(sandbox_id)} did not become ready: {exc}") from exc

    def _sample_busy(self) -> None:
        """While a call runs, read its sandbox's cgroup now and then: evidence taken before any failure."""
        while not self._closed:
            for sid, rec in list(self._records.items()):
                if rec.busy:
                    point = self.usage_point(sid)
                    if point is not None:
                        rec.recent.append(point)
            time.sleep(SAMPLE_PERIOD)

    def _call(self, sandbox_id: str, request: dict[str, Any], wait: float) -> dict[str, Any]:
        rec = self._record(sandbox_id)
        self._check_limits(sandbox_id, rec, "before")
        rec.busy += 1
        try:
            reply = rec.channel.call(request, wait=wait)
        except ChannelError as exc:
            raise self._diagnose(sandbox_id, rec, exc) from exc
        finally:
            rec.busy -= 1
        self._check_limits(sandbox_id, rec, "during")
        if "error" in reply:
            raise SandboxError(f"sandbox {short(sandbox_id)}: {reply['error']}")
        return reply

    def _check_limits(self, sandbox_id: str, rec: _Record, when: str) -> None:
        """Raise a harness fault when the sandbox's limits are not the ones this backend set (blame rule 5, docs/architecture.md).

        Read before and after every call (a dozen small cgroup files, kept open: about 0.05 ms;
        cgroup.Files): a limit lowered from outside between turns or during a call makes the
        model's commands fail to start or run out of memory, and nothing a call returns under
        it is the model's doing. The point taken before the call is also the baseline of the
        evidence when the call fails at once (a container gone leaves no cgroup to read).
        """
        point = self.usage_point(sandbox_id)
        if point is None:
            return
        rec.recent.append(point)
        if point.limits_changed:
            raise SandboxError(f"sandbox {short(sandbox_id)}: {point.limits_changed} {when} this call")

    def _diagnose(self, sandbox_id: str, rec: _Record, exc: ChannelError) -> SandboxError:
        def running() -> bool | None:
            try:
                rec.container.reload()
            except docker.errors.NotFound:
                return None
            except docker.errors.APIError:
                return True  # cannot tell: judge by the cgroup
            return rec.container.attrs["State"].get("Running", False)

        def held() -> str | None:
            try:
                rec.container.reload()
            except docker.errors.APIError:
                return None  # gone or unreachable: the engine's record and the cgroup decide
            state = rec.container.attrs.get("State") or {}
            if state.get("Paused"):
                return "its container was paused from outside (docker pause), which code in the sandbox cannot do"
            return stopped_supervisor(state.get("Pid"))

        def measure() -> Usage | None:  # the point taken now is None once the container is gone
            return _window([*rec.recent, self.usage_point(sandbox_id)], EVIDENCE_WINDOW, self.limits.cpus, cumulative=True)

        text = str(exc)
        closed = "closed" in text or "broke" in text
        return diagnose(
            sandbox_id,
            exc,
            events=self._events,
            removing=rec.removing or self._closed,
            stream_closed=closed,
            protocol_broken=_protocol_broken(exc),
            running=running,
            measure=measure,
            agent_reachable=rec.agent_user == SANDBOX_USER,
            held=held,
        )

    def _delete(self, sandbox_id: str) -> None:
        rec = self._records.get(sandbox_id)
        if rec is not None:
            rec.removing = True
            rec.channel.close()
        try:
            self._api.remove_container(sandbox_id, force=True, v=True)
        except docker.errors.NotFound:
            pass
        except docker.errors.APIError as exc:
            if "already in progress" not in str(exc):
                raise
        rec = self._records.pop(sandbox_id, None)
        if rec is not None:
            rec.files.close()
            self.budget.release(rec.slot)
        self._events.forget(sandbox_id)

    def _delete_quietly(self, sandbox_id: str) -> None:
        try:
            self._delete(sandbox_id)
        except Exception as exc:  # noqa: BLE001 - teardown, the reaper and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", short(sandbox_id), exc)


def _window(points: list[UsagePoint | None], seconds: float, cpus: float, cumulative: bool = False) -> Usage | None:
    """Usage from the latest point at least `seconds` before the last one (or the oldest) to the last."""
    points = [p for p in points if p is not None]
    if len(points) < 2:
        return None
    end = points[-1]
    i = next((i for i in range(len(points) - 2, -1, -1) if points[i].at <= end.at - seconds), 0)
    middle = () if cumulative else points[i + 1 : -1]  # a lost agent is judged by its two ends, as it always was
    return between(points[i], end, cpus, cumulative_limits=cumulative, middle=middle)
