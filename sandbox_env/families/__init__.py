"""The task families, by name. Each module exports FAMILY (see base.Family)."""

from __future__ import annotations

import importlib

from sandbox_env.families.base import Family, Grade, TaskRow

__all__ = ["FAMILY_NAMES", "Family", "Grade", "TaskRow", "get_family"]

FAMILY_NAMES = ("smoke", "orm", "django", "fastapi")


def get_family(name: str) -> Family:
    if name not in FAMILY_NAMES:
        raise KeyError(f"unknown family {name!r}; known: {', '.join(FAMILY_NAMES)}")
    return importlib.import_module(f"sandbox_env.families.{name}").FAMILY
