"""The per-family table of a run: rollouts, mean reward, full marks, scoring errors, tampered, errored.

Computed from viewer records (record.py), so it reads the same for every run format. A
rollout without a reward counts in `rollouts` and not in the mean.
"""

from __future__ import annotations

from typing import Any

COLUMNS = ("family", "rollouts", "mean_reward", "perfect", "scoring_errors", "tampered", "errored")


def _row(family: str, rollouts: list[dict[str, Any]]) -> dict[str, Any]:
    rewards = [r["reward"] for r in rollouts if r["reward"] is not None]
    return {
        "family": family,
        "rollouts": len(rollouts),
        "mean_reward": sum(rewards) / len(rewards) if rewards else None,
        "perfect": sum(1 for x in rewards if x == 1.0),
        "scoring_errors": sum(1 for r in rollouts if r["scoring_error"]),
        "tampered": sum(1 for r in rollouts if r["tampered"]),
        "errored": sum(1 for r in rollouts if r["error"]),
    }


def family_table(rollouts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row a family, by name, then a row "all" when there is more than one family."""
    by_family: dict[str, list[dict[str, Any]]] = {}
    for r in rollouts:
        by_family.setdefault(r["family"], []).append(r)
    rows = [_row(f, rs) for f, rs in sorted(by_family.items())]
    return rows + [_row("all", rollouts)] if len(rows) > 1 else rows
