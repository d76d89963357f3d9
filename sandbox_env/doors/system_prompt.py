"""What the model reads before every task, on both front doors."""

from __future__ import annotations

from typing import Protocol

from sandbox_env.constants import DEFAULTS

_TEMPLATE = """\
You work inside a Linux sandbox (no network) as an unprivileged user, in /workspace.
Python 3.13 with Django 6 and FastAPI is installed. You have two tools:
- bash(command): run a shell command in /workspace; its output and exit code come back.
- execute_code(code): run Python in a persistent session; variables stay between calls,
  prints and the value of a last expression come back.
Each call has a time limit of {limit} seconds and its output is capped at {cap}
characters. Do the task, check your work with the tools, and when you are done, answer
with a short message and no tool call."""


class _ToolLimits(Protocol):
    timeout_per_command_seconds: float
    output_cap: int


def system_prompt_for(settings: _ToolLimits) -> str:
    """The system prompt that states the tools' own limits (a call's time limit, the output cap)."""
    return _TEMPLATE.format(limit=f"{settings.timeout_per_command_seconds:g}", cap=settings.output_cap)


SYSTEM_PROMPT = _TEMPLATE.format(limit=f"{DEFAULTS.timeout_per_command_seconds:g}", cap=DEFAULTS.output_cap)
"""The system prompt under the default limits."""
