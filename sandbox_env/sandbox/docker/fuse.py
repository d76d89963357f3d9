"""The host process that serves a container's root filesystem, and the CPU it spends on its behalf.

On the fuse-overlayfs storage driver every file operation on a container's root
filesystem (the image's files: /opt/venv, /usr; /workspace and /tmp are tmpfs) is a
request to a `fuse-overlayfs` process on the host, one per container, outside the
container's cgroup. Its CPU is the container's own doing but not in the container's
cgroup counters. Where /usr/bin, /usr/lib and /opt are read-only binds of a host copy
(host_tree.py), their files are read from there, but every path walk from `/` still has this
server revalidate its first name, so the server stays busy for whatever stats or opens paths.

Threat model (measured on a 2-core host, cgroup v1, Debian's dockerd 20.10, one host busy
loop per core, a load under which a sandbox that only spins still gets 0.9 of its CPU and
waits 7% of the time): a Django module that at import starts two processes that
`os.stat` missing names under /opt/venv in a loop, then hangs, used 0.29-0.38 CPU in its
cgroup, drove its fuse-overlayfs to 0.28-0.41 CPU, and its readers waited for a CPU
40-55% of the time: by the cgroup alone "starved", a StarvedGrading harness fault that is
rescheduled instead of scored, so a wrong answer escaped its zero at will (on a busier
host it did so in both attempts). The CPU of the container's own server is therefore
counted as the container's (`UsagePoint.served`): 0.57-0.78 CPU, its own zero. An honest
run held back by the host reads few files (its server's CPU over the last seconds is a
few hundredths of a second), so it is still called starved. A single reader whose every
round trip waits behind the host's busy loops uses little CPU on either side and is
still called starved: that is waiting for a CPU that went to the host's load, as any
process that sleeps and wakes often would show, not CPU it spent through its server.

Which process: the one whose `upperdir=` option is the container's `GraphDriver` upper
directory, found when the container has started, before any code of the model runs in it,
and only among processes of the host's root user (sandboxed code runs as uid 1000 with
no capability, so it cannot forge one). Its start time is kept, so a pid handed to
another process after the server exits is never read. When the driver is another one,
the process cannot be seen (an engine on another host, another pid namespace) or more
than one matches, nothing is found and the evidence is the cgroup's alone.

Cost: one pass over /proc when a container starts (its `comm` files, and the command line
of the few fuse-overlayfs processes: 4 ms with 200 processes on the host, in the backend's
thread pool), then one read of the server's /proc/PID/stat a sample (a `pread` of a kept-open descriptor).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
DRIVER = "fuse-overlayfs"
CLK_TCK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Server:
    """A container's fuse-overlayfs process: its host pid and its start time (clock ticks since boot)."""

    pid: int
    started: int


def upperdir(argv: list[str]) -> str | None:
    """The `upperdir=` mount option in a fuse-overlayfs command line, or None."""
    for arg in argv:
        for opt in arg.split(","):
            if opt.startswith("upperdir="):
                return opt[len("upperdir=") :]
    return None


def stat_times(text: bytes) -> tuple[float, int] | None:
    """CPU seconds (user + system) and start time (ticks) from a /proc/PID/stat line, or None."""
    try:
        fields = text.rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK, int(fields[19])
    except (IndexError, ValueError):
        return None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _root_owned(pid: str, proc: Path) -> bool:
    status = _read(proc / pid / "status") or b""
    for line in status.splitlines():
        if line.startswith(b"Uid:"):
            return line.split()[1:2] == [b"0"]
    return False


def find_server(attrs: dict, proc: Path = PROC) -> Server | None:
    """The fuse-overlayfs process serving the container inspected as `attrs`, or None (see the module)."""
    graph = attrs.get("GraphDriver") or {}
    upper = (graph.get("Data") or {}).get("UpperDir")
    if graph.get("Name") != DRIVER or not upper:
        return None
    try:
        names = os.listdir(proc)
    except OSError:
        return None
    found: list[Server] = []
    for pid in names:
        if not pid.isdigit() or (_read(proc / pid / "comm") or b"").strip() != DRIVER.encode():
            continue
        argv = (_read(proc / pid / "cmdline") or b"").decode(errors="replace").split("\0")
        if upperdir(argv) != upper or not _root_owned(pid, proc):
            continue
        times = stat_times(_read(proc / pid / "stat") or b"")
        if times is not None:
            found.append(Server(int(pid), times[1]))
    return found[0] if len(found) == 1 else None


def served_cpu(server: Server | None, proc: Path = PROC, read: Callable[[str], str | None] | None = None) -> float | None:
    """CPU seconds the server has spent so far, or None when it is not (or no longer) that process.

    `read`: how to read its stat (the container's kept-open files, cgroup.Files.read); by path when None.
    """
    if server is None:
        return None
    if read is None:
        text = _read(proc / str(server.pid) / "stat")
    else:
        text = (read(f"{proc}/{server.pid}/stat") or "").encode()
    times = stat_times(text or b"")
    if times is None or times[1] != server.started:
        return None
    return times[0]
