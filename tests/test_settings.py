"""One list of knobs: every layer names a sandbox setting as `SandboxSettings` does, with its default.

`SandboxSettings` (sandbox_env/rollout/core.py) is the only list of the settings that shape a
rollout's sandbox, its tools and its grading. The classic `load_environment` and the v1
task config (tests/v1/test_taskset.py) take the same names with the same defaults, the
container limits are derived from it, and so are the times that depend on the per-call limit.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect

from sandbox_env.constants import CALL_BACKSTOP_FACTOR, CALL_SLACK
from sandbox_env.doors.system_prompt import SYSTEM_PROMPT, system_prompt_for
from sandbox_env.rollout.core import SandboxSettings


def _settings_defaults() -> dict[str, object]:
    return {f.name: f.default for f in dataclasses.fields(SandboxSettings)}


def test_load_environment_takes_every_setting_by_its_name_and_default():
    params = inspect.signature(importlib.import_module("websandbox").load_environment).parameters
    missing = [name for name in _settings_defaults() if name not in params]
    assert missing == [], f"load_environment lacks settings {missing}"
    differ = {n: (params[n].default, d) for n, d in _settings_defaults().items() if params[n].default != d}
    assert differ == {}, f"defaults differ from SandboxSettings: {differ}"


def test_container_limits_come_from_the_settings():
    s = SandboxSettings(cpus=2.0, memory_mb=512, pids_limit=64, workspace_mb=32, tmp_mb=16, network=True)
    limits = s.limits()
    assert (limits.cpus, limits.memory_mb, limits.pids, limits.workspace_mb, limits.tmp_mb, limits.network) == (
        2.0,
        512,
        64,
        32,
        16,
        True,
    )


def test_a_front_door_waits_for_a_tool_call_at_least_as_long_as_the_sandbox_may_take():
    for limit in (5.0, 30.0, 120.0, 300.0):
        wait = SandboxSettings(timeout_per_command_seconds=limit).tool_call_wait_seconds
        assert wait > CALL_BACKSTOP_FACTOR * limit + CALL_SLACK


def test_the_model_is_told_the_per_call_limit_and_the_output_cap():
    prompt = " ".join(system_prompt_for(SandboxSettings(timeout_per_command_seconds=45, output_cap=1234)).split())
    assert "time limit of 45 seconds" in prompt and "1234 characters" in prompt
    assert system_prompt_for(SandboxSettings()) == SYSTEM_PROMPT


def test_the_backend_setting_reaches_the_image_lookup():
    """A backend named in the settings is the one asked whether the image exists (not the default one)."""
    from sandbox_env.rollout.core import Rollouts, SandboxSettings
    from sandbox_env.sandbox.registry import BackendTools, register_backend

    asked: list[str] = []

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("no sandbox is wanted here")

    tools = BackendTools(
        where=lambda: "nowhere",
        gc=refuse,
        settle_run=refuse,
        image_exists=lambda tag: asked.append(tag) or False,
        choose_base=refuse,
        build_image=refuse,
    )
    register_backend("lookup-probe", refuse, tools)
    import pytest

    with pytest.raises(RuntimeError, match="does not exist"):
        Rollouts(SandboxSettings(backend="lookup-probe", build_image=False))
    assert len(asked) == 1


def test_an_unknown_setting_is_refused_by_name_with_the_known_ones():
    import pytest

    load_environment = importlib.import_module("websandbox").load_environment
    with pytest.raises(TypeError, match=r"unknown setting\(s\) cpu_count; known: image, build_image"):
        load_environment(cpu_count=2)


def test_each_setting_is_declared_once_with_a_doc_and_both_front_doors_derive_theirs():
    from sandbox_env.rollout.settings import config_fields

    fields = config_fields()
    assert [name for name, _ in fields.items()] == list(_settings_defaults())
    assert all(doc.strip() for _, _, doc in fields.values())
