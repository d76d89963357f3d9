"""Sandbox backends by name: the one place that turns a `backend` setting into a `SandboxBackend`.

Front doors, the verifier and the command line ask this registry for a backend by the
name a user gave (`load_environment(backend=...)`, the v1 task config's `backend`);
none of them imports a backend's module. A backend registers a factory under its name
(`register_backend`); the built-in ones are registered lazily by module path, so that
naming one imports only it (the Docker backend pulls in the docker SDK).

A factory takes the container `Limits` and the host's container budget
(`max_sandboxes`, None for the backend's default) and returns a ready `SandboxBackend`.

Besides sandboxes a backend provides parts that work on its engine as a whole
(`BackendTools`, `backend_tools(name)`): where its sandboxes run, cleanup (gc of what dead
owners left, settling one run) and image distribution (does an image exist, build one).
The command line and rollout/image.py ask for them by name, so only this layer imports a backend.
"""

from __future__ import annotations

import importlib
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandbox_env.sandbox.interface import SandboxBackend
from sandbox_env.sandbox.types import Limits

BackendFactory = Callable[..., SandboxBackend]


@dataclass(frozen=True)
class BackendTools:
    """What a backend provides besides sandboxes, for the command line and image distribution.

    `where()`: where its sandboxes run, in words (the engine's URL);
    `gc(all_owners=, other_hosts=)`: remove sandboxes whose owner is gone, returning a report
    with `summary()`; `settle_run(run_id)`: wait for a finished run's sandboxes to end, remove
    the rest and return their ids; `image_exists(tag)`; `choose_base(base, say)`: the base
    image to build on ("auto", "pull", "debootstrap" or a name), made available first;
    `build_image(context, tag, base_image, say)`: build a prepared folder into `tag`;
    `unavailable`: the errors that mean the backend cannot be reached (said in one line);
    `architecture()`: the machine architecture its images run on, as `uname -m` says it
    (`x86_64`, `aarch64`), which picks the wheels an image is built from.
    """

    where: Callable[[], str]
    gc: Callable[..., Any]
    settle_run: Callable[[str], list[str]]
    image_exists: Callable[[str], bool]
    choose_base: Callable[[str, Callable[[str], None]], str]
    build_image: Callable[[Path, str, str, Callable[[str], None]], None]
    unavailable: tuple[type[BaseException], ...] = ()
    architecture: Callable[[], str] = platform.machine


DEFAULT_BACKEND = "docker"
# Podman is the Docker backend over Podman's Docker-compatible API, with its differences (podman.py)
_BUILTIN = {"docker": "sandbox_env.sandbox.docker:DockerBackend", "podman": "sandbox_env.sandbox.podman:PodmanBackend"}
_BUILTIN_TOOLS = {"docker": "sandbox_env.sandbox.docker.tools:TOOLS", "podman": "sandbox_env.sandbox.podman:TOOLS"}
_registered: dict[str, BackendFactory] = {}
_registered_tools: dict[str, BackendTools] = {}


def register_backend(name: str, factory: BackendFactory, tools: BackendTools | None = None) -> None:
    """Make `factory(limits, max_sandboxes=...)` the backend called `name` (replacing any of that name).

    `tools`: its parts besides sandboxes (`backend_tools`), when it has them.
    """
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise ValueError(f"a backend name is letters, digits, '-' and '_'; got {name!r}")
    _registered[name] = factory
    if tools is not None:
        _registered_tools[name] = tools


def _load(path: str) -> Any:
    module, _, attr = path.partition(":")
    return getattr(importlib.import_module(module), attr)


def backend_tools(name: str = DEFAULT_BACKEND) -> BackendTools:
    """The parts backend `name` provides besides sandboxes; a clear error for a backend without them."""
    tools = _registered_tools.get(name)
    if tools is None and name in _BUILTIN_TOOLS:
        tools = _load(_BUILTIN_TOOLS[name])
    if tools is None:
        having = sorted({*_BUILTIN_TOOLS, *_registered_tools})
        raise ValueError(f"sandbox backend {name!r} provides no cleanup or image tools; the ones that do: {', '.join(having)}")
    return tools


def backend_names() -> list[str]:
    """Every backend name that `make_backend` accepts."""
    return sorted({*_BUILTIN, *_registered})


def make_backend(
    name: str = DEFAULT_BACKEND, limits: Limits | None = None, *, max_sandboxes: int | None = None
) -> SandboxBackend:
    """A new backend `name` with these container limits and budget; a clear error for an unknown name."""
    factory = _registered.get(name)
    if factory is None and name in _BUILTIN:
        factory = _load(_BUILTIN[name])
    if factory is None:
        raise ValueError(f"unknown sandbox backend {name!r}; the backends are: {', '.join(backend_names())}")
    return factory(limits or Limits(), max_sandboxes=max_sandboxes)
