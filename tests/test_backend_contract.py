"""Every sandbox backend keeps the contract of tests/backend_contract.py, on real sandboxes.

Three backends: Docker, Podman (the Docker backend over Podman's compatible API, where its
service answers: `make podman`), and the local test backend (local_backend.py: the real agent
in a PID namespace, registered here because it gives no isolation). One backend of each name
for the whole module (made through the registry, as the front doors make theirs); the
contract's checks run in order, teardown last. Each backend brings its own way to starve
a sandbox for the starved check.
"""

from __future__ import annotations

import pytest
from backend_contract import CHECKS, CPU_BOUND, STARVED_CHECKS
from local_backend import NAME as LOCAL
from local_backend import available, register_local_backend

from sandbox_env.sandbox import Sandbox, SandboxEndedFromInside, SandboxError, SandboxStarved
from sandbox_env.sandbox.registry import make_backend

register_local_backend()

BACKENDS = [
    pytest.param("docker", marks=pytest.mark.docker),
    pytest.param("podman", marks=pytest.mark.podman),
    pytest.param(LOCAL, marks=pytest.mark.skipif(available() is not None, reason=str(available()))),
]


def _docker_starve(sandbox_id: str) -> None:
    from fault_kit import starve

    starve(sandbox_id, 20_000_000)  # `docker update --cpus 0.02`


def _podman_starve(backend):
    from sandbox_env.sandbox.podman import update_resources

    return lambda sandbox_id: update_resources(backend._api, sandbox_id, {"cpu": {"quota": 2000, "period": 100_000}})


IMAGES = {"docker": "image", "podman": "podman_image"}


@pytest.fixture(scope="module", params=BACKENDS)
def contract_backend(request):
    name = IMAGES.get(request.param)
    image = request.getfixturevalue(name) if name else "no image: a local folder"
    backend = make_backend(request.param)
    if request.param == "docker":
        starve = _docker_starve
    elif request.param == "podman":
        starve = _podman_starve(backend)  # `podman update --cpus 0.02`: its compatible API has no update
    else:
        starve = backend.starve
    yield backend, image, starve
    backend.teardown()


@pytest.mark.parametrize("check", STARVED_CHECKS + CHECKS, ids=[c.__name__ for c in STARVED_CHECKS + CHECKS])
async def test_the_backend_keeps_the_contract(contract_backend, check):
    backend, image, starve = contract_backend
    if check in STARVED_CHECKS:
        await check(backend, image, starve)
    else:
        await check(backend, image)


# -- the local backend takes the branches of the blame checks that Docker does not ---------------
needs_local = pytest.mark.skipif(available() is not None, reason=str(available()))


@needs_local
async def test_a_local_sandbox_whose_processes_end_its_agent_reads_as_cannot_tell():
    backend = make_backend(LOCAL)
    try:
        assert backend.evidence().missing() != []  # it proves nothing of whose an ending is
        sb = Sandbox(backend, await backend.acquire("local"))
        with pytest.raises(SandboxError, match="cannot tell") as lost:
            await sb.exec("kill -9 $PPID; sleep 5", timeout=20)
        assert not isinstance(lost.value, SandboxEndedFromInside)
    finally:
        backend.teardown()


@needs_local
async def test_a_starved_local_call_is_a_harness_fault_never_its_timeout():
    backend = make_backend(LOCAL)
    try:
        async with backend.sandbox("local") as sb:
            backend.starve(sb.id)
            with pytest.raises(SandboxStarved) as starved:
                await sb.exec(CPU_BOUND, timeout=3)
            assert starved.value.evidence["active"] < starved.value.evidence["limit"]
    finally:
        backend.teardown()
