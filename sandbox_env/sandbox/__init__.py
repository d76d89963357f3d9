"""Sandboxes: one small interface (interface.py) and its backends beside it (docker/)."""

from sandbox_env.sandbox.interface import Sandbox, SandboxBackend
from sandbox_env.sandbox.types import (
    Evidence,
    ExecResult,
    Limits,
    PyResult,
    SandboxEndedFromInside,
    SandboxError,
    SandboxStarved,
    Usage,
)

__all__ = [
    "Evidence",
    "ExecResult",
    "Limits",
    "PyResult",
    "Sandbox",
    "SandboxBackend",
    "SandboxEndedFromInside",
    "SandboxError",
    "SandboxStarved",
    "Usage",
]
