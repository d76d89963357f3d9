"""The Podman backend: the Docker backend (sandbox/docker/) driven through Podman's Docker-compatible API.

Selected by name (`backend="podman"`); the engine is the `podman system service` at
`WEBSANDBOX_PODMAN_HOST` (a DOCKER_HOST-style address; by default the socket `podman info`
names, `unix:///run/podman/podman.sock` for root, where `make podman` starts it). Rootful
Podman is what was measured: a rootless service's cgroups lie under the user's own slice,
where docker/cgroup.py does not look, so its sandboxes have no evidence (blame treats that
as missing, never as the submission's). Everything but what is listed below is the Docker
backend's own code: the attach stream to the agent, the events, the labels, the budget
(kept per engine: Podman's is its own), the reaper, gc and the cgroup evidence (blame,
docs/architecture.md).

What differs from Docker, and what this backend does about it (Podman 4.3 with runc, as
Debian 12 ships them, measured there):
- /workspace: Podman's tmpfs mounts take no `uid=`/`gid=` option, and runc gives a tmpfs
  the mode of the image's folder, so a tmpfs /workspace would be root's 0755, closed to
  uid 1000. Each sandbox's /workspace is instead a volume of its own, named and labelled
  like its container, mounted as a tmpfs of the same size, owner, mode and flags as on
  Docker (Podman reads `size=` in a volume's options as a disk quota; `nr_blocks=` is the
  same bound in pages). The backend removes it with its container; teardown, the reaper
  and gc remove what a crash left (`podman volume ls` shows them meanwhile).
- tmpfs flags: Podman's tmpfs mounts are not `noexec` by default (Docker's are): /tmp gets
  it explicitly.
- The read-only root: Podman puts writable tmpfs over /run and /var/tmp of a read-only
  container (the compatible API has no field that turns this off); they are mounted
  read-only here, their image contents copied up, as on Docker where they are part of the
  read-only root.
- Resource limits: Podman gives a rootful container RLIMIT_NOFILE and RLIMIT_NPROC far
  above a machine's usual hard limits, which the OCI runtime cannot set where the engine
  lacks CAP_SYS_RESOURCE (every start fails). Sandboxes get the engine process's own hard
  limits (found through the socket's peer credentials, else this process's), what Docker's
  containers inherit from dockerd.
- cgroups: `libpod_parent/libpod-<id>` (cgroupfs) or `machine.slice/libpod-<id>.scope`
  (systemd), read by docker/cgroup.py like Docker's; conmon, like Docker's shim, runs
  outside them.
- SYS_RESOURCE (the agent's OOM protection, docker/hardening.py): an engine that cannot grant
  it refuses the start on Docker and drops it silently on Podman; either way the agent runs
  unprotected from the OOM killer and its ping says so (`"oom_protected": false`).
- `init`: Podman's is catatonit (`/run/podman-init`, Debian package `catatonit`, which
  `make podman` installs) where Docker's is docker-init (tini).
- IPC: a private namespace, which Podman reports as "shareable" (only the engine's user can
  join another container to it, as with Docker's shareable mode); the IPC sysctls apply.
- CPU shares of a grading sandbox (`favour`): the compatible API has no `docker update`;
  Podman's own `/libpod/containers/<id>/update` sets them (and leaves the other limits).
- Removal racing the container's own end: Podman refuses it ("container state improper")
  where Docker says "already in progress"; the backend removes it again.
- Images: this backend builds none; the runtime image is built on Docker (with its base
  made where none can be pulled) and copied into Podman's storage (`make podman`: `docker
  save | podman load`).

Hardening that Podman cannot give: none found; every Docker create argument of
docker/hardening.py is applied, and the backend conformance suite
(tests/backend_contract.py) passes on it.
"""

from __future__ import annotations

import functools
import os
import re
import resource
import socket
import struct
from pathlib import Path
from typing import Any

import docker
import docker.errors
import docker.types

from sandbox_env.constants import GRADING_CPU_SHARES, WORKSPACE
from sandbox_env.sandbox.docker.cleanup import GcReport, collect, owner_liveness_here, settle_run
from sandbox_env.sandbox.docker.client import DockerBackend
from sandbox_env.sandbox.docker.hardening import SANDBOX_UID
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_CLIENT
from sandbox_env.sandbox.registry import BackendTools
from sandbox_env.sandbox.types import Limits

