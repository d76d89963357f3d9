"""Who is to blame for a zero: the rule, and the judgements that apply it to measured evidence.

The rule is stated once, in docs/architecture.md ("Blame", rules 1-8); this module and
sandbox/verdicts.py apply its parts over measured evidence, and name the numbers the
statement uses: `BUSY_SHARE` (a sandbox that used this share of its CPU was running),
`STARVED_SHARE` and `SELF_WAIT_MARGIN` (how much waiting for a CPU, beyond its own use,
is starvation), `SWARM_SHARE` (of the pids limit held at once), `LIMIT_WINDOW` (the last
seconds a hit limit is judged by). The judgements live in verdicts.py, beside the usage
evidence, so that a backend and the sandbox interface apply them without importing
upward; this module re-exports them and adds the grading side's fault (`StarvedGrading`).

The measurements come from the backend (`SandboxBackend.usage_point`): the container's cgroup
CPU usage, CPU pressure, pids and memory limit events, and the limits themselves, read by
the host where the code under test cannot touch them (docker/cgroup.py).
"""

from __future__ import annotations

from sandbox_env.sandbox.types import SandboxError
from sandbox_env.sandbox.verdicts import (
    BUSY_SHARE,
    LIMIT_WINDOW,
    SELF_WAIT_MARGIN,
    STARVED_SHARE,
    SWARM_SHARE,
    Verdict,
    judge_backstop,
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
    "StarvedGrading",
    "Verdict",
    "judge_backstop",
    "judge_silence",
    "judge_time_limit",
    "limits_hit",
    "outside_change",
]


class StarvedGrading(SandboxError):
    """A grading hit its wall-clock backstop while its sandbox was starved of CPU (a harness fault)."""
