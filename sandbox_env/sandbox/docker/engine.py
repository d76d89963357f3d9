"""One shared connection to the Docker engine, with an error that says what to do."""

from __future__ import annotations

import functools
import os

import docker
import docker.errors


class DockerUnavailableError(RuntimeError):
    """The Docker engine cannot be reached."""


def _socket_name() -> str:
    return os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"


@functools.lru_cache(maxsize=1)
def docker_client() -> docker.DockerClient:
    """A client for the local engine; raises DockerUnavailableError naming the socket."""
    try:
        client = docker.from_env(timeout=120, max_pool_size=128)
        client.ping()
    except docker.errors.DockerException as exc:
        raise DockerUnavailableError(
            f"cannot reach the Docker engine at {_socket_name()}: {exc}. "
            "Start the engine (e.g. `sudo systemctl start docker` or `sudo dockerd &`), "
            "check that your user may use that socket, or set DOCKER_HOST to the engine's address."
        ) from exc
    return client
