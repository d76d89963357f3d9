"""The runs index: one line a saved run (when written, model, rollouts, mean reward, errored).

`websandbox view --list` prints it for a terminal; the loopback server (`--serve` without a
run, or its `/runs` page) shows it as a page whose lines open each run.

Decisions:
- A run is summarised from what the viewer itself reads (`load_run`, then the per-family
  table's total row), so the index and the run's page never disagree. Reading a large run
  costs a fraction of a second; `Summaries` keeps each run's summary until its files change
  (runs.signature), so a server asked again and again reads a run again only when it grew.
- The date is when the run's results (or traces) were last written: every run has one,
  whichever stack made it, and it is the order of the list (newest first). The date a run
  saved about itself, where it saved one, is kept as `started`.
- A folder that looks like a run and cannot be read is listed with what went wrong rather
  than left out, so a run that is not shown is one that was not found.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path
from typing import Any

from sandbox_env.viewer.load import load_run
from sandbox_env.viewer.runs import find_runs, run_id, signature, written
from sandbox_env.viewer.summary import family_table


def _when(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M") if epoch else "?"


def summarize(run: Path) -> dict[str, Any]:
    """One run's line: id, path, format, model, date (last written), started, rollouts, mean_reward,
    errored, problems (how many), unreadable (what went wrong, or None)."""
    line: dict[str, Any] = {"id": run_id(run), "path": str(run), "date": _when(written(run)), "written": written(run)}
    try:
        loaded = load_run(run)
    except (OSError, ValueError) as exc:  # RunFormatError is a ValueError
        empty = {"rollouts": 0, "mean_reward": None, "errored": 0, "problems": 1}
        return line | {"format": "?", "model": None, "started": None, **empty, "unreadable": str(exc)}
    total = family_table(loaded.rollouts)[-1] if loaded.rollouts else {"mean_reward": None, "errored": 0}
    return line | {
        "format": loaded.format,
        "model": loaded.meta.get("model"),
        "started": loaded.meta.get("date"),
        "rollouts": len(loaded.rollouts),
        "mean_reward": total["mean_reward"],
        "errored": total["errored"],
        "problems": len(loaded.problems),
        "unreadable": None,
    }


class Summaries:
    """Summaries of the runs under some roots, each read again only when its files changed."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = roots
        self._cache: dict[Path, tuple[str, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def runs(self) -> list[dict[str, Any]]:
        """Every run found now, newest first."""
        found = find_runs(self.roots)
        with self._lock:
            lines = [self._line(run) for run in found]
            self._cache = {run: self._cache[run] for run in found if run in self._cache}
        return lines

    def _line(self, run: Path) -> dict[str, Any]:
        sig = signature(run)
        cached = self._cache.get(run)
        if cached is None or cached[0] != sig:
            cached = (sig, summarize(run))
            self._cache[run] = cached
        return cached[1]


def _mean(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _shown(path: str, cwd: Path) -> str:
    try:
        return str(Path(path).relative_to(cwd))
    except ValueError:
        return path


def list_text(lines: list[dict[str, Any]], cwd: Path) -> str:
    """The index as an aligned text table, newest first; paths relative to `cwd` where they are below it."""
    head = ("written", "model", "format", "rollouts", "mean", "errored", "run")
    rows = [
        (
            line["date"],
            str(line["model"] or "?"),
            line["format"],
            str(line["rollouts"]),
            _mean(line["mean_reward"]),
            str(line["errored"]),
            _shown(line["path"], cwd) + (f"  (unreadable: {line['unreadable']})" if line["unreadable"] else ""),
        )
        for line in lines
    ]
    widths = [max(len(r[i]) for r in (head, *rows)) for i in range(len(head) - 1)]
    right = {3, 4, 5}  # numbers

    def fmt(row: tuple[str, ...]) -> str:
        cells = [c.rjust(w) if i in right else c.ljust(w) for i, (c, w) in enumerate(zip(row, widths, strict=False))]
        return "  ".join([*cells, row[-1]]).rstrip()

    return "\n".join(fmt(r) for r in (head, *rows))
