"""Spec coverage: every requirement sentence of a spec maps to at least one check that tests it.

The mapping lives in the task's source, beside the checks:

    [[spec_coverage]]
    says = "`GET /items/{item_id}` answers"      # how the sentence starts
    checks = ["valid values are echoed with their types"]

Requirement units are read from the spec text: each bullet item (a line starting with `- `,
with its continuation lines) is one unit, and every other paragraph is cut into sentences
(at `.`, `!` or `?` followed by a space and a capital letter, a backtick, `*` or `(`; a fenced
code block or a table belongs to the unit before it; a short heading such as "Endpoints:" is not
a unit). A unit is covered when some entry's `says`, with
whitespace collapsed, starts it. `build_tasks.py --verify` fails a task (control
`spec_coverage`) when a unit is not covered, when an entry matches no unit, or when an entry
names a check the task does not have.

Applies to the fastapi family now; a django task opts in by having [[spec_coverage]] (its
entries then name tests, `file::test`, instead of checks).
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*(])")
ABBREVIATIONS = ("e.g.", "i.e.", "etc.", "vs.")
REQUIRED_FAMILIES = ("fastapi",)
HEADING = re.compile(r"[\w ]{1,30}:")  # "Endpoints:", "Dependencies:" introduce the units after them


def _collapse(text: str) -> str:
    return " ".join(text.split())


def _sentences(paragraph: str) -> list[str]:
    out: list[str] = []
    for piece in SENTENCE_END.split(paragraph):
        if out and out[-1].endswith(ABBREVIATIONS):
            out[-1] = f"{out[-1]} {piece}"
        else:
            out.append(piece)
    return out


def requirement_units(spec: str) -> list[str]:
    """The spec's bullet items and sentences, whitespace collapsed, in order."""
    units: list[str] = []
    in_fence = False
    block: list[str] = []

    def flush() -> None:
        if not block:
            return
        text = _collapse(" ".join(block))
        if block[0].lstrip().startswith("- "):
            units.append(text[2:])
        else:
            units.extend(_sentences(text))
        block.clear()

    for line in spec.strip().splitlines():
        stripped = line.strip()
        if stripped.startswith("```"):
            in_fence = not in_fence
            if in_fence:
                flush()
            continue
        if in_fence:
            if units:
                units[-1] += " " + _collapse(stripped)
            continue
        if not stripped or stripped.startswith("|"):  # a blank line, or a table row (part of the text before)
            flush()
            if stripped.startswith("|") and units:
                units[-1] += " " + stripped
            continue
        if stripped.startswith("- "):
            flush()
        block.append(stripped)
    flush()
    return [u for u in units if u and not HEADING.fullmatch(u)]


def coverage_problems(spec: str, entries: list[dict[str, Any]], known: set[str]) -> list[str]:
    """What is wrong with a task's mapping: uncovered units, entries matching nothing, unknown checks."""
    units = requirement_units(spec)
    problems: list[str] = []
    covered = [False] * len(units)
    for entry in entries:
        says = _collapse(str(entry.get("says", "")))
        names = entry.get("checks") or []
        if not says or not names:
            problems.append(f"a [[spec_coverage]] entry needs says and at least one check: {entry}")
            continue
        hits = [i for i, u in enumerate(units) if u.startswith(says)]
        if not hits:
            problems.append(f"says {says!r} starts no requirement sentence of the spec")
        for i in hits:
            covered[i] = True
        problems += [f"{says!r} names {n!r}, which is not a check of the task" for n in names if n not in known]
    problems += [f"not covered by any check: {u[:100]!r}" for u, ok in zip(units, covered, strict=True) if not ok]
    return problems


def task_coverage_problems(family: str, folder: Path, task: Any) -> list[str] | None:
    """Problems of one task's mapping; None when the family does not require one and the task has none."""
    meta = tomllib.loads((folder / "task.toml").read_text())
    entries = meta.get("spec_coverage")
    if entries is None and family not in REQUIRED_FAMILIES:
        return None
    if family == "fastapi":
        known = {c["name"] for c in task.grading["checks"]}
    else:
        known = set(task.grading.get("test_ids", []))
    return coverage_problems(meta["spec"], entries or [], known)


def coverage_controls(folder: Path, task: Any) -> list[Any]:
    """A `spec_coverage` control for build_tasks.py --verify (none where not required and absent)."""
    from sandbox_env.verify.base import Control

    problems = task_coverage_problems(task.family, folder, task)
    if problems is None:
        return []
    n = len(requirement_units(tomllib.loads((folder / "task.toml").read_text())["spec"]))
    detail = "; ".join(problems[:4]) if problems else f"all {n} requirement sentences map to checks"
    return [Control("spec_coverage", 0.0 if problems else 1.0, not problems, detail)]
