"""The classic front door: a vf.SandboxEnv subclass for verifiers 0.3.x.

One sandbox a rollout from the runtime image, the two tools of tools.py, and grading in
post_rollout (in fresh sandboxes, on the host's terms). The sandboxes come from
websandbox's own backend (sandbox/), not from the hosted client the parent class builds.
"""

from __future__ import annotations

import logging
import time
from typing import Any

import verifiers as vf
from verifiers.envs.sandbox_env import SandboxMonitorRubric

from sandbox_env.constants import DEFAULTS, TOOL_NAMES
from sandbox_env.families import get_family, grade_final
from sandbox_env.families.base import METRIC_NAMES, Grade, TaskRow
from sandbox_env.grading import Grader
from sandbox_env.sandbox import Limits, Sandbox, SandboxBackend
from sandbox_env.sandbox.docker import DockerBackend
from sandbox_env.system_prompt import SYSTEM_PROMPT
from sandbox_env.tools import check_tool_args, run_bash, run_code

logger = logging.getLogger("websandbox")

__all__ = ["SYSTEM_PROMPT", "WebSandboxEnv", "build_rubric", "score"]

# what update_tool_args adds to a call; the model never sees or sets these
_INJECTED = ("sandbox_id", "sandbox_state")


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


def make_backend(backend: str, limits: Limits) -> SandboxBackend:
    if backend != "docker":
        raise ValueError(f"backend {backend!r} is not supported here; use backend='docker'")
    return DockerBackend(limits)


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
        max_turns: int = DEFAULTS.max_turns,
        system_prompt: str = SYSTEM_PROMPT,
        **kwargs: Any,
    ) -> None:
        # vf.SandboxEnv.__init__ builds a hosted prime-sandboxes client and request that
        # the Docker backend never uses (and that prime-sandboxes may reject), so the
        # grandparent is initialised instead; every SandboxEnv method that would reach the
        # hosted client (setup_state, destroy_sandbox, the teardowns) is overridden below.
        vf.StatefulToolEnv.__init__(
            self, tools=[], max_turns=max_turns, dataset=dataset, system_prompt=system_prompt,
            rubric=build_rubric(), stop_errors=[vf.SandboxError], error_formatter=lambda e: f"Error: {e}", **kwargs,
        )  # fmt: skip
        self.add_rubric(SandboxMonitorRubric())
        self.image = image
        self.timeout_per_command_seconds = timeout_per_command_seconds
        self.output_cap = output_cap
        self.backend = make_backend(backend, limits or Limits())
        self.backend.keep_warm(image, pool_size)
        self.grader = Grader(self.backend, image, timeout=grading_timeout_seconds,
                             prewarm=max(1, pool_size // 2) if pool_size > 0 else 0)  # fmt: skip
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

    async def bash(self, command: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run a bash command in /workspace of the sandbox and return its output and exit code.

        Args:
            command: the shell command to run (bash -c).
        """
        try:
            sb = self._sandbox(sandbox_id)
            return await self._timed(sandbox_state, run_bash(sb, command, self.timeout_per_command_seconds, self.output_cap))
        except Exception as exc:
            raise vf.SandboxError(f"bash failed in the sandbox: {exc}") from exc

    async def execute_code(self, code: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run Python code in a persistent session in the sandbox; variables are kept between calls.

        Args:
            code: Python source; prints and the value of a final expression are returned.
        """
        try:
            sb = self._sandbox(sandbox_id)
            return await self._timed(sandbox_state, run_code(sb, code, self.timeout_per_command_seconds, self.output_cap))
        except Exception as exc:
            raise vf.SandboxError(f"execute_code failed in the sandbox: {exc}") from exc

    def update_tool_args(self, tool_name: str, tool_args: dict[str, Any], messages: vf.Messages,
                         state: vf.State, **kwargs: Any) -> dict[str, Any]:  # fmt: skip
        # a model that sets an injected name itself gets it replaced: it cannot pick another sandbox
        return {**tool_args, "sandbox_id": state["sandbox_id"], "sandbox_state": state["sandbox_state"]}

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
        """Take a ready sandbox for the rollout and lay out the task in it."""
        task = TaskRow.from_info(state["info"])
        t0 = time.perf_counter()
        try:
            sid = await self.backend.acquire(self.image)
        except Exception as exc:
            raise vf.SandboxError(f"no sandbox for task {task.task_id}: {exc}") from exc
        state["sandbox_id"] = sid
        state["sandbox_state"] = {"ready": True, "ready_wait_time": time.perf_counter() - t0, "command_execution_times": []}
        try:
            await get_family(task.family).setup(self._sandbox(sid), task)
        except Exception as exc:
            raise vf.SandboxError(f"setting up task {task.task_id} failed: {exc}") from exc
        return await vf.StatefulToolEnv.setup_state(self, state, **kwargs)

    async def post_rollout(self, state: vf.State) -> None:
        """Take the final state out of the rollout container and grade it in fresh ones."""
        task = TaskRow.from_info(state["info"])
        sid = state.get("sandbox_id")
        if sid is None or not (state.get("sandbox_state") or {}).get("ready"):
            err = state.get("error")
            grade = Grade.harness_fault(f"the sandbox never became ready{': ' + str(err) if err else ''}")
        else:
            try:
                final = await get_family(task.family).collect(self._sandbox(sid), task)
            except Exception as exc:  # noqa: BLE001 - a harness fault is a grade, not a crash
                grade = Grade.harness_fault(f"could not take the final state out of the sandbox: {exc}")
            else:
                grade = await grade_final(task, final, self.grader)
        state["grade"] = grade.to_dict()
        if grade.scoring_error:
            state["scoring_error"] = grade.scoring_error
        logger.info("graded %s: score %.3f (%s)", task.task_id, grade.score, grade.reason)

    @vf.cleanup
    async def destroy_sandbox(self, state: vf.State) -> None:
        """Grade, then remove the rollout's sandbox (the parent's version needs the hosted API)."""
        await self.post_rollout(state)
        sid = state.get("sandbox_id")
        if sid is None:
            return
        try:
            await self.backend.delete(sid)
        except Exception as exc:  # noqa: BLE001 - teardown and gc remove what this misses
            logger.warning("could not remove sandbox %s: %s", sid, exc)

    @vf.teardown
    async def teardown_sandboxes(self) -> None:
        """Remove every sandbox this env's backend made."""
        self.backend.teardown()

    @vf.teardown
    async def teardown_sandbox_client(self) -> None:
        """Nothing more to close: the backend's teardown removed everything (no hosted client exists)."""
