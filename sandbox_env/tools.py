"""The two tools the model has, independent of verifiers: bash and execute_code.

What they return is always valid text (sandbox_env/text.py): output holding a lone
surrogate or invalid bytes comes back with U+FFFD in its place.
"""

from __future__ import annotations

from sandbox_env.sandbox.handle import Sandbox
from sandbox_env.text import valid_text

DEFAULT_OUTPUT_CAP = 8000


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
