"""Shared fixtures: one image build and one Docker backend for the whole run.

Tests marked `docker` start real containers. Without a reachable engine they are
skipped locally, but under CI=true that is a failure: a suite that skips
everything proves nothing.

Tests marked `slow` form the slow tier (`make test-slow`, part of `make test-full`, left out of
`make test-all` and so of CI): a test belongs there only when a quicker test of the default run
shows the same verdict and the slow one repeats it at scale or under contrived load (a host CPU
hog, a starved grading container, a pid-held sandbox). Each names its quicker sibling in its
docstring; a verdict no quicker test shows stays in the default run.
"""

from __future__ import annotations

import os

import pytest

from sandbox_env.doors.stack import installed_stack
from sandbox_env.sandbox.docker import DockerUnavailableError, docker_client

# Each stack's tests run in their own venv (`make test`: verifiers 0.3.x; `make test-v1`:
# 0.4.x). The other stack's files cannot even be imported there, so they are not collected;
# a run that collects nothing fails (pytest exits 5), it does not pass. The stack-free
# suites (adversarial/, the units) run once, with the classic stack.
if installed_stack() == "v1":
    collect_ignore_glob = ["test_*.py", "adversarial"]
else:
    collect_ignore = ["v1"]


def _engine_problem() -> str | None:
    try:
        docker_client()
        return None
    except DockerUnavailableError as exc:
        return str(exc)


def pytest_collection_modifyitems(config, items):
    problem = _engine_problem()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        raise pytest.UsageError(f"CI=true and the Docker engine is unreachable: {problem}")
    skip = pytest.mark.skip(reason=f"Docker engine unreachable: {problem}")
    for item in items:
        if "docker" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def image() -> str:
    from sandbox_env.rollout.image import ensure_image

    return ensure_image()


@pytest.fixture(scope="session")
def backend():
    from sandbox_env.sandbox.docker import DockerBackend

    b = DockerBackend()
    yield b
    b.teardown()


@pytest.fixture
async def sandbox(backend, image):
    """A fresh ready sandbox, removed after the test."""
    async with backend.sandbox(image) as sb:
        yield sb
