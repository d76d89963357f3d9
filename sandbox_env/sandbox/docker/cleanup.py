"""Finding and removing containers that outlived their run (`websandbox gc`), and a run's own containers.

A container is left over when its run is over: no process holds the run's lock any more
(runs.py) and the process that made it is gone. `gc` removes only those, so it never
touches a live run's containers, even one whose env-server worker died while the run
goes on. Containers of another user's runs (whose locks this user cannot see) are judged
by their owner's pid alone.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import docker.errors

from sandbox_env.constants import short
from sandbox_env.sandbox.docker.engine import docker_client
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID, LABEL_RUN
from sandbox_env.sandbox.runs import run_is_live


def _owner_alive(labels: dict[str, str]) -> bool:
    pid = int(labels.get(LABEL_PID, "0") or 0)
    return bool(pid) and _alive(pid)


def leaked_containers() -> list[dict[str, Any]]:
    """websandbox containers whose run is over and whose owning process has ended: what a crash left behind."""
    api = docker_client().api
    out = []
    for c in api.containers(all=True, filters={"label": LABEL}):
        labels = c.get("Labels") or {}
        if run_is_live(labels.get(LABEL_RUN, "")) or _owner_alive(labels):
            continue
        out.append(c)
    return out


def run_containers(run_id: str) -> list[dict[str, Any]]:
    """Every container of run `run_id`, in any state."""
    return docker_client().api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})


def remove(containers: list[dict[str, Any]]) -> list[str]:
    """Remove the given containers (in parallel); returns the short ids of those removed."""
    api = docker_client().api

    def one(c: dict[str, Any]) -> str | None:
        try:
            api.remove_container(c["Id"], force=True, v=True)
            return short(c["Id"])
        except docker.errors.NotFound:
            return None
        except docker.errors.APIError as exc:
            if "already in progress" in str(exc):
                return short(c["Id"])
            raise

    if not containers:
        return []
    with ThreadPoolExecutor(max_workers=min(16, len(containers))) as pool:
        return [cid for cid in pool.map(one, containers) if cid]


def settle_run(run_id: str, wait: float = 10.0) -> list[str]:
    """After a run's processes are gone: wait up to `wait` s for its containers to end, remove the rest.

    Returns the short ids of the containers that were still there after the wait, that is,
    the ones the run would have left behind.
    """
    deadline = time.monotonic() + wait
    while (left := run_containers(run_id)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return remove(left)


def gc(all_owners: bool = False) -> list[str]:
    """Remove containers left by runs that ended without cleaning up.

    By default only containers whose run is over and whose owning process is gone; with
    all_owners, every websandbox container on the engine.
    """
    api = docker_client().api
    victims = api.containers(all=True, filters={"label": LABEL}) if all_owners else leaked_containers()
    return remove(victims)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
