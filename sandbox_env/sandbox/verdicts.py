"""The judgements of the blame rule (docs/architecture.md, "Blame") over a sandbox's measured usage.

They live beside the usage evidence, in the sandbox package, so that a backend and the
sandbox interface can apply the rule themselves (a lost agent, a tool call that reached
its wall-clock backstop) without importing upward; sandbox/blame.py re-exports them for
everything above.
"""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_env.sandbox.usage import Usage

BUSY_SHARE = 0.5  # of cpus x wall: a sandbox that used this much was running, not starved
STARVED_SHARE = 0.25  # share of the window in which a runnable task of the sandbox waited for a CPU
LIMIT_WINDOW = 10.0  # a limit that was hit is judged by at most its last this many seconds
SWARM_SHARE = 0.25  # of the pids limit held at once: the sandbox's processes multiplied
SELF_WAIT_MARGIN = 0.1  # share of the window by which waiting must exceed the sandbox's own CPU use to be starvation
NOMINAL_CPUS = 1.0  # a sandbox below one CPU is judged against one: its quota, not its code, sets its pace


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
    if u.cpu is not None and u.wall > 0 and u.cpu >= BUSY_SHARE * _capacity(u) * u.wall:
        return f"its processes used {u.cpu:.1f} s of CPU in {u.wall:.1f} s{_served(u)} (limit {u.cpus:g} CPU)"
    return None


def _capacity(u: Usage) -> float:
    """The CPUs a time limit assumes the sandbox had: its quota, or one CPU when the quota is below one.

    Limits judge code in CPU time. A sandbox held to a fraction of a CPU (a tight `cpus`
    setting) spends most of any wall-clock window throttled by its quota, and the cgroup
    counts that as waiting for a CPU: measured against the quota, an honest import that
    merely ran at the quota's pace would look busy (it used all it was given), so the
    limit would blame the code for the harness's setting. Against one CPU it reads as what
    it is, starved. The price, recorded: below one CPU a busy loop cannot be told from
    honest work that the quota slowed, and both are harness faults; the default is one CPU.
    """
    return max(u.cpus, NOMINAL_CPUS)


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
    used = usage.cpu / (_capacity(usage) * usage.wall) if usage.wall > 0 else 0.0
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


def judge_backstop(whole: Usage | None, recent: Usage | None, limit: float) -> Verdict:
    """Whose fault is a limit on code that was ended by its wall-clock backstop (rule 2).

    The limit counts the sandbox's own time (its CPU, or time it waited on itself), so the
    backstop is only the harness's patience. A sandbox whose processes consumed the whole
    limit in CPU over the call (`whole`, measured by the host from the call's start) used
    what the limit grants, however slowly a busy host gave it: the submission's, at any
    load. Otherwise what it did in the last seconds (`recent`) decides, as for any limit
    that was hit: used its CPU or waited on itself (a sleep, a lock), the submission's;
    waited for a CPU that went elsewhere, starved, the harness's.

    Threat model: code that makes the sandbox's own clock read "starved" (runtime/container/
    clock.py) reaches the backstop instead of its limit, but it cannot hide the CPU it burns
    from the host's cgroup reading; a busy loop that gets at least one limit in CPU out of
    the backstop's wall time is its own, whatever the clock inside said.
    """
    if whole is not None and whole.cpu is not None and not outside_change(whole) and whole.cpu >= limit:
        return Verdict(
            True,
            f"its processes used {whole.cpu:.1f} s of CPU in {whole.wall:.1f} s{_served(whole)}, "
            f"the whole of the {limit:g} s its limit grants",
        )
    return judge_time_limit(recent)


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
