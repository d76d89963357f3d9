"""What a container consumed, read by the host from its cgroup files (the evidence of sandbox/blame.py).

The code in a container cannot touch these files: they are the kernel's accounting of the
container's processes, read on the host. Read per container, by container id:

| figure | cgroup v2 (or the unified tree of a hybrid host) | cgroup v1 |
| --- | --- | --- |
| CPU time | `cpu.stat` usage_usec | `cpuacct/cpuacct.usage` |
| CPU pressure | `cpu.pressure` some total (runnable, waiting for a CPU) | the host's `/proc/pressure/cpu` |
| forks refused | `pids.events` max | `pids/pids.events` max |
| tasks, and their limit | `pids.current`, `pids.max` | `pids/pids.current`, `pids/pids.max` |
| OOM kills | `memory.events` oom_kill | `memory/memory.oom_control` oom_kill |
| memory limit reached | `memory.events` max | `memory/memory.failcnt` |
| memory limit | `memory.max` | `memory/memory.limit_in_bytes` |

A container's directory is `docker/<id>` (cgroupfs driver) or `system.slice/docker-<id>.scope`
(systemd driver) under each hierarchy; Podman's (sandbox/podman.py) are `libpod_parent/libpod-<id>`
and `machine.slice/libpod-<id>.scope`. Both engines keep their per-container helper (Docker's
shim, Podman's conmon) outside that directory. Where none is found (an engine on another host, a
cgroup namespace that hides the host's tree), `sample` returns None and sandbox/blame.py treats
the evidence as missing, which never counts against the submission.

Nothing is assumed about where the engine runs: the directory is named by the container's
full id (64 hex digits, random), so finding it proves the container runs on this
machine's kernel. A remote engine's container (`DOCKER_HOST`) has none here, and then no
file is read for it, not even the host's `/proc/pressure/cpu` (read only beside a
container's own v1 directories).

Cost: a backend samples each container before and after every call, so `Files` keeps
each file open and reads it again with one `pread` (the kernel regenerates a cgroup or
/proc file read from offset 0): about 2 us a file, against about 35 us to open, read and
close it by path (measured on this 2-core host, cgroup v1). A sample is a dozen reads:
about 0.05 ms instead of 0.5-0.75 ms. A descriptor is bound to the file it was opened on,
so a closed and removed cgroup reads as an error (None), never as another container's.
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox_env.sandbox.usage import UsagePoint

ROOT = Path("/sys/fs/cgroup")
HOST_PRESSURE = Path("/proc/pressure/cpu")


READ_SIZE = 8192  # more than any file read here holds


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except OSError:
        return None


def _read_in(folder: Path, name: str) -> str | None:
    return _read(folder / name if name else folder)


class Files:
    """Kept-open descriptors of one container's files, each read again with `pread` (see the module's Cost).

    Thread-safe: the backend's sampler and its calls read at once, and `close` (when the
    container is removed) waits for a read in progress, so a descriptor number is never
    read after it was closed and perhaps handed to another file. A file that cannot be
    opened because this process has no descriptor left is read by path instead.
    """

    def __init__(self) -> None:
        # (folder, name): its descriptor, or None for a file that does not exist
        self._fds: dict[tuple[Path | str, str], int | None] = {}
        self._lock = threading.Lock()
        self._closed = False

    def read(self, path: Path | str) -> str | None:
        return self.read_in(path, "")

    def read_in(self, folder: Path | str, name: str) -> str | None:
        """The file `name` in `folder` (`name` "": `folder` is the file), or None when it cannot be read."""
        key = (folder, name)
        with self._lock:
            if self._closed:
                return None
            fd = self._fds.get(key, -1)
            if fd == -1:
                path = f"{folder}/{name}" if name else str(folder)
                try:
                    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
                except FileNotFoundError:
                    fd = None
                except OSError:  # out of descriptors, or refused: read it the slow way, keep nothing
                    return _read(Path(path))
                self._fds[key] = fd
            if fd is None:
                return None
            try:
                return os.pread(fd, READ_SIZE, 0).decode("ascii", "replace")
            except OSError:
                return None

    def close(self) -> None:
        with self._lock:
            self._closed = True
            fds, self._fds = self._fds, {}
        for fd in fds.values():
            if fd is not None:
                os.close(fd)


def _number(text: str | None) -> int | None:
    """A file holding one integer ("max" and anything else: None)."""
    text = (text or "").strip()
    return int(text) if text.isdigit() else None


def _field(text: str | None, key: str) -> int | None:
    """The integer after `key` in a flat-keyed cgroup file ("key value" lines, or PSI's "some ... total=N")."""
    if text is None:
        return None
    for line in text.splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] == key and len(parts) == 2 and parts[1].isdigit():
            return int(parts[1])
        if parts[0] == "some" and key == "some_total":
            for p in parts[1:]:
                if p.startswith("total="):
                    return int(p[6:])
    return None


