"""The plain values that cross the sandbox interface: results, limits, the one error type."""

from __future__ import annotations

from dataclasses import dataclass

from sandbox_env.constants import DEFAULTS


class SandboxError(RuntimeError):
    """A sandbox could not be created, reached or used; the message says which and why."""


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


@dataclass
class PyResult:
    """One cell of the persistent Python session."""

    output: str
    timed_out: bool = False
    restarted: bool = False