HOST_VAR = "WEBSANDBOX_PODMAN_HOST"
DEFAULT_HOST = "unix:///run/podman/podman.sock"
READ_ONLY_TMPFS = "ro,size=1m"  # over /run and /var/tmp: what Podman would make writable
STOPPED_MEANWHILE = "container state improper"  # Podman's word where Docker says "removal already in progress"
RLIMITS = {"nofile": "Max open files", "nproc": "Max processes"}


class PodmanUnavailableError(RuntimeError):
    """Podman's service cannot be reached."""


def podman_url() -> str:
    """The Podman service's address: `WEBSANDBOX_PODMAN_HOST`, else the socket `podman info` names for this user."""
    if os.environ.get(HOST_VAR):
        return os.environ[HOST_VAR]
    if os.geteuid() == 0:
        return DEFAULT_HOST
    return f"unix://{os.environ.get('XDG_RUNTIME_DIR') or f'/run/user/{os.geteuid()}'}/podman/podman.sock"


def podman_client() -> docker.DockerClient:
    """A docker SDK client of the Podman service; raises PodmanUnavailableError saying what to do."""
    return _client_at(podman_url())


@functools.lru_cache(maxsize=4)
def _client_at(url: str) -> docker.DockerClient:
    try:
        client = docker.DockerClient(base_url=url, timeout=120, max_pool_size=128)
        client.ping()
    except docker.errors.DockerException as exc:
        raise PodmanUnavailableError(
            f"cannot reach Podman's service at {url}: {exc}. Run `make podman` (it installs Podman, starts "
            f"`podman system service` there and copies the runtime image in), or set {HOST_VAR} to the address "
            "of a running `podman system service`."
        ) from exc
    return client


def engine_rlimits(url: str) -> dict[str, int]:
    """The Podman service's own hard RLIMIT_NOFILE and RLIMIT_NPROC (this process's where they cannot be read).

    A limit the engine holds unlimited is left out: Podman's own value fits under it.
    """
    pid = _socket_peer(url)
    text = _read(Path(f"/proc/{pid}/limits")) if pid else None
    if text is None:
        own = {"nofile": resource.RLIMIT_NOFILE, "nproc": resource.RLIMIT_NPROC}
        return {k: hard for k, r in own.items() if (hard := resource.getrlimit(r)[1]) != resource.RLIM_INFINITY}
    found = {}
    for key, title in RLIMITS.items():
        m = re.search(rf"^{title}\s+\S+\s+(\d+)", text, re.MULTILINE)
        if m:
            found[key] = int(m.group(1))
    return found


def _socket_peer(url: str) -> int | None:
    """The pid of the process that listens on a local unix socket, or None."""
    if not url.startswith("unix://"):
        return None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(url.removeprefix("unix://"))
            pid, _, _ = struct.unpack("3i", s.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))
    except OSError:
        return None
    return pid or None


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def workspace_options(limits: Limits) -> dict[str, str]:
    """A local volume's options for a tmpfs /workspace as Docker mounts it (size, owner, mode, flags)."""
    pages = (limits.workspace_mb << 20) // os.sysconf("SC_PAGE_SIZE")
    mount = f"nr_blocks={pages},uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0755,noexec,nosuid,nodev"
    return {"type": "tmpfs", "device": "tmpfs", "o": mount}


def podman_spec(spec: dict[str, Any], volume: str, rlimits: dict[str, int]) -> dict[str, Any]:
    """The Docker backend's create arguments (docker/spec.py) as Podman needs them (see the module's list)."""
    tmpfs = {path: opts for path, opts in spec["tmpfs"].items() if path != WORKSPACE}
    tmpfs["/tmp"] = f"{tmpfs['/tmp']},noexec"
    tmpfs.update({"/run": READ_ONLY_TMPFS, "/var/tmp": READ_ONLY_TMPFS})
    ulimits = [*spec["ulimits"], *(docker.types.Ulimit(name=k, soft=v, hard=v) for k, v in rlimits.items())]
    binds = {volume: {"bind": WORKSPACE, "mode": "rw,noexec,nosuid,nodev"}}  # the flags hold where it is mounted
    return {**spec, "tmpfs": tmpfs, "ulimits": ulimits, "volumes": binds}


