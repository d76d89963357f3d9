"""The classic front door: a vf.SandboxEnv subclass for verifiers 0.3.x.

One sandbox a rollout from the runtime image, the two tools of tools.py, and grading in
post_rollout (in fresh sandboxes, on the host's terms). The sandboxes come from
websandbox's own backend (sandbox/), not from the hosted client the parent class builds.

Blame (sandbox_env/blame.py) as the rollout sees it:
- A harness fault (no sandbox, a failed setup such as "the Python session did not
  start", a sandbox lost by the harness's doing, a grading fault that a retry did not
  cure) scores 0.0 with `scoring_error` set and `state["error"]` set to `HarnessFault`,
  a `vf.SandboxError` and so a `vf.InfraError`: verifiers' retry (`max_retries`) and
  prime-rl's orchestrator reschedule such a rollout instead of training on it. A rollout
  that stopped on an error is never graded from what it left half done.
- A tool call whose sandbox its own processes ended (`SandboxEndedFromInside`: kill -9 -1,
  a memory or fork bomb, junk written to the agent) returns a tool message that says so,
  and the rollout goes on in a fresh sandbox with the task's starting files.
- The rollout's container is removed once its final state is out, before grading asks for
  a grading container, so that a rollout never holds two budget slots at once.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import verifiers as vf
from verifiers.envs.sandbox_env import SandboxMonitorRubric

from sandbox_env.constants import DEFAULTS, TOOL_NAMES
from sandbox_env.families import ended_before_collect, get_family, grade_final
from sandbox_env.families.base import METRIC_NAMES, Grade, TaskRow
from sandbox_env.grading import Grader
from sandbox_env.sandbox import Limits, Sandbox, SandboxBackend, SandboxEndedFromInside
from sandbox_env.sandbox.docker import DockerBackend
from sandbox_env.system_prompt import SYSTEM_PROMPT
from sandbox_env.text import described_error
from sandbox_env.tools import check_tool_args, run_bash, run_code, sandbox_replaced_message

logger = logging.getLogger("websandbox")

__all__ = ["SYSTEM_PROMPT", "WebSandboxEnv", "build_rubric", "score"]

# what update_tool_args adds to a call; the model never sees or sets these
_INJECTED = ("sandbox_id", "sandbox_state")


class HarnessFault(vf.SandboxError):
    """The harness failed, not the model: setup, a sandbox lost by no doing of its own, or grading.

    A `vf.InfraError`, so verifiers' `max_retries` and prime-rl's orchestrator treat the
    rollout as errored and reschedule it; the reward stays 0.0 and `scoring_error` is 1.
    """


def _metric(name: str):
    async def metric(state: vf.State) -> float:
        grade = state.get("grade") or {}
        if name == "scoring_error":
            return float(bool(grade.get("scoring_error") or state.get("scoring_error")))
        if name == "tampered":
            return float(bool(grade.get("tampered")))
        return float((grade.get("metrics") or {}).get(name, 0.0))

    metric.__name__ = name
    return metric


async def score(state: vf.State) -> float:
    """The reward: what grading made of the final state (0.0 when grading never happened)."""
    return float((state.get("grade") or {}).get("score", 0.0))


def build_rubric() -> vf.Rubric:
    rubric = vf.Rubric(funcs=[score], weights=[1.0])
    for name in METRIC_NAMES:
        rubric.add_metric(_metric(name))
    return rubric


def make_backend(backend: str, limits: Limits, max_sandboxes: int | None = None) -> SandboxBackend:
    if backend != "docker":
        raise ValueError(f"backend {backend!r} is not supported here; use backend='docker'")
    return DockerBackend(limits, max_sandboxes=max_sandboxes)


def _cancelling() -> bool:
    """Whether the running task is being cancelled (the env worker is shutting down)."""
    task = asyncio.current_task()
    return bool(task is not None and task.cancelling())


class WebSandboxEnv(vf.SandboxEnv):
    """One container per rollout from the runtime image; graded in fresh containers on the host's terms."""

    def __init__(
        self,
        dataset: Any,
        image: str,
        backend: str = "docker",
        limits: Limits | None = None,
        timeout_per_command_seconds: float = DEFAULTS.timeout_per_command_seconds,
        grading_timeout_seconds: float = DEFAULTS.timeout_seconds,
        output_cap: int = DEFAULTS.output_cap,
        pool_size: int = 0,
        max_sandboxes: int | None = None,
        max_turns: int = DEFAULTS.max_turns,
        system_prompt: str = SYSTEM_PROMPT,
        **kwargs: Any,
    ) -> None:
        # vf.SandboxEnv.__init__ builds a hosted prime-sandboxes client and request that
        # the Docker backend never uses (and that prime-sandboxes may reject), so the
        # grandparent is initialised instead; every SandboxEnv method that would reach the
        # hosted client (setup_state, destroy_sandbox, the teardowns) is overridden below.
        vf.StatefulToolEnv.__init__(
            self,
            tools=[],
            max_turns=max_turns,
            dataset=dataset,
            system_prompt=system_prompt,
            rubric=build_rubric(),
            stop_errors=[vf.SandboxError],
            error_formatter=lambda e: f"Error: {e}",
            **kwargs,
        )
        self.add_rubric(SandboxMonitorRubric())
        self.image = image
        self.timeout_per_command_seconds = timeout_per_command_seconds
        self.output_cap = output_cap
        self.backend = make_backend(backend, limits or Limits(), max_sandboxes)
        self.backend.keep_warm(image, pool_size)
        self.grader = Grader(
            self.backend, image, timeout=grading_timeout_seconds, prewarm=max(1, pool_size // 2) if pool_size > 0 else 0
        )
        self.add_tool(self.bash, args_to_skip=list(_INJECTED))
        self.add_tool(self.execute_code, args_to_skip=list(_INJECTED))
        assert tuple(self.tool_map) == TOOL_NAMES

    # -- tools ------------------------------------------------------------------------------
    def _sandbox(self, sandbox_id: str) -> Sandbox:
        return Sandbox(self.backend, sandbox_id)

    async def _timed(self, sandbox_state: dict, run) -> str:
        t0 = time.perf_counter()
        try:
            return await run
        finally:
            sandbox_state["command_execution_times"].append(time.perf_counter() - t0)

    async def _tool(self, name: str, sandbox_id: str, sandbox_state: dict, run) -> str:
        sid = sandbox_state.get("sandbox_id") or sandbox_id  # the current one, after any replacement
        try:
            return await self._timed(sandbox_state, run(self._sandbox(sid)))
        except SandboxEndedFromInside as exc:
            return await self._replace_sandbox(sandbox_state, sid, exc.evidence)
        except Exception as exc:
            raise HarnessFault(f"{name} failed in the sandbox: {exc}") from exc

    async def _replace_sandbox(self, sandbox_state: dict, old: str, evidence: str) -> str:
        """The model's own processes ended its sandbox: a fresh one, set up like the first, and a message."""
        self.backend.delete_later(old)
        task = TaskRow.from_info(sandbox_state["info"])
        new = None
        try:
            new = await self.backend.acquire(self.image)
            await get_family(task.family).setup(self._sandbox(new), task)
        except Exception as exc:
            if new is not None:
                self.backend.delete_later(new)
            raise HarnessFault(f"the sandbox was ended from inside ({evidence}) and no fresh one could be set up: {exc}") from exc
        sandbox_state["sandbox_id"] = new
        sandbox_state["replaced"] = sandbox_state.get("replaced", 0) + 1
        logger.info("task %s: sandbox replaced after it was ended from inside (%s)", task.task_id, evidence)
        return sandbox_replaced_message(evidence)

    async def bash(self, command: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run a bash command in /workspace of the sandbox and return its output and exit code.

        Args:
            command: the shell command to run (bash -c).
        """
        run = lambda sb: run_bash(sb, command, self.timeout_per_command_seconds, self.output_cap)  # noqa: E731
        return await self._tool("bash", sandbox_id, sandbox_state, run)

    async def execute_code(self, code: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run Python code in a persistent session in the sandbox; variables are kept between calls.

        Args:
            code: Python source; prints and the value of a final expression are returned.
        """
        run = lambda sb: run_code(sb, code, self.timeout_per_command_seconds, self.output_cap)  # noqa: E731
        return await self._tool("execute_code", sandbox_id, sandbox_state, run)

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
        task = TaskRow.from_info(state["info"])
        sandbox_state = {
            "ready": False,
            "ready_wait_time": 0.0,
            "command_execution_times": [],
            "replaced": 0,
            "info": state["info"],
        }
        state["sandbox_state"] = sandbox_state
        t0 = time.perf_counter()
        try:
            sid = await self.backend.acquire(self.image)
        except Exception as exc:
            raise HarnessFault(f"no sandbox for task {task.task_id}: {exc}") from exc
        state["sandbox_id"] = sandbox_state["sandbox_id"] = sid
        sandbox_state["ready_wait_time"] = time.perf_counter() - t0
        try:
            await get_family(task.family).setup(self._sandbox(sid), task)
        except Exception as exc:
            raise HarnessFault(f"setting up task {task.task_id} failed: {exc}") from exc
        sandbox_state["ready"] = True
        return await vf.StatefulToolEnv.setup_state(self, state, **kwargs)

    async def _release_sandbox(self, state: vf.State) -> None:
        """Remove the rollout's sandbox (once; later calls do nothing)."""
        sid = _current_sandbox(state)
        sandbox_state = state.get("sandbox_state") or {}
        if sid is None or sandbox_state.get("removed"):
            return
        sandbox_state["removed"] = True
        try:
            await self.backend.delete(sid)
        except Exception as exc:  # noqa: BLE001 - teardown, the reaper and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", sid, exc)

    async def _grade(self, state: vf.State, task: TaskRow) -> Grade:
        error = state.get("error")
        infra = _infra_cause(error)
        if infra is not None:  # e.g. a HarnessFault from a tool, which verifiers wraps in a ToolCallError
            return Grade.harness_fault(f"the rollout stopped on a harness error: {infra}")
        if error is not None:
            return Grade(0.0, f"not graded: the rollout stopped on an error ({described_error(error)})")
        if _cancelling():
            return Grade.harness_fault("the rollout was cancelled before it was graded (the run is shutting down)")
        sid = _current_sandbox(state)
        if sid is None or not (state.get("sandbox_state") or {}).get("ready"):
            return Grade.harness_fault("the sandbox never became ready")
        try:
            final = await get_family(task.family).collect(self._sandbox(sid), task)
        except SandboxEndedFromInside as exc:
            return ended_before_collect(exc.evidence)
        except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
            return Grade.harness_fault(f"could not take the final state out of the sandbox: {exc}")
        await self._release_sandbox(state)  # before grading: a rollout holds one budget slot at a time
        return await grade_final(task, final, self.grader)

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
        self.backend.teardown()

    @vf.teardown
    async def teardown_sandbox_client(self) -> None:
        """Nothing more to close: the backend's teardown removed everything (no hosted client exists)."""


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
