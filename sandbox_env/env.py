"""The vf.SandboxEnv subclass: one Docker sandbox a rollout, two tools, grading in post_rollout."""

from __future__ import annotations

import logging
import time
from typing import Any

import tenacity as tc
import verifiers as vf
from prime_sandboxes import CreateSandboxRequest
from verifiers.envs.sandbox_env import SandboxMonitorRubric

from sandbox_env.families import get_family
from sandbox_env.families.base import METRIC_NAMES, Grade, TaskRow
from sandbox_env.grading import Grader
from sandbox_env.rollout import grade_final
from sandbox_env.sandbox.docker_backend import DockerSandboxClient, Limits
from sandbox_env.sandbox.handle import Sandbox
from sandbox_env.system_prompt import SYSTEM_PROMPT
from sandbox_env.tools import DEFAULT_OUTPUT_CAP, run_bash, run_code

logger = logging.getLogger("websandbox")

_PUBLIC_ARGS = {"bash": {"command": str}, "execute_code": {"code": str}}


class ToolArgumentError(ValueError):
    """A tool call whose arguments do not match the tool's schema."""


def check_tool_args(tool_name: str, args: dict[str, Any]) -> None:
    """Reject missing, extra or mistyped arguments with a message the model can act on."""
    if tool_name not in _PUBLIC_ARGS:
        raise ToolArgumentError(f"unknown tool {tool_name!r}; the tools are: {', '.join(_PUBLIC_ARGS)}")
    spec = _PUBLIC_ARGS[tool_name]
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


