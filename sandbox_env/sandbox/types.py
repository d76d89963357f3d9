"""The plain values that cross the sandbox interface: results, limits, usage, the error types."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_env.constants import DEFAULTS
from sandbox_env.sandbox.usage import Usage, UsageTrace

__all__ = ["ExecResult", "Limits", "PyResult", "SandboxEndedFromInside", "SandboxError", "Usage", "UsageTrace"]


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
    usage: UsageTrace | None = None  # what the sandbox consumed during the run (grading runs measure it)
    report_nonce: str | None = None  # the nonce that frames a grader program's report (grading runs)


@dataclass
class PyResult:
    """One cell of the persistent Python session."""

    output: str
    timed_out: bool = False
    restarted: bool = False
