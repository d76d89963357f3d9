"""Rows learnt on one seeded world score nothing on another, and eval's held-out seeds' rows are never train's.

A policy that read the source knows world.py and can remember the rows a generated task had in an
earlier rollout. Tasks drawn over the seeded worlds are graded on the fixture seed the host draws
for the rollout (families/orm.py `fixture_variant_for`); every seed's world is drawn whole, so
the rows differ from seed to seed and a replayed `result` scores only on the seed it came from.
Eval tasks are graded on store.EVAL_SEEDS only, so no rows a train rollout ever saw can answer one.
"""

from __future__ import annotations

import json

from sandbox_env.families.orm import FAMILY
from sandbox_env.generate import store

SEEDED = [r for r in store.read() if "draw_fixture" in r]


def _tagged(rows: list[list]) -> dict:
    return {"list": [{"tuple": row} for row in rows]}


async def test_rows_replayed_from_one_fixture_seed_score_zero_on_every_other():
    multi = [r for r in SEEDED if len(r["variants"]) > 1]
    assert len(multi) >= 50, "too few generated tasks admitted on two fixture seeds to say anything"
    for r in multi:
        task = FAMILY.compile_generated(r)
        for recorded, rows in r["variants"].items():
            for drawn in r["variants"]:
                grade = await FAMILY.grade({"result": _tagged(rows), "fixture_variant": int(drawn)}, task, None)
                assert grade.scoring_error is None
                assert grade.score == (1.0 if drawn == recorded else 0.0), (r["task_id"], recorded, drawn, grade.reason)


def test_no_eval_task_is_graded_on_a_train_seed_nor_shares_rows_with_a_train_task():
    train_rows = {json.dumps(v) for r in SEEDED if r["split"] == "train" for v in r["variants"].values()}
    evals = [r for r in SEEDED if r["split"] == "eval"]
    assert evals, "no eval task over the seeded worlds"
    for r in evals:
        assert set(map(int, r["variants"])) <= set(store.EVAL_SEEDS), r["task_id"]
        assert not {json.dumps(v) for v in r["variants"].values()} & train_rows, r["task_id"]
