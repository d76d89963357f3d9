"""Agents as harnesses: a v1 harness that runs commands itself has them run in the rollout's sandbox.

verifiers v1 lets a harness bring its own loop and its own tools (its `bash` harness:
`bash` and `edit`, executed by its chat program with `subprocess` wherever v1's runtime
put that program; external agents likewise). Left alone, those commands would run on the
host (the `subprocess` runtime) or in a container of v1's own, never in the sandbox that
websandbox grades. websandbox runs them in that sandbox instead, through v1's tool gate:

- A harness that declares `SUPPORTS_TOOL_INTERCEPTION` asks the rollout's `/tool` gate
  before it executes each tool call, and executes it only when the gate allows it. When
  the task has a request interceptor, v1 hands the harness that gate and, as each model
  turn commits (before the harness sees it), runs the interceptor over every tool call of
  the turn, in order, with an empty result in its place (`RolloutSession.gate_tool_calls`).
  A result the interceptor puts there becomes the call's verdict: the gate denies the
  call and the harness records that result as the call's output.
- `WebSandboxTask.run_harness_commands` (taskset.py) is that interceptor. For a seat whose
  harness runs commands (`EXECUTES_CODE`), every call is run here, in the rollout's
  websandbox sandbox, through the one rollout lifecycle (`Lease.call` of
  sandbox_env/rollout/core.py): `bash` as the unprivileged user in /workspace, with the
  per-call time limit, the output cap and the blame of the tool-calling door; `edit`
  (path, old_str, new_str: verifiers' single-occurrence replacement, with its messages)
  as a small Python program run the same way; `execute_code` in the persistent session.
  Any other tool is answered with an error naming these. The harness then executes
  nothing itself; its loop (and the model's calls) run where v1 runs it, the commands
  where the graded state lives. Grading is the taskset's `finalize`, unchanged: the same
  deliverables out of the same sandbox, the same grader in fresh grading sandboxes.
- The taskset's own MCP tool `bash` is not offered to such a harness (its own `bash`
  would collide with it, and both would run in the same place); `execute_code` is, so
  that the `orm` family's deliverable (the session's `result`) can be made.
- A harness that runs commands but never asks the gate is refused when the env is built:
  its commands could not be kept out of the host, nor in the graded sandbox. (Run by
  another env, such a harness gets no further: v1 ends a rollout whose call the
  interceptor answered when the harness has no gate to deny it.)

Threat model: the model's tool calls are untrusted and the policy may have read this
source. Fail closed: for a command-running seat the interceptor never leaves a call
without a verdict (a verdict equal to the empty placeholder would let the harness run
the call itself, so an empty output becomes "(no output)"), a rollout without a sandbox
gets an error verdict, and an interceptor that raises makes v1 fail the turn before the
harness sees it. The gate's verdicts come from the env worker; the harness's gate
request is authenticated by v1 per rollout. v1 itself fails a rollout whose harness ran
a call the gate blocked without asking (`RolloutSession.pin_tool_results`). Arguments
reach the sandbox as data (JSON, base64 on an argv), never spliced into shell text.

On v1's `subprocess` runtime the harness's PEP 723 chat program runs with this
interpreter (doors/v1/harness.py, `LocalScripts`), so nothing is resolved or downloaded.
"""

from __future__ import annotations

import base64
import functools
import json
import shlex
from typing import TYPE_CHECKING, Any

from sandbox_env.rollout.core import LeaseError
from sandbox_env.rollout.tools import ToolArgumentError

if TYPE_CHECKING:
    import verifiers.v1 as vf

    from sandbox_env.rollout.core import Lease

# The tools a command-running harness may call here, with the arguments each takes.
HARNESS_TOOLS: dict[str, tuple[str, ...]] = {
    "bash": ("command",),
    "edit": ("path", "old_str", "new_str"),
    "execute_code": ("code",),
}

# verifiers' `edit` (harnesses/utils/core.py `run_edit`), run in the sandbox as the model's user.
_EDIT_PROGRAM = r"""
import base64, json, pathlib, sys
a = json.loads(base64.b64decode(sys.argv[1]))
path, old, new = a.get("path"), a.get("old_str"), a.get("new_str")
def main():
    if not isinstance(path, str) or not path:
        return "error: 'path' is required"
    if not isinstance(old, str) or not isinstance(new, str):
        return "error: 'old_str' and 'new_str' must be strings"
    if not old:
        return "error: 'old_str' must be a non-empty string"
    f = pathlib.Path(path)
    if not f.is_absolute():
        f = pathlib.Path.cwd() / f
    if not f.exists():
        return f"error: {path} not found"
    try:
        text = f.read_text()
    except Exception as e:
        return f"error: could not read {path}: {e}"
    n = text.count(old)
    if n != 1:
        return f"error: old_str must appear exactly once in {path} (found {n})"
    try:
        f.write_text(text.replace(old, new, 1))
    except Exception as e:
        return f"error: could not write {path}: {e}"
    return f"Edited {path}"
print(main())
"""


