"""The sandboxed side's own time: what limits on code under test count instead of the wall clock.

Shared by the agent (the per-call limit of `bash` and `execute_code`: SideClock) and the
HTTP driver (its per-step limits while grading: the readers and `starved`), so it is in
the image and is also shipped with the grader programs (grading/programs.py, SHARED_RUNTIME). It imports nothing but the standard
library and nothing from its own folder.

The sandboxed side of a container is every process but the harness's (`keep`: pid 1, the
agent, the driver and its app host). Two measures of it:

- CPU seconds: /proc/PID/stat of every process outside `keep` with the children it reaped,
  and of the other harness's processes only what they reaped (apps, orphans); the
  measuring process's own is not counted. So the CPU of a process the sandboxed code
  started, forked or double-forked counts however short its life.
- Active seconds: the wall time minus the time a thread waited for a CPU
  (/proc/PID/task/TID/schedstat run_delay) that the sandboxed side's own processes did not
  use meanwhile. A command that sleeps is active (it waits for nothing); a busy loop is
  active; a process starved by a busy host, or by a CPU quota the host's load throttles,
  is not; a process that waits for a CPU its own forks or threads keep busy is active (it
  starves itself). Throttling by the container's CPU quota shows in run_delay too.

Which threads are watched: one process's (the driver watches the app it started), or
every process of the sandboxed side (the agent: a shell's child does the work while the
shell sleeps in wait()), plus the measuring process's own threads, which wait for a CPU
like any other when the host is busy. A thread that lived and died between two samples
is not seen: its waiting is not subtracted, which errs towards the sandboxed code's
blame, never towards a harness fault.

Threat model: the sandboxed code has read this file and would like its own timeout to
read as the host's fault. Its waits count as starvation only while the CPU went outside
the side (to the harness or out of the container), and it cannot send it there: the
engine shares the CPU between containers by cgroup, so lowering its own priority (nice,
SCHED_IDLE) only yields to its own processes and the agent, whose few milliseconds a
sample it cannot inflate beyond 5% of a CPU (the agent spaces its samples by their cost).
Junk it writes cannot reach this arithmetic: the readings come from /proc, not from it.

Cost: one pass over /proc per sample (stat of every process, schedstat of every thread
when the whole side is watched). Callers sample every 0.1-0.25 s, and `SideClock.cost` says
how much CPU the last sample took, so a caller can space its samples out when the
sandbox holds many processes.
"""

from __future__ import annotations

import os
import time

CLK_TCK = os.sysconf("SC_CLK_TCK")
WINDOW = 1.0  # seconds over which waiting for a CPU is judged (SideClock)

Sched = dict[str, tuple[int, int]]  # thread id: (ns on a CPU, ns waiting for one)
Readings = dict[str, tuple[int, int, int, bool]]  # thread id: (ns on a CPU, ns waiting, times run, runnable)


