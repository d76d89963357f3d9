"""The orm family through real containers: setup, the session, collect and grade."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.orm import FAMILY, fixture_variant_for
from sandbox_env.runtime.container.orm_fixture.data import BOOKS
from sandbox_env.runtime.container.orm_fixture.variants import N_BOOKS
from sandbox_env.sandbox import SandboxError
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.verify.orm import VERIFIER
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[1]
TASKS = sorted(p for p in (TASKS_DIR / "orm").iterdir() if (p / "task.toml").is_file())

# The wrong kinds the issue names (and the list-of-lists contract), with what their reason must say.
# build_tasks.py --verify plays every other wrong_*.py variant too.
REASON_SAYS = {
    "wrong_order": "wrong order",
    "wrong_no_distinct": "rows, got",
    "wrong_queryset": "QuerySet",
    "wrong_lists": "not a tuple",
    "wrong_flat": "not a tuple",
}


async def _play_all(backend, image, plays):
    """Run (name, task, calls) scripted rollouts, four at a time; return {name: grade}."""
    sem = asyncio.Semaphore(4)

    async def one(name, task, calls):
        async with sem:
            run = await scripted_rollout(backend, image, task, calls, timeout=60)
            return name, run.grade

    return dict(await asyncio.gather(*(one(*p) for p in plays)))


async def test_every_reference_scores_one(backend, image):
    plays = [(f.name, FAMILY.compile_task(f), VERIFIER.reference_calls(f)) for f in TASKS]
    grades = await _play_all(backend, image, plays)
    failures = {name: g.reason for name, g in grades.items() if g.score != 1.0}
    assert not failures
    assert len(grades) == len(TASKS) >= 39


async def test_wrong_order_missing_distinct_and_a_queryset_score_zero_with_a_reason(backend, image):
    plays = []
    for folder in TASKS:
        task = FAMILY.compile_task(folder)
        plays += [
            (f"{folder.name}/{kind}", task, calls) for kind, calls in VERIFIER.wrong_calls(folder).items() if kind in REASON_SAYS
        ]
    assert {name.split("/")[1] for name, _, _ in plays} == set(REASON_SAYS)
    grades = await _play_all(backend, image, plays)
    for name, grade in grades.items():
        assert grade.score == 0.0, f"{name} scored {grade.score}: {grade.reason}"
        assert grade.scoring_error is None, name
        assert REASON_SAYS[name.split("/")[1]] in grade.reason, f"{name}: {grade.reason}"


async def test_the_session_starts_fast_with_the_names_in_scope_on_a_private_copy(backend, image):
    task = FAMILY.compile_task(TASKS[0])
    async with backend.sandbox(image) as sb:
        t0 = time.perf_counter()
        await FAMILY.setup(sb, task)
        elapsed = time.perf_counter() - t0
        out = await sb.run_python(
            "print(sorted(n for n in ('Q', 'F', 'Count', 'Sum', 'Avg', 'Max', 'Publisher', 'Author', 'Book') "
            "if n in globals()))\n"
            "Book.objects.all().delete()\n"
            "print(Book.objects.count(), connection.settings_dict['NAME'])"
        )
        assert "['Author', 'Avg', 'Book', 'Count', 'F', 'Max', 'Publisher', 'Q', 'Sum']" in out.output
        assert "0 /tmp/orm.sqlite3" in out.output  # the model may even wipe its copy...
        image_db = await sb.exec(
            [
                "python",
                "-c",
                "import sqlite3; print(sqlite3.connect("
                "'file:/opt/websandbox/orm.sqlite3?mode=ro', uri=True)"
                ".execute('select count(*) from shop_book').fetchone()[0])",
            ]
        )
        assert image_db.stdout.strip() == str(len(BOOKS))  # ...but not the image's database
        await FAMILY.setup(sb, task)  # a restart restores the data, of the fixture variant this sandbox got
        again = await sb.run_python("print(Book.objects.count())")
        drawn = N_BOOKS if fixture_variant_for(sb.id, task) else 0
        assert again.output.strip() == str(len(BOOKS) + drawn)
    print(f"the ORM session started in {elapsed:.2f} s (bench/bench.py measures it against its floor)")


async def test_collect_from_a_killed_container_raises_a_sandbox_error(backend, image):
    """A container gone before post_rollout is a harness fault for the env, not an answer of 0 rows."""
    task = FAMILY.compile_task(TASKS[0])
    async with backend.sandbox(image) as sb:
        await FAMILY.setup(sb, task)
        await sb.run_python("result = [(1,)]")
        await asyncio.to_thread(docker_client().api.kill, sb.id)
        with pytest.raises(SandboxError):
            await FAMILY.collect(sb, task)


async def test_a_result_too_large_to_read_scores_zero_without_a_harness_fault(sandbox):
    task = FAMILY.compile_task(TASKS[0])
    await FAMILY.setup(sandbox, task)
    await sandbox.run_python("result = [(i,) for i in range(150_000)]")
    final = await FAMILY.collect(sandbox, task)
    grade = await FAMILY.grade(final, task, None)
    assert final["result"]["other"] == "too large"
    assert grade.score == 0.0 and grade.scoring_error is None
    assert "too large" in grade.reason
    assert (await sandbox.run_python("len(result)")).output.strip() == "150000"  # the session survived
