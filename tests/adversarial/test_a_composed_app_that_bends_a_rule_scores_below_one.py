"""A composed app that keeps every part right but bends one app-wide rule scores below 1.0, never a harness fault.

Threat: a composed task (generate/compose_logic.py) grades three or four parts and the rules
across them. A policy that read the source knows each part's checks are its hand-written
task's checks under a prefix, and may serve the parts well while cutting a corner on the rules:
the header stamped only on answers the parts produce (not on 404s of unknown paths), the key
asked of every part (simpler than one), validation errors left at 422 for the part it did
not read. Each such app must lose points through the real grader, and its zero must never be
a scoring error.
"""

from __future__ import annotations

import pytest

from sandbox_env.families import grade_final
from sandbox_env.generate import compose_logic as logic
from sandbox_env.generate import compose_store
from sandbox_env.grading.grader import Grader
from sandbox_env.stages.compose import parts_available

pytestmark = pytest.mark.docker


def _stored(rule: str) -> tuple[dict, list[logic.ComposableTask]]:
    by_id = {p.task_id: p for p in parts_available()}
    records = sorted((r for r in compose_store.read() if rule in r["rules"]), key=lambda r: r["task_id"])
    assert records, f"no stored composed task has the {rule} rule: run python -m sandbox_env.stages.compose"
    record = records[0]
    return record, [by_id[i] for i in record["parts"]]


def _stamped_only_by_the_parts(record: dict, parts: list[logic.ComposableTask]) -> str:
    """The header set on each router's own answers (a route dependency): unknown paths go unstamped."""
    return (
        logic.wrong_answers(record, parts)["stamp_on_one_part"]
        .replace("app.include_router(part_1, dependencies=[Depends(stamp_this_part)])", "app.include_router(part_1)")
        .replace("app.include_router(", "app.include_router(dependencies=[Depends(stamp_this_part)], router=")
    )


@pytest.mark.parametrize("rule", ["stamp", "api_key", "invalid_400"])
async def test_bending_one_rule_of_a_composed_app_loses_points(backend, image, rule):
    record, parts = _stored(rule)
    row = compose_store.compile_composed(record)
    grader = Grader(backend, image)
    if rule == "stamp":
        bent = _stamped_only_by_the_parts(record, parts)
    else:
        bent = logic.wrong_answers(record, parts)["api_key_on_every_part" if rule == "api_key" else "invalid_keeps_422"]
    grade = await grade_final(row, {"files": {"app.py": bent}}, grader)
    assert grade.score < 1.0, f"{row.task_id}: bending {rule} scored {grade.score}"
    assert not grade.scoring_error and not grade.tampered, grade.reason
    reference = await grade_final(row, {"files": {"app.py": record["reference"]}}, grader)
    assert reference.score == 1.0, f"{row.task_id}: the reference scored {reference.score}: {reference.reason}"