def stat_fields(pid: int | str) -> list[bytes] | None:
    """The fields of /proc/PID/stat after the command name (state first), or None when gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None


def readings(pid: int | str, fields: list[bytes] | None = None) -> Readings:
    """Per thread of one process: schedstat (on a CPU, waiting, times run) and whether it is runnable now.

    `fields`: the process's stat, already read (its state is the thread's when it has one thread).
    """
    out: Readings = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as fh:
                ran, waited, count = fh.read().split()[:3]
        except (OSError, ValueError):
            continue
        state = fields if fields is not None and len(tids) == 1 else stat_fields(f"{pid}/task/{tid}")
        out[tid] = (int(ran), int(waited), int(count), bool(state) and state[0] == b"R")
    return out


def sched(pid: int | str) -> Sched:
    """Per thread of one process: nanoseconds on a CPU and nanoseconds waiting for one (schedstat)."""
    out: Sched = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as fh:
                ran, waited = fh.read().split()[:2]
            out[tid] = (int(ran), int(waited))
        except (OSError, ValueError):
            pass
    return out


def side_usage(keep: set[int], threads: bool = False) -> tuple[float, Readings]:
    """CPU seconds of the sandboxed side so far, and (when asked) the readings of all its threads."""
    total = 0
    rd: Readings = {}
    me = os.getpid()
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0.0, rd
    for name in names:
        if not name.isdigit() or int(name) == me:  # the measuring process is the harness's
            continue
        fields = stat_fields(name)
        if fields is None:
            continue
        try:
            ticks = [int(x) for x in fields[11:15]]  # utime stime cutime cstime
        except (ValueError, IndexError):
            continue
        if int(name) in keep:
            total += sum(ticks[2:])
            continue
        total += sum(ticks)
        if threads:
            rd.update(readings(name, fields))
    return total / CLK_TCK, rd


def side_cpu(keep: set[int]) -> float:
    """CPU seconds of the sandboxed side so far (see the module's docstring)."""
    return side_usage(keep)[0]


def starved(before: Sched, after: Sched, side_used: float, on_side: bool) -> float:
    """The longest wait for a CPU of one thread in an interval that the sandboxed side's own processes do not explain.

    While a thread waited, the CPU went to the sandboxed side's other processes and threads
    (its own time: a command racing its own forks is not starved), to the harness, or
    outside the container (starvation). `side_used` is what the sandboxed side used in the
    interval; a thread of that side (`on_side`) explains none of its own waiting.
    """
    worst = 0.0
    for tid, (ran, delay) in after.items():
        ran0, delay0 = before.get(tid, (0, 0))
        others = max(0.0, side_used - (ran - ran0) / 1e9) if on_side else side_used
        worst = max(worst, (delay - delay0) / 1e9 - others)
    return worst


class SideClock:
    """The sandboxed side's time since the clock was made: CPU seconds and active seconds.

    `pid`: the one process whose threads are watched; None watches every process of the
    sandboxed side. The measuring process's own threads are always watched. Call `tick()`
    now and then; it returns the active seconds gained since the last tick.

    Waiting is judged over windows of about WINDOW seconds, not between two ticks:
    run_delay grows only when a waiting thread gets onto a CPU, so a wait in progress at a
    sample is seen one sample late. Over one short interval that lag, picked up by the
    longest wait of many threads, would make a command racing its own forks look starved;
    over a window it is a small part. Within a window the estimate is revised at every
    tick (so `active` may step back by a little); a thread that ended within the window
    keeps its last reading, so its waiting still counts.
    """

    def __init__(self, keep: set[int], pid: int | None = None) -> None:
        self.keep = set(keep)
        self.pid = pid
        self.active = 0.0
        self.cost = 0.0  # CPU seconds the last sample took
        self._committed = 0.0  # active seconds of the windows already closed
        self._carry = 0.0  # waiting seen in a closed window beyond its length
        self._stuck: dict[str, tuple[float, int, int]] = {}  # runnable threads: (seen since, ran, times run)
        now = time.monotonic()
        cpu, side_rd = self._sample(now)
        self.cpu0 = self.cpu_last = cpu
        self._base = (now, cpu, side_rd, sched("self"))
        self._latest: Sched = dict(side_rd)  # every side thread's last reading in this window

    def _sample(self, now: float) -> tuple[float, Sched]:
        if self.pid is None:
            cpu, rd = side_usage(self.keep, threads=True)
        else:
            cpu, rd = side_cpu(self.keep), readings(self.pid)
        return cpu, self._with_pending(now, rd)

    def _with_pending(self, now: float, rd: Readings) -> Sched:
        """Each thread's waiting so far, with the wait in progress that run_delay does not show yet.

        A thread runnable at two samples that did not run in between (the same time on a
        CPU, the same count of runs) waited all along: it cannot have slept, since going to
        sleep takes running. That wait is added until the thread runs and its run_delay
        takes it over. So a thread the host keeps off the CPU for seconds is seen waiting
        at once, not only when it next runs.
        """
        out: Sched = {}
        stuck: dict[str, tuple[float, int, int]] = {}
        for tid, (ran, delay, count, runnable) in rd.items():
            seen = self._stuck.get(tid)
            if runnable and seen is not None and seen[1:] == (ran, count):
                stuck[tid] = seen
                delay += int((now - seen[0]) * 1e9)
            elif runnable:
                stuck[tid] = (now, ran, count)
            out[tid] = (ran, delay)
        self._stuck = stuck
        return out

    def tick(self) -> float:
        spent = time.thread_time()
        now = time.monotonic()
        cpu, side_rd = self._sample(now)
        own_rd = sched("self")
        self.cost = time.thread_time() - spent
        self.cpu_last = cpu = max(self.cpu_last, cpu)
        t0, cpu0, side0, own0 = self._base
        self._latest.update(side_rd)
        used = cpu - cpu0
        lost = max(starved(side0, self._latest, used, True), starved(own0, own_rd, used, False))
        span = now - t0
        lost += self._carry
        before = self.active
        self.active = self._committed + min(span, max(0.0, span - lost))
        if span >= WINDOW:
            # waits that ran into this window from the last one (seen late) may exceed it:
            # the rest is taken from the next window, as the last one counted it active
            self._carry = max(0.0, lost - span)
            self._committed = self.active
            self._base = (now, cpu, dict(side_rd), own_rd)
            self._latest = dict(side_rd)
        return self.active - before

    @property
    def cpu(self) -> float:
        return self.cpu_last - self.cpu0
