"""An orm answer that leaves out the stated tiebreak scores 0 on every fixture variant its task admits.

The attack: every generated spec states its ordering as a key and a tiebreak ("ties by rating,
lowest first"). A policy that writes only the first key gets rows in whatever order the engine
meets tied rows, which is the engine's plan over the insertion order, not the data: where that
order happens to match the tiebreak, the answer scores 1.0 without following the rule. Over
thousands of rollouts a policy finds every variant where it does, and learns to skip tiebreaks.
The defence (stages/generate_orm.py): a fixture variant is admitted for a task only when the
dropped-tiebreak mutant gives other rows on both insertion orders, so no admitted variant
rewards the dropped key by accident. This test attacks through real rollouts: for stored
generated tasks, the reference with its last ordering key removed (and with that key's
direction turned round) is played on each admitted variant in turn and must score 0 with no
scoring error; the reference on one variant scores 1.0, so the plumbing is shown to grade.
"""

from __future__ import annotations

import ast
import asyncio
import copy
from dataclasses import replace

import pytest

from sandbox_env.families.orm import FAMILY
from sandbox_env.generate import store
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

TASKS_PER_KIND = 2  # plain-fixture tasks and seeded-world tasks, each with the most variants of its kind


def _ordering(tree: ast.AST) -> ast.Call | None:
    """The query's `.order_by(key, ..., tiebreak)` call with at least two keys (the outermost one)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "order_by":
            if len(node.args) >= 2 and all(isinstance(a, ast.Constant) for a in node.args):
                return node
    return None


def without_tiebreak(reference: str) -> str | None:
    tree = ast.parse(reference)
    call = _ordering(tree)
    if call is None:
        return None
    call.args = call.args[:-1]
    return ast.unparse(tree)


def tiebreak_reversed(reference: str) -> str | None:
    tree = ast.parse(reference)
    call = _ordering(tree)
    if call is None:
        return None
    last = call.args[-1].value
    call.args[-1] = ast.Constant(last[1:] if last.startswith("-") else f"-{last}")
    return ast.unparse(tree)


def test_the_attack_edits_only_the_tiebreak():
    reference = 'rows = Book.objects.order_by("-price", "title").values_list("title")\nresult = list(rows)'
    assert "order_by('-price')" in without_tiebreak(reference)
    assert "order_by('-price', '-title')" in tiebreak_reversed(reference)
    assert without_tiebreak("result = list(Book.objects.order_by('title'))") is None


def _chosen() -> list[dict]:
    records = [r for r in store.read() if without_tiebreak(r["reference"]) is not None]
    plain = sorted((r for r in records if "draw_fixture" not in r), key=lambda r: (-len(r["variants"]), r["task_id"]))
    seeded = sorted((r for r in records if "draw_fixture" in r), key=lambda r: (-len(r["variants"]), r["task_id"]))
    return plain[:TASKS_PER_KIND] + seeded[:TASKS_PER_KIND]


def _on_variant(task, variant: str):
    """The task with one admitted variant left: every rollout of it draws that variant."""
    grading = copy.deepcopy(task.grading)
    grading["fixture_variants"] = {variant: grading["fixture_variants"][variant]}
    grading["expected"] = grading["fixture_variants"][variant]
    return replace(task, grading=grading, fixture_seeds=[int(variant)])


async def test_an_answer_without_the_stated_tiebreak_scores_zero_on_every_admitted_variant(backend, image):
    chosen = _chosen()
    assert len(chosen) == 2 * TASKS_PER_KIND, "the store has no generated task of each kind with a tiebreak"
    plays = []
    for record in chosen:
        task = FAMILY.compile_generated(record)
        variants = sorted(task.grading["fixture_variants"], key=int)
        plays.append((_on_variant(task, variants[0]), record["reference"], 1.0))
        for v in variants:
            for wrong in (without_tiebreak(record["reference"]), tiebreak_reversed(record["reference"])):
                plays.append((_on_variant(task, v), wrong, 0.0))
    sem = asyncio.Semaphore(3)

    async def play(task, code, want):
        async with sem:
            run = await scripted_rollout(backend, image, task, [{"tool": "execute_code", "args": {"code": code}}])
            return task, code, want, run

    for task, code, want, run in await asyncio.gather(*(play(*p) for p in plays)):
        variant = next(iter(task.grading["fixture_variants"]))
        assert run.final["fixture_variant"] == int(variant), (task.task_id, variant, run.final)
        assert run.grade.scoring_error is None, (task.task_id, variant, run.grade.reason)
        assert run.grade.score == want, (task.task_id, variant, code, run.grade.reason)
