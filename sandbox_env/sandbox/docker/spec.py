"""The container a sandbox is: image, agent, identity, and every hardening flag in one place.

Threat model: code in the container is the model's and may be hostile. It gets no
network, no capabilities, `no-new-privileges`, a read-only root, bounded writable
space (tmpfs `/workspace` and `/tmp`), and CPU, memory and pids limits; every value
comes from `Limits` (arguments of load_environment). The agent's stream is protocol,
not a log, so the engine keeps no log of it.

Lifetime: a container never outlives the host process that made it. Its stdin is closed
by the engine when the host's attach stream closes (`stdin_once`: docker-py sets it for a
container created with `detach=False` and `stdin_open`), the agent exits on end of input,
and `auto_remove` removes the exited container. The backend attaches before it starts
the container, so there is no moment at which a started container has nobody attached.
"""

from __future__ import annotations

import uuid
from typing import Any

import docker.types

from sandbox_env.constants import AGENT_ARGV, NAME_SUFFIX, SANDBOX_USER, WORKSPACE
from sandbox_env.sandbox.types import Limits


def container_name(role: str) -> str:
    return f"websandbox-{role}-{uuid.uuid4().hex[:NAME_SUFFIX]}"


def container_spec(image: str, limits: Limits, labels: dict[str, str], role: str,
                   env: dict[str, str] | None = None) -> dict[str, Any]:  # fmt: skip
    """Keyword arguments of `docker.containers.create` for one hardened sandbox."""
    return dict(
        image=image,
        command=AGENT_ARGV,
        stdin_open=True,
        detach=False,  # with stdin_open: StdinOnce, so the agent sees end of input when the host's stream closes
        auto_remove=True,
        name=container_name(role),
        labels=labels,
        user=SANDBOX_USER,
        working_dir=WORKSPACE,
        environment=env or {},
        network_mode="bridge" if limits.network else "none",
        nano_cpus=int(limits.cpus * 1e9),
        mem_limit=f"{limits.memory_mb}m",
        memswap_limit=f"{limits.memory_mb}m",
        pids_limit=limits.pids,
        cap_drop=["ALL"],
        security_opt=["no-new-privileges"],
        read_only=True,
        tmpfs={
            WORKSPACE: f"size={limits.workspace_mb}m,uid=1000,gid=1000,mode=0755",
            "/tmp": f"size={limits.tmp_mb}m,mode=1777",
        },
        init=True,
        log_config=docker.types.LogConfig(type="none"),
    )
