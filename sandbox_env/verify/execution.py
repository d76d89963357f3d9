"""Admission by execution, shared by the generators that verify fastapi candidates in the image.

One rule, used by stages/compose.py (composed tasks) and stages/generate_fastapi.py (generated
tasks): the reference scores 1.0 on `draws` gradings (each grading draws the task's tokens
afresh), with no scoring error and no tamper flag; the empty app scores 0.0 and the catch-all
app at most CATCH_ALL_BOUND; then every entry of every pool (wrong answers, mutants: {name:
(row to grade on, source)}) scores below 1.0. Pools are graded in rounds of `concurrency`
batches, so the first survivor ends the candidate early. A grading with a scoring error proves
nothing either way: the candidate is dropped, never admitted on it. Nothing is declared equivalent.

Gradings are batched (verify/batched.py): the deliverables of one task share a grading sandbox and
one run of the HTTP driver, each graded in its own fresh processes and judged by the family's own
code; whatever a batch cannot decide is graded again alone by grade_final, as a rollout's would be.
"""

from __future__ import annotations

from typing import Any

from sandbox_env.verify.batched import JOBS_PER_BATCH, grade_sources

CATCH_ALL_BOUND = 0.02


async def _graded_pool(pool: dict[str, tuple[Any, str]], names: list[str], grader: Any, concurrency: int) -> list[Any]:
    """The grades of the named pool entries, in order, batched per task row."""
    by_row: dict[int, list[str]] = {}
    for name in names:
        by_row.setdefault(id(pool[name][0]), []).append(name)
    grades: dict[str, Any] = {}
    for group in by_row.values():
        row = pool[group[0]][0]
        for name, grade in zip(group, await grade_sources(row, [pool[n][1] for n in group], grader, concurrency), strict=True):
            grades[name] = grade
    return [grades[n] for n in names]


async def admit(
    row: Any,
    reference: str,
    pools: list[tuple[str, dict[str, tuple[Any, str]]]],
    grader: Any,
    concurrency: int,
    draws: int = 2,
) -> tuple[bool, str, dict[str, Any]]:
    """(admitted, why not, what was measured): the reference, the two controls, then every pool below 1.0."""
    from sandbox_env.verify.fastapi import CONTROLS

    round_size = JOBS_PER_BATCH * concurrency
    controls = {"empty": CONTROLS["empty"], "catch_all": CONTROLS["catch_all"]}
    first = await grade_sources(row, [reference] * draws + list(controls.values()), grader, concurrency)
    for g in first[:draws]:
        if g.score != 1.0 or g.scoring_error or g.tampered:
            bad = [f"{c['name']}: {c['detail']}" for c in g.checks if not c["passed"]][:2]
            return False, f"reference scored {g.score} ({g.reason}; {bad})", {}
    scores = dict(zip(controls, (g.score for g in first[draws:]), strict=True))
    if scores["empty"] != 0.0 or scores["catch_all"] > CATCH_ALL_BOUND:
        return False, f"controls scored {scores}", {}
    for label, pool in pools:
        names = list(pool)
        for at in range(0, len(names), round_size):  # in rounds: the first survivor ends the candidate
            chunk = names[at : at + round_size]
            for name, g in zip(chunk, await _graded_pool(pool, chunk, grader, concurrency), strict=True):
                if g.scoring_error:
                    return False, f"{label} {name}: a scoring error ({g.reason[:120]})", {}
                if g.score >= 1.0:
                    return False, f"{label} {name} survives", {}
    return True, "", {"catch_all": scores["catch_all"], **{label: len(pool) for label, pool in pools}}