def _leaf(parent: Path, cid: str) -> Path | None:
    for d in (
        parent / "docker" / cid,
        parent / "system.slice" / f"docker-{cid}.scope",
        parent / "libpod_parent" / f"libpod-{cid}",
        parent / "machine.slice" / f"libpod-{cid}.scope",
    ):
        if d.is_dir():
            return d
    return None


@dataclass(frozen=True)
class CgroupPaths:
    unified: Path | None  # the v2 directory (pure v2, or the unified tree of a hybrid host)
    cpuacct: Path | None
    pids: Path | None
    memory: Path | None

    @property
    def found(self) -> bool:
        return any((self.unified, self.cpuacct, self.pids, self.memory))


def find(cid: str, root: Path = ROOT) -> CgroupPaths:
    """The cgroup directories of container `cid` on this host (fields are None where missing)."""
    unified = _leaf(root / "unified", cid) if (root / "unified").is_dir() else None
    if unified is None and (root / "cgroup.controllers").exists():
        unified = _leaf(root, cid)
    v1 = {}
    for name, dirs in (("cpuacct", ("cpuacct", "cpu,cpuacct")), ("pids", ("pids",)), ("memory", ("memory",))):
        v1[name] = next((leaf for d in dirs if (leaf := _leaf(root / d, cid)) is not None), None)
    return CgroupPaths(unified, v1["cpuacct"], v1["pids"], v1["memory"])


def sample(paths: CgroupPaths, files: Files | None = None) -> UsagePoint | None:
    """Cumulative counters of one container now, or None when its cgroup cannot be read.

    `files`: that container's kept-open files (reads by path when None).
    """
    if not paths.found:
        return None
    read = files.read_in if files is not None else _read_in
    u = paths.unified
    cpu_us = _field(read(u, "cpu.stat"), "usage_usec") if u else None
    cpu_ns = cpu_us * 1000 if cpu_us is not None else None
    if cpu_ns is None and paths.cpuacct:
        cpu_ns = _number(read(paths.cpuacct, "cpuacct.usage"))
    stall_us = _field(read(u, "cpu.pressure"), "some_total") if u else None
    if stall_us is None:
        stall_us = _field(read(HOST_PRESSURE, ""), "some_total")
    forks = _field(read(paths.pids, "pids.events"), "max") if paths.pids else None
    if forks is None and u:
        forks = _field(read(u, "pids.events"), "max")
    pids_dir = paths.pids or u
    pids = _number(read(pids_dir, "pids.current")) if pids_dir else None
    pids_max = _number(read(pids_dir, "pids.max")) if pids_dir else None
    ooms = hits = memory_max = None
    if paths.memory:
        ooms = _field(read(paths.memory, "memory.oom_control"), "oom_kill")
        hits = _number(read(paths.memory, "memory.failcnt"))
        memory_max = _number(read(paths.memory, "memory.limit_in_bytes"))
    if u and (ooms is None or hits is None):
        events = read(u, "memory.events")
        ooms = ooms if ooms is not None else _field(events, "oom_kill")
        hits = hits if hits is not None else _field(events, "max")
    if u and memory_max is None:
        memory_max = _number(read(u, "memory.max"))
    if cpu_ns is None and forks is None and ooms is None:
        return None
    return UsagePoint(
        at=time.monotonic(),
        cpu=None if cpu_ns is None else cpu_ns / 1e9,
        stall=None if stall_us is None else stall_us / 1e6,
        fork_failures=forks,
        oom_kills=ooms,
        memory_hits=hits,
        pids=pids,
        pids_max=pids_max,
        memory_max=memory_max,
    )
