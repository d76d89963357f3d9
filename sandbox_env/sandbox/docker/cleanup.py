"""Finding and removing containers that outlived their owner (`websandbox gc`), and a run's own containers.

A container is left over when its owner is provably gone (owner.py): its owner ran in this
machine's scope (boot and pid namespace), its run is over (no process holds the run's
lock: runs.py) and no process with the owner's pid and start time exists. `gc` removes
only those, so it never touches a live run's containers, even one whose env-server worker
died while the run goes on.

Containers whose owner ran elsewhere (another machine sharing the engine, or this
machine before a reboot) cannot be judged from here: `gc` leaves them and says how many
and whose; `gc --other-hosts` removes them too (when their machine is known to be gone),
`gc --all` removes every websandbox container on the engine. The engine is the one
`DOCKER_HOST` names, local or not: the decision reads labels, never the engine's /proc.
"""

from __future__ import annotations

import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import docker.errors

from sandbox_env.constants import short
from sandbox_env.sandbox.docker.engine import docker_client, engine_on_local_socket
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_HOST, LABEL_OWNER, LABEL_PID, LABEL_RUN
from sandbox_env.sandbox.owner import OwnerLiveness, owner_liveness, process_start, this_scope
from sandbox_env.sandbox.runs import run_is_live


def owner_liveness_here(labels: dict[str, str], url: str | None = None) -> OwnerLiveness:
    """gc's judgement of one container's owner, made on this machine (`url`: the engine's, else DOCKER_HOST's)."""
    return owner_liveness(
        labels.get(LABEL_OWNER),
        run=labels.get(LABEL_RUN, ""),
        pid=labels.get(LABEL_PID, ""),
        host=labels.get(LABEL_HOST, ""),
        scope=this_scope(),
        run_live=run_is_live,
        probe=process_start,
        local_engine=engine_on_local_socket(url),
    )


def survey(only: str | None = None, client: Any = None, url: str | None = None) -> list[tuple[dict[str, Any], OwnerLiveness]]:
    """Every websandbox container on the engine (`only`: that also carry this label, `key` or `key=value`), judged.

    `client`, `url`: an engine other than DOCKER_HOST's (Podman's), and its address.
    """
    api = (client or docker_client()).api
    found = api.containers(all=True, filters={"label": [LABEL, only] if only else LABEL})
    return [(c, owner_liveness_here(c.get("Labels") or {}, url)) for c in found]


def leaked_containers() -> list[dict[str, Any]]:
    """websandbox containers whose owner is provably gone: what a crash on this machine left behind."""
    return [c for c, v in survey() if v.state == "gone"]


def run_containers(run_id: str, client: Any = None) -> list[dict[str, Any]]:
    """Every container of run `run_id`, in any state."""
    return (client or docker_client()).api.containers(all=True, filters={"label": f"{LABEL_RUN}={run_id}"})


def remove(containers: list[dict[str, Any]], client: Any = None) -> list[str]:
    """Remove the given containers (in parallel); returns the short ids of those removed."""
    api = (client or docker_client()).api

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


def settle_run(run_id: str, wait: float = 10.0, client: Any = None) -> list[str]:
    """After a run's processes are gone: wait up to `wait` s for its containers to end, remove the rest.

    Returns the short ids of the containers that were still there after the wait, that is,
    the ones the run would have left behind.
    """
    deadline = time.monotonic() + wait
    while (left := run_containers(run_id, client)) and time.monotonic() < deadline:
        time.sleep(0.25)
    return remove(left, client)


@dataclass
class GcReport:
    removed: list[str] = field(default_factory=list)  # short ids
    left_elsewhere: Counter = field(default_factory=Counter)  # host name -> containers left (owner on another machine)
    left_unknown: int = 0  # no owner label, engine not reached through a local socket

    def summary(self) -> str:
        text = f"removed {len(self.removed)} container(s)" + (f": {' '.join(self.removed)}" if self.removed else "")
        if self.left_elsewhere:
            hosts = ", ".join(f"{n} of {h or '?'}" for h, n in sorted(self.left_elsewhere.items()))
            text += (
                f"; left {sum(self.left_elsewhere.values())} whose owner ran on another machine or before a reboot "
                f"({hosts}): `websandbox gc --other-hosts` removes them"
            )
        if self.left_unknown:
            text += f"; left {self.left_unknown} without an owner label (`websandbox gc --other-hosts` removes them)"
        return text


def collect(
    all_owners: bool = False, other_hosts: bool = False, only: str | None = None, client: Any = None, url: str | None = None
) -> GcReport:
    """Remove containers whose owner is gone (and, when asked, those owned on other machines, or all).

    `only`: consider only containers that also carry this label (`key` or `key=value`);
    `client`, `url`: an engine other than DOCKER_HOST's (Podman's), and its address.
    """
    report = GcReport()
    victims = []
    for c, v in survey(only, client, url):
        if all_owners or v.state == "gone" or (other_hosts and v.state in ("elsewhere", "unknown")):
            victims.append(c)
        elif v.state == "elsewhere":
            report.left_elsewhere[(c.get("Labels") or {}).get(LABEL_HOST, "")] += 1
        elif v.state == "unknown":
            report.left_unknown += 1
    report.removed = remove(victims, client)
    return report


def gc(all_owners: bool = False, other_hosts: bool = False) -> list[str]:
    """Remove containers left by owners that ended without cleaning up; returns their short ids.

    By default only containers whose owner is provably gone; with other_hosts, also those
    whose owner ran elsewhere or cannot be told (the caller knows those machines are done
    with them); with all_owners, every websandbox container on the
    engine.
    """
    return collect(all_owners, other_hosts).removed
