"""The container a sandbox is: image, agent, name and labels, with the lockdown of hardening.py.

Threat model: code in the container is the model's and may be hostile. The identities,
capabilities, limits and IPC bounds every sandbox gets are decided in hardening.py;
every size comes from `Limits` (arguments of load_environment).

Lifetime: a container never outlives the host process that made it. Its stdin is closed
by the engine when the host's attach stream closes (`stdin_once`: docker-py sets it for a
container created with `detach=False` and `stdin_open`), the agent exits on end of input,
and `auto_remove` removes the exited container. The backend attaches before it starts
the container, so there is no moment at which a started container has nobody attached.
"""

from __future__ import annotations

import uuid
from typing import Any

from sandbox_env.constants import AGENT_ARGV, NAME_SUFFIX, WORKSPACE
from sandbox_env.sandbox.docker.hardening import create_kwargs
from sandbox_env.sandbox.types import Limits


def container_name(role: str) -> str:
    return f"websandbox-{role}-{uuid.uuid4().hex[:NAME_SUFFIX]}"


def container_spec(
    image: str,
    limits: Limits,
    labels: dict[str, str],
    role: str,
    env: dict[str, str] | None = None,
    oom_protection: bool = False,
    mounts: list[Any] | None = None,
) -> dict[str, Any]:
    """Keyword arguments of `docker.containers.create` for one hardened sandbox.

    `mounts`: read-only binds of the image's own folders from the host (host_tree.py), if any.
    """
    return dict(
        image=image,
        command=AGENT_ARGV,
        stdin_open=True,
        detach=False,  # with stdin_open: StdinOnce, so the agent sees end of input when the host's stream closes
        auto_remove=True,
        name=container_name(role),
        labels=labels,
        working_dir=WORKSPACE,
        environment=env or {},
        mounts=list(mounts or []),
        **create_kwargs(limits, oom_protection=oom_protection),
    )
