"""CPU accounting that belongs to one run, on a machine that other users share.

Busy core-seconds machine-wide (`/proc/stat`) are only meaningful on a quiet machine;
with other engineers' tests running they measure everyone. So a `Meter` samples, in
a background thread, only what the run owns:

- its containers: the cgroup CPU counter of each (cgroup v1 `cpuacct.usage` or v2
  `cpu.stat usage_usec`, path found from the container's init process), and inside it
  the own CPU time of each process by what it is (docker-init, agent, session, grader
  program, tool commands), read from `/proc`;
- the engine processes that exist for one container only: its `containerd-shim`
  (its reaped children are `runc`) and, on the fuse-overlayfs storage driver, its
  `fuse-overlayfs` daemon, where every file read inside the container costs CPU;
- the host processes of the run: this process and every descendant (`websandbox
  eval`, `vf-eval`, its env-server router and workers), read from `/proc`, and after
  the run the exact `getrusage(RUSAGE_CHILDREN)` delta of what was reaped; a reaper
  that detached itself from the tree (sandbox/docker/reaper.py) is sampled, and waited
  for, as one of them;
- the shared engine daemons (`dockerd`, `containerd`): a before/after delta, which
  holds whatever every other user of the engine asked of it at the time, so it is
  reported beside the figures, never inside them;
- `/proc/stat` busy time, for use on a quiet machine.

A container is the run's when its `websandbox.pid` label names a process of this
process tree (the env worker that made it, or this process for the floors). Labels are
read from the engine's own `config.v2.json`, so sampling makes no API call that would
itself cost the engine CPU. The tail of a process's life after its last sample (at
most one interval, `interval` seconds) is not seen; containers are idle when removed,
so the loss is small, and the sampler's own CPU time is reported.
"""

from __future__ import annotations

import json
import os
import re
import resource
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

TICK = os.sysconf("SC_CLK_TCK")
GRADER_PROGRAMS = ("http_driver.py", "app_host.py", "pytest_runner.py", "smoke_grader.py")
OWNER_LABEL = "websandbox.pid"
REAPER_WAIT = 20.0  # seconds a run's reapers get to finish after the run
WORKSPACE = "/workspace"


