"""Admission by execution, shared by the generators that verify fastapi candidates in the image.

One rule, used by stages/compose.py (composed tasks) and stages/generate_fastapi.py (generated
tasks): the reference scores 1.0 on `draws` gradings (each grading draws the task's tokens
afresh), with no scoring error and no tamper flag; the empty app scores 0.0 and the catch-all
app at most CATCH_ALL_BOUND; then every entry of every pool (wrong answers, mutants: {name:
(row to grade on, source)}) scores below 1.0. Pools are graded in chunks of `concurrency`, so
the first survivor ends the candidate early. A grading with a scoring error proves nothing either
way: the candidate is dropped, never admitted on it. Nothing is declared equivalent.

Every grading is grade_final in a fresh grading container (families/__init__.py), as a rollout's.
"""

from __future__ import annotations

import asyncio
from typing import Any

CATCH_ALL_BOUND = 0.02


async def grade_source(grader: Any, row: Any, source: str, sem: asyncio.Semaphore) -> Any:
    """The grade of one app source under one task row."""
    from sandbox_env.families import grade_final
    from sandbox_env.families.fastapi import APP_PATH

    async with sem:
        return await grade_final(row, {"files": {APP_PATH: source}}, grader)


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

    sem = asyncio.Semaphore(concurrency)
    refs = await asyncio.gather(*(grade_source(grader, row, reference, sem) for _ in range(draws)))
    for g in refs:
        if g.score != 1.0 or g.scoring_error or g.tampered:
            bad = [f"{c['name']}: {c['detail']}" for c in g.checks if not c["passed"]][:2]
            return False, f"reference scored {g.score} ({g.reason}; {bad})", {}
    controls = {"empty": CONTROLS["empty"], "catch_all": CONTROLS["catch_all"]}
    graded = await asyncio.gather(*(grade_source(grader, row, src, sem) for src in controls.values()))
    scores = dict(zip(controls, (g.score for g in graded), strict=True))
    if scores["empty"] != 0.0 or scores["catch_all"] > CATCH_ALL_BOUND:
        return False, f"controls scored {scores}", {}
    for label, pool in pools:
        names = list(pool)
        for at in range(0, len(names), concurrency):  # in chunks: the first survivor ends the candidate
            chunk = names[at : at + concurrency]
            grades = await asyncio.gather(*(grade_source(grader, pool[n][0], pool[n][1], sem) for n in chunk))
            for name, g in zip(chunk, grades, strict=True):
                if g.scoring_error:
                    return False, f"{label} {name}: a scoring error ({g.reason[:120]})", {}
                if g.score >= 1.0:
                    return False, f"{label} {name} survives", {}
    return True, "", {"catch_all": scores["catch_all"], **{label: len(pool) for label, pool in pools}}
