"""A replayed answer key: a deliverable that answers from one grading's recorded data scores nothing on another.

The attack, as a policy that has read the repository (or met the task in an earlier epoch,
or recorded a grading) would build it for dj01: `ProductQuerySet.with_paid_stats()` counts
orders honestly (structure is cheap) but never sums a quantity: `paid_units` comes from a
table of the answers, keyed on the product's name and its number of paid and of all orders
(which tells every test of dj01 apart), recorded from one grading: the visible tests' data
and that grading's draw of the hidden tests' data. Unknown products get 0.

Graded with the recorded draw (the hidden tests as that grading ran them), it scores 1.0:
the attack is faithful, and it is what a fixed answer key allowed before the hidden tests
drew their data. On a grading with its own draw (the real path: a fresh draw per grading)
every hidden test that reads `paid_units` fails and the deliverable scores 0.0. Every
reference of a task that draws its data scores 1.0 on several draws.
"""

from __future__ import annotations

import asyncio
import random
from pathlib import Path

import pytest

from sandbox_env.families import django_vary
from sandbox_env.families.django import FAMILY
from sandbox_env.grading.grader import Grader
from sandbox_env.verify.django import VERIFIER

pytestmark = pytest.mark.docker

TASKS = Path(__file__).resolve().parents[2] / "sandbox_env" / "tasks" / "django"
VARIED = sorted(f.name for f in TASKS.iterdir() if "[[vary]]" in (f / "task.toml").read_text())

REPLAY = """
from django.db import models
from django.db.models import Case, Count, Q, Value, When

TABLE = {table!r}  # (name, paid orders, all orders) -> paid units, as one grading answered


class ProductQuerySet(models.QuerySet):
    def active(self):
        return self.filter(is_active=True)

    def with_paid_stats(self):
        paid = Count("orders", filter=Q(orders__status="paid"))
        units = [When(Q(name=n, paid_orders=p, all_orders=a), then=Value(u)) for (n, p, a), u in TABLE.items()]
        return self.annotate(paid_orders=paid, all_orders=Count("orders")).annotate(
            paid_units=Case(*units, default=Value(0), output_field=models.IntegerField())
        )
"""


def _table(v: dict) -> dict[tuple[str, int, int], int]:
    """dj01's answers: the visible tests' fixed data and one draw of the hidden tests' data."""
    kettle, mug, teapot, tray, lamp = (v[n] for n in ("kettle", "mug", "teapot", "tray", "lamp"))
    return {
        ("lamp", 2, 3): 5,
        ("desk", 1, 2): 4,
        ("retired", 1, 1): 9,
        ("chair", 1, 1): 6,
        (kettle, 3, 4): v[101] + v[106] + v[102],
        (teapot, 1, 2): v[105],
        (tray, 3, 3): v[121] + v[122] + v[123],
        (mug, 1, 3): v[520],
        (mug, 1, 2): v[104],
        (lamp, 1, 2): v[202],
    }


@pytest.fixture
def grader(backend, image):
    return Grader(backend, image)


async def test_a_deliverable_replaying_one_gradings_answers_scores_nothing_on_another_draw(grader, monkeypatch):
    task = FAMILY.compile_task(TASKS / "dj01")
    g = task.grading
    _, recorded = django_vary.drawn_hidden(g, random.Random(2401))
    replay = {"shop/querysets.py": REPLAY.format(table=_table(recorded))}

    # faithful: on the grading it was recorded from, the replay passes every test
    with monkeypatch.context() as m:
        m.setattr(
            django_vary,
            "drawn_hidden",
            lambda grading, rng: (django_vary.substitute(grading["hidden"], grading["vary"], recorded), recorded),
        )
        same = await FAMILY.grade({"files": replay}, task, grader)
    assert same.score == 1.0, same.reason

    # on gradings that draw their own data (the real path), it scores nothing
    others = await asyncio.gather(*(FAMILY.grade({"files": replay}, task, grader) for _ in range(2)))
    for grade in others:
        print(f"replay on a fresh draw: score {grade.score}, tests passed {grade.metrics['tests_passed']:.2f}: {grade.reason}")
        assert grade.score == 0.0 and not grade.tampered and grade.scoring_error is None, grade.reason
        assert "hidden" in grade.reason or "fail" in grade.reason


@pytest.mark.parametrize("tid", VARIED)
async def test_every_reference_scores_one_on_several_draws(grader, tid):
    task = FAMILY.compile_task(TASKS / tid)
    ref = VERIFIER.solution_files(TASKS / tid)
    grades = await asyncio.gather(*(FAMILY.grade({"files": ref}, task, grader) for _ in range(3)))
    for grade in grades:
        assert grade.score == 1.0 and not grade.tampered, (tid, grade.reason)
