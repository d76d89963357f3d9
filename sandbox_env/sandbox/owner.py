"""Who owns a container, and whether that owner is provably gone: what `gc` decides on.

A container's owner is the host process whose backend made it. Its liveness is not read
from a bare pid label checked with `kill(pid, 0)` on the machine running `gc`: a pid says
nothing across machines: with an engine reached through `DOCKER_HOST`, or env servers on
several hosts sharing one engine, the pid of another machine's process may be free here
(gc would remove a live server's containers) or taken by an unrelated process here (gc
would keep a dead server's containers forever). Within one machine a bare pid can be
reused, too.

So every container carries its owner's identity (label `websandbox.owner`):

    <boot id>.<pid namespace>/<pid>/<start time>

- the scope, `<boot id>.<pid namespace>`: the kernel's boot id
  (`/proc/sys/kernel/random/boot_id`, new at every boot) and the inode of the pid
  namespace (`/proc/self/ns/pid`); a pid means one process only within one scope;
- the pid, and the process's start time (clock ticks since boot, field 22 of
  `/proc/<pid>/stat`), so a pid that was reused is told from the owner.

Beside it `websandbox.host` (the owner's host name) and `websandbox.server` (the env
server's name, `WEBSANDBOX_SERVER`, set by `websandbox serve --name`) name it for people.

The decision (`owner_liveness`, pure: its facts come in as arguments):
- same scope as the judging process: the owner is alive when its run is live (runs.py) or
  a process with its pid and the same start time exists; otherwise it is provably gone;
- another scope (another machine, another boot of this one, a container's pid
  namespace): nothing here can tell whether the owner lives, so the container is
  `elsewhere`; `gc` leaves it and names it, and removes it only when asked
  (`gc --other-hosts`). A crash on another machine is that machine's to clean up
  (its reaper, its `websandbox gc`); its running containers end by themselves once
  the owner's attach stream closes (spec.py);
- no owner label (made by an older version): the old rule (run lock or local pid),
  but only when the engine is reached through a local socket; otherwise `unknown`, left.

A lease refreshed by the owner (a heartbeat) was not chosen: Docker labels cannot change
on a live container, so a lease would need a store of its own beside the engine, and a
stopped heartbeat proves no more than a slow owner under load.
"""

from __future__ import annotations

import functools
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

SERVER_VAR = "WEBSANDBOX_SERVER"
ALIVE_START_UNKNOWN = -1  # probe(): the process exists but its start time cannot be read


@dataclass(frozen=True)
class Owner:
    scope: str
    pid: int
    start: int | None  # None: unknown when the label was written

    def label(self) -> str:
        return f"{self.scope}/{self.pid}/{'' if self.start is None else self.start}"

    @classmethod
    def parse(cls, text: str | None) -> Owner | None:
        """The owner a label names, or None when it names none."""
        parts = (text or "").rsplit("/", 2)
        if len(parts) != 3 or not parts[0] or not parts[1].isdigit():
            return None
        start = int(parts[2]) if parts[2].isdigit() else None
        return cls(parts[0], int(parts[1]), start)


def _read(path: str) -> str:
    try:
        return Path(path).read_text().strip()
    except OSError:
        return ""


@functools.lru_cache(maxsize=1)
def this_scope() -> str:
    """Where this process's pids mean something: boot id and pid namespace."""
    boot = _read("/proc/sys/kernel/random/boot_id") or f"noboot-{socket.gethostname()}"
    try:
        ns = os.readlink("/proc/self/ns/pid").split("[")[-1].rstrip("]")
    except OSError:
        ns = "0"
    return f"{boot}.{ns}"


def process_start(pid: int) -> int | None:
    """Start time of process `pid` in clock ticks since boot; None when there is no such
    process; ALIVE_START_UNKNOWN when it exists but /proc does not show it (hidepid)."""
    if pid <= 0:
        return None
    text = _read(f"/proc/{pid}/stat")
    if text:
        fields = text.rsplit(")", 1)[-1].split()  # the command name may hold spaces and parentheses
        if len(fields) > 19 and fields[19].isdigit():
            return int(fields[19])
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return ALIVE_START_UNKNOWN
    return ALIVE_START_UNKNOWN


def this_owner() -> Owner:
    """The owner identity of the calling process."""
    pid = os.getpid()
    start = process_start(pid)
    return Owner(this_scope(), pid, None if start in (None, ALIVE_START_UNKNOWN) else start)


def server_name() -> str:
    """The env server's name for labels: `WEBSANDBOX_SERVER`, else host name and pid."""
    return os.environ.get(SERVER_VAR) or f"{socket.gethostname()}:{os.getpid()}"


State = Literal["live", "gone", "elsewhere", "unknown"]


@dataclass(frozen=True)
class OwnerLiveness:
    state: State
    why: str


def owner_liveness(
    owner: str | None,
    *,
    run: str,
    pid: str,
    host: str,
    scope: str,
    run_live: Callable[[str], bool],
    probe: Callable[[int], int | None],
    local_engine: bool,
) -> OwnerLiveness:
    """Whether a container's owner lives, from its labels and facts of the judging machine.

    From the labels: `owner` (the owner label, None when absent), `run`, `pid` (the bare pid
    label of containers made before owner labels) and `host`. From the judging machine:
    `scope` (this_scope()), `run_live(run_id)` (runs.py's lock check), `probe(pid)`
    (process_start) and `local_engine` (the engine is reached through a local socket).
    Only `gone` may be removed by gc without being asked.
    """
    who = Owner.parse(owner)
    if who is None:
        if not local_engine:
            return OwnerLiveness("unknown", "no owner label, and the engine is not behind a local socket: a pid proves nothing")
        if run and run_live(run):
            return OwnerLiveness("live", f"its run {run} is live on this host")
        if pid.isdigit() and probe(int(pid)) is not None:
            return OwnerLiveness("live", f"its owner pid {pid} exists on this host")
        return OwnerLiveness("gone", f"no owner label; its run is over and pid {pid or '?'} is gone")
    if who.scope != scope:
        where = host or "another host"
        return OwnerLiveness("elsewhere", f"owned by pid {who.pid} on {where} (another machine, boot or pid namespace)")
    if run and run_live(run):
        return OwnerLiveness("live", f"its run {run} is live on this host")
    start = probe(who.pid)
    if start is None:
        return OwnerLiveness("gone", f"its owner, pid {who.pid}, has ended")
    if start == ALIVE_START_UNKNOWN or who.start is None or start == who.start:
        return OwnerLiveness("live", f"its owner, pid {who.pid}, is running")
    return OwnerLiveness("gone", f"its owner, pid {who.pid}, has ended (the pid now belongs to a process started later)")
