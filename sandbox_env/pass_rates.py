"""Measured pass rates: a sidecar file of each task's avg@k under a named model, and what selection does with it.

`websandbox calibrate RUN ...` (cli/calibrate.py) writes the file from saved runs of a model
(`vf-eval websandbox -m MODEL -r K`, either stack): per task id, `avg` (the mean reward over its
rollouts: avg@k), `k` (how many rollouts), and the file's `model`. The file is the user's: it
lives wherever they keep it, never in the package, and names the model it measured, because a
pass rate is a property of a task *and* a policy.

Selection (`dataset.select_rows`, so every front door alike) reads it when given `pass_rates`:
- each measured task's `difficulty` becomes the band its pass rate falls in (DIFFICULTY_BANDS:
  at least 0.8 easy, at least 0.3 medium, else hard); its structural label stays in
  `structural_difficulty`, and `pass_rate` is recorded beside it; an unmeasured task keeps its
  structural label (the issue of a curriculum is what the policy cannot do yet, which only a
  measurement says);
- `min_pass_rate` / `max_pass_rate` keep the tasks whose measured rate lies within the bounds
  (for curricula that skip what the policy always or never solves); an unmeasured task is kept,
  since nothing says it is outside them.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

VERSION = 1
DIFFICULTY_BANDS = ((0.8, "easy"), (0.3, "medium"), (0.0, "hard"))


def band(rate: float) -> str:
    return next(name for floor, name in DIFFICULTY_BANDS if rate >= floor)


def rates_from(by_task: dict[str, list[float]], model: str) -> dict[str, Any]:
    """The sidecar's content from rewards by task id."""
    return {
        "version": VERSION,
        "model": model,
        "tasks": {t: {"avg": sum(v) / len(v), "k": len(v)} for t, v in sorted(by_task.items()) if v},
    }


def write(path: Path, content: dict[str, Any]) -> None:
    path.write_text(json.dumps(content, indent=1, sort_keys=True) + "\n")


def read(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"pass_rates: {p} is not a file; write one with `websandbox calibrate RUN --out {p}`")
    content = json.loads(p.read_text())
    if content.get("version") != VERSION or not isinstance(content.get("tasks"), dict):
        raise ValueError(f"pass_rates: {p} is not a pass-rate file of version {VERSION} (websandbox calibrate writes one)")
    return content


def annotate(rows: list[dict[str, Any]], path: str | Path) -> list[dict[str, Any]]:
    """The rows, each measured one with its pass rate and its difficulty from that rate (the structural label kept)."""
    tasks = read(path)["tasks"]
    out = []
    for row in rows:
        measured = tasks.get(row["info"]["task_id"])
        if measured is None:
            out.append(row)
            continue
        rate = float(measured["avg"])
        info = {**row["info"], "pass_rate": rate, "structural_difficulty": row["info"]["difficulty"], "difficulty": band(rate)}
        out.append({**row, "info": info})
    return out


def within(rows: list[dict[str, Any]], low: float | None, high: float | None) -> list[dict[str, Any]]:
    """The rows whose measured rate lies within the bounds, and every unmeasured one."""
    rate = lambda r: r["info"].get("pass_rate")  # noqa: E731
    return [r for r in rows if rate(r) is None or ((low is None or rate(r) >= low) and (high is None or rate(r) <= high))]
