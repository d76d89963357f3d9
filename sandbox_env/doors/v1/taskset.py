"""The v1 front door: a `vf.Taskset` over the shipped task rows (verifiers 0.4.x).

What prime-rl loads with `vf.load_taskset` and what `vf-eval websandbox` (v1) runs.
The same rows, families, graders and Docker backend as the classic
`load_environment`; only the front door differs.

Decisions:
- Tasks run on websandbox's own Docker backend, not on one of v1's runtimes:
  `setup` leases a hardened container (sandbox_env/rollout/core.py), `finalize` takes the final
  state out and grades it in fresh containers. v1's runtime only hosts the
  harness's chat loop, which is why the env defaults the agent to the `null`
  harness (MCP tools only) on the `subprocess` runtime.
- A harness that runs commands itself (verifiers' `bash`, an agent of one's own)
  has every tool call it would run answered from the rollout's sandbox through v1's
  tool gate (`run_harness_commands`, doors/v1/commands.py): the same lease, limits,
  blame, deliverables and grading as the tool-calling door, nothing run on the host
  for the model. One that runs commands without asking the gate is refused.
- The wire task data carries the task's id and metadata and the prompt, not the
  answer key: the host-only grading data is looked up from the installed
  package's rows by id (and a prompt that does not match is refused), so traces
  and orchestrator requests never carry expectations or hidden tests.
- Reward `score` (weight 1) is the grade's score; the weight-0 metrics are the
  classic ones (`METRIC_NAMES`) plus `sandbox_command_execution_time`
  (mean seconds a tool call took).
- Blame is the classic front door's (sandbox_env/rollout/core.py): a harness fault (no container,
  a container lost by no doing of the model's, a final state that cannot be read,
  a grading fault that a retry in fresh sandboxes did not cure) still records
  reward 0 and `scoring_error` = 1, and then raises `vf.SandboxError`: the trace
  ends with `ok = False` and an error, which prime-rl reschedules rather than
  training on. A fault during a tool call also stops the rollout before the next
  turn. What the model's own processes do to a sandbox is the model's: a tool call
  that ended its sandbox gets a fresh one and a message, and graded code that
  ended or exhausted its grading sandbox scores 0.0 with no error. A rollout whose
  finalize deadline (`--env.agent.timeout.finalize`, a stop and no error to v1)
  expired before grading ended was never graded: a harness fault, not a zero.
- The classic `max_turns` default (`DEFAULTS.orm_max_turns` for `orm`,
  `DEFAULTS.max_turns` otherwise) is a task `@stop`;
  v1's own `--env.agent.max-turns` and token caps apply on top.
- Every lease is released: by `finalize`, or, when the rollout failed or was
  cancelled before it, by the env's `run()` (in the background: a cancelled
  episode must not wait); `stop()` removes whatever the process still holds.
"""

from __future__ import annotations

import contextvars
import functools
import statistics
from collections.abc import Iterator

import verifiers.v1 as vf
from pydantic import Field, create_model

from sandbox_env.constants import DEFAULTS
from sandbox_env.dataset import DEFAULT_SPLIT, load_rows, select_rows
from sandbox_env.doors.metrics import metric_values
from sandbox_env.doors.system_prompt import system_prompt_for
from sandbox_env.doors.v1.bridge import bridge, stop_bridge
from sandbox_env.doors.v1.commands import check_harness, run_harness_call, seat_runs_commands
from sandbox_env.doors.v1.harness import HARNESS_ID, scripts_run_here
from sandbox_env.doors.v1.toolset import WebSandboxState, WebSandboxToolset, WebSandboxToolsetConfig
from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.rollout.core import Lease, LeaseError, close_rollouts, rollouts_for
from sandbox_env.rollout.settings import SandboxSettings, config_fields, setting_names

DEFAULT_MAX_TURNS = {"orm": DEFAULTS.orm_max_turns}
FALLBACK_MAX_TURNS = DEFAULTS.max_turns

# rollout (trace id) -> its lease, in this env worker; and what one episode opened:
# (trace id, bridge token, lease), so that its end can close what a failed rollout left open
_leases: dict[str, Lease] = {}
_Opened = tuple[str, str, Lease]
_episode_leases: contextvars.ContextVar[list[_Opened] | None] = contextvars.ContextVar("websandbox_leases", default=None)


@functools.cache
def _rows_by_id() -> dict[str, dict]:
    return {r["info"]["task_id"]: r for r in load_rows()}


def task_row(task_id: str, prompt: str | None = None) -> TaskRow:
    """The installed package's task, checked against the prompt the request carries."""
    try:
        row = _rows_by_id()[task_id]
    except KeyError:
        raise ValueError(f"unknown task id {task_id!r}: the installed websandbox has no such task") from None
    if prompt is not None and prompt.strip() != row["question"].strip():
        raise ValueError(
            f"task {task_id!r}: the prompt differs from the installed websandbox's; install the same version "
            "on the orchestrator and the env server"
        )
    return TaskRow.from_info(row["info"])