def proc_times(pid: int) -> tuple[float, float, int, str] | None:
    """(own utime+stime, reaped children's cutime+cstime, ppid, comm), seconds; None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    close = data.rfind(b")")
    rest = data[close + 2 :].split()
    own, reaped = (int(rest[11]) + int(rest[12])) / TICK, (int(rest[13]) + int(rest[14])) / TICK
    return own, reaped, int(rest[1]), data[data.find(b"(") + 1 : close].decode(errors="replace")


def cmdline(pid: int) -> list[str]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return [a.decode(errors="replace") for a in fh.read().split(b"\0") if a]
    except OSError:
        return []


def machine_busy() -> float:
    """Busy core-seconds since boot, machine-wide (everything but idle and iowait)."""
    with open("/proc/stat") as fh:
        values = [int(v) for v in fh.readline().split()[1:]]
    return (sum(values[:8]) - values[3] - values[4]) / TICK


def daemon_cpu(names: tuple[str, ...] = ("dockerd", "containerd")) -> dict[str, float]:
    """utime+stime (own and reaped children) of the engine daemons, by name."""
    out = {n: 0.0 for n in names}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            t = proc_times(int(entry))
            if t and t[3] in out:
                out[t[3]] += t[0] + t[1]
    return out


def children_cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def classify(argv: list[str]) -> str:
    """What a process inside a sandbox is, from its argv."""
    if not argv:
        return "tool"
    text = " ".join(argv)
    if os.path.basename(argv[0]) in ("docker-init", "tini", "init") or argv[:2] == ["runc", "init"]:
        return "init"
    if "agent.py" in text:
        return "agent"
    if "session.py" in text:
        return "session"
    if any(p in text for p in GRADER_PROGRAMS):
        return "grader"
    return "tool"


@dataclass
class Container:
    """What one container of the run cost, as last sampled."""

    cid: str
    role: str
    cgroup: str | None = None
    usage: float = 0.0  # the container cgroup's CPU, seconds, as last sampled
    shim_pid: int | None = None
    shim_own: float = 0.0  # the containerd-shim's own CPU
    shim_children: float = 0.0  # what the shim reaped: runc calls, and the container's init once it ended
    init_pid: int | None = None  # the container's first process (the shim's child)
    init_reaped: bool = False  # at the shim's last sample: shim_children includes the whole container
    fuse: float = 0.0  # the fuse-overlayfs daemon of its root filesystem
    procs: dict[int, tuple[str, float]] = field(default_factory=dict)  # pid -> (class, own seconds)
    settled: set[int] = field(default_factory=set)  # pids that have exec'd their own program
    wrote_workspace: bool = False  # files appeared in its /workspace (task files, deliverables)
    removed: bool = False

    def by_class(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for cls, secs in self.procs.values():
            out[cls] = out.get(cls, 0.0) + secs
        out["reaped and unsampled"] = max(0.0, self.usage - sum(out.values()))
        return out

    @property
    def kind(self) -> str:
        """rollout | grader | unused pool | unused grader: what the container was used for."""
        classes = {cls for cls, _ in self.procs.values()}
        if "grader" in classes:  # a prewarmed grader gets its files only when it is used
            return "grader" if self.wrote_workspace else "unused grader"
        return "rollout" if self.wrote_workspace or classes & {"session", "tool"} else "unused pool"

    @property
    def processes(self) -> float:
        """CPU of the processes inside the container: its cgroup, or what the shim reaped of it."""
        return self.usage

    @property
    def _tree_in_shim(self) -> bool:
        """Whether the shim's reaped time holds the container's processes: its init was reaped and the
        shim's children used at least what the cgroup counted. A container removed by force can end
        after its shim's last sample; the shim's reaped time is then its runc calls alone."""
        return self.init_reaped and self.shim_children >= self.usage

    @property
    def shim(self) -> float:
        """The shim and its runc calls (the container's own processes taken out)."""
        runc = self.shim_children - self.usage if self._tree_in_shim else self.shim_children
        return self.shim_own + max(0.0, runc)

    @property
    def total(self) -> float:
        """Everything this container cost: its processes (the cgroup, or the shim once it reaped them, their
        last moments included), the shim and its runc calls, the FUSE daemon."""
        if self._tree_in_shim:
            return self.shim_own + self.shim_children + self.fuse
        return self.usage + self.shim_own + self.shim_children + self.fuse


class Meter:
    """Samples the run's containers, their engine helpers and its host processes.

    `with Meter() as m: ...` then `m.report()`; `m.mark(name)` records a timestamped
    snapshot of the totals (for start-up and per-phase figures).
    """

    def __init__(self, interval: float = 0.1, docker_root: str = "/var/lib/docker", driver: str = "") -> None:
        self.interval = interval
        self.docker_root = Path(docker_root)
        self.driver = driver
        self.root_pid = os.getpid()
        self.containers: dict[str, Container] = {}
        self.host: dict[int, tuple[str, float, float]] = {}  # pid -> (name, own, children), live processes
        self._exited: list[tuple[str, float, float, bool]] = []  # (name, own, children, reaper) of those gone
        self._tree: set[int] = {self.root_pid}
        self._seen: set[int] = set()
        self._shims: dict[int, str] = {}  # pid -> container id
        self._fuse: dict[int, str] = {}  # pid -> mount id
        self._reapers: set[int] = set()  # detached processes that clean up after the run's processes
        self._mounts: dict[str, str] = {}  # mount id -> container id
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="cpu-meter", daemon=True)
        self.sampler_cpu = 0.0
        self.first_sample_of: dict[str, float] = {}  # process class -> wall time first seen
        self.timeline: list[tuple[float, float]] = []  # (wall time, host CPU of the tree so far, this process's aside)

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> Meter:
        self.t0 = time.time()
        self.m0, self.d0, self.c0 = machine_busy(), daemon_cpu(), children_cpu()
        self.s0 = resource.getrusage(resource.RUSAGE_SELF)
        self._sample()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        deadline = time.time() + REAPER_WAIT  # a reaper's last passes come seconds after its owner ended
        while time.time() < deadline and any(proc_times(p) is not None for p in list(self._reapers)):
            time.sleep(self.interval)
        self._stop.set()
        self._thread.join()
        self._sample()
        self.wall = time.time() - self.t0
        self.machine = machine_busy() - self.m0
        d1 = daemon_cpu()
        self.engine_shared = {k: d1[k] - self.d0.get(k, 0.0) for k in d1}
        self.reaped = children_cpu() - self.c0
        s1 = resource.getrusage(resource.RUSAGE_SELF)
        self.self_cpu = (s1.ru_utime - self.s0.ru_utime) + (s1.ru_stime - self.s0.ru_stime)

    def _run(self) -> None:
        t0 = time.thread_time()
        while not self._stop.wait(self.interval):
            self._sample()
        self.sampler_cpu = time.thread_time() - t0

    # -- sampling -------------------------------------------------------------------------------
    def _sample(self) -> None:
        with self._lock:
            pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
            self._discover(pids)
            self._sample_host()
            self._sample_helpers()
            self._sample_containers()

    def _forget_gone(self, live: set[int]) -> None:
        """Forget pids that no longer exist, keeping what their processes had cost.

        The kernel hands pids out again (pid_max is often 32768, and a loaded machine goes
        through that in a minute): a pid remembered past its process would hide the next
        process that gets it (a container's shim never adopted) or credit the run with a
        stranger's CPU time.
        """
        gone = self._seen - live
        if not gone:
            return
        self._seen -= gone
        self._tree -= gone - {self.root_pid}
        for pid in gone & self.host.keys():
            name, own, children = self.host.pop(pid)
            self._exited.append((name, own, children, pid in self._reapers))
        self._reapers -= gone

    def _discover(self, pids: list[int]) -> None:
        self._forget_gone(set(pids))
        new = [p for p in pids if p not in self._seen]
        self._seen.update(new)
        parents: dict[int, int] = {}
        comms: dict[int, str] = {}
        for pid in new:
            t = proc_times(pid)
            if t is not None:
                parents[pid], comms[pid] = t[2], t[3]
        # descendants of this process, in any order of discovery
        grew = True
        while grew:
            grew = False
            for pid, ppid in parents.items():
                if pid not in self._tree and ppid in self._tree:
                    self._tree.add(pid)
                    grew = True
        for pid in new:
            if pid in self._tree:
                self.host[pid] = (self._host_name(pid), 0.0, 0.0)
                continue
            comm = comms.get(pid, "")
            if comm.startswith("python"):  # a reaper detaches from its owner's tree (sandbox/docker/reaper.py)
                argv = cmdline(pid)
                if len(argv) >= 3 and argv[1].endswith("reaper.py") and argv[2].isdigit() and int(argv[2]) in self._tree:
                    self.host[pid] = ("reaper", 0.0, 0.0)
                    self._reapers.add(pid)
                continue
            if comm.startswith("containerd-shim"):
                argv = cmdline(pid)
                if "-id" in argv:
                    self._shims[pid] = argv[argv.index("-id") + 1]
            elif comm == "fuse-overlayfs":
                m = re.search(r"upperdir=[^,]*/([0-9a-f]{64})/diff", " ".join(cmdline(pid)))
                if m:
                    self._fuse[pid] = m.group(1)
        for cid in list(self._shims.values()):
            if cid not in self.containers:
                self._adopt(cid)

    def _host_name(self, pid: int) -> str:
        """What a host process of the run is; a process that has exited keeps the name it had."""
        argv = cmdline(pid)
        text = " ".join(argv)
        if pid == self.root_pid:
            return "bench"
        if not argv:
            return self.host.get(pid, ("?",))[0]
        if ("multiprocessing" in text and "spawn" in text) or text.startswith("Verifiers::"):
            return "vf-eval env-server processes"  # its router and workers (they retitle themselves)
        if "reaper.py" in text:
            return "reaper"
        for name in ("vf-eval", "websandbox"):
            if any(os.path.basename(a) == name for a in argv[:2]):
                return name
        return os.path.basename(argv[0])

    def _adopt(self, cid: str) -> None:
        """Track container `cid` if it belongs to this run (its owner pid is in our tree)."""
        try:
            cfg = json.loads((self.docker_root / "containers" / cid / "config.v2.json").read_text())
        except (OSError, ValueError):
            return
        labels = (cfg.get("Config") or {}).get("Labels") or {}
        owner = labels.get(OWNER_LABEL, "")
        if not (owner.isdigit() and int(owner) in self._tree):
            self.containers.setdefault(cid, None)  # type: ignore[arg-type] # someone else's
            return
        self.containers[cid] = Container(cid, labels.get("websandbox.role", "?"))
        if self.driver:
            try:
                mount = (self.docker_root / "image" / self.driver / "layerdb" / "mounts" / cid / "mount-id").read_text()
                self._mounts[mount.strip()] = cid
            except OSError:
                pass

    def _sample_host(self) -> None:
        for pid in list(self.host):
            t = proc_times(pid)
            if t is not None:  # named again each time: a fork keeps its parent's argv until it execs
                self.host[pid] = (self._host_name(pid), t[0], t[1])
        own = sum(v[1] for p, v in self.host.items() if p != self.root_pid) + sum(e[1] for e in self._exited)
        self.timeline.append((time.time(), own))

    def host_cpu_at(self, when: float) -> float:
        """CPU the run's host processes (this one aside) had used by wall time `when`, as sampled."""
        return max((cpu for t, cpu in self.timeline if t <= when), default=0.0)

    def _sample_helpers(self) -> None:
        for pid, cid in list(self._shims.items()):
            c = self.containers.get(cid)
            if c is None:
                continue
            t = proc_times(pid)
            if t is None:
                del self._shims[pid]
                continue
            c.shim_pid = pid
            c.shim_own, c.shim_children = t[0], t[1]
            c.init_reaped = c.init_pid is not None and proc_times(c.init_pid) is None
        for pid, mount in list(self._fuse.items()):
            cid = self._mounts.get(mount)
            if cid is None:
                continue
            c = self.containers.get(cid)
            if c is None:
                continue
            t = proc_times(pid)
            if t is None:
                del self._fuse[pid]
                continue
            c.fuse = t[0] + t[1]

    def _sample_containers(self) -> None:
        for c in self.containers.values():
            if c is None or c.removed:
                continue
            if c.cgroup is None:
                c.cgroup = self._cgroup_of(c.cid)
                if c.cgroup is None:
                    continue
            usage = read_cgroup_usage(c.cgroup)
            if usage is None:
                c.removed = True
                continue
            c.usage = max(c.usage, usage)
            try:
                pids = [int(x) for x in Path(c.cgroup, "cgroup.procs").read_text().split()]
            except OSError:
                continue
            argvs: dict[int, list[str]] = {}
            for pid in pids:
                t = proc_times(pid)
                if t is None:
                    continue
                cls, secs = c.procs.get(pid, ("", 0.0))
                if pid not in c.settled:
                    argvs[pid] = argv = argvs.get(pid) or cmdline(pid)
                    parent = argvs.get(t[2]) or (cmdline(t[2]) if t[2] in c.procs else [])
                    cls = classify(argv)
                    if argv and argv != parent:  # a fork keeps its parent's argv until it execs
                        c.settled.add(pid)
                        self.first_sample_of.setdefault(cls, time.time())
                c.procs[pid] = (cls, max(t[0], secs))
                if t[2] == c.shim_pid:
                    c.init_pid = pid
                if cls == "agent" and not c.wrote_workspace:
                    c.wrote_workspace = _nonempty(f"/proc/{pid}/root{WORKSPACE}")

    def _cgroup_of(self, cid: str) -> str | None:
        """The container's cgroup directory: the usual places of the cgroupfs and systemd drivers."""
        for base in ("/sys/fs/cgroup/cpuacct", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup"):
            for sub in (f"docker/{cid}", f"system.slice/docker-{cid}.scope"):
                if os.path.isdir(f"{base}/{sub}"):
                    return f"{base}/{sub}"
        return None

    def sample_now(self) -> None:
        """Take a sample at once (e.g. just before a container is removed)."""
        self._sample()

    # -- results --------------------------------------------------------------------------------
    def total_of(self, cid: str) -> float:
        """Everything container `cid` cost so far (its processes, shim and runc, FUSE daemon)."""
        c = self.containers.get(cid)
        return 0.0 if c is None else c.total

    def mine(self) -> list[Container]:
        return [c for c in self.containers.values() if c is not None]

    def detached_cpu(self) -> float:
        """CPU of the run's host processes that left its tree (reapers), which RUSAGE_CHILDREN never sees."""
        return sum(self.host[p][1] for p in self._reapers if p in self.host) + sum(e[1] for e in self._exited if e[3])

    def host_by_name(self) -> dict[str, float]:
        """Own CPU of the run's host processes by what they are (this process as `bench`)."""
        out: dict[str, float] = {}
        for name, own, *_ in [*self.host.values(), *self._exited]:
            out[name] = out.get(name, 0.0) + own
        return out


def _nonempty(directory: str) -> bool:
    try:
        with os.scandir(directory) as it:
            return any(True for _ in it)
    except OSError:
        return False


def read_cgroup_usage(path: str) -> float | None:
    """CPU seconds a cgroup has used, or None when it is gone."""
    try:
        return int(Path(path, "cpuacct.usage").read_text()) / 1e9
    except FileNotFoundError:
        pass
    except OSError:
        return None
    try:
        for line in Path(path, "cpu.stat").read_text().splitlines():
            if line.startswith("usage_usec"):
                return int(line.split()[1]) / 1e6
    except OSError:
        return None
    return None
