"""websandbox's agent seat: verifiers' `null` chat loop, run with this interpreter instead of through `uv`.

The default harness of the websandbox env (and, because this package exports it, what
v1 picks for the taskset when no harness is named). It is verifiers' `null` harness —
a chat loop whose only tools are the taskset's MCP tools, `bash` and `execute_code` —
with one change: on the host (the `subprocess` runtime) its PEP 723 chat program runs
with the interpreter that runs verifiers, whose packages already meet the program's
dependencies (doors/script_deps.py checks each one). verifiers' own preparation
(`uv sync --script`, after installing `uv` with `pip install --user` or an installer
piped from the internet when it is missing) needs the network: on a machine without it
every rollout failed before its first turn. Nothing is resolved, downloaded or installed
here.

Where the interpreter lacks a requirement, the rollout stops with an error that names it
(install it, or pick verifiers' `null` harness to let `uv` resolve it), never with a silent
download. On any other runtime the harness is exactly verifiers' `null`.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from verifiers.v1.harnesses.null.harness import NullHarness
from verifiers.v1.runtimes import SubprocessRuntime

from sandbox_env.doors.script_deps import unmet_needs

HARNESS_ID = "websandbox"
NULL_ADVICE = ", or pass --env.agent.harness.id null to let uv resolve them (that needs the network)"


def scripts_folder() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "websandbox" / "scripts"


def local_script(source: str | bytes) -> Path:
    """The script written once to a content-addressed host file (atomic: a temp file renamed)."""
    data = source.encode() if isinstance(source, str) else source
    folder = scripts_folder()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{hashlib.sha256(data).hexdigest()}.py"
    if not path.exists():
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp, path)
    return path


class LocalScripts:
    """A host runtime whose PEP 723 scripts run with this interpreter; everything else is the runtime's own."""

    def __init__(self, runtime: vf.Runtime, advice: str = NULL_ADVICE) -> None:
        self._runtime = runtime
        self._advice = advice

    def __getattr__(self, name: str) -> Any:
        return getattr(self._runtime, name)

    async def prepare_uv_script(self, script: str | bytes, env: dict[str, str] | None = None, **_: Any) -> list[str]:
        text = script.decode() if isinstance(script, bytes) else script
        unmet = unmet_needs(text)
        if unmet:
            raise vf.SandboxError(
                f"websandbox runs the harness's chat program with {sys.executable}, which lacks: {'; '.join(unmet)}. "
                f"Install them into that environment (they are verifiers' own dependencies){self._advice}."
            )
        return [sys.executable, str(local_script(script))]


def scripts_run_here(runtime: vf.Runtime) -> None:
    """Make v1's host runtime of one rollout run PEP 723 scripts with this interpreter, for any harness on it.

    For a harness websandbox does not own (verifiers' `bash`): the runtime's own method is shadowed on this
    instance (its views share it), so nothing is resolved or downloaded. Other runtimes are left alone.
    """
    if isinstance(runtime, SubprocessRuntime) and "prepare_uv_script" not in vars(runtime):
        runtime.prepare_uv_script = LocalScripts(runtime, advice="").prepare_uv_script  # type: ignore[method-assign]


def _on_host(runtime: vf.Runtime) -> Any:
    return LocalScripts(runtime) if isinstance(runtime, SubprocessRuntime) else runtime


class WebSandboxHarness(NullHarness):
    """verifiers' `null` harness whose chat program runs with this interpreter on the host."""

    async def setup(self, runtime: vf.Runtime) -> None:
        await super().setup(_on_host(runtime))

    async def launch(self, ctx: Any, trace: vf.Trace, runtime: vf.Runtime, *args: Any, **kwargs: Any) -> Any:
        return await super().launch(ctx, trace, _on_host(runtime), *args, **kwargs)
