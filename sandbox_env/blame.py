"""Who is to blame for a zero: the rule, and the judgements that apply it to measured evidence.

The rule (docs/architecture.md, "Blame"):

1. A zero is the submission's only when the evidence shows that the submission caused it:
   a check or test that failed, an import that raised, a crash traced to its code, a limit
   that its own processes used up. Anything else is a harness fault: score 0.0,
   `scoring_error` set, and `state["error"]` set to a retryable error so that trainers
   reschedule the rollout instead of learning from it. A harness fault in grading is
   retried once in a fresh container before it is reported (`families.grade_final`),
   unless the grading sandbox's own processes hit its limits during the run (`limits_hit`):
   then the fault followed from what the code under test did, and the 0.0 is its own.
2. Limits on code under test count the CPU time it consumed, not the wall clock. A
   wall-clock backstop that is hit is the submission's only when its sandbox used its CPU
   (at least `BUSY_SHARE` of what its CPU limit allowed over the window), hit its pids or
   memory limit (or held a quarter of its pids limit in tasks at once), or did not ask for
   more CPU than it got (it waited on itself: a sleep, a deadlock, a read that never
   returns). Held back while it wanted to run (some task of the sandbox runnable but
   waiting for a CPU at least `STARVED_SHARE` of the time, by the kernel's pressure stall
   information) is starvation: a harness fault. Evidence that cannot be measured (an
   engine on another host, no cgroup access) proves nothing, so the fault is the harness's.
   Waits the sandbox causes itself are not starvation: more runnable processes than CPUs,
   or its CPU quota used up, make its tasks wait only while it uses its CPU share, so its
   waiting can exceed its own use of the CPU (as shares of the window) only when the CPU
   went elsewhere. A run is starved only when it waited `SELF_WAIT_MARGIN` more than it
   used: code under test that hangs while bursts of its own forks queue for the CPU (a
   third of the time each: 33% waiting, 33% of the CPU) made its timeout read as
   starvation before, a scoring_error at its will. Its use includes the CPU of the host
   process that serves its root filesystem (fuse-overlayfs, docker/fuse.py): code that
   hangs while its processes re-read the image's files keeps that process, outside its
   cgroup, busy enough to hold its own readers back, and read as starved before.
3. A sandbox whose agent is lost is judged by the engine's record. Out of memory, or an
   agent that fell silent while the sandbox kept its CPU busy or sat at its pids or memory
   limit: its own processes did it. A signal death of the agent (no one outside killing
   it) or junk on its stream also, but only where the agent runs as the sandboxed code's
   user (it runs as root out of that code's reach in this project, so there they are the
   harness's). Killed or removed from outside, an engine error, an agent that failed by
   itself or fell silent in an idle or starved sandbox: the harness.
4. "Its own processes" are the model's in a rollout container (its tool calls and what
   they left running) and the submission's in a grading container (the grader program is
   bounded and trusted). During setup no model code has run yet, so every setup failure
   is a harness fault. What the model does to its own sandbox (kill -9 -1, a fork bomb, a
   memory bomb, junk on any descriptor) is the model's: from a tool call it gets a fresh
   sandbox and a tool message that says what happened; in grading it is the submission's
   0.0. Never a scoring_error.

5. A limit is the sandbox's own only as its backend set it. A memory or pids limit that
   was lowered from outside while the sandbox ran (`docker update` by an operator, a tool
   on the host: the sandboxed code cannot change its cgroup) makes correct code run out of
   memory or forks, so hitting it proves nothing against the sandbox's processes: any
   window whose points show a limit other than the one set (`Usage.limits_changed`) is a
   harness fault, whatever else it shows (`outside_change`).

The measurements come from the backend (`SandboxBackend.usage_point`): the container's cgroup
CPU usage, CPU pressure, pids and memory limit events, and the limits themselves, read by
the host where the code under test cannot touch them (docker/cgroup.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_env.sandbox.types import ExecResult, SandboxError
from sandbox_env.sandbox.usage import Usage

BUSY_SHARE = 0.5  # of cpus x wall: a sandbox that used this much was running, not starved
STARVED_SHARE = 0.25  # share of the window in which a runnable task of the sandbox waited for a CPU
LIMIT_WINDOW = 10.0  # a limit that was hit is judged by at most its last this many seconds
SWARM_SHARE = 0.25  # of the pids limit held at once: the sandbox's processes multiplied
SELF_WAIT_MARGIN = 0.1  # share of the window by which waiting must exceed the sandbox's own CPU use to be starvation


class StarvedRun(SandboxError):
    """A grading run hit its wall-clock backstop while its sandbox was starved of CPU (a harness fault)."""


@dataclass(frozen=True)
class Verdict:
    submission: bool  # True: the evidence shows the sandbox's own processes caused it
    why: str


def outside_change(u: Usage | None) -> str | None:
    """How the sandbox's limits were changed from outside during the window (rule 5), or None."""
    return None if u is None else u.limits_changed


