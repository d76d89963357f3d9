"""The per-family table of a run: rollouts, mean reward (over all, over finished), full marks,
scoring errors, tampered, errored with its kinds.

Computed from viewer records (record.py), so it reads the same for every run format, and
`websandbox eval` prints this same table. A rollout without a reward counts in `rollouts`
and not in the means.

A rollout *errored* when the run saved an error for it (`state["error"]`: a model API
error, a harness fault, a sandbox that never became ready). It still carries whatever
reward the rubric made of the state it reached, so a mean over every rollout mixes wrong
answers with conversations that never finished: `mean_finished` is the mean over the
rollouts that did not error, None when none finished. `error_kinds` counts the errored
rollouts by kind, commonest first. `ci_low` and `ci_high` bound the score's 95 % interval
(scores.py: a bootstrap over tasks, and over rollouts where a task has several).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from sandbox_env.viewer.scores import interval, task_rewards

COLUMNS = (
    "family",
    "rollouts",
    "mean_reward",
    "mean_finished",
    "ci_low",
    "ci_high",
    "perfect",
    "scoring_errors",
    "tampered",
    "errored",
    "error_kinds",
)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _row(family: str, rollouts: list[dict[str, Any]]) -> dict[str, Any]:
    rewards = [r["reward"] for r in rollouts if r["reward"] is not None]
    finished = [r["reward"] for r in rollouts if r["reward"] is not None and not r["error"]]
    kinds = Counter(r.get("error_kind") or "error" for r in rollouts if r["error"])
    est = interval(task_rewards(rollouts))
    return {
        "family": family,
        "rollouts": len(rollouts),
        "mean_reward": _mean(rewards),
        "mean_finished": _mean(finished),
        "ci_low": est[1] if est else None,  # the 95 % interval of the task-balanced score (scores.py)
        "ci_high": est[2] if est else None,
        "perfect": sum(1 for x in rewards if x == 1.0),
        "scoring_errors": sum(1 for r in rollouts if r["scoring_error"]),
        "tampered": sum(1 for r in rollouts if r["tampered"]),
        "errored": sum(kinds.values()),
        "error_kinds": dict(sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0]))),
    }


def family_table(rollouts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row a family, by name, then a row "all" when there is more than one family."""
    by_family: dict[str, list[dict[str, Any]]] = {}
    for r in rollouts:
        by_family.setdefault(r["family"], []).append(r)
    rows = [_row(f, rs) for f, rs in sorted(by_family.items())]
    return rows + [_row("all", rollouts)] if len(rows) > 1 else rows


def errored_cell(row: dict[str, Any]) -> str:
    """The errored count with its kinds: `0`, `4 (ModelError -> InternalServerError)`, `3 (A 2, B 1)`."""
    kinds = row["error_kinds"]
    if not kinds:
        return str(row["errored"])
    if len(kinds) == 1:
        return f"{row['errored']} ({next(iter(kinds))})"
    return f"{row['errored']} (" + ", ".join(f"{k} {n}" for k, n in kinds.items()) + ")"
