"""Sandboxes: one small interface (interface.py) and its backends beside it (docker/)."""

from sandbox_env.sandbox.interface import Sandbox, SandboxBackend
from sandbox_env.sandbox.types import (
    ExecResult,
    Limits,
    PyResult,
    SandboxEndedFromInside,
    SandboxError,
    SandboxStarved,
    Usage,
)

__all__ = [
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
