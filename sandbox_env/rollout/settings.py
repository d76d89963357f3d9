"""The one list of the knobs that shape a rollout's sandbox, its tools and its grading: `SandboxSettings`.

Declared once, here, each with its default and its one-line doc. Every layer that takes these
knobs derives its own form from this list rather than writing it again: the v1 task config's
fields (doors/v1/taskset.py, `config_fields`), the classic `load_environment`'s keyword
arguments and its signature (environments/websandbox/websandbox.py, `signature_parameters`),
`Limits`, and every time that depends on another (`tool_call_wait_seconds`). So a knob added
here reaches both front doors with one name and one default, and a name no layer knows is
refused by name (`unknown_settings`).

Kept free of heavy imports (no Docker, no verifiers): the environment module reads it at import.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from dataclasses import dataclass
from typing import Any

from sandbox_env.constants import DEFAULTS, tool_call_wait_seconds
from sandbox_env.sandbox.registry import DEFAULT_BACKEND
from sandbox_env.sandbox.types import Limits


def _knob(default: Any, doc: str) -> Any:
    return dataclasses.field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class SandboxSettings:
    """The one list of the knobs that shape a rollout's sandbox, its tools and its grading."""

    image: str | None = _knob(None, "Runtime image; None = the image for the installed sources (built when missing).")
    build_image: bool = _knob(True, "Build the runtime image when it is missing.")
    backend: str = _knob(DEFAULT_BACKEND, "The sandbox backend, by its name in sandbox_env/sandbox/registry.py.")
    cpus: float = _knob(DEFAULTS.cpus, "CPUs of one sandbox.")
    memory_mb: int = _knob(DEFAULTS.memory_mb, "Memory of one sandbox, MiB.")
    pids_limit: int = _knob(DEFAULTS.pids_limit, "Processes and threads of one sandbox.")
    workspace_mb: int = _knob(DEFAULTS.workspace_mb, "Size of /workspace, MiB.")
    tmp_mb: int = _knob(DEFAULTS.tmp_mb, "Size of /tmp, MiB.")
    network: bool = _knob(DEFAULTS.network, "Give sandboxes a network.")
    pool_size: int | None = _knob(
        None, "Ready sandboxes kept started per env worker (None = no pool, start one per rollout; sandbox/pool.py)."
    )
    max_sandboxes: int | None = _knob(
        None,
        "Containers at once on this host, shared by every env worker of the user (None = the host's default: four per "
        "core, bounded by memory; sandbox/budget.py). Past it, rollouts and gradings queue.",
    )
    require_evidence: bool = _knob(
        False, "Refuse a sandbox backend that cannot prove whose a fault is (an engine on another host); set it for training."
    )
    timeout_seconds: float = _knob(DEFAULTS.timeout_seconds, "Limit of one grading.")
    timeout_per_command_seconds: float = _knob(DEFAULTS.timeout_per_command_seconds, "Limit of one tool call.")
    output_cap: int = _knob(DEFAULTS.output_cap, "Characters of a tool call's output shown to the model.")

    @property
    def tool_call_wait_seconds(self) -> float:
        """How long a front door may wait for one tool call's answer (a starved call, a replacement)."""
        return tool_call_wait_seconds(self.timeout_per_command_seconds)

    def limits(self) -> Limits:
        return Limits(
            cpus=self.cpus,
            memory_mb=self.memory_mb,
            pids=self.pids_limit,
            workspace_mb=self.workspace_mb,
            tmp_mb=self.tmp_mb,
            network=self.network,
        )


def setting_names() -> list[str]:
    return [f.name for f in dataclasses.fields(SandboxSettings)]


def config_fields() -> dict[str, tuple[Any, Any, str]]:
    """{name: (type, default, doc)} of every setting, in order: what a config class declares from this list."""
    hints = typing.get_type_hints(SandboxSettings)
    return {f.name: (hints[f.name], f.default, f.metadata["doc"]) for f in dataclasses.fields(SandboxSettings)}


def signature_parameters() -> list[inspect.Parameter]:
    """Every setting as a keyword-only parameter with its default: the signature a function taking them shows."""
    return [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=kind)
        for name, (kind, default, _) in config_fields().items()
    ]


def unknown_settings(given: dict[str, Any]) -> None:
    """Raise a one-line TypeError naming every unknown setting and the known ones."""
    unknown = sorted(set(given) - set(setting_names()))
    if unknown:
        raise TypeError(f"unknown setting(s) {', '.join(unknown)}; known: {', '.join(setting_names())}")
