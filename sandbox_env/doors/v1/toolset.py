"""The model's two tools as a v1 `Toolset`: exactly `bash` and `execute_code`.

v1 serves tools as an MCP server in a separate process. This one is
taskset-scoped: one server per env worker, started once (importing verifiers
there costs seconds of CPU, too much to pay per rollout); v1 hands it each
call's rollout state through signed coordinates. The sandbox and its persistent
Python session belong to the env worker (see bridge.py), so each call is
forwarded there over loopback with the rollout's token, and runs with the
classic semantics (`sandbox_env.rollout.tools`: per-call time limit, output cap, the
same formatting of exit codes and timeouts). Tool names are advertised bare
(`TOOL_PREFIX = None`), as in the classic env. Beside a harness that brings its own
`bash` (doors/v1/commands.py) only `execute_code` is offered.

Run as a module (`python -m sandbox_env.doors.v1.toolset`), which is how v1 starts it.
"""

from __future__ import annotations

from typing import Any

import httpx
import verifiers.v1 as vf
from verifiers.v1.utils.decorators import discover_decorated

from sandbox_env.constants import DEFAULTS, tool_call_wait_seconds

# How long a call may wait on the bridge when the rollout's state does not say (the env
# worker sets `bridge_wait_seconds` from its settings: constants.tool_call_wait_seconds, the
# call's wall-clock backstop and slack plus a replacement sandbox); the sandbox side enforces
# the real limit, this only bounds a hung bridge.
FALLBACK_BRIDGE_WAIT_SECONDS = tool_call_wait_seconds(DEFAULTS.timeout_per_command_seconds)


class WebSandboxState(vf.State):
    """Rollout state shared between the task (env worker) and the tool server."""

    bridge_url: str | None = None
    """Loopback address of the env worker's tool bridge (wiped before the trace is saved)."""
    bridge_token: str | None = None
    """This rollout's bearer token for the bridge (wiped before the trace is saved)."""
    bridge_wait_seconds: float | None = None
    """How long one tool call may wait for its answer, derived from the per-command limit."""
    grade: dict[str, Any] | None = None
    """What grading made of the final state: score, reason, checks, metrics, scoring_error."""


class WebSandboxToolsetConfig(vf.SharedToolsetConfig):
    """Where the tool server runs (a subprocess on the host by default; it holds no sandbox), and which tools it offers."""

    bash: bool = True
    """Offer `bash`. The env turns it off for a harness that brings its own `bash` (doors/v1/commands.py): its calls
    run in the same sandbox, and a second tool of the same name would collide with it."""


class WebSandboxToolset(vf.Toolset[WebSandboxToolsetConfig, WebSandboxState]):
    TOOL_PREFIX = None

    def register(self, mcp: Any) -> None:
        """v1's registration of the `@vf.tool` methods, less `bash` when the config turns it off."""
        for fn in discover_decorated(self, "tool"):
            if fn.__name__ == "bash" and not self.config.bash:
                continue
            mcp.add_tool(
                self._with_state(fn),
                name=getattr(fn, "tool_name", None) or fn.__name__,
                description=(fn.__doc__ or "").strip() or None,
            )

    async def _forward(self, tool: str, args: dict[str, Any]) -> str:
        state = self.state
        if not state.bridge_url or not state.bridge_token:
            return "error: this rollout has no sandbox (its setup did not complete)"
        async with httpx.AsyncClient(timeout=state.bridge_wait_seconds or FALLBACK_BRIDGE_WAIT_SECONDS) as client:
            try:
                resp = await client.post(
                    f"{state.bridge_url}/call",
                    json={"tool": tool, "args": args},
                    headers={"Authorization": f"Bearer {state.bridge_token}"},
                )
            except httpx.HTTPError as exc:
                return f"error: the sandbox could not be reached: {exc}"
        body = resp.json()
        if "output" in body:
            return body["output"]
        if "fault" in body:
            return f"error: the sandbox failed ({body['fault']}); the rollout ends here"
        return f"error: {body.get('error', resp.text)}"

    @vf.tool
    async def bash(self, command: str) -> str:
        """Run a bash command in /workspace of the sandbox and return its output and exit code.

        Args:
            command: the shell command to run (bash -c).
        """
        return await self._forward("bash", {"command": command})

    @vf.tool
    async def execute_code(self, code: str) -> str:
        """Run Python code in a persistent session in the sandbox; variables are kept between calls.

        Args:
            code: Python source; prints and the value of a final expression are returned.
        """
        return await self._forward("execute_code", {"code": code})


if __name__ == "__main__":
    WebSandboxToolset.run()
