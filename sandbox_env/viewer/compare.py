"""Two runs of the same tasks side by side: per task, the score in each, the change, and which flipped.

`websandbox view RUN --compare BASELINE` reads both runs (either stack, any mix) and
matches their rollouts by task id. Decisions:
- A task's score in a run is the mean reward over its rollouts that have one (a run of
  several rollouts a task compares as pass rates); the rollouts, how many errored and the
  first rollout's reason are kept beside it, so a drop caused by a broken server reads as
  such rather than as a worse model.
- The change is this run's score minus the baseline's: positive is better here.
- A task is *solved* in a run when every rollout with a reward scored 1.0. A task flipped
  when it is solved in one run and not the other: `gained` (solved here only) or `lost`
  (solved in the baseline only). A partial score that moves is a change, not a flip.
- Tasks in one run only are listed with the other side empty and count in the summary,
  so comparing runs of different task sets is visible, not silently narrowed.
"""

from __future__ import annotations

from typing import Any

from sandbox_env.viewer.record import Run
from sandbox_env.viewer.summary import family_table


def reason_of(rollout: dict[str, Any]) -> str:
    """What the table says about one rollout: its scoring error, grade reason or error."""
    if rollout.get("scoring_error"):
        return f"scoring error: {rollout['scoring_error']}"
    grade = rollout.get("grade")
    if grade and grade.get("reason"):
        return str(grade["reason"])
    return str(rollout.get("error") or "")


def task_scores(rollouts: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per task id: family, rollouts, score (mean reward, None without one), solved, errored, reason."""
    by_task: dict[str, list[dict[str, Any]]] = {}
    for r in rollouts:
        by_task.setdefault(r["task_id"], []).append(r)
    out = {}
    for task, rs in by_task.items():
        rewards = [r["reward"] for r in rs if r["reward"] is not None]
        out[task] = {
            "family": rs[0]["family"],
            "rollouts": len(rs),
            "score": sum(rewards) / len(rewards) if rewards else None,
            "solved": bool(rewards) and all(x == 1.0 for x in rewards),
            "errored": sum(1 for r in rs if r["error"]),
            "reason": reason_of(rs[0]),
        }
    return out


def flip_of(here: dict[str, Any] | None, base: dict[str, Any] | None) -> str | None:
    if here is None or base is None or here["solved"] == base["solved"]:
        return None
    return "gained" if here["solved"] else "lost"


def compare_runs(run: Run, base: Run) -> dict[str, Any]:
    """The comparison the page shows: the baseline's description, one row a task, and the counts."""
    here, there = task_scores(run.rollouts), task_scores(base.rollouts)
    tasks = []
    for task in sorted(set(here) | set(there)):
        a, b = here.get(task), there.get(task)
        change = a["score"] - b["score"] if a and b and a["score"] is not None and b["score"] is not None else None
        tasks.append(
            {
                "task_id": task,
                "family": (a or b)["family"],
                "here": a,
                "base": b,
                "change": change,
                "flip": flip_of(a, b),
            }
        )
    shared = [t for t in tasks if t["here"] and t["base"]]
    changes = [t["change"] for t in shared if t["change"] is not None]
    summary = {
        "shared": len(shared),
        "only_here": sum(1 for t in tasks if not t["base"]),
        "only_base": sum(1 for t in tasks if not t["here"]),
        "gained": sum(1 for t in tasks if t["flip"] == "gained"),
        "lost": sum(1 for t in tasks if t["flip"] == "lost"),
        "better": sum(1 for x in changes if x > 0),
        "worse": sum(1 for x in changes if x < 0),
        "same": sum(1 for x in changes if x == 0),
        "mean_change": sum(changes) / len(changes) if changes else None,
    }
    return {
        "base": {"source": base.source, "format": base.format, "meta": base.meta, "families": family_table(base.rollouts)},
        "tasks": tasks,
        "summary": summary,
    }
