"""Shared fixtures: one image build and one Docker backend for the whole run.

Tests marked `docker` start real containers. Without a reachable engine they are
skipped locally, but under CI=true that is a failure: a suite that skips
everything proves nothing. Tests marked `podman` start them on Podman's service
(sandbox/podman.py): skipped where it does not answer, a failure under CI=true when
WEBSANDBOX_PODMAN=1 says that CI started it (`make podman`).

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


def _podman_problem() -> str | None:
    from sandbox_env.sandbox.podman import PodmanUnavailableError, podman_client

    try:
        podman_client()
        return None
    except PodmanUnavailableError as exc:
        return str(exc)


def pytest_configure(config):
    config.addinivalue_line("markers", "podman: starts real containers on Podman's service (`make podman`)")


def pytest_collection_modifyitems(config, items):
    _skip_podman_unless_reachable(items)
    problem = _engine_problem()
    if problem is None:
        return
    if os.environ.get("CI", "").lower() == "true":
        raise pytest.UsageError(f"CI=true and the Docker engine is unreachable: {problem}")
    skip = pytest.mark.skip(reason=f"Docker engine unreachable: {problem}")
    for item in items:
        if "docker" in item.keywords:
            item.add_marker(skip)


def _podman_required() -> bool:
    """CI set Podman up (`make podman`) and says so: its tests must run."""
    return os.environ.get("CI", "").lower() == "true" and os.environ.get("WEBSANDBOX_PODMAN") == "1"


def _skip_podman_unless_reachable(items) -> None:
    """Tests marked `podman` run where Podman's service answers; under CI=true with WEBSANDBOX_PODMAN=1 it must."""
    wanted = [item for item in items if "podman" in item.keywords]
    problem = _podman_problem() if wanted else None
    if problem is None:
        return
    if _podman_required():
        raise pytest.UsageError(f"CI=true, WEBSANDBOX_PODMAN=1 and Podman's service is unreachable: {problem}")
    skip = pytest.mark.skip(reason=f"Podman's service unreachable (`make podman` starts it): {problem}")
    for item in wanted:
        item.add_marker(skip)


@pytest.fixture(scope="session")
def image() -> str:
    from sandbox_env.rollout.image import ensure_image

    return ensure_image()


@pytest.fixture(scope="session")
def podman_image() -> str:
    """The runtime image in Podman's storage (`make podman` copies it there from Docker's): a skip where it is
    missing, a failure where CI set Podman up (WEBSANDBOX_PODMAN=1)."""
    from sandbox_env.rollout.image import image_tag
    from sandbox_env.sandbox.registry import backend_tools

    tag = image_tag()
    if not backend_tools("podman").image_exists(tag):
        missing = f"{tag} is not in Podman's storage: run `make podman` (it copies it there from Docker's)"
        if _podman_required():
            pytest.fail(missing)
        pytest.skip(missing)
    return tag


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
