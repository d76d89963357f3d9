"""One shared connection to the Docker engine, with an error that says what to do, and what the engine is.

The engine is the one `DOCKER_HOST` names (the docker SDK's `from_env`: also
`DOCKER_TLS_VERIFY` and `DOCKER_CERT_PATH`), else the local socket. It may be on another
machine (`tcp://`, `ssh://`). What depends on where it is:
- the container budget (budget.py) is kept per engine, keyed by the engine's own id, so
  two URLs of one engine share one budget and two engines do not;
- the default budget is sized by the engine's CPUs and memory (`docker info`), not this
  machine's;
- usage evidence comes from a container's cgroup directory, found on this machine by the
  container's full id (cgroup.py): it exists only where the container runs, so for a remote
  engine there is none and the evidence is missing (never the submission's fault);
- gc judges owners by their identity label (owner.py), never by a bare local pid, except
  for containers without one on an engine reached through a local socket.
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass

import docker
import docker.errors

DEFAULT_SOCKET = "unix:///var/run/docker.sock"


class DockerUnavailableError(RuntimeError):
    """The Docker engine cannot be reached."""


def engine_url() -> str:
    """The engine's address as the docker SDK reads it."""
    return os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET


def engine_on_local_socket(url: str | None = None) -> bool:
    """Whether the engine is reached through a socket file of this machine (`unix://`, `npipe://`)."""
    url = engine_url() if url is None else url
    return url.startswith(("unix://", "npipe://"))


@functools.lru_cache(maxsize=1)
def docker_client() -> docker.DockerClient:
    """A client for the engine DOCKER_HOST names (else the local socket); raises DockerUnavailableError naming it."""
    try:
        client = docker.from_env(timeout=120, max_pool_size=128)
        client.ping()
    except docker.errors.DockerException as exc:
        raise DockerUnavailableError(
            f"cannot reach the Docker engine at {engine_url()}: {exc}. "
            "Start the engine (e.g. `sudo systemctl start docker` or `sudo dockerd &`), "
            "check that your user may use that socket, or set DOCKER_HOST to the engine's address."
        ) from exc
    return client


@dataclass(frozen=True)
class EngineInfo:
    id: str  # the engine's own id (`docker info` ID): the same through every URL that reaches it
    name: str  # the engine host's name
    cores: int
    memory_bytes: int

    @property
    def key(self) -> str:
        """A file-name-safe key of this engine (the budget's directory)."""
        return "engine-" + hashlib.sha256(self.id.encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=4)
def engine_info(client: docker.DockerClient | None = None) -> EngineInfo:
    """What the engine says of itself (asked once a process); `client`: another engine's (Podman's) than DOCKER_HOST's."""
    info = (client or docker_client()).info()
    return EngineInfo(
        id=str(info.get("ID") or (client.api.base_url if client else engine_url())),
        name=str(info.get("Name") or ""),
        cores=int(info.get("NCPU") or 0),
        memory_bytes=int(info.get("MemTotal") or 0),
    )
