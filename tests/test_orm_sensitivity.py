"""Every orm task's reference mutants lose on the fixture, or are declared equivalent (real containers).

This is the orm part of `build_tasks.py --verify --mutants`, cheap enough for CI: all
mutants run in one session over the image's database, and a spread of verdicts (every
declared-equivalent survivor among them) is replayed through full scripted rollouts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_env.verify.sensitivity import family_figure, run_orm, sensitivity_line, spot_check

pytestmark = pytest.mark.docker

ROOT = Path(__file__).resolve().parents[1]
TASKS = sorted(p for p in (ROOT / "sandbox_env" / "tasks" / "orm").iterdir() if (p / "task.toml").is_file())


async def test_every_orm_mutant_is_killed_or_declared_equivalent(backend, image):
    results = await run_orm(backend, image, TASKS)
    survivors = [f"{r.task_id}: {o.mutant.name} [{o.detail}]" for r in results for o in r.survivors]
    problems = [f"{r.task_id}: {p}" for r in results for p in r.problems]
    assert not problems
    assert not survivors
    killed, total = family_figure(results)
    assert total >= 150 and killed == total, sensitivity_line({"orm": results})
    assert sensitivity_line({"orm": results}) == f"sensitivity: orm 100.0% ({killed}/{total})"
    disagreements = await spot_check(backend, image, results)
    assert not disagreements
