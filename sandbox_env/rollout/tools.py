"""The two tools the model has, independent of any verifiers version: bash and execute_code.

This module owns the tool table (names and arguments), the argument checks with
messages a model can act on, output capping, and running a call on a sandbox.
Front doors wrap these; they do not restate them. What they return is always valid
text (sandbox_env/text.py): output holding a lone surrogate or invalid bytes comes back
with U+FFFD in its place.
"""

from __future__ import annotations

from typing import Any

from sandbox_env.constants import DEFAULTS, TOOL_NAMES
from sandbox_env.sandbox import Sandbox
from sandbox_env.text import valid_text

DEFAULT_OUTPUT_CAP = DEFAULTS.output_cap
TOOL_ARGS: dict[str, dict[str, type]] = {"bash": {"command": str}, "execute_code": {"code": str}}
assert tuple(TOOL_ARGS) == TOOL_NAMES


class ToolArgumentError(ValueError):
    """A tool call whose arguments do not match the tool's schema."""


def check_tool_args(tool_name: str, args: dict[str, Any]) -> None:
    """Reject unknown tools and missing, extra or mistyped arguments with a message the model can act on."""
    if tool_name not in TOOL_ARGS:
        raise ToolArgumentError(f"unknown tool {tool_name!r}; the tools are: {', '.join(TOOL_ARGS)}")
    spec = TOOL_ARGS[tool_name]
    usage = ", ".join(f"{k} (string)" for k in spec)
    extra = sorted(set(args) - set(spec))
    if extra:
        raise ToolArgumentError(f"{tool_name} got unexpected argument(s) {', '.join(map(repr, extra))}; it takes: {usage}")
    missing = [k for k in spec if k not in args]
    if missing:
        raise ToolArgumentError(f"{tool_name} is missing required argument(s) {', '.join(map(repr, missing))}; it takes: {usage}")
    for key, typ in spec.items():
        if not isinstance(args[key], typ):
            raise ToolArgumentError(f"{tool_name}: {key!r} must be a string, got {type(args[key]).__name__}")


def cap_output(text: str, cap: int = DEFAULT_OUTPUT_CAP) -> str:
    """Keep the head and the tail of a long output, saying how much was cut."""
    if len(text) <= cap:
        return text
    head = cap * 2 // 3
    tail = cap - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut: output is capped at {cap} characters ...]\n{text[-tail:]}"


async def run_bash(sb: Sandbox, command: str, timeout: float, cap: int = DEFAULT_OUTPUT_CAP) -> str:
    res = await sb.exec(command, timeout=timeout, max_output=max(cap * 4, 65536))
    parts = []
    if res.stdout:
        parts.append(res.stdout.rstrip("\n"))
    if res.stderr:
        parts.append("stderr:\n" + res.stderr.rstrip("\n"))
    if res.truncated:
        parts.append(f"[{res.truncated} bytes of output were not read]")
    if res.timed_out:
        parts.append(f"[timed out after {timeout:g}s: the command's process group was killed]")
    elif res.exit_code != 0:
        parts.append(f"[exit code {res.exit_code}]")
    return valid_text(cap_output("\n".join(parts) or "(no output)", cap))


async def run_code(sb: Sandbox, code: str, timeout: float, cap: int = DEFAULT_OUTPUT_CAP) -> str:
    res = await sb.run_python(code, timeout=timeout)
    return valid_text(cap_output(res.output.rstrip("\n") or "(no output)", cap))


def sandbox_replaced_message(evidence: str) -> str:
    """The tool message for a call during which the sandbox's own processes ended it (blame rule 4, docs/architecture.md).

    Every front door answers such a call with this text, after it has set up a fresh
    sandbox like the first: the model learns what happened and what it lost.
    """
    return (
        f"[the sandbox ended during this call: {evidence}. It has been replaced by a fresh sandbox with the "
        "task's starting files: everything done in the old one (files, processes, the Python session's "
        "variables) is gone.]"
    )


async def run_tool(sb: Sandbox, tool: str, args: dict[str, Any], timeout: float, cap: int = DEFAULT_OUTPUT_CAP) -> str:
    """Check a call's arguments and run it; raises ToolArgumentError for a call the tools do not accept."""
    check_tool_args(tool, args)
    if tool == "bash":
        return await run_bash(sb, args["command"], timeout, cap)
    return await run_code(sb, args["code"], timeout, cap)
