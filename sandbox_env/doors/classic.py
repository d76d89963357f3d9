"""The classic front door: a vf.SandboxEnv subclass for verifiers 0.3.x, over the rollout core.

One sandbox a rollout from the runtime image, the two tools of rollout/tools.py, and grading in
post_rollout (in fresh sandboxes, on the host's terms). A rollout's sandbox life is a
`Lease` of the rollout core (sandbox_env/rollout/core.py), the same one the v1 front door
uses; this module only translates between it and verifiers 0.3.x (state, tools, errors).
The sandboxes come from websandbox's own backend (sandbox/), not from the hosted client
the parent class builds.

Blame (sandbox_env/sandbox/blame.py) as the rollout sees it:
- A harness fault (no sandbox, a failed setup such as "the Python session did not
  start", a sandbox lost by the harness's doing, a grading fault that a retry did not
  cure) scores 0.0 with `scoring_error` set and `state["error"]` set to `HarnessFault`,
  a `vf.SandboxError` and so a `vf.InfraError`: verifiers' retry (`max_retries`) and
  prime-rl's orchestrator reschedule such a rollout instead of training on it. A rollout
  that stopped on an error is never graded from what it left half done.
- A tool call whose sandbox its own processes ended (`SandboxEndedFromInside`: kill -9 -1,
  a memory or fork bomb, junk written to the agent) returns a tool message that says so,
  and the rollout goes on in a fresh sandbox with the task's starting files (the lease's
  replacement, which also answers a call that was in flight in the old sandbox).
- The rollout's container is removed once its final state is out, before grading asks for
  a grading container, so that a rollout never holds two budget slots at once.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import Any

import verifiers as vf
from verifiers.envs.sandbox_env import SandboxMonitorRubric

from sandbox_env.constants import DEFAULTS, TOOL_NAMES
from sandbox_env.doors.metrics import metric_values
from sandbox_env.doors.replayed_attempts import note_attempt_end, replayed_after
from sandbox_env.doors.system_prompt import SYSTEM_PROMPT, system_prompt_for
from sandbox_env.doors.tool_errors import tool_error_text
from sandbox_env.families.base import METRIC_NAMES, Grade, TaskRow
from sandbox_env.rollout.core import Lease, LeaseError, Rollouts, SandboxSettings
from sandbox_env.rollout.tools import check_tool_args
from sandbox_env.sandbox import SandboxBackend
from sandbox_env.text import described_error

logger = logging.getLogger("websandbox")

__all__ = ["SYSTEM_PROMPT", "WebSandboxClassicEnv", "build_rubric", "score"]

# what update_tool_args adds to a call; the model never sees or sets these
_INJECTED = ("sandbox_id", "sandbox_state")


class HarnessFault(vf.SandboxError):
    """The harness failed, not the model: setup, a sandbox lost by no doing of its own, or grading.

    A `vf.InfraError`, so verifiers' `max_retries` and prime-rl's orchestrator treat the
    rollout as errored and reschedule it; the reward stays 0.0 and `scoring_error` is 1.
    """


def _metric(name: str):
    async def metric(state: vf.State) -> float:
        return metric_values(state.get("grade"), state.get("scoring_error"))[name]

    metric.__name__ = name
    return metric


async def score(state: vf.State) -> float:
    """The reward: what grading made of the final state (0.0 when grading never happened)."""
    return float((state.get("grade") or {}).get("score", 0.0))


async def replayed_after_errors(state: vf.State) -> float:
    """How many errored earlier attempts this rollout replays (doors/replayed_attempts.py)."""
    return float(len((state.get("info") or {}).get("replayed_after") or []))


def build_rubric() -> vf.Rubric:
    rubric = vf.Rubric(funcs=[score], weights=[1.0])
    for name in METRIC_NAMES:
        rubric.add_metric(_metric(name))
    rubric.add_metric(replayed_after_errors)
    rubric.add_cleanup_handler(note_attempt_end)  # in the retrying task: a replay finds what it replays
    return rubric


def _cancelling() -> bool:
    """Whether the running task is being cancelled (the env worker is shutting down)."""
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())


class WebSandboxClassicEnv(vf.SandboxEnv):
    """One container per rollout from the runtime image; graded in fresh containers on the host's terms."""

    def __init__(
        self,
        dataset: Any,
        settings: SandboxSettings,
        max_turns: int = DEFAULTS.max_turns,
        system_prompt: str | None = None,
        **kwargs: Any,
    ) -> None:
        """`settings.image` names the runtime image (load_environment resolves it); `system_prompt` None: the default."""
        if settings.image is None:
            raise ValueError("WebSandboxClassicEnv needs settings.image: build it with `websandbox build-image`")
        # vf.SandboxEnv.__init__ builds a hosted prime-sandboxes client and request that
        # the Docker backend never uses (and that prime-sandboxes may reject), so the
        # grandparent is initialised instead; every SandboxEnv method that would reach the
        # hosted client (setup_state, destroy_sandbox, the teardowns) is overridden below.
        vf.StatefulToolEnv.__init__(
            self,
            tools=[],
            max_turns=max_turns,
            dataset=dataset,
            system_prompt=system_prompt if system_prompt is not None else system_prompt_for(settings),
            rubric=build_rubric(),
            stop_errors=[vf.SandboxError],
            error_formatter=tool_error_text,  # malformed arguments are said to be so (doors/tool_errors.py)
            **kwargs,
        )
        self.add_rubric(SandboxMonitorRubric())
        self.image = settings.image
        self.rollouts = Rollouts(settings)
        self._leases: dict[str, Lease] = {}  # a rollout's key (sandbox_state["lease"]) -> its lease
        self.add_tool(self.bash, args_to_skip=list(_INJECTED))
        self.add_tool(self.execute_code, args_to_skip=list(_INJECTED))
        assert tuple(self.tool_map) == TOOL_NAMES

    @property
    def backend(self) -> SandboxBackend:
        """The sandbox backend the rollouts use."""
        return self.rollouts.sandboxes

    # -- tools ------------------------------------------------------------------------------
    async def _tool(self, name: str, args: dict[str, Any], sandbox_state: dict) -> str:
        lease = self._leases.get(sandbox_state.get("lease", ""))
        if lease is None:
            raise HarnessFault(f"{name}: the rollout has no sandbox (its setup did not complete)")
        try:
            return await lease.call(name, args)
        except LeaseError as exc:
            raise HarnessFault(str(exc)) from exc
        finally:
            _mirror(lease, sandbox_state)

    async def bash(self, command: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run a bash command in /workspace of the sandbox and return its output and exit code.

        Args:
            command: the shell command to run (bash -c).
        """
        return await self._tool("bash", {"command": command}, sandbox_state)

    async def execute_code(self, code: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run Python code in a persistent session in the sandbox; variables are kept between calls.

        Args:
            code: Python source; prints and the value of a final expression are returned.
        """
        return await self._tool("execute_code", {"code": code}, sandbox_state)

    def update_tool_args(
        self, tool_name: str, tool_args: dict[str, Any], messages: vf.Messages, state: vf.State, **kwargs: Any
    ) -> dict[str, Any]:
        # a model that sets an injected name itself gets it replaced: it cannot pick another sandbox
        return {**tool_args, "sandbox_id": _current_sandbox(state), "sandbox_state": state["sandbox_state"]}

    async def call_tool(self, tool_name: str, tool_args: dict, tool_call_id: str, **kwargs: Any):
        """Check the model's arguments first; a ToolArgumentError comes back to the model as the tool's message."""
        check_tool_args(tool_name, {k: v for k, v in tool_args.items() if k not in _INJECTED})
        return await super().call_tool(tool_name, tool_args, tool_call_id, **kwargs)

    @vf.stop
    async def overlong_step(self, state: vf.State) -> bool:
        """Stop at the first step whose prompt and completion pass `max_seq_len` (set_max_seq_len).

        Later steps would call tools and grade on turns a trainer cuts away.
        """
        trajectory = state.get("trajectory") or []
        tokens = trajectory[-1].get("tokens") if trajectory else None
        return bool(self.max_seq_len is not None and tokens and tokens.get("is_truncated"))

    # -- rollout lifecycle ---------------------------------------------------------------------
    async def setup_state(self, state: vf.State, **kwargs: Any) -> vf.State:
        """Take a ready sandbox for the rollout and lay out the task in it; any failure is a harness fault."""
        earlier = replayed_after(state)
        if earlier:  # this attempt replays errored ones: say so in the saved row
            state["info"]["replayed_after"] = earlier
        task = TaskRow.from_info(state["info"])
        key = uuid.uuid4().hex
        sandbox_state = {
            "ready": False,
            "ready_wait_time": 0.0,
            "command_execution_times": [],
            "replaced": 0,
            "info": state["info"],
            "lease": key,
        }
        state["sandbox_state"] = sandbox_state
        t0 = asyncio.get_running_loop().time()
        try:
            lease = await self.rollouts.open(task)
        except LeaseError as exc:
            raise HarnessFault(str(exc)) from exc
        self._leases[key] = lease
        sandbox_state["command_execution_times"] = lease.command_seconds  # one list: the monitor rubric reads it
        _mirror(lease, sandbox_state)
        state["sandbox_id"] = lease.sid
        sandbox_state["ready_wait_time"] = asyncio.get_running_loop().time() - t0
        sandbox_state["ready"] = True
        return await vf.StatefulToolEnv.setup_state(self, state, **kwargs)

    async def _release_sandbox(self, state: vf.State) -> None:
        """Remove the rollout's sandbox (once; later calls do nothing)."""
        sandbox_state = state.get("sandbox_state") or {}
        lease = self._leases.pop(sandbox_state.get("lease", ""), None)
        if lease is not None:
            await lease.release()
            sandbox_state["removed"] = True

    async def _grade(self, state: vf.State, task: TaskRow) -> Grade:
        error = state.get("error")
        infra = _infra_cause(error)
        sandbox_state = state.get("sandbox_state") or {}
        lease = self._leases.get(sandbox_state.get("lease", ""))
        if infra is not None:  # e.g. a HarnessFault from a tool, which verifiers wraps in a ToolCallError
            reason = f"the rollout stopped on a harness error: {infra}"
            ready = lease is not None and sandbox_state.get("ready")  # after setup: the model's code may have run
            return lease.harness_fault(reason) if ready else Grade.harness_fault(reason)
        if error is not None:
            return Grade(0.0, f"not graded: the rollout stopped on an error ({described_error(error)})")
        if _cancelling():
            return Grade.harness_fault("the rollout was cancelled before it was graded (the run is shutting down)")
        if lease is None or not sandbox_state.get("ready"):
            return Grade.harness_fault("the sandbox never became ready")
        return await lease.finish()  # collect, release (one budget slot at a time), grade

    async def post_rollout(self, state: vf.State) -> None:
        """Take the final state out of the rollout container and grade it in fresh ones."""
        task = TaskRow.from_info(state["info"])
        grade = await self._grade(state, task)
        state["grade"] = grade.to_dict()
        if grade.scoring_error:
            state["scoring_error"] = grade.scoring_error
            if not isinstance(state.get("error"), vf.InfraError):  # retryable as such, not wrapped
                fault = HarnessFault(grade.scoring_error)
                fault.__cause__ = state.get("error")
                state["error"] = fault
        logger.info("graded %s: score %.3f (%s)", task.task_id, grade.score, grade.reason)

    @vf.cleanup
    async def destroy_sandbox(self, state: vf.State) -> None:
        """Grade, then remove the rollout's sandbox (the parent's version needs the hosted API)."""
        try:
            await self.post_rollout(state)
        finally:
            await self._release_sandbox(state)

    @vf.teardown
    async def teardown_sandboxes(self) -> None:
        """Remove every sandbox this env's backend made (pools included)."""
        self.rollouts.teardown()

    @vf.teardown
    async def teardown_sandbox_client(self) -> None:
        """Nothing more to close: the backend's teardown removed everything (no hosted client exists)."""


def _mirror(lease: Lease, sandbox_state: dict) -> None:
    """What the lease knows that tests and the monitor rubric read from the rollout's state."""
    sandbox_state["sandbox_id"] = lease.sid
    sandbox_state["replaced"] = lease.replaced


def _current_sandbox(state: vf.State) -> str | None:
    """The rollout's sandbox id, following a replacement made by a tool call (kept in state["sandbox_id"])."""
    sid = (state.get("sandbox_state") or {}).get("sandbox_id") or state.get("sandbox_id")
    if sid is not None:
        state["sandbox_id"] = sid
    return sid


def _infra_cause(error: BaseException | None) -> BaseException | None:
    """The harness error in `error`'s chain of causes, if there is one."""
    seen = set()
    while error is not None and id(error) not in seen:
        if isinstance(error, vf.InfraError):
            return error
        seen.add(id(error))
        error = error.__cause__ or error.__context__
    return None
