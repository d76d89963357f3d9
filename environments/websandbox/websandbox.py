"""websandbox: Django and FastAPI tasks in a Docker sandbox, graded by what the code does.

One package, every front door the installed verifiers speaks (sandbox_env/doors/stack.py):
where it has the v1 API (0.4.x, the 0.3.1 release, the build prime-rl pins) this module
exports the v1 taskset, its env and its harness through `__all__` (how `vf.load_taskset`
and v1's eval find them); where it has the classic API, `load_environment` (how the
classic `vf-eval websandbox` finds it).
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import TYPE_CHECKING, Any

from sandbox_env.constants import DEFAULTS
from sandbox_env.dataset import DEFAULT_SPLIT, build_dataset, load_rows, select_rows
from sandbox_env.doors.stack import CLASSIC, V1, offered_doors
from sandbox_env.rollout.image import ensure_image
from sandbox_env.rollout.settings import SandboxSettings, signature_parameters, unknown_settings
from sandbox_env.sandbox.pool import default_pool_size

if TYPE_CHECKING:
    import verifiers as vf

__all__ = ["load_environment"] if CLASSIC in offered_doors() else []
if V1 in offered_doors():
    from sandbox_env.doors.v1 import WebSandboxEnv, WebSandboxHarness, WebSandboxTaskset

    __all__ += ["WebSandboxEnv", "WebSandboxHarness", "WebSandboxTaskset"]

DEFAULT_MAX_TURNS = {"orm": DEFAULTS.orm_max_turns}
# what works on verifiers 0.4 (tests/v1 runs the code between the backticks)
V1_HINT = (
    "with verifiers 0.4 load the taskset: `import verifiers.v1 as vf; "
    "taskset = vf.load_taskset(vf.taskset_config_type('websandbox').model_validate({'id': 'websandbox'}))` "
    "or run `vf-eval websandbox`"
)


def load_environment(
    family: str | list[str] | None = None,
    difficulty: str | list[str] | None = None,
    category: str | list[str] | None = None,
    task_ids: list[str] | None = None,
    split: str = DEFAULT_SPLIT,
    pass_rates: str | None = None,
    min_pass_rate: float | None = None,
    max_pass_rate: float | None = None,
    max_turns: int | None = None,
    rollout_timeout_seconds: float | None = None,
    system_prompt: str | None = None,
    **settings: Any,
) -> vf.Environment:
    """Build the classic environment; every argument is documented in this folder's README.

    `settings`: any of the sandbox settings (sandbox_env/rollout/settings.py, each with its default); the
    signature below lists them, derived from that one list.
    """
    unknown_settings(settings)
    if CLASSIC not in offered_doors():
        raise RuntimeError(f"load_environment is the classic front door (verifiers 0.3.x); {V1_HINT}")
    from sandbox_env.doors.classic import WebSandboxClassicEnv

    rows = select_rows(
        load_rows(), family=family, difficulty=difficulty, category=category, task_ids=task_ids, split=split,
        pass_rates=pass_rates, min_pass_rate=min_pass_rate, max_pass_rate=max_pass_rate,
    )  # fmt: skip
    if max_turns is None:
        families = {r["info"]["family"] for r in rows}
        max_turns = max(DEFAULT_MAX_TURNS.get(f, DEFAULTS.max_turns) for f in families)
    tasks = build_dataset(rows)
    knobs = dataclasses.asdict(SandboxSettings(**settings))
    knobs["image"] = knobs["image"] or ensure_image(build_if_missing=knobs["build_image"], backend=knobs["backend"])
    knobs["pool_size"] = default_pool_size() if knobs["pool_size"] is None else knobs["pool_size"]
    settings = SandboxSettings(**knobs)
    return WebSandboxClassicEnv(
        dataset=tasks,  # the same tasks train and evaluate: vf-eval reads eval_dataset,
        eval_dataset=tasks,  # and without it logs that it falls back to the train dataset
        settings=settings,
        max_turns=max_turns,
        system_prompt=system_prompt,  # None: the default, which states the tools' limits
        timeout_seconds=rollout_timeout_seconds,
    )


def _signature_with_settings(fn):
    """`fn`'s signature with its `**settings` spelled out as the settings' keyword arguments and defaults."""
    sig = inspect.signature(fn)
    params = [p for p in sig.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    fn.__signature__ = sig.replace(parameters=params + signature_parameters())
    return fn


_signature_with_settings(load_environment)
