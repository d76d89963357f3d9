"""Row-by-row comparison of an orm answer with the expected rows, on the host.

The answer arrives in the session probe's tagged encoding (docs/architecture.md):
a list is {"list": [...]}, a tuple {"tuple": [...]}, anything that is not a plain
value {"other": type, "repr": ...}, a missing name {"missing": true}. The encoder runs
in the model's session, so the whole tagged value is validated first (orm_probe.py): a
malformed one is the submission's 0.0, marked as tampering, never a harness fault.

The contract, and how each part is decided:
- `result` is a list (not a tuple, not a QuerySet) of tuples (not lists, not named
  tuples, not dicts); each value is None, bool, int, float or str.
- Row count and row order are exact; strings are exact (case included).
- Numbers: two ints must be equal; otherwise (an int and a float, or two floats)
  they must agree within REL_TOL relative or ABS_TOL absolute, so a count given as
  3.0 passes and so does float noise. A bool is never a number: True is not 1.
- None matches only None.
- An int too large for a float (the grammar allows any int JSON can carry) is compared
  exactly, never converted: it matches only an equal int, and no float (no finite float
  is within tolerance of it). Every comparison is total on what the grammar admits, so
  no answer can make the host raise, which grade_final would take for a harness fault.

`row_evidence` keeps the rows themselves for readers of a grade (the run viewer shows
expected and received side by side): a window of at most EVIDENCE_ROWS rows around
the first difference, and where it is, found by the same rules as `compare`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.families.orm_probe import probe_problem

REL_TOL = 1e-6
ABS_TOL = 1e-9
_PLAIN = (type(None), bool, int, float, str)
_NUMBERS = (int, float)
EVIDENCE_ROWS = 40


@dataclass
class Comparison:
    """The outcome: passed only if every check passed; reason is the first failure."""

    passed: bool
    reason: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    malformed: bool = False  # the probe's value broke its grammar: the session was altered


def _describe(tagged: Any) -> str:
    """A short name for what a tagged value is, for reasons a reader understands."""
    if isinstance(tagged, dict):
        if "list" in tagged:
            return "a list"
        if "tuple" in tagged:
            return "a tuple"
        if "other" in tagged:
            kind = str(tagged["other"]).rsplit(".", 1)[-1]
            text = str(tagged.get("repr", ""))
            return f"a {kind} ({text[:80]}{'...' if len(text) > 80 else ''})"
        return "an unknown value"
    return f"a {type(tagged).__name__} ({tagged!r:.80})"


MALFORMED = "`result` came back from the session malformed (the probe's encoding was altered)"


def decode_result(tagged: Any) -> tuple[list[tuple] | None, str]:
    """Rows from the probe's tagged value, or None and why it is not a list of tuples of plain values."""
    problem = probe_problem(tagged)
    if problem is not None:
        return None, f"{MALFORMED}: {problem}"
    if isinstance(tagged, dict) and tagged.get("missing"):
        return None, "`result` is not defined in the Python session"
    if isinstance(tagged, dict) and "unreadable" in tagged:
        return None, f"`result` could not be read from the session: {tagged['unreadable']}"
    if not (isinstance(tagged, dict) and "list" in tagged):
        what = _describe(tagged)
        hint = ""
        if isinstance(tagged, dict) and "QuerySet" in str(tagged.get("other", "")):
            hint = "; turn the QuerySet into a list of tuples"
        return None, f"`result` is {what}, not a list of tuples{hint}"
    rows: list[tuple] = []
    for i, item in enumerate(tagged["list"]):
        if not (isinstance(item, dict) and "tuple" in item):
            contract = " (the contract is a list of tuples)" if isinstance(item, dict) and "list" in item else ""
            return None, f"row {i} is {_describe(item)}, not a tuple{contract}"
        values = []
        for j, value in enumerate(item["tuple"]):
            if type(value) not in _PLAIN or (type(value) is float and not math.isfinite(value)):
                return None, (
                    f"row {i} column {j} is {_describe(value)}, not a plain value "
                    "(str, int, float, bool or None); render it as the task says"
                )
            values.append(value)
        rows.append(tuple(values))
    return rows, ""


def values_match(expected: Any, got: Any) -> bool:
    """One value against the expected one, by the rules in the module docstring."""
    if type(expected) is bool or type(got) is bool:
        return type(expected) is bool and type(got) is bool and expected == got
    if expected is None or got is None:
        return expected is None and got is None
    if type(expected) in _NUMBERS and type(got) in _NUMBERS:
        if type(expected) is int and type(got) is int:
            return expected == got
        try:
            return math.isclose(expected, got, rel_tol=REL_TOL, abs_tol=ABS_TOL)
        except OverflowError:  # an int beyond any float: no finite float is near it
            return False
    if type(expected) is str and type(got) is str:
        return expected == got
    return False