def limits_hit(u: Usage | None) -> str | None:
    """What the sandbox's own processes did against its limits, or None: evidence whatever the load.

    The harness's programs stay far below every limit, so a sandbox that reached its pids
    or memory limit, or held a quarter of its pids limit in tasks at once, was pushed there
    by the code under test (or the model's own commands). Not so against a limit that was
    changed from outside (rule 5): then nothing here is evidence.
    """
    if u is None or outside_change(u):
        return None
    if u.fork_failures:
        return f"its processes hit the sandbox's process limit ({u.fork_failures} forks refused)"
    if u.memory_failures:
        return f"its processes ran the sandbox out of memory ({u.memory_failures} killed by the OOM killer)"
    if u.memory_limit_hits:
        return f"its processes filled the sandbox's memory to its limit ({u.memory_limit_hits} times)"
    if u.peak_pids is not None and u.pids_limit and u.peak_pids >= SWARM_SHARE * u.pids_limit:
        return f"its processes multiplied to {u.peak_pids} tasks (the sandbox allows {u.pids_limit})"
    return None


def _self_inflicted(u: Usage) -> str | None:
    own = limits_hit(u)
    if own:
        return own
    if u.cpu is not None and u.wall > 0 and u.cpu >= BUSY_SHARE * u.cpus * u.wall:
        return f"its processes used {u.cpu:.1f} s of CPU in {u.wall:.1f} s{_served(u)} (limit {u.cpus:g} CPU)"
    return None


def _served(u: Usage) -> str:
    """What of its CPU the host process serving its root filesystem spent, when that counted."""
    if not u.served or u.served < 0.05:
        return ""
    return f" ({u.served:.1f} s of it in the host process serving its file reads)"


def judge_time_limit(usage: Usage | None) -> Verdict:
    """Whose fault is a wall-clock backstop that was hit (rule 2)."""
    if usage is None or usage.cpu is None:
        return Verdict(False, "the sandbox's CPU use could not be measured, so a time limit proves nothing")
    if changed := outside_change(usage):
        return Verdict(False, changed)
    own = _self_inflicted(usage)
    if own:
        return Verdict(True, own)
    if usage.cpu_pressure is None:
        return Verdict(
            False,
            f"its processes used only {usage.cpu:.1f} s of CPU in {usage.wall:.1f} s "
            "and whether they waited for a CPU could not be measured",
        )
    used = usage.cpu / (usage.cpus * usage.wall) if usage.wall > 0 and usage.cpus > 0 else 0.0
    if usage.cpu_pressure >= STARVED_SHARE and usage.cpu_pressure - used >= SELF_WAIT_MARGIN:
        return Verdict(
            False,
            f"starved: its processes got {usage.cpu:.1f} s of CPU in {usage.wall:.1f} s{_served(usage)} and "
            f"waited for a CPU {usage.cpu_pressure:.0%} of the time",
        )
    if usage.cpu_pressure >= STARVED_SHARE:
        return Verdict(
            True,
            f"its processes kept each other waiting: they waited for a CPU {usage.cpu_pressure:.0%} of the time "
            f"while using {used:.0%} of their CPU ({usage.cpu:.1f} s in {usage.wall:.1f} s), "
            "no more than their own bursts cause",
        )
    return Verdict(
        True,
        f"its processes waited on themselves: {usage.cpu:.1f} s of CPU in {usage.wall:.1f} s, "
        f"waiting for a CPU only {usage.cpu_pressure:.0%} of the time",
    )


def judge_silence(usage: Usage | None) -> Verdict:
    """Whose fault is an agent that stopped answering in a running sandbox (rule 3).

    Unlike a time limit, an idle sandbox does not make silence the sandbox's: the agent
    itself should have answered, so only a busy or limit-bound sandbox is blamed.
    """
    if usage is None:
        return Verdict(False, "the sandbox's resource use could not be measured")
    if changed := outside_change(usage):
        return Verdict(False, changed)
    own = _self_inflicted(usage)
    if own:
        return Verdict(True, own)
    load = "" if usage.cpu_pressure is None else f"; it waited for a CPU {usage.cpu_pressure:.0%} of the time"
    cpu = "unknown" if usage.cpu is None else f"{usage.cpu:.1f} s"
    return Verdict(False, f"the sandbox was not busy (CPU {cpu} in {usage.wall:.1f} s{load})")


def check_time_limit(result: ExecResult, what: str, seconds: float) -> None:
    """Before blaming the submission for a `seconds` limit that ended `result`: raise StarvedRun unless it is its own.

    The evidence is what the sandbox did in the last `seconds` of the run, at most
    `LIMIT_WINDOW` (a limit ends the run when it is hit: what ran just before is what hung).
    """
    window = min(seconds, LIMIT_WINDOW)
    verdict = judge_time_limit(result.usage.over_last(window) if result.usage is not None else None)
    if not verdict.submission:
        raise StarvedRun(f"{what} hit its time limit, but not by the submission's doing: {verdict.why}")
