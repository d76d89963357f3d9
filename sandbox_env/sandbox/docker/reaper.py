"""The last line of cleanup: a small detached process that removes a backend's containers when it dies.

A started container ends on its own when the process that made it dies, however it dies:
it is attached before it starts, its stdin closes when that attach stream closes
(`stdin_once`), the agent exits on end of input, and `auto_remove` removes the exited
container. What that cannot cover is a container the engine created but that was never
started: the process died while its create request was in flight, or between create and
attach. Such a container runs nothing, but it is still a container left behind.

So the first container a backend makes also starts this reaper (`python reaper.py
OWNER_PID LABEL=VALUE`, a script that imports only the docker SDK). It detaches from its parent
(a new session, forked once more so that it is nobody's child: killing the owner's
process tree does not reach it), waits for the owner to end (a pidfd, or polling where
there is none), removes every container carrying the owner's client label (then the
volumes carrying it: a Podman sandbox's workspace, sandbox/podman.py) (again 3 and
10 seconds later, for a create request that was still in flight), and exits.
When the owner tore everything down itself, the reaper finds nothing and just exits.
"""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

POLL = 0.5
PASSES = (0.0, 3.0, 10.0)  # seconds after the owner's death: a create request still in flight may land late


def spawn(owner_pid: int, label: str, url: str | None = None) -> None:
    """Start the reaper of the containers labelled `label` (key=value), detached from this process's tree.

    `url`: the engine's address when it is not the one DOCKER_HOST names (Podman's socket).
    """
    proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), str(owner_pid), label],
        env={**os.environ, "DOCKER_HOST": url} if url else None,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    proc.wait(timeout=30)  # the first process forks the reaper and exits at once


def _wait_for_exit(pid: int) -> None:
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        fd = None
    if fd is not None:
        try:
            select.select([fd], [], [])
        finally:
            os.close(fd)
        return
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        except PermissionError:
            pass
        time.sleep(POLL)


def reap(label: str) -> int:
    """Remove every container labelled `label`; returns how many were removed."""
    import docker
    import docker.errors

    api = docker.from_env(timeout=120).api
    found = api.containers(all=True, filters={"label": label})

    def remove(cid: str) -> bool:
        try:
            api.remove_container(cid, force=True, v=True)
            return True
        except docker.errors.NotFound:
            return False
        except docker.errors.APIError as exc:
            return "already in progress" in str(exc)

    with ThreadPoolExecutor(max_workers=8) as pool:
        removed = sum(pool.map(remove, [c["Id"] for c in found]))
    for volume in api.volumes(filters={"label": label}).get("Volumes") or []:  # Podman's workspaces
        try:
            api.remove_volume(volume["Name"], force=True)
        except docker.errors.APIError:
            pass
    return removed


def main(argv: list[str]) -> int:
    owner, label = int(argv[0]), argv[1]
    if os.fork() > 0:  # the spawner waits for this first process only; the reaper is nobody's child
        os._exit(0)
    _wait_for_exit(owner)
    died = time.monotonic()
    failures = 0
    for at in PASSES:
        time.sleep(max(0.0, died + at - time.monotonic()))
        try:
            reap(label)
        except Exception:  # noqa: BLE001 - the engine may be restarting: the next pass tries again
            failures += 1
    return 1 if failures == len(PASSES) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
