"""A repair that fixes only one of its two bugs still scores below 1.0, in the families graded by checks and tests.

Threat: a repair task made of two bugs (a "pair", generate/repair_logic.py) shows the symptom
of whichever bug its report meets first. A policy that read the source answers the report:
it finds the bug behind the reported failure, fixes it, and stops. Grading is the base task's
whole grader (every check with values drawn afresh, every visible and hidden test), and a pair
is only kept when each bug alone is still seen failing, so the half-repaired deliverable, for
either half, scores below 1.0 through the real grade, and never as a harness fault.
"""

from __future__ import annotations

import pytest

from sandbox_env.families import grade_final
from sandbox_env.generate import repair_store
from sandbox_env.grading.grader import Grader
from sandbox_env.stages.compile import compile_all
from sandbox_env.stages.repair import bases

pytestmark = pytest.mark.docker


def _first_pair(family: str) -> tuple[dict, object]:
    records = sorted(
        (r for r in repair_store.read() if r["family"] == family and r["kind"] == "pair"), key=lambda r: r["task_id"]
    )
    if not records:
        pytest.skip(f"no stored {family} pair repair")
    record = records[0]
    row = next(r for r in compile_all() if r.task_id == record["task_id"])
    return record, row


@pytest.mark.parametrize("family", ["fastapi", "django"])
async def test_fixing_one_of_a_pairs_two_bugs_leaves_the_task_below_one(backend, image, family):
    record, row = _first_pair(family)
    base = next(b for b in bases(family) if b["row"].task_id == record["base_task"])
    singles = {s["parts"][0]: s for s in base["singles"]}
    grader = Grader(backend, image)
    for name in record["parts"]:  # the other bug fixed, this one left
        left = singles[name]["files"]
        half = await grade_final(row, {"files": {p: left[p] for p in row.collect}}, grader)
        assert half.score < 1.0, f"{row.task_id}: fixing all but {name} scored {half.score}"
        assert not half.scoring_error and not half.tampered, f"{row.task_id}: {half.scoring_error or half.reason}"
    whole = await grade_final(row, {"files": {p: base["ref"][p] for p in row.collect}}, grader)
    assert whole.score == 1.0, f"{row.task_id}: the base reference scored {whole.score}: {whole.reason}"
