"""The orm generator through real containers: a sample of every generator path verified, and real grading."""

from __future__ import annotations

import asyncio

import pytest

from sandbox_env.families.orm import FAMILY
from sandbox_env.generate import store
from sandbox_env.generate.measure import category
from sandbox_env.generate.tree import from_canonical
from sandbox_env.stages.generate_orm import admit, candidates, execute, same_rows, select
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

PATHS = ("filtering", "relations", "expressions", "aggregation", "advanced")
NAMED_SHAPES = ("setop", "cast", "row_number")  # drawn only when named, over the seeded worlds


def _two_of_every_path(first_seed: int = 5, seeds: int = 12) -> list[dict]:
    """Two pre-screened candidates of every path, from as many fixed seeds as it takes (some paths are rare)."""
    by_path: dict[str, list[dict]] = {path: [] for path in PATHS}
    for seed in range(first_seed, first_seed + seeds):
        for c in candidates(seed=seed, count=40, log=lambda *_: None):
            path = category(c["q"])
            if path in by_path and len(by_path[path]) < 2 and c["hash"] not in {d["hash"] for d in by_path[path]}:
                by_path[path].append(c)
        if all(len(found) == 2 for found in by_path.values()):
            break
    return [c for path in PATHS for c in by_path[path]]


async def test_a_sample_of_every_generator_path_verifies_in_the_image(backend, image):
    sample = _two_of_every_path()
    assert {category(c["q"]) for c in sample} == set(PATHS)
    for c in sample:  # one variant each (the first of its split's pool): at most four containers
        c["screened"] = dict(sorted(c["screened"].items())[:1])
    results = await execute(backend, image, sample, log=lambda *_: None)
    kept = select(5, sample, results, log=lambda *_: None)
    assert kept, "no candidate of the sample survived verification"
    for n, c in enumerate(sample):
        ok, why = admit(n, c, results)
        for v, rows in ok.items():  # what is admitted: the image's rows are the evaluator's, every mutant changed them
            assert same_rows(rows, c["screened"][v])
        assert set(ok) | set(why) == set(c["screened"])
    assert {r["task_id"] for r in kept} <= {store.task_id(c["hash"]) for c in sample}


def _two_of_every_named_shape() -> list[dict]:
    """Two pre-screened candidates of each shape the mixed stream never draws (a union among the set operations)."""
    out = []
    for shape in NAMED_SHAPES:
        found = candidates(seed=22, count=40 if shape == "setop" else 12, shape=shape, seeded=True, log=lambda *_: None)
        unions = [c for c in found if c["q"].compound is not None and c["q"].compound.op == "union"]
        out += (unions[:1] + [c for c in found if c not in unions[:1]])[:2]
    return out


async def test_two_candidates_of_every_named_shape_verify_in_the_image(backend, image):
    sample = _two_of_every_named_shape()
    assert len(sample) == 2 * len(NAMED_SHAPES)
    for c in sample:  # one fixture seed each: at most four containers
        c["screened"] = dict(sorted(c["screened"].items())[:1])
    results = await execute(backend, image, sample, concurrency=1, log=lambda *_: None)
    for n, c in enumerate(sample):
        ok, why = admit(n, c, results)
        assert ok, f"{c['code']}\n{why}"  # the image's rows are the evaluator's and every mutant changed them
        for v, rows in ok.items():
            assert same_rows(rows, c["screened"][v])
    assert any("union->union(all=True)" in m for c in sample for m in c["mutants"])
    assert any("RowNumber->Rank, drop tiebreak" in m for c in sample for m in c["mutants"])


async def test_the_reference_scores_one_and_an_empty_answer_zero_on_generated_tasks(backend, image):
    records = store.read()
    if not records:
        pytest.skip("no generated tasks stored")
    chosen = []
    for path in PATHS:
        chosen += [r for r in records if r["category"] == path][:1]
    for split in store.SPLITS:  # a task over the seeded worlds of each split: its rollout copies a fixture seed's database
        chosen += [r for r in records if "draw_fixture" in r and r["split"] == split][:1]
    plays = []
    for r in chosen:
        task = FAMILY.compile_generated(r)
        assert category(from_canonical(r["tree"])) == r["category"]
        plays.append((task, [{"tool": "execute_code", "args": {"code": r["reference"]}}], 1.0))
        plays.append((task, [{"tool": "execute_code", "args": {"code": "result = []"}}], 0.0))
    sem = asyncio.Semaphore(3)

    async def play(task, calls, want):
        async with sem:
            run = await scripted_rollout(backend, image, task, calls, timeout=60)
            return task.task_id, want, run.grade

    for task_id, want, grade in await asyncio.gather(*(play(*p) for p in plays)):
        assert grade.score == want and grade.scoring_error is None, f"{task_id}: {grade.reason}"
