"""An orm `result` replayed from an earlier grading scores only where the draw lands on the same rows.

The attack: with one frozen expected.json over one fixture, a deliverable that prints the
rows of the last grading (or of the repository's expected.json, or rows learnt by heart
over epochs) scores 1.0 without a query. The defence: each rollout works on a fixture variant drawn on the host (families/orm.py
`fixture_variant_for`, keyed by a secret of the grading process) among the variants
verification admitted for the task, and grading compares with that variant's rows.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.orm import FAMILY, fixture_variant_for
from sandbox_env.runtime.container.orm_fixture.data import BOOKS
from sandbox_env.runtime.container.orm_fixture.variants import N_BOOKS
from sandbox_env.verify.scripted import scripted_rollout

TASKS = sorted(p for p in (TASKS_DIR / "orm").iterdir() if (p / "task.toml").is_file())
ROWS = [FAMILY.compile_task(f) for f in TASKS]


def _tagged(rows: list[list]) -> dict:
    return {"list": [{"tuple": row} for row in rows]}


def test_most_tasks_admit_most_drawn_variants():
    admitted = Counter(len(r.grading["fixture_variants"]) - 1 for r in ROWS)
    covered = sum(n for k, n in admitted.items() if k > 0)
    assert covered >= 0.75 * len(ROWS), admitted
    assert sum(k * n for k, n in admitted.items()) >= 4 * len(ROWS), admitted


async def test_rows_replayed_from_one_variant_score_zero_on_every_other():
    for task in ROWS:
        variants = task.grading["fixture_variants"]
        for recorded, rows in variants.items():
            for drawn, expected in variants.items():
                grade = await FAMILY.grade({"result": _tagged(rows), "fixture_variant": int(drawn)}, task, None)
                same = json.dumps(expected) == json.dumps(rows)
                assert grade.score == (1.0 if same else 0.0), (task.task_id, recorded, drawn, grade.reason)
                assert grade.scoring_error is None
                if drawn != recorded:
                    assert not same, (task.task_id, recorded, drawn)  # admission kept only rows that differ


def test_the_draw_is_spread_over_the_admitted_variants_and_not_the_models_to_pick():
    task = max(ROWS, key=lambda r: len(r.grading["fixture_variants"]))
    draws = Counter(fixture_variant_for(f"sandbox-{i:04d}", task) for i in range(800))
    assert set(draws) == {int(k) for k in task.grading["fixture_variants"]}
    assert min(draws.values()) > 800 / len(draws) / 3, draws


@pytest.mark.docker
async def test_a_rollout_grades_on_the_variant_its_sandbox_got(backend, image):
    task = next(r for r in ROWS if len(r.grading["fixture_variants"]) > 4)
    folder = TASKS_DIR / "orm" / task.task_id
    reference = {"tool": "execute_code", "args": {"code": (folder / "reference.py").read_text()}}
    count = {"tool": "execute_code", "args": {"code": "print(Book.objects.count())"}}
    runs = [await scripted_rollout(backend, image, task, [count, reference]) for _ in range(3)]
    for run in runs:
        variant = run.final["fixture_variant"]
        assert run.outputs[0].strip() == str(len(BOOKS) + (N_BOOKS if variant else 0)), run.outputs[0]
        assert run.grade.score == 1.0 and run.grade.scoring_error is None, run.grade.reason
        replay = {"tool": "execute_code", "args": {"code": f"result = {[tuple(r) for r in task.grading['expected']]!r}"}}
        again = await scripted_rollout(backend, image, task, [replay])
        # even where the draw lands on the replayed rows' variant: the cells run again over grading worlds
        assert again.grade.score == 0.0 and again.grade.scoring_error is None, again.grade.reason


ROOT = Path(__file__).resolve().parents[2]
