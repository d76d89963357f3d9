"""websandbox: Django and FastAPI tasks in a Docker sandbox, graded by what the code does.

One package, the front door the installed verifiers speaks: with verifiers 0.4.x
this module exports the v1 taskset and its env through `__all__` (how
`vf.load_taskset` and v1's `vf-eval websandbox` find them); with 0.3.x,
`load_environment` (how the classic `vf-eval websandbox` finds it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sandbox_env.constants import DEFAULTS
from sandbox_env.dataset import DEFAULT_SPLIT, build_dataset, load_rows, select_rows
from sandbox_env.image import ensure_image
from sandbox_env.sandbox import Limits
from sandbox_env.sandbox.pool import default_pool_size
from sandbox_env.stack import installed_stack
from sandbox_env.system_prompt import SYSTEM_PROMPT

if TYPE_CHECKING:
    import verifiers as vf

if installed_stack() == "v1":
    from sandbox_env.v1 import WebSandboxEnv, WebSandboxTaskset

    __all__ = ["WebSandboxEnv", "WebSandboxTaskset"]
else:
    __all__ = ["load_environment"]

DEFAULT_MAX_TURNS = {"orm": DEFAULTS.orm_max_turns}


def load_environment(
    family: str | list[str] | None = None,
    difficulty: str | list[str] | None = None,
    category: str | list[str] | None = None,
    task_ids: list[str] | None = None,
    split: str = DEFAULT_SPLIT,
    max_turns: int | None = None,
    timeout_seconds: float = DEFAULTS.timeout_seconds,
    timeout_per_command_seconds: float = DEFAULTS.timeout_per_command_seconds,
    output_cap: int = DEFAULTS.output_cap,
    image: str | None = None,
    build_image: bool = True,
    backend: str = "docker",
    cpus: float = DEFAULTS.cpus,
    memory_mb: int = DEFAULTS.memory_mb,
    pids_limit: int = DEFAULTS.pids_limit,
    workspace_mb: int = DEFAULTS.workspace_mb,
    tmp_mb: int = DEFAULTS.tmp_mb,
    network: bool = DEFAULTS.network,
    pool_size: int | None = None,
    max_sandboxes: int | None = None,
    rollout_timeout_seconds: float | None = None,
    system_prompt: str = SYSTEM_PROMPT,
) -> vf.Environment:
    """Build the classic environment; every argument is documented in this folder's README."""
    if installed_stack() == "v1":
        raise RuntimeError(
            "load_environment is the classic front door (verifiers 0.3.x); with verifiers 0.4 load the "
            "taskset: vf.load_taskset(vf.TasksetConfig(id='websandbox')) or `vf-eval websandbox`"
        )
    from sandbox_env.env import WebSandboxEnv

    rows = select_rows(load_rows(), family=family, difficulty=difficulty, category=category, task_ids=task_ids, split=split)
    if max_turns is None:
        families = {r["info"]["family"] for r in rows}
        max_turns = max(DEFAULT_MAX_TURNS.get(f, DEFAULTS.max_turns) for f in families)
    tasks = build_dataset(rows)
    return WebSandboxEnv(
        dataset=tasks,  # the same tasks train and evaluate: vf-eval reads eval_dataset,
        eval_dataset=tasks,  # and without it logs that it falls back to the train dataset
        image=image or ensure_image(build_if_missing=build_image),
        backend=backend,
        limits=Limits(cpus=cpus, memory_mb=memory_mb, pids=pids_limit, workspace_mb=workspace_mb, tmp_mb=tmp_mb, network=network),
        timeout_per_command_seconds=timeout_per_command_seconds,
        grading_timeout_seconds=timeout_seconds,
        output_cap=output_cap,
        pool_size=default_pool_size() if pool_size is None else pool_size,
        max_sandboxes=max_sandboxes,
        max_turns=max_turns,
        system_prompt=system_prompt,
        timeout_seconds=rollout_timeout_seconds,
    )
