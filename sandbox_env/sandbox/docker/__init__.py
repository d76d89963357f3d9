"""The Docker backend: container spec and hardening, the agent channel, the client, cleanup."""

from sandbox_env.sandbox.docker.cleanup import gc, leaked_containers, run_containers, settle_run
from sandbox_env.sandbox.docker.client import DockerBackend
from sandbox_env.sandbox.docker.engine import DockerUnavailableError, docker_client

__all__ = [
    "DockerBackend",
    "DockerUnavailableError",
    "docker_client",
    "gc",
    "leaked_containers",
    "run_containers",
    "settle_run",
]