@functools.cache
def runs_commands(harness_id: str) -> bool:
    """Whether the harness of this id executes tool calls itself (v1's `EXECUTES_CODE`)."""
    from verifiers.v1.utils.loaders import harness_class

    return bool(harness_class(harness_id).EXECUTES_CODE)


def check_harness(role: str, harness_id: str) -> bool:
    """Whether the seat's harness runs its own commands (then they are routed here); refuses one that cannot be routed."""
    from verifiers.v1.utils.loaders import harness_class

    cls = harness_class(harness_id)
    if not cls.EXECUTES_CODE:
        return False
    if not cls.SUPPORTS_TOOL_INTERCEPTION:
        raise ValueError(
            f"--env.{role}.harness.id {harness_id}: that harness runs commands itself and never asks v1's tool gate "
            "first, so websandbox cannot run them in the rollout's graded sandbox (they would run on this host or in "
            "a container of the runtime's own). Use a harness that declares SUPPORTS_TOOL_INTERCEPTION (verifiers' "
            "`bash`), or websandbox's default harness, 'websandbox'."
        )
    return True


def seat_runs_commands(trace: vf.Trace) -> bool:
    """Whether the trace's seat is played by a harness that runs its own commands."""
    agent = trace.agent
    harness = agent.config.harness if agent is not None else None
    return harness is not None and runs_commands(harness.id)


def _edit_command(args: dict[str, Any]) -> str:
    payload = base64.b64encode(json.dumps(args).encode()).decode()
    return f"python3 -c {shlex.quote(_EDIT_PROGRAM)} {payload}"


def _bad_arguments(name: str, args: dict[str, Any]) -> str | None:
    spec = HARNESS_TOOLS[name]
    usage = ", ".join(f"{k} (string)" for k in spec)
    extra = sorted(set(args) - set(spec))
    if extra:
        return f"error: {name} got unexpected argument(s) {', '.join(map(repr, extra))}; it takes: {usage}"
    missing = [k for k in spec if k not in args]
    if missing:
        return f"error: {name} is missing required argument(s) {', '.join(map(repr, missing))}; it takes: {usage}"
    wrong = [k for k in spec if not isinstance(args[k], str)]
    if wrong:
        return f"error: {name}: {wrong[0]!r} must be a string, got {type(args[wrong[0]]).__name__}"
    return None


async def run_call(lease: Lease | None, name: str | None, arguments: str | None) -> str:
    """One tool call of a command-running harness, run in the rollout's sandbox; the text the model gets back."""
    if lease is None:
        return "error: this rollout has no sandbox (its setup did not complete)"
    if name not in HARNESS_TOOLS:
        return f"error: tool {name!r} does not run in this sandbox; the tools here are: {', '.join(HARNESS_TOOLS)}"
    try:
        args = json.loads(arguments or "{}")
    except json.JSONDecodeError as exc:
        return f"error: the tool arguments were not valid JSON ({exc}); resend the call with valid JSON"
    if not isinstance(args, dict):
        return f"error: tool arguments must be a JSON object, got {type(args).__name__}; resend as an object"
    bad = _bad_arguments(name, args)
    if bad:
        return bad
    try:
        if name == "edit":
            output = await lease.call("bash", {"command": _edit_command(args)})
        else:
            output = await lease.call(name, args)
    except LeaseError as exc:  # the tool-calling door's words; the task's stop ends the rollout before its next turn
        return f"error: the sandbox failed ({exc}); the rollout ends here"
    except ToolArgumentError as exc:
        return f"error: bad tool request: {exc}"
    return output or "(no output)"


def placeholder(request: vf.Request) -> tuple[Any, str | None, str | None] | None:
    """The empty result v1 put in the place of a call it asks about (the request's last message), with that call's name
    and arguments; None when the last message is no such placeholder."""
    import verifiers.v1 as vf

    probe = request.messages[-1] if request.messages else None
    if not isinstance(probe, vf.ToolMessage) or probe.content != "":
        return None
    assistant = request.messages[-2] if len(request.messages) > 1 else None
    calls = assistant.tool_calls or [] if isinstance(assistant, vf.AssistantMessage) else []
    for call in calls:
        if call.id == probe.tool_call_id:
            return probe, call.name, call.arguments
    return probe, probe.name, None  # fail closed: answered with an error below, never left for the harness to run


async def run_harness_call(request: vf.Request, lease: Lease | None) -> vf.Request | None:
    """The request with its placeholder replaced by the call's output from the sandbox; None when there is none."""
    found = placeholder(request)
    if found is None:
        return None
    probe, name, arguments = found
    if arguments is None:
        output = f"error: the call {probe.tool_call_id!r} was not found in the turn before it; it was not run"
    else:
        output = await run_call(lease, name, arguments)
    answered = probe.model_copy(update={"content": output})
    return request.model_copy(update={"messages": [*request.messages[:-1], answered]})
