"""What a sandbox consumed, as the host measured it: the evidence that sandbox/blame.py judges.

A backend that can measure gives `UsagePoint`s: cumulative counters of one sandbox at one
moment. Two points make a `Usage` over the window between them; a `UsageTrace` keeps the
points taken during a run (a grading samples every `TRACE_PERIOD` seconds), so that a
limit hit at the end of the run is judged by what happened just before it
(`over_last`), not by the whole run: a run whose start was starved but which then slept
in the submission's code is the submission's, and the reverse.

A point also carries the memory and pids limits the sandbox had at that moment, and the
backend that set them says when they differ from what it asked for (`changed_limits`):
a limit lowered from outside (`docker update --memory`, `--pids-limit` by an operator or a
tool on the host) makes the sandbox's own processes hit it, which then proves nothing
against them (sandbox/blame.py). A window is tainted by such a change when any of its points is.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TRACE_PERIOD = 0.25  # seconds between the points of a grading's trace


@dataclass
class Usage:
    """What a sandbox consumed over a window of time (None: not measurable).

    `cpu` is CPU-seconds the sandbox's processes used, with what the host process that
    serves its root filesystem spent on their requests (`served` of it; docker/fuse.py),
    so that file reads that make the host busy count as the sandbox's own use; `cpus` the
    CPU limit it had;
    `cpu_pressure` the share of the window in which some task of the sandbox was runnable
    but waiting for a CPU (its cgroup's PSI `some`; where the kernel keeps none per
    cgroup, the host's); `fork_failures` and `memory_failures` how often its pids limit
    refused a fork and its memory limit killed a process; `memory_limit_hits` how often
    its memory use reached the limit; `peak_pids` the most tasks it held at once, of
    `pids_limit`; `limits_changed` says how its limits differed from the ones its backend
    set at some moment of the window (changed from outside), or None.
    """

    wall: float
    cpus: float
    cpu: float | None = None
    cpu_pressure: float | None = None
    fork_failures: int | None = None
    memory_failures: int | None = None
    memory_limit_hits: int | None = None
    peak_pids: int | None = None
    pids_limit: int | None = None
    served: float | None = None
    limits_changed: str | None = None


@dataclass(frozen=True)
class UsagePoint:
    """Cumulative counters of one sandbox at one moment (time.monotonic())."""

    at: float
    cpu: float | None  # CPU-seconds since the sandbox started
    stall: float | None  # seconds in which a task waited for a CPU (the sandbox's own, or the host's)
    fork_failures: int | None
    oom_kills: int | None
    memory_hits: int | None = None  # times its memory use reached the limit
    pids: int | None = None  # tasks now
    pids_max: int | None = None  # its pids limit
    served: float | None = None  # CPU-seconds of the host process serving its root filesystem (docker/fuse.py)
    memory_max: int | None = None  # its memory limit in bytes
    limits_changed: str | None = None  # how its limits differ from the ones its backend set (changed_limits)


def changed_limits(point: UsagePoint, *, memory_bytes: int, pids: int) -> str | None:
    """How the limits read at `point` differ from the `memory_bytes` and `pids` its backend set, or None.

    A limit that could not be read is not a change: missing evidence is judged elsewhere.
    """
    changes = []
    if point.memory_max is not None and point.memory_max != memory_bytes:
        changes.append(f"memory {point.memory_max / 2**20:.0f} MiB instead of {memory_bytes / 2**20:.0f} MiB")
    if point.pids_max is not None and point.pids_max != pids:
        changes.append(f"pids {point.pids_max} instead of {pids}")
    if not changes:
        return None
    return "its limits were changed from outside the sandbox (" + ", ".join(changes) + ")"


def between(
    a: UsagePoint | None,
    b: UsagePoint | None,
    cpus: float,
    *,
    cumulative_limits: bool = False,
    middle: list[UsagePoint] | tuple = (),
) -> Usage | None:
    """What the sandbox used from point `a` to point `b` (limit events since its start when cumulative_limits).

    `middle`: points taken in between, for the most tasks held at once.
    """
    if a is None or b is None:
        return None
    wall = max(b.at - a.at, 1e-6)

    def delta(x, y):
        return None if x is None or y is None else max(0, y - x)

    def events(name: str):
        return getattr(b, name) if cumulative_limits else delta(getattr(a, name), getattr(b, name))

    stall = delta(a.stall, b.stall)
    cpu = delta(a.cpu, b.cpu)
    served = delta(a.served, b.served)  # None unless both points read the same server
    points = (a, *middle, b)
    pids = [p.pids for p in points if p.pids is not None]
    return Usage(
        wall=wall,
        cpus=cpus,
        cpu=None if cpu is None else cpu + (served or 0.0),
        cpu_pressure=None if stall is None else min(1.0, stall / wall),
        fork_failures=events("fork_failures"),
        memory_failures=events("oom_kills"),
        memory_limit_hits=events("memory_hits"),
        peak_pids=max(pids) if pids else None,
        pids_limit=b.pids_max,
        served=None if cpu is None else served,
        limits_changed=next((p.limits_changed for p in points if p.limits_changed), None),
    )


@dataclass
class UsageTrace:
    """Points taken during one run, oldest first."""

    cpus: float
    points: list[UsagePoint] = field(default_factory=list)

    def add(self, point: UsagePoint | None) -> None:
        if point is not None:
            self.points.append(point)

    def whole(self) -> Usage | None:
        if len(self.points) < 2:
            return None
        return between(self.points[0], self.points[-1], self.cpus, middle=self.points[1:-1])

    def over_last(self, seconds: float) -> Usage | None:
        """Usage over the last `seconds` of the trace (from the latest point at or before that time)."""
        if len(self.points) < 2:
            return None
        end = self.points[-1]
        first = 0
        for i, p in enumerate(self.points[:-1]):
            if p.at <= end.at - seconds:
                first = i
        return between(self.points[first], end, self.cpus, middle=self.points[first + 1 : -1])