def update_resources(api: docker.APIClient, container_id: str, resources: dict[str, Any]) -> None:
    """`podman update`: set the given cgroup resources (OCI `LinuxResources` fields) of a running container."""
    api._raise_for_status(api._post_json(api._url("/libpod/containers/{0}/update", container_id), data=resources))


def _remove_volumes(api: docker.APIClient, names: list[str]) -> None:
    for name in names:
        try:
            api.remove_volume(name, force=True)
        except docker.errors.NotFound:
            pass


def _volumes(api: docker.APIClient, label: str) -> list[dict[str, Any]]:
    return api.volumes(filters={"label": label}).get("Volumes") or []


class PodmanBackend(DockerBackend):
    """Sandboxes as containers of Podman's service, with the differences of this module's docstring."""

    def __init__(self, limits: Limits | None = None, max_sandboxes: int | None = None, **kwargs: Any) -> None:
        url = podman_url()
        super().__init__(limits, max_sandboxes=max_sandboxes, client=podman_client(), url=url, **kwargs)
        self._rlimits = engine_rlimits(url)

    def _spec(self, image: str, labels: dict[str, str], role: str, **kwargs: Any) -> dict[str, Any]:
        spec = super()._spec(image, labels, role, **kwargs)
        opts = workspace_options(self.limits)
        self._api.create_volume(spec["name"], driver="local", driver_opts=opts, labels=labels)
        return podman_spec(spec, spec["name"], self._rlimits)

    async def favour(self, sandbox_id: str) -> None:
        """GRADING_CPU_SHARES, through Podman's own update endpoint: its compatible API has no `docker update`."""
        await self._in_thread(update_resources, self._api, sandbox_id, {"cpu": {"shares": GRADING_CPU_SHARES}})

    def _delete(self, sandbox_id: str) -> None:
        rec = self._records.get(sandbox_id)
        try:
            super()._delete(sandbox_id)
        except docker.errors.APIError as exc:  # it stopped by itself while Podman stopped it: remove it again
            if STOPPED_MEANWHILE not in str(exc):
                raise
            super()._delete(sandbox_id)
        if rec is not None:  # its workspace, once the container that used it is gone
            _remove_volumes(self._api, [rec.container.name])

    def teardown(self) -> None:
        super().teardown()
        try:
            _remove_volumes(self._api, [v["Name"] for v in _volumes(self._api, f"{LABEL_CLIENT}={self.client_id}")])
        except Exception:  # noqa: BLE001 - the engine may already be gone at exit; the reaper and gc remain
            pass


def _gc(all_owners: bool = False, other_hosts: bool = False) -> GcReport:
    """gc on Podman: containers as on Docker, then the workspaces of owners judged the same way."""
    client, url = podman_client(), podman_url()
    report = collect(all_owners, other_hosts, client=client, url=url)
    for v in _volumes(client.api, LABEL):
        state = owner_liveness_here(v.get("Labels") or {}, url).state
        if all_owners or state == "gone" or (other_hosts and state in ("elsewhere", "unknown")):
            try:
                _remove_volumes(client.api, [v["Name"]])
            except docker.errors.APIError:  # still in use by a container: it goes with it
                pass
    return report


def _image_exists(tag: str) -> bool:
    try:
        podman_client().images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


def _build_on_docker(*_: Any) -> str:
    raise RuntimeError(
        "the runtime image is built on Docker and copied into Podman's storage: run `make podman` "
        "(it runs `websandbox build-image`, then `docker save IMAGE | podman load`)"
    )


TOOLS = BackendTools(
    where=podman_url,
    gc=_gc,
    settle_run=lambda run_id: settle_run(run_id, client=podman_client()),
    image_exists=_image_exists,
    choose_base=_build_on_docker,
    build_image=_build_on_docker,
    unavailable=(PodmanUnavailableError,),
)

__all__ = ["TOOLS", "PodmanBackend", "PodmanUnavailableError", "podman_client", "podman_url", "update_resources"]
