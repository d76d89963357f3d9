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
   (at least `BUSY_SHARE` of what its CPU limit allowed over the window, a limit below one
   CPU counted as one: a quota that tight sets the pace of honest work, so its use proves
   nothing against the code, `NOMINAL_CPUS`), hit its pids or
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
   0.0. Never a scoring_error. So is what it leaves the agent unable to do for it after its
   code ran (restart a session in an unwritable /workspace or with every pid held, parse a
   flood on the session's pipe): the agent says so in the call's output
   (runtime/container/agent.py), never as an error the host would take for the harness's. A call
   ended at its wall-clock backstop is judged by rule 2 on the host's evidence
   (sandbox/interface.py `_settle_backstop`), never on the in-sandbox clock alone.

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
