"""websandbox: Django and FastAPI tasks in a Docker sandbox, graded by what the code does."""

from __future__ import annotations

import verifiers as vf

from sandbox_env.constants import DEFAULTS
from sandbox_env.dataset import build_dataset, load_rows, select_rows
from sandbox_env.env import SYSTEM_PROMPT, WebSandboxEnv
from sandbox_env.image import ensure_image
from sandbox_env.sandbox import Limits
from sandbox_env.sandbox.pool import default_pool_size

DEFAULT_MAX_TURNS = {"orm": DEFAULTS.orm_max_turns}


def load_environment(
    family: str | list[str] | None = None,
    difficulty: str | list[str] | None = None,
    category: str | list[str] | None = None,
    task_ids: list[str] | None = None,
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
    """Build the environment; every argument is documented in this folder's README."""
    rows = select_rows(load_rows(), family=family, difficulty=difficulty, category=category, task_ids=task_ids)
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
