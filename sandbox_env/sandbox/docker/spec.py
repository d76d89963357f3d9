"""The container a sandbox is: image, agent, name and labels, with the lockdown of hardening.py.

Threat model: code in the container is the model's and may be hostile. The identities,
capabilities, limits and IPC bounds every sandbox gets are decided in hardening.py;
every size comes from `Limits` (arguments of load_environment).
"""

from __future__ import annotations

import uuid
from typing import Any

from sandbox_env.constants import AGENT_ARGV, NAME_SUFFIX, WORKSPACE
from sandbox_env.sandbox.docker.hardening import create_kwargs
from sandbox_env.sandbox.types import Limits


def container_name(role: str) -> str:
    return f"websandbox-{role}-{uuid.uuid4().hex[:NAME_SUFFIX]}"


def container_spec(image: str, limits: Limits, labels: dict[str, str], role: str,
                   env: dict[str, str] | None = None, oom_protection: bool = False) -> dict[str, Any]:  # fmt: skip
    """Keyword arguments of `docker.containers.create` for one hardened sandbox."""
    return dict(
        image=image,
        command=AGENT_ARGV,
        stdin_open=True,
        name=container_name(role),
        labels=labels,
        working_dir=WORKSPACE,
        environment=env or {},
        detach=True,
        **create_kwargs(limits, oom_protection=oom_protection),
    )
