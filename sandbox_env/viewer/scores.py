"""A run's score with its uncertainty: the mean over tasks, a 95 % interval, pass@k and avg@k, and a paired comparison.

What is estimated. A task's score is the mean reward of its rollouts that have one; a run's
score is the mean of its tasks' scores (each task weighs the same however many rollouts it
got: with `-r k` for every task this is the mean over rollouts). The question a reader asks
is how much the number would move on another draw of tasks like these and another draw of
the model's samples, so the interval is a bootstrap over both levels: each of RESAMPLES
resamples draws the tasks with replacement and, within each drawn task of more than one
rollout, its rollouts with replacement; the interval is the 2.5th and 97.5th percentiles of
the resampled scores. One rollout a task: the bootstrap over tasks alone. The generator is
seeded (SEED), so one run always prints one interval.

pass@k and avg@k (when every task has at least k > 1 rollouts, k the fewest any task has):
avg@k is the run's score; pass@k the mean over tasks of the unbiased estimate
1 - C(n-c, k) / C(n, k) (n rollouts, c of them at reward 1.0) that at least one of k
samples solves the task.

Comparison. Two runs are compared on the tasks both hold, paired by task id: the difference
of their scores with a bootstrap interval drawn the same way (one resample of tasks serves
both runs, so task difficulty cancels); the difference is *beyond noise* when that interval
leaves out 0. Tasks in one run only are counted, never silently dropped.

Rollouts without a reward (a run cut short) count nowhere here; rollouts that errored keep
the reward their state earned, as the mean reward of summary.py does.
"""

from __future__ import annotations

import random
from math import comb
from typing import Any

RESAMPLES = 2000
SEED = 0
LEVEL = 0.95


def task_rewards(rollouts: list[dict[str, Any]]) -> dict[str, list[float]]:
    """Rewards by task id, in run order, of the rollouts that have one (one without a task id is a task of its own)."""
    out: dict[str, list[float]] = {}
    for i, r in enumerate(rollouts):
        if r.get("reward") is not None:
            out.setdefault(r.get("task_id") or f"rollout {r.get('n', i)}", []).append(float(r["reward"]))
    return out


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs)


def _resampled_task(rng: random.Random, rewards: list[float]) -> float:
    return rewards[0] if len(rewards) == 1 else _mean(rng.choices(rewards, k=len(rewards)))


def _percentiles(values: list[float]) -> tuple[float, float]:
    values = sorted(values)
    tail = (1 - LEVEL) / 2
    lo = values[int(tail * (len(values) - 1))]
    hi = values[int(round((1 - tail) * (len(values) - 1)))]
    return lo, hi


def interval(by_task: dict[str, list[float]]) -> tuple[float, float, float] | None:
    """(score, low, high) of the tasks' rewards; None without any."""
    tasks = sorted(by_task)
    if not tasks:
        return None
    score = _mean([_mean(by_task[t]) for t in tasks])
    rng = random.Random(SEED)
    draws = []
    for _ in range(RESAMPLES):
        picked = rng.choices(tasks, k=len(tasks))
        draws.append(_mean([_resampled_task(rng, by_task[t]) for t in picked]))
    lo, hi = _percentiles(draws)
    return score, min(lo, score), max(hi, score)


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased estimate that at least one of k samples out of n (c correct) is correct."""
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def at_k(by_task: dict[str, list[float]]) -> dict[str, float] | None:
    """{"k", "pass@k", "avg@k"} with k the fewest rollouts any task has, or None when that is 1 (or no task)."""
    if not by_task:
        return None
    k = min(len(v) for v in by_task.values())
    if k < 2:
        return None
    passes = [pass_at_k(len(v), sum(1 for x in v if x == 1.0), k) for v in by_task.values()]
    return {"k": k, "pass@k": _mean(passes), "avg@k": _mean([_mean(v) for v in by_task.values()])}


def score_row(group: str, rollouts: list[dict[str, Any]]) -> dict[str, Any]:
    """One row of the report: group, tasks, rollouts, score, ci_low, ci_high, and k / pass@k / avg@k when k > 1."""
    by_task = task_rewards(rollouts)
    est = interval(by_task)
    row: dict[str, Any] = {"group": group, "tasks": len(by_task), "rollouts": sum(len(v) for v in by_task.values())}
    row.update(dict(zip(("score", "ci_low", "ci_high"), est, strict=True)) if est else {"score": None})
    row.update(at_k(by_task) or {})
    return row


def score_table(rollouts: list[dict[str, Any]], by: tuple[str, ...] = ("family", "difficulty", "category")) -> dict[str, Any]:
    """{"overall": row, <key>: [row per value]} for each grouping key."""
    out: dict[str, Any] = {"overall": score_row("all", rollouts)}
    for key in by:
        groups: dict[str, list[dict[str, Any]]] = {}
        for r in rollouts:
            groups.setdefault(str(r.get(key) or "?"), []).append(r)
        out[key] = [score_row(value, rs) for value, rs in sorted(groups.items())]
    return out


def compare(run: list[dict[str, Any]], base: list[dict[str, Any]]) -> dict[str, Any]:
    """The paired difference run - base over their common tasks, its interval, and whether it is beyond noise."""
    a, b = task_rewards(run), task_rewards(base)
    common = sorted(set(a) & set(b))
    out: dict[str, Any] = {"common_tasks": len(common), "only_run": len(set(a) - set(b)), "only_base": len(set(b) - set(a))}
    if not common:
        return {**out, "difference": None}
    diff = _mean([_mean(a[t]) - _mean(b[t]) for t in common])
    rng = random.Random(SEED)
    draws = []
    for _ in range(RESAMPLES):
        picked = rng.choices(common, k=len(common))
        draws.append(_mean([_resampled_task(rng, a[t]) - _resampled_task(rng, b[t]) for t in picked]))
    lo, hi = _percentiles(draws)
    lo, hi = min(lo, diff), max(hi, diff)
    return {**out, "difference": diff, "ci_low": lo, "ci_high": hi, "beyond_noise": lo > 0 or hi < 0}


def ci_text(row: dict[str, Any]) -> str:
    """ "0.712 [0.650, 0.770]", or "–" without a score."""
    if row.get("score") is None:
        return "–"
    return f"{row['score']:.3f} [{row['ci_low']:.3f}, {row['ci_high']:.3f}]"
