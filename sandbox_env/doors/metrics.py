"""The weight-0 metrics read off a stored grade, for any front door."""

from __future__ import annotations

from typing import Any

from sandbox_env.families.base import METRIC_NAMES


def metric_values(grade: dict[str, Any] | None, scoring_error: str | None = None) -> dict[str, float]:
    """Every name of METRIC_NAMES with its value; a metric a family does not report is 0.0."""
    grade = grade or {}
    out = {}
    for name in METRIC_NAMES:
        if name == "scoring_error":
            out[name] = float(bool(grade.get("scoring_error") or scoring_error))
        elif name in ("tampered", "unproven_harness_fault"):
            out[name] = float(bool(grade.get(name)))
        else:
            out[name] = float((grade.get("metrics") or {}).get(name, 0.0))
    return out
