"""The plain values that cross the sandbox interface: results, limits, usage, the error types."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_env.constants import DEFAULTS
from sandbox_env.sandbox.usage import Usage, UsageTrace

__all__ = [
    "Evidence",
    "ExecResult",
    "Limits",
    "PyResult",
    "SandboxEndedFromInside",
    "SandboxError",
    "SandboxStarved",
    "Usage",
    "UsageTrace",
]


class SandboxError(RuntimeError):
    """A sandbox could not be created, reached or used; the message says which and why (a harness fault)."""


class SandboxEndedFromInside(SandboxError):
    """The sandbox's own processes ended or broke it: evidence says the code that ran in it did this.

    Raised instead of a plain SandboxError when the engine shows that the container died
    with no one outside killing it (every process killed, out of memory), that its process
    or memory limit was hit, that it kept its own CPU busy, or that junk was written onto
    the agent's stream. `evidence` says which, in words a reader (or the model) can act on.
    """

    def __init__(self, message: str, evidence: str) -> None:
        super().__init__(message)
        self.evidence = evidence


class SandboxStarved(SandboxError):
    """A tool call's wall-clock backstop passed while its sandbox was active for less than the call's limit.

    The host's load kept the sandbox off the CPU (runtime/container/agent.py, CallLimit): the call
    did not get the time its limit promises, so ending it is a harness fault, never the
    model's timeout. `evidence` holds the agent's measurement (limit, wall, active and CPU
    seconds).
    """

    def __init__(self, message: str, evidence: dict) -> None:
        super().__init__(message)
        self.evidence = evidence


@dataclass(frozen=True)
class Evidence:
    """What a backend can prove about its sandboxes, so that a fault is blamed on evidence, not on its absence.

    `usage`: what a sandbox consumed (CPU time, CPU pressure, limit events) as the host
    measured it, so a hit time limit and a silent agent can be judged (blame rules 2-3, docs/architecture.md);
    `limits_changed`: whether its limits were changed from outside (rule 5);
    `ended_from_inside`: whether a sandbox that died was ended by its own processes (rule 3).
    Without one of them, the blame rule calls the fault the harness's: a wrong answer
    that ends or hangs its own sandbox gets a rescheduled rollout instead of its 0.0. So a
    backend declares what it lacks, and training can refuse it (`require_evidence`).
    """

    usage: bool = False
    limits_changed: bool = False
    ended_from_inside: bool = False

    def missing(self) -> list[str]:
        """The kinds of evidence this backend cannot give, in words."""
        names = {
            "usage": "what a sandbox consumed (CPU time and pressure, limit events)",
            "limits_changed": "limits changed from outside",
            "ended_from_inside": "a sandbox ended by its own processes",
        }
        return [text for name, text in names.items() if not getattr(self, name)]


@dataclass
class Limits:
    """Container limits; every field is an argument of load_environment."""

    cpus: float = DEFAULTS.cpus
    memory_mb: int = DEFAULTS.memory_mb
    pids: int = DEFAULTS.pids_limit
    workspace_mb: int = DEFAULTS.workspace_mb
    tmp_mb: int = DEFAULTS.tmp_mb
    network: bool = DEFAULTS.network


@dataclass
class ExecResult:
    """A finished command or program: its output, exit code, and whether a limit stopped it."""

    stdout: str
    stderr: str
    exit_code: int
    timed_out: bool = False
    truncated: int = 0
    usage: UsageTrace | None = None  # what the sandbox consumed during the run (gradings measure it)
    report_nonce: str | None = None  # the nonce that frames a grader program's report (gradings)
    starved: dict | None = None  # the agent's evidence when a wall-clock backstop ended it before its limit


@dataclass
class PyResult:
    """One cell of the persistent Python session."""

    output: str
    timed_out: bool = False
    restarted: bool = False
