"""Stored tasks as JSON lines: one compact record a line, sorted by task id, so a store diffs line by line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_lines(path: Path, records: list[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        for r in sorted(records, key=lambda r: r["task_id"]):
            fh.write(json.dumps(r, sort_keys=True, ensure_ascii=False, separators=(",", ":")) + "\n")


def read_lines(path: Path) -> list[dict[str, Any]]:
    """The records of a store; none when the file does not exist yet."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
