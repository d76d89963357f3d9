"""Every registered sandbox backend keeps the contract of tests/backend_contract.py, on real sandboxes.

One backend of each name for the whole module (made through the registry, as the front
doors make theirs); the contract's checks run in order, teardown last.
"""

from __future__ import annotations

import pytest
from backend_contract import CHECKS

from sandbox_env.sandbox.registry import backend_names, make_backend

pytestmark = pytest.mark.docker

BACKENDS = [name for name in backend_names() if name == "docker"]  # the ones that run on this machine


@pytest.fixture(scope="module", params=BACKENDS)
def contract_backend(request):
    backend = make_backend(request.param)
    yield backend
    backend.teardown()


@pytest.mark.parametrize("check", CHECKS, ids=[c.__name__ for c in CHECKS])
async def test_the_backend_keeps_the_contract(contract_backend, image, check):
    await check(contract_backend, image)
