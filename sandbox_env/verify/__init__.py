"""Task verification by execution: references as tool calls, controls, other answers, mutants, scripted rollouts.

Families hold only prompt, setup, collect and grade; everything that checks tasks
(and knows their reference solutions) lives here, behind `FamilyVerifier`. The stages that
drive it (compile, build, generate, repair, compose) are `sandbox_env/stages/`, above it.
"""

from __future__ import annotations

import importlib
from typing import Any

from sandbox_env.families import FAMILY_NAMES
from sandbox_env.verify.base import Control, FamilyVerifier, VerifyContext, task_folder

__all__ = ["Control", "FamilyVerifier", "VerifyContext", "get_verifier", "reference_calls"]


def get_verifier(family: str) -> FamilyVerifier:
    if family not in FAMILY_NAMES:
        raise KeyError(f"unknown family {family!r}; known: {', '.join(FAMILY_NAMES)}")
    return importlib.import_module(f"sandbox_env.verify.{family}").VERIFIER


def reference_calls(family: str, task_id: str) -> list[dict[str, Any]]:
    """A task's reference as the tool calls a model would make (generated, composed: its stored line; repair: its base's)."""
    folder = task_folder(family, task_id)
    if not folder.is_dir():  # a repair task: its base task's reference (generate/repair_store.py)
        from sandbox_env.generate.repair_store import read as read_repairs

        base = next((r["base_task"] for r in read_repairs() if r["task_id"] == task_id), None)
        if base is not None:
            return reference_calls(family, base)
    if family == "fastapi" and not folder.is_dir():  # a composed or generated task: its stored reference
        from sandbox_env.generate.api_store import read as read_generated_fastapi
        from sandbox_env.generate.compose_store import read as read_composed

        for record in [*read_composed(), *read_generated_fastapi()]:
            if record["task_id"] == task_id:
                return get_verifier(family).source_calls(record["reference"])
    if family == "django" and not folder.is_dir():  # a generated task: its stored reference files
        from sandbox_env.generate.dj_store import read as read_generated_django

        for record in read_generated_django():
            if record["task_id"] == task_id:
                return get_verifier(family).files_calls(record["reference"])
    if family == "orm" and not folder.is_dir():
        from sandbox_env.generate.store import read

        for record in read():
            if record["task_id"] == task_id:
                return [{"tool": "execute_code", "args": {"code": record["reference"]}}]
    return get_verifier(family).reference_calls(folder)
