"""Repair tasks through real containers: a sample of each family's repair path, set up and graded for real.

For one stored repair task of each family: the re-verification path of the command
(stages/repair.py `reverify`: the base reference 1.0, the broken files below 1.0 through
the family's real grader, orm on every admitted fixture variant), a rollout that leaves the
broken deliverable as set up (the null policy of a repair task: 0.0, never a harness
fault), and a rollout that plays the base task's reference (1.0). For one repair of each family
whose base has alt_* answers: each alt graded under the repair row (1.0 on every variant the row
admits), and a planted "alt" that is the broken deliverable failing its control.
"""

from __future__ import annotations

import asyncio

import pytest

from sandbox_env.generate import repair_store
from sandbox_env.stages.compile import compile_all
from sandbox_env.stages.repair import alt_answers, reverify, reverify_controls
from sandbox_env.verify import reference_calls
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker


def _sample() -> list:
    rows = [r for r in compile_all() if r.source == "repair"]
    if not rows:
        pytest.skip("no repair tasks stored")
    out = []
    for family in ("orm", "fastapi", "django"):
        ours = sorted((r for r in rows if r.family == family), key=lambda r: (r.measures["kind"] != "pair", r.task_id))
        ours = [r for r in ours if not (family == "orm" and "Running the cell fails" in r.prompt)]
        out += ours[:1]
    return out


async def test_a_sample_of_each_familys_repairs_verifies_in_the_image(backend, image):
    sample = _sample()
    problems = await reverify(backend, image, sample, concurrency=3)
    assert set(problems) == {r.task_id for r in sample}
    assert all(not p for p in problems.values()), problems


async def test_the_broken_deliverable_as_set_up_loses_and_the_reference_wins(backend, image):
    sample = _sample()
    sem = asyncio.Semaphore(3)

    async def play(task, calls):
        async with sem:
            return task, calls, await scripted_rollout(backend, image, task, calls, timeout=120)

    plays = [(t, []) for t in sample] + [(t, reference_calls(t.family, t.task_id)) for t in sample]
    for task, calls, run in await asyncio.gather(*(play(t, c) for t, c in plays)):
        grade = run.grade
        assert grade.scoring_error is None and not grade.tampered, f"{task.task_id}: {grade.reason}"
        if calls:
            assert grade.score == 1.0, f"{task.task_id} reference: {grade.reason}"
        else:
            assert grade.score == 0.0, f"{task.task_id}: the broken deliverable as set up scores {grade.score}"
            if task.family == "orm":  # setup ran the broken cell: `result` is its answer, not missing
                assert run.final["result"] != {"missing": True}
                assert task.files[repair_store.ORM_CELL] in task.prompt or "/workspace/query.py" in task.prompt


def _sample_with_alts() -> list:
    rows = [r for r in compile_all() if r.source == "repair" and r.measures["alts"]]
    return [sorted((r for r in rows if r.family == f), key=lambda r: r.task_id)[0] for f in ("orm", "fastapi", "django")]


def _broken_files(task) -> dict[str, str]:
    paths = [repair_store.ORM_CELL] if task.family == "orm" else task.collect
    return {p: task.files[p] for p in paths}


async def test_the_base_alts_score_full_under_a_repair_row_and_a_planted_wrong_alt_fails(backend, image):
    sample = _sample_with_alts()
    answers = {}
    for task in sample:
        alts = alt_answers(task)
        assert sorted(alts) == task.measures["alts"], task.task_id
        answers[task.task_id] = {**alts, "alt_planted_broken": _broken_files(task)}
    controls = await reverify_controls(backend, image, sample, concurrency=2, alts=answers)
    for task in sample:
        by_name = {c.name: c for c in controls[task.task_id]}
        assert set(by_name) == {"reference", "broken", "alt_planted_broken", *task.measures["alts"]}, task.task_id
        for name in ("reference", "broken", *task.measures["alts"]):
            assert by_name[name].ok, (task.task_id, name, by_name[name].score, by_name[name].detail)
        for name in task.measures["alts"]:
            assert by_name[name].score == 1.0, (task.task_id, name)
        planted = by_name["alt_planted_broken"]
        assert not planted.ok and planted.score < 1.0, (task.task_id, planted.detail)
        assert "alt_planted_broken scores" in planted.detail