class WebSandboxData(vf.TaskData):
    task_id: str
    family: str
    difficulty: str
    category: str


# The settings' fields, each with its default and doc, from the one list (rollout/settings.py)
_SettingsConfig = create_model(
    "WebSandboxSettingsConfig",
    __base__=vf.TaskConfig,
    **{name: (kind, Field(default, description=doc)) for name, (kind, default, doc) in config_fields().items()},
)


class WebSandboxTaskConfig(_SettingsConfig):
    """The sandbox, grading and tool knobs (every setting of rollout/settings.py, by its name); the task's turns and
    rewards."""

    max_turns: int | None = None
    """Tool-calling turns per rollout; None = 5 for orm, 20 otherwise."""
    rewards: dict[str, vf.RewardFunctionConfig] = Field(
        default_factory=lambda: {"score": vf.RewardFunctionConfig(fn="sandbox_env.doors.v1.taskset:grade_score", weight=1.0)}
    )

    def settings(self) -> SandboxSettings:
        """The sandbox settings of this config: every field of SandboxSettings, by the same name."""
        return SandboxSettings(**{name: getattr(self, name) for name in setting_names()})


async def grade_score(trace: vf.Trace) -> float:
    """The reward: what grading made of the final state (0.0 when grading never happened)."""
    return float((trace.state.grade or {}).get("score", 0.0))


class WebSandboxTask(vf.Task[WebSandboxData, WebSandboxState, WebSandboxTaskConfig]):
    @property
    def key(self) -> str:
        return self.data.task_id

    async def validate(self, runtime: vf.Runtime | None = None) -> bool | None:
        """`vf-validate`'s gold check: the task's reference, played as tool calls, scores 1.0 through the real grader.

        In a sandbox of its own, set up as a rollout's, graded in fresh grading sandboxes;
        a harness fault is an error, not a verdict. None when the installed package holds no
        reference for the task. (`vf-validate`'s noop check grades the untouched task.)
        """
        from sandbox_env.verify import reference_calls

        row = task_row(self.data.task_id, self.data.prompt_text)
        try:
            calls = reference_calls(row.family, row.task_id)
        except (KeyError, OSError):
            return None
        rollouts = await rollouts_for(self.config.settings())
        lease = await rollouts.open(row)
        try:
            for call in calls:
                await lease.call(call["tool"], call["args"])
        except BaseException:
            lease.release_later()
            raise
        grade = await lease.finish()
        if grade.scoring_error:
            raise vf.SandboxError(f"grading the reference of {row.task_id} failed: {grade.scoring_error}")
        return grade.score == 1.0

    async def setup(self, trace: vf.Trace, runtime: vf.Runtime | None = None) -> None:
        if runtime is not None and seat_runs_commands(trace):
            scripts_run_here(runtime)  # the harness's chat program: this interpreter, nothing downloaded
        row = task_row(self.data.task_id, self.data.prompt_text)
        rollouts = await rollouts_for(self.config.settings())
        try:
            lease = await rollouts.open(row)
        except LeaseError as exc:
            raise vf.SandboxError(str(exc)) from exc
        _leases[trace.id] = lease
        door = bridge()
        token = door.grant(lease)
        scope = _episode_leases.get()
        if scope is not None:
            scope.append((trace.id, token, lease))
        trace.state.bridge_token = token
        trace.state.bridge_wait_seconds = lease.rollouts.settings.tool_call_wait_seconds
        trace.state.bridge_url = await door.start()

    async def finalize(self, trace: vf.Trace) -> None:
        lease = _leases.pop(trace.id, None)
        bridge().revoke(trace.state.bridge_token)
        trace.state.bridge_url = trace.state.bridge_token = None
        if lease is None:
            raise vf.SandboxError("the rollout's sandbox lease is missing (setup did not complete)")
        grade = await lease.finish()
        trace.state.grade = grade.to_dict()
        trace.info["grade"] = trace.state.grade  # the state is not saved with the trace; info is
        times = lease.command_seconds
        trace.record_metric("sandbox_command_execution_time", statistics.fmean(times) if times else 0.0)

    @vf.stop
    async def sandbox_failed(self, trace: vf.Trace) -> bool:
        lease = _leases.get(trace.id)
        return lease is not None and lease.fault is not None

    @vf.stop
    async def turn_budget(self, trace: vf.Trace) -> bool:
        limit = self.config.max_turns or DEFAULT_MAX_TURNS.get(self.data.family, FALLBACK_MAX_TURNS)
        return trace.num_turns >= limit

    @vf.intercept
    async def run_harness_commands(self, request: vf.Request, trace: vf.Trace) -> vf.Request | None:
        """A command-running harness's tool calls, run in this rollout's sandbox (doors/v1/commands.py).

        v1 asks this about each tool call of a turn as the turn commits, the call's result
        still empty; the output put there is what the harness's tool gate answers instead of
        running the call. A seat whose harness only uses the taskset's tools is left alone.
        """
        if not seat_runs_commands(trace):
            return None
        return await run_harness_call(request, _leases.get(trace.id))

    @vf.metric
    async def grade_metrics(self, trace: vf.Trace) -> dict[str, float]:
        return metric_values(trace.state.grade)

    async def score(self, trace: vf.Trace, runtime: vf.Runtime | None = None) -> None:
        if trace.state.grade is None:  # finalize did not finish grading (its deadline expired): not the model's
            reason = "the rollout was not graded: its finalize deadline (--env.agent.timeout.finalize) expired first"
            trace.state.grade = Grade.harness_fault(reason).to_dict()
            trace.info["grade"] = trace.state.grade
        await super().score(trace, runtime)
        fault = (trace.state.grade or {}).get("scoring_error")
        if fault:
            raise vf.SandboxError(f"harness fault, not the model's: {fault}")


