"""Composed fastapi tasks through real containers: a sample of the composer's path, verified again for real.

One stored generated composed task goes through the command's own re-verification
(stages/compose.py `reverify`, what `build_tasks.py --verify` runs for the tier): its
reference 1.0 on two gradings with no scoring error or tamper flag, the empty and catch-all
apps at the bottom, every interaction wrong answer and every lifted and own mutant below 1.0.
"""

from __future__ import annotations

import pytest

from sandbox_env.generate import compose_store
from sandbox_env.stages.compile import compile_all
from sandbox_env.stages.compose import reverify

pytestmark = pytest.mark.docker


async def test_a_stored_composed_task_verifies_again_in_the_image(image):
    rows = sorted((r for r in compile_all() if r.source == "composed"), key=lambda r: r.task_id)
    if not rows:
        pytest.skip("no generated composed tasks stored")
    killed = {r["task_id"]: r["verified"]["mutants_killed"] for r in compose_store.read()}
    sample = sorted(rows, key=lambda r: (killed[r.task_id], r.task_id))[:1]  # the cheapest to verify again
    problems = await reverify(sample, concurrency=2)
    assert problems == {}, problems
