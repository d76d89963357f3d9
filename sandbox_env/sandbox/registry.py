"""Sandbox backends by name: the one place that turns a `backend` setting into a `SandboxBackend`.

Front doors, the verifier and the command line ask this registry for a backend by the
name a user gave (`load_environment(backend=...)`, the v1 task config's `backend`);
none of them imports a backend's module. A backend registers a factory under its name
(`register_backend`); the built-in ones are registered lazily by module path, so that
naming one imports only it (the Docker backend pulls in the docker SDK).

A factory takes the container `Limits` and the host's container budget
(`max_sandboxes`, None for the backend's default) and returns a ready `SandboxBackend`.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from sandbox_env.sandbox.interface import SandboxBackend
from sandbox_env.sandbox.types import Limits

BackendFactory = Callable[..., SandboxBackend]

DEFAULT_BACKEND = "docker"
_BUILTIN = {"docker": "sandbox_env.sandbox.docker:DockerBackend"}
_registered: dict[str, BackendFactory] = {}


def register_backend(name: str, factory: BackendFactory) -> None:
    """Make `factory(limits, max_sandboxes=...)` the backend called `name` (replacing any of that name)."""
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"a backend name is letters, digits, '-' and '_'; got {name!r}")
    _registered[name] = factory


def backend_names() -> list[str]:
    """Every backend name that `make_backend` accepts."""
    return sorted({*_BUILTIN, *_registered})


def make_backend(
    name: str = DEFAULT_BACKEND, limits: Limits | None = None, *, max_sandboxes: int | None = None
) -> SandboxBackend:
    """A new backend `name` with these container limits and budget; a clear error for an unknown name."""
    factory = _registered.get(name)
    if factory is None and name in _BUILTIN:
        module, _, attr = _BUILTIN[name].partition(":")
        factory = getattr(importlib.import_module(module), attr)
    if factory is None:
        raise ValueError(f"unknown sandbox backend {name!r}; the backends are: {', '.join(backend_names())}")
    return factory(limits or Limits(), max_sandboxes=max_sandboxes)