class WebSandboxEnv(vf.SandboxEnv):
    """One container per rollout from the runtime image; graded in fresh containers on the host's terms."""

    def __init__(
        self,
        dataset: Any,
        image: str,
        backend: str = "docker",
        limits: Limits | None = None,
        timeout_per_command_seconds: float = 30,
        grading_timeout_seconds: float = 90,
        output_cap: int = DEFAULT_OUTPUT_CAP,
        pool_size: int = 0,
        max_turns: int = 20,
        system_prompt: str = SYSTEM_PROMPT,
        **kwargs: Any,
    ) -> None:
        if backend != "docker":
            raise ValueError(f"backend {backend!r} is not supported here; use backend='docker'")
        # vf.SandboxEnv.__init__ builds a prime CreateSandboxRequest that the pinned
        # prime-sandboxes rejects, so the parent's parent is initialised instead and the
        # attributes SandboxEnv's methods use are set here.
        vf.StatefulToolEnv.__init__(
            self, tools=[], max_turns=max_turns, dataset=dataset, system_prompt=system_prompt,
            rubric=build_rubric(), stop_errors=[vf.SandboxError], **kwargs,
        )  # fmt: skip
        self.add_rubric(SandboxMonitorRubric())
        self.image = image
        self.limits = limits or Limits()
        self.timeout_per_command_seconds = timeout_per_command_seconds
        self.output_cap = output_cap
        self.sandbox_client = DockerSandboxClient(self.limits)
        self.sandbox_client.enable_pool(image, pool_size)
        self.grader = Grader(self.sandbox_client, image, timeout=grading_timeout_seconds,
                             prewarm=max(1, pool_size // 2) if pool_size > 0 else 0)  # fmt: skip
        # The Docker client reads only the image, environment and labels. No start_command
        # or vm: prime-sandboxes releases disagree on their types, and this request then
        # validates under every release from 0.2.42 to 0.5.x.
        self.sandbox_request = CreateSandboxRequest(
            name="websandbox", docker_image=image,
            cpu_cores=self.limits.cpus, memory_gb=self.limits.memory_mb / 1024, labels=["websandbox"],
        )  # fmt: skip
        self.active_sandboxes: set[str] = set()
        self.with_retry = tc.AsyncRetrying(stop=tc.stop_after_attempt(1), reraise=True).wraps
        self.add_tool(self.bash, args_to_skip=["sandbox_id", "sandbox_state", "working_dir"])
        self.add_tool(self.execute_code, args_to_skip=["sandbox_id", "sandbox_state"])

    # -- tools ------------------------------------------------------------------
    def _sandbox(self, sandbox_id: str) -> Sandbox:
        return Sandbox(self.sandbox_client, sandbox_id)

    async def bash(self, command: str, sandbox_id: str, sandbox_state: dict, working_dir: str | None = None) -> str:
        """Run a bash command in /workspace of the sandbox and return its output and exit code.

        Args:
            command: the shell command to run (bash -c).
        """
        if not sandbox_state["ready"]:
            await self._wait_for_sandbox_ready(sandbox_state, sandbox_id)
        t0 = time.perf_counter()
        try:
            return await run_bash(self._sandbox(sandbox_id), command, self.timeout_per_command_seconds, self.output_cap)
        except Exception as exc:
            raise vf.SandboxError(f"bash failed in the sandbox: {exc}") from exc
        finally:
            sandbox_state["command_execution_times"].append(time.perf_counter() - t0)

    async def execute_code(self, code: str, sandbox_id: str, sandbox_state: dict) -> str:
        """Run Python code in a persistent session in the sandbox; variables are kept between calls.

        Args:
            code: Python source; prints and the value of a final expression are returned.
        """
        if not sandbox_state["ready"]:
            await self._wait_for_sandbox_ready(sandbox_state, sandbox_id)
        t0 = time.perf_counter()
        try:
            return await run_code(self._sandbox(sandbox_id), code, self.timeout_per_command_seconds, self.output_cap)
        except Exception as exc:
            raise vf.SandboxError(f"execute_code failed in the sandbox: {exc}") from exc
        finally:
            sandbox_state["command_execution_times"].append(time.perf_counter() - t0)

    def update_tool_args(self, tool_name: str, tool_args: dict[str, Any], messages: vf.Messages,
                         state: vf.State, **kwargs: Any) -> dict[str, Any]:  # fmt: skip
        try:
            check_tool_args(tool_name, tool_args)
        except ToolArgumentError as exc:
            return {"__invalid__": str(exc)}
        args = dict(tool_args)
        args["sandbox_id"] = state["sandbox_id"]
        args["sandbox_state"] = state["sandbox_state"]
        if tool_name == "bash":
            args["working_dir"] = None
        return args

    async def call_tool(self, tool_name: str, tool_args: dict, tool_call_id: str, **kwargs: Any):
        if "__invalid__" in tool_args:
            from verifiers.types import ToolMessage

            return ToolMessage(role="tool", content=f"Error: {tool_args['__invalid__']}", tool_call_id=tool_call_id)
        return await super().call_tool(tool_name, tool_args, tool_call_id, **kwargs)

    @vf.stop
    async def overlong_step(self, state: vf.State) -> bool:
        """Stop at the first step whose prompt and completion pass `max_seq_len` (set_max_seq_len).

        Later steps would call tools and grade on turns a trainer cuts away.
        """
        trajectory = state.get("trajectory") or []
        tokens = trajectory[-1].get("tokens") if trajectory else None
        return bool(self.max_seq_len is not None and tokens and tokens.get("is_truncated"))

    # -- rollout lifecycle --------------------------------------------------------
    async def setup_state(self, state: vf.State, **kwargs: Any) -> vf.State:
        state = await super().setup_state(state, **kwargs)
        task = TaskRow.from_info(state["info"])
        sid = state["sandbox_id"]
        try:
            await self._wait_for_sandbox_ready(state["sandbox_state"], sid)
            await get_family(task.family).setup(self._sandbox(sid), task)
        except vf.SandboxError:
            raise
        except Exception as exc:
            raise vf.SandboxError(f"setting up task {task.task_id} failed: {exc}") from exc
        return state

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

    @vf.teardown
    async def teardown_sandboxes(self) -> None:
        """Remove every container this env's client made (the parent's version needs the hosted API)."""
        self.sandbox_client.teardown()
        self.active_sandboxes.clear()