def row_mismatch(expected: tuple | list, got: tuple) -> str:
    """Why one row differs from the expected one ("" when it matches)."""
    if len(got) != len(expected):
        return f"has {len(got)} values, expected {len(expected)}: expected {tuple(expected)!r}, got {got!r}"
    for j, (e, g) in enumerate(zip(expected, got, strict=True)):
        if not values_match(e, g):
            return f"column {j}: expected {e!r}, got {g!r}"
    return ""


def _loose_number(v: int | float) -> tuple:
    try:
        return ("num", f"{float(v):.9g}")
    except OverflowError:  # an int beyond any float: only itself
        return ("int", v)


def _loose_key(row: tuple | list) -> tuple:
    """A hashable key of a row, numbers rounded to 9 significant digits (ints and floats alike)."""
    return tuple(_loose_number(v) if type(v) in _NUMBERS else (type(v).__name__, v) for v in row)


def _same_rows_any_order(expected: list, got: list[tuple]) -> bool:
    """Whether the rows match as a multiset, approximately; used only to explain a failure."""
    return Counter(map(_loose_key, expected)) == Counter(map(_loose_key, got))


def compare(tagged: Any, expected: list[list | tuple]) -> Comparison:
    """Grade a tagged `result` against the expected rows: shape, row count, then rows in order."""
    rows, why = decode_result(tagged)
    shape = {"name": "result_shape", "passed": rows is not None, "detail": why or "a list of tuples of plain values"}
    if rows is None:
        skipped = "not compared: " + why
        return Comparison(
            False,
            why,
            [
                shape,
                {"name": "row_count", "passed": False, "detail": skipped},
                {"name": "rows_in_order", "passed": False, "detail": skipped},
            ],
            malformed=why.startswith(MALFORMED),
        )
    count_ok = len(rows) == len(expected)
    count = {"name": "row_count", "passed": count_ok, "detail": f"expected {len(expected)} rows, got {len(rows)}"}
    first_bad = ""
    for i, (e, g) in enumerate(zip(expected, rows, strict=False)):
        why_row = row_mismatch(e, g)
        if why_row:
            first_bad = f"row {i} {why_row}"
            break
    if not first_bad and not count_ok:
        n = min(len(rows), len(expected))
        first_bad = (
            f"row {n} is missing: expected {tuple(expected[n])!r}"
            if len(rows) < len(expected)
            else f"row {n} is extra: {rows[n]!r}"
        )
    if first_bad and count_ok and _same_rows_any_order(expected, rows):
        first_bad = f"the right rows in the wrong order: {first_bad}"
    order = {"name": "rows_in_order", "passed": not first_bad, "detail": first_bad or "every row matches"}
    checks = [shape, count, order]
    if count_ok and not first_bad:
        return Comparison(True, f"all {len(rows)} rows match, in order", checks)
    reason = count["detail"] + (f"; {first_bad}" if first_bad else "") if not count_ok else first_bad
    return Comparison(False, reason, checks)


def first_difference(expected: list, got: list[tuple]) -> dict[str, int | None] | None:
    """Where `got` first departs from `expected`: {"row", "col"} (col None: the whole row), or None."""
    for i, (e, g) in enumerate(zip(expected, got, strict=False)):
        if len(e) != len(g):
            return {"row": i, "col": None}
        for j, (ev, gv) in enumerate(zip(e, g, strict=True)):
            if not values_match(ev, gv):
                return {"row": i, "col": j}
    if len(expected) != len(got):
        return {"row": min(len(expected), len(got)), "col": None}
    return None


def row_evidence(tagged: Any, expected: list, limit: int = EVIDENCE_ROWS) -> dict[str, Any] | None:
    """Expected and received rows for a reader: a window of at most `limit` rows around the first difference.

    None when `result` is not a list of tuples (the shape check says why). Row indices in
    `first` are absolute; the window starts at `offset`.
    """
    rows, _ = decode_result(tagged)
    if rows is None:
        return None
    first = first_difference(expected, rows)
    offset = 0 if first is None else max(0, min(first["row"] - limit // 4, max(len(expected), len(rows)) - limit))
    return {
        "offset": offset,
        "expected_count": len(expected),
        "received_count": len(rows),
        "first": first,
        "expected": [list(r) for r in expected[offset : offset + limit]],
        "received": [list(r) for r in rows[offset : offset + limit]],
    }
