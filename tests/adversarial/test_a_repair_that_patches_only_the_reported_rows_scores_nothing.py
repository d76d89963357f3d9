"""A repair that patches only what the report shows still scores nothing.

Threat: the policy reads the behaviour report of a repair task (generate/repair_logic.py)
and answers it instead of the task: it keeps the broken cell and overwrites the rows the
report shows with the expected rows the report gives. The report shows at most two rows
(and never more than half of the answer), and grading is the base task's over every row,
so such an answer keeps its other wrong rows and scores 0.0 through the real grade.
"""

from __future__ import annotations

import ast
import re

import pytest

from sandbox_env.generate import repair_store
from sandbox_env.stages.compile import compile_all
from sandbox_env.verify import reference_calls
from sandbox_env.verify.sensitivity import OrmSession

pytestmark = pytest.mark.docker
SHOWN = re.compile(r"row (\d+): expected (\(.*?\)), got")


def _patched(cell: str, report: str) -> str:
    """The broken cell, then the reported rows put in place: what answering the report alone looks like."""
    fixes = [(int(n) - 1, ast.literal_eval(row)) for n, row in SHOWN.findall(report)]
    lines = [cell, "result = list(result)"]
    for i, row in fixes:
        lines.append(f"result[{i}:{i + 1}] = [{row!r}]")
    return "\n".join(lines)


async def test_patching_the_reported_rows_of_a_broken_cell_scores_zero(backend, image):
    repairs = [r for r in compile_all() if r.source == "repair" and r.family == "orm" and r.fixture_seeds[0] == 0]
    chosen = [r for r in repairs if len(SHOWN.findall(r.prompt)) >= 1 and "row positions differ" in r.prompt][:3]
    if not chosen:
        pytest.skip("no stored orm repair whose report shows expected rows")
    async with OrmSession(backend, image) as session:  # the image's variant 0, the variant the report was made on
        for task in chosen:
            cell = task.files[repair_store.ORM_CELL]
            shown = SHOWN.findall(task.prompt)
            patched = await session.grade(_patched(cell, task.prompt), task)
            assert patched.score == 0.0 and not patched.scoring_error, f"{task.task_id}: {patched.reason}"
            # the patch did take: the reported rows are now right, and only the unreported ones are wrong
            rows = patched.checks[-1].get("rows") or {}
            first = (rows.get("first") or {}).get("row")
            assert first is None or first not in {int(n) - 1 for n, _ in shown}, task.task_id
            reference = await session.grade(reference_calls("orm", task.task_id)[0]["args"]["code"], task)
            assert reference.score == 1.0, f"{task.task_id}: {reference.reason}"
