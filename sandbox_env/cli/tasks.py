"""`websandbox tasks`: every task id with what the filters of `websandbox eval` and load_environment select by.

One task a line, in columns, for reading or for `grep` and `awk`; the header is the first
line. Smoke tasks are listed too: they run only when named (by family or task id), which is
exactly when their ids matter. The filters go through `select_rows`, so a wrong family or
split is refused with the same line `websandbox eval` gives.
"""

from __future__ import annotations

from typing import Any

from sandbox_env.dataset import load_rows, select_rows

COLUMNS = ("task_id", "family", "source", "split", "difficulty", "category")


def task_lines(rows: list[dict[str, Any]]) -> list[str]:
    """A header and one line a row, each column as wide as its widest value."""
    table = [COLUMNS, *([str(r["info"].get(c, "")) for c in COLUMNS] for r in rows)]
    widths = [max(len(line[i]) for line in table) for i in range(len(COLUMNS))]
    return ["  ".join(value.ljust(w) for value, w in zip(line, widths, strict=True)).rstrip() for line in table]


def list_tasks(family: str | None = None, split: str = "all") -> list[str]:
    """The lines of `websandbox tasks`: every task of `family` (default: all) in `split` (default: all)."""
    return task_lines(select_rows(load_rows(), family=family, split=split, include_smoke=True))
