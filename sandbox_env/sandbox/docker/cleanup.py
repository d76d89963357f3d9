"""Finding and removing containers that outlived the process that made them (`websandbox gc`)."""

from __future__ import annotations

import os
from typing import Any

import docker.errors

from sandbox_env.constants import short
from sandbox_env.sandbox.docker.engine import docker_client
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID


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
            removed.append(short(c["Id"]))
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
