"""One reference of each family played on Podman (`backend="podman"`) through the real rollout core.

A sample, not the whole set: the families' own tests play every reference on Docker, and the
backend conformance suite (test_backend_contract.py) holds Podman to the sandbox contract.
What this adds is the whole path on Podman's service: setup, the tool calls, collection,
a fresh grading container, the grade, and no container or workspace volume left behind.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families import get_family
from sandbox_env.sandbox.docker.labels import LABEL_CLIENT
from sandbox_env.sandbox.registry import make_backend
from sandbox_env.verify import get_verifier
from sandbox_env.verify.scripted import scripted_rollout

pytestmark = pytest.mark.podman

SAMPLE = [("orm", "orm_adv_01"), ("fastapi", "fastapi_body_embed"), ("django", "dj04")]


@pytest.fixture(scope="module")
def podman_backend():
    backend = make_backend("podman")
    yield backend
    backend.teardown()


@pytest.mark.parametrize(("family", "task_id"), SAMPLE, ids=[f for f, _ in SAMPLE])
async def test_a_reference_scores_one_on_podman_and_leaves_nothing(podman_backend, podman_image, family, task_id):
    folder = TASKS_DIR / family / task_id
    task = get_family(family).compile_task(folder)
    run = await scripted_rollout(podman_backend, podman_image, task, get_verifier(family).reference_calls(folder), timeout=60)
    assert run.grade.score == 1.0, run.grade.reason
    assert await _left(podman_backend) == ([], [], [])


async def _left(backend, wait: float = 15.0) -> tuple[list, list, list]:
    """What the backend still tracks, and its containers and volumes on the engine, once removals done later are."""
    mine = {"label": f"{LABEL_CLIENT}={backend.client_id}"}
    deadline = time.monotonic() + wait
    while True:
        left = (
            backend.tracked(),
            backend._api.containers(all=True, filters=mine),
            backend._api.volumes(filters=mine).get("Volumes") or [],
        )
        if left == ([], [], []) or time.monotonic() > deadline:
            return left
        await asyncio.sleep(0.2)