class WebSandboxTasksetConfig(vf.TasksetConfig):
    """Which tasks load; the classic `load_environment` filters of the same names."""

    family: str | list[str] | None = None
    difficulty: str | list[str] | None = None
    category: str | list[str] | None = None
    task_ids: list[str] | None = None
    split: str = DEFAULT_SPLIT  # "train", "eval" or "all" (sandbox_env/dataset.py)
    pass_rates: str | None = None
    """A pass-rate file `websandbox calibrate` wrote: measured difficulty, and the bounds below (sandbox_env/pass_rates.py)."""
    min_pass_rate: float | None = None
    max_pass_rate: float | None = None
    task: WebSandboxTaskConfig = WebSandboxTaskConfig()
    tools: WebSandboxToolsetConfig = WebSandboxToolsetConfig()


class WebSandboxTaskset(vf.Taskset[WebSandboxTask, WebSandboxTasksetConfig]):
    @classmethod
    def toolsets(cls, config: WebSandboxTasksetConfig) -> list[vf.Toolset]:
        return [WebSandboxToolset(config.tools)]

    def load(self) -> Iterator[WebSandboxTask]:
        c = self.config
        rows = select_rows(
            load_rows(), family=c.family, difficulty=c.difficulty, category=c.category, task_ids=c.task_ids, split=c.split,
            pass_rates=c.pass_rates, min_pass_rate=c.min_pass_rate, max_pass_rate=c.max_pass_rate,
        )  # fmt: skip
        prompt = system_prompt_for(c.task)  # states the per-call limit and output cap of this config
        for row in rows:
            info = row["info"]
            data = WebSandboxData(
                id=info["task_id"],
                name=info["task_id"],
                prompt=row["question"],
                system_prompt=prompt,
                task_id=info["task_id"],
                family=info["family"],
                difficulty=info["difficulty"],
                category=info["category"],
            )
            yield WebSandboxTask(data, c.task)


class WebSandboxEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The one seat: by default websandbox's harness (verifiers' `null` chat loop, whose only tools are the
    taskset's MCP tools, run with this interpreter: doors/v1/harness.py) on the host as a subprocess; the
    sandbox is the task's own. No harness is named here: v1 takes a taskset's default harness from what its
    module exports (`websandbox.WebSandboxHarness`), resolved when a run starts; naming it here would import
    the `websandbox` module while it is still importing this one. A harness that runs its own commands
    (`--env.agent.harness.id bash`) has them run in the same sandbox (doors/v1/commands.py)."""


class WebSandboxEnv(vf.Env[WebSandboxEnvConfig]):
    """The single-agent env, with the sandbox leases' lifetime tied to the episode."""

    def __init__(self, config: WebSandboxEnvConfig) -> None:
        super().__init__(config)
        spec = config.agent
        harness = spec.harness.id if spec.harness is not None else HARNESS_ID
        if check_harness("agent", harness):
            # its own `bash` runs in the sandbox; the taskset's would collide with it (execute_code stays)
            tasks = self.taskset.config
            tasks.tools = tasks.tools.model_copy(update={"bash": False})

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        opened: list[_Opened] = []
        scope = _episode_leases.set(opened)
        try:
            await agents.agent.run(task)
        finally:
            _episode_leases.reset(scope)
            for trace_id, token, lease in opened:  # no-ops when finalize already closed them
                _leases.pop(trace_id, None)
                bridge().revoke(token)
                lease.release_later()

    async def stop(self) -> None:
        await stop_bridge()
        close_rollouts()
