"""The rollout table as CSV or JSONL: `websandbox view RUN --export csv|jsonl`, and the page's export buttons.

One row a rollout, in run order, with the table's columns (COLUMNS): no transcript, no grade
checks (the report holds those). The page's buttons export the rows it shows (after its
filters, in its order) with the same columns and the same text: viewer.js `tableRow` and
`csvText` follow this module, and a browser test compares the two.

Decisions:
- Values: JSONL keeps JSON's own (null, true, 0.5); CSV writes null as an empty cell, booleans
  as `true`/`false`, and numbers as JavaScript writes them (`1`, not `1.0`), so both exports
  of a run read the same.
- The text cells carry the model's and the grader's words (reasons, errors). A spreadsheet
  runs a cell that starts with `=`, `+`, `-` or `@` as a formula, so such a CSV text cell gets
  a leading `'` (shown as text, not run); JSONL keeps every text as it is.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

from sandbox_env.viewer.compare import reason_of

COLUMNS = (
    "n",
    "example_id",
    "family",
    "task_id",
    "difficulty",
    "category",
    "reward",
    "scoring_error",
    "tampered",
    "error_kind",
    "error",
    "truncated",
    "cut_replies",
    "replayed_after",
    "turns",
    "input_tokens",
    "output_tokens",
    "seconds",
    "stop",
    "reason",
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _finite(value: Any) -> Any:
    return None if isinstance(value, float) and not math.isfinite(value) else value


def table_row(rollout: dict[str, Any]) -> dict[str, Any]:
    """One rollout (record.py) as a row of the table, keyed by COLUMNS."""
    tokens = rollout.get("tokens") or {}
    row = {
        "n": rollout.get("n"),
        "example_id": rollout.get("example_id"),
        "family": rollout.get("family"),
        "task_id": rollout.get("task_id"),
        "difficulty": rollout.get("difficulty"),
        "category": rollout.get("category"),
        "reward": rollout.get("reward"),
        "scoring_error": rollout.get("scoring_error"),
        "tampered": bool(rollout.get("tampered")),
        "error_kind": rollout.get("error_kind") if rollout.get("error") else None,
        "error": rollout.get("error"),
        "truncated": rollout.get("truncated"),
        "cut_replies": rollout.get("cut_replies"),
        "replayed_after": "; ".join(rollout["replayed_after"]) if rollout.get("replayed_after") else None,
        "turns": rollout.get("turns"),
        "input_tokens": tokens.get("input"),
        "output_tokens": tokens.get("output"),
        "seconds": rollout.get("seconds"),
        "stop": rollout.get("stop"),
        "reason": reason_of(rollout),
    }
    return {k: _finite(v) for k, v in row.items()}


def js_number(x: float) -> str:
    """A float as JavaScript's String(x) writes it: `1` for 1.0, `0.00005` for 5e-05 (within 1e-7 to 1e21)."""
    if x.is_integer() and abs(x) < 1e21:
        return str(int(x))
    text = repr(x)
    return format(Decimal(text), "f") if "e" in text and 1e-7 <= abs(x) < 1e21 else text.replace("e-0", "e-")


def csv_cell(value: Any) -> str:
    """One value as CSV text (see the module's decisions)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return js_number(value)
    if isinstance(value, int):
        return str(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return "'" + text if text.startswith(FORMULA_START) else text


def csv_field(text: str) -> str:
    """A cell quoted (RFC 4180: `"` doubled) when it holds `,`, `"`, CR or LF; written here rather than by
    the csv module, which leaves a lone CR unquoted when lines end in LF."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\r\n') else text


def to_csv(rollouts: list[dict[str, Any]]) -> str:
    """The table as CSV: a header line, then one record a rollout, lines ending in LF."""
    lines = [",".join(COLUMNS)]
    for r in rollouts:
        row = table_row(r)
        lines.append(",".join(csv_field(csv_cell(row[c])) for c in COLUMNS))
    return "\n".join(lines) + "\n"


def to_jsonl(rollouts: list[dict[str, Any]]) -> str:
    """The table as JSON Lines: one object a rollout, keyed by COLUMNS."""
    return "".join(json.dumps(table_row(r), ensure_ascii=False) + "\n" for r in rollouts)


EXPORTS = {"csv": to_csv, "jsonl": to_jsonl}
