"""Verified repair tasks as JSON lines, and what turns a line into a task row over its base task.

`python -m sandbox_env.stages.repair` verifies repair tasks in containers and writes
sandbox_env/data/repair_tasks.jsonl (committed); `build_tasks.py` reads it with no container
and compiles each line over its base task (a hand-written task or a generated orm task):
the base's spec, grader, checks, tests and rows, unchanged, plus the broken deliverable in
/workspace and the behaviour report in the prompt.

A line holds: task_id, base_task, family, kind (mutant, wrong, naive, pair), parts (what it
is made of, for the record only: never shown), files (the broken deliverables, normalised),
report, split (the base's), difficulty and measures (repair_logic.measures).

Setup per family: fastapi and django lay the broken files out in /workspace in place of the
deliverable (the django grader still resets the rest of the tree); orm writes the cell to
/workspace/query.py and runs it once in the session (grading["setup_cell"]), so `result`
starts as the broken answer: the null policy of a repair task is the broken code as it is.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sandbox_env.constants import PACKAGE_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.generate.task_lines import read_lines, write_lines

REPAIR_FILE = PACKAGE_DIR / "data" / "repair_tasks.jsonl"
ORM_CELL = "query.py"


def write(path: Path, records: list[dict[str, Any]]) -> None:
    write_lines(path, records)


def read(path: Path = REPAIR_FILE) -> list[dict[str, Any]]:
    return read_lines(path)


def repair_section(family: str, files: dict[str, str], report: str) -> str:
    """The part of the prompt that a repair task adds to its base task's."""
    if family == "orm":
        where = (
            f"A cell written for this task is in /workspace/{ORM_CELL}. It has already been run once in your "
            "session, so `result` now holds its answer, and that answer is wrong. What was seen when it ran on "
            "a copy of the shop database (your session's copy may hold other rows):"
        )
        after = (
            "Make the cell right and leave the right answer in `result` (for example, fix the file and run it "
            f"with exec(open('/workspace/{ORM_CELL}').read())). Only `result` is graded, as the contract says, "
            "over the whole task: every row, on data other than the sample above."
        )
    elif family == "fastapi":
        where = (
            "/workspace/app.py already holds an implementation of this specification, and it does not meet it. "
            "What a test run of it observed:"
        )
        after = (
            "Repair /workspace/app.py so that the whole specification holds. Every behaviour it states is "
            "checked, with other values than these, not only the one reported. The repair scores 1.0 only "
            "when every check passes, and 0.0 otherwise."
        )
    else:
        paths = ", ".join(sorted(files))
        verb = "holds" if len(files) == 1 else "hold"
        where = f"{paths} already {verb} an implementation, and it does not meet the specification. A test run said:"
        after = (
            f"Repair {paths} so that the whole specification holds: the hidden tests check all of it, with "
            "other data, not only what is reported."
        )
    return f"\n\n## Repair\n\n{where}\n\n{report.strip()}\n\n{after}\n"


def _django_prompt(prompt: str) -> str:
    prompt = prompt.replace("(present now as a stub)", "(present now, with a broken implementation)")
    return prompt.replace("(each present now as a stub)", "(each present now, some with a broken implementation)")


def compile_repair(record: dict[str, Any], base: TaskRow, alts: Sequence[str] = ()) -> TaskRow:
    """The repair task's row: the base task's grading, the broken files in /workspace, the report in the prompt.

    `alts`: the names of the base task's alt_* answers (correct answers written another way, which
    are correct answers of the repair too); they go into `measures["alts"]`.
    """
    family = base.family
    broken = dict(record["files"])
    grading = dict(base.grading)
    prompt = base.prompt
    if family == "orm":
        files = {ORM_CELL: broken[ORM_CELL]}
        grading["setup_cell"] = ORM_CELL
    elif family == "django":
        files = {**base.files, **broken}
        prompt = _django_prompt(prompt)
    else:
        files = {**base.files, **broken}
        grading["scoring"] = "all"  # the broken app passes most checks: a share would pay for doing nothing
    return TaskRow(
        task_id=record["task_id"],
        family=family,
        difficulty=record["difficulty"],
        category=base.category,
        prompt=prompt.rstrip() + repair_section(family, broken, record["report"]),
        files=files,
        collect=list(base.collect),
        grading=grading,
        source="repair",
        split=base.split,
        signature=f"repair:{base.signature or base.task_id}",
        fixture_seeds=list(base.fixture_seeds),
        measures={**record["measures"], "base_task": record["base_task"], "kind": record["kind"], "alts": list(alts)},
        base_task=record["base_task"],
    )
