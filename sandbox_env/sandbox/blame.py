"""Who is to blame for a zero: the rule, and the judgements that apply it to measured evidence.

The rule is stated once, in docs/architecture.md ("Blame", rules 1-8); this module and
sandbox/verdicts.py apply its parts over measured evidence, and name the numbers the
statement uses: `BUSY_SHARE` (a sandbox that used this share of its CPU was running),
`STARVED_SHARE` and `SELF_WAIT_MARGIN` (how much waiting for a CPU, beyond its own use,
is starvation), `SWARM_SHARE` (of the pids limit held at once), `LIMIT_WINDOW` (the last
seconds a hit limit is judged by). The judgements live in verdicts.py, beside the usage
evidence, so that a backend and the sandbox interface apply them without importing
upward; this module re-exports them and adds the grading side's check (`check_time_limit`,
`StarvedRun`).

The measurements come from the backend (`SandboxBackend.usage_point`): the container's cgroup
CPU usage, CPU pressure, pids and memory limit events, and the limits themselves, read by
the host where the code under test cannot touch them (docker/cgroup.py).
"""

from __future__ import annotations

from sandbox_env.sandbox.types import ExecResult, SandboxError
from sandbox_env.sandbox.verdicts import (
    BUSY_SHARE,
    LIMIT_WINDOW,
    SELF_WAIT_MARGIN,
    STARVED_SHARE,
    SWARM_SHARE,
    Verdict,
    judge_silence,
    judge_time_limit,
    limits_hit,
    outside_change,
)

__all__ = [
    "BUSY_SHARE",
    "LIMIT_WINDOW",
    "SELF_WAIT_MARGIN",
    "STARVED_SHARE",
    "SWARM_SHARE",
    "StarvedRun",
    "Verdict",
    "check_time_limit",
    "judge_silence",
    "judge_time_limit",
    "limits_hit",
    "outside_change",
]


class StarvedRun(SandboxError):
    """A grading run hit its wall-clock backstop while its sandbox was starved of CPU (a harness fault)."""


def check_time_limit(result: ExecResult, what: str, seconds: float) -> None:
    """Before blaming the submission for a `seconds` limit that ended `result`: raise StarvedRun unless it is its own.

    The evidence is what the sandbox did in the last `seconds` of the run, at most
    `LIMIT_WINDOW` (a limit ends the run when it is hit: what ran just before is what hung).
    """
    window = min(seconds, LIMIT_WINDOW)
    verdict = judge_time_limit(result.usage.over_last(window) if result.usage is not None else None)
    if not verdict.submission:
        raise StarvedRun(f"{what} hit its time limit, but not by the submission's doing: {verdict.why}")
