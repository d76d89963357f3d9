"""Which verifiers stack websandbox runs on: `v1` (the `verifiers.v1` API) or `classic` (the 0.3.x API).

Decided by the APIs the installed verifiers offers, never by its version number. Three
kinds of build exist:
- v1 only (0.4.x): `verifiers.v1`, no classic API;
- both (the 0.3.1 release and the commit prime-rl pins, which builds as `0.3.1.dev62`, or
  as `0.0.0` without git metadata): `verifiers.v1` beside the classic stack kept in
  `verifiers.legacy`; their v1 eval script is `eval`, their `vf-eval` the legacy one;
- classic only (older 0.3.x builds).
The `websandbox` module exports every door the build offers (the v1 taskset, env and
harness for `vf.load_taskset`, and `load_environment` for the classic loaders), so
prime-rl loads the taskset whatever the build's version says. What `websandbox eval`,
`websandbox serve` and the test suites run is one stack: v1 wherever it exists, unless
`WEBSANDBOX_STACK=classic` picks the classic one on a build that has both (the Makefile's
classic targets do).

The checks find the package's folder without importing it (an import of verifiers costs
seconds and runs its import hooks).
"""

from __future__ import annotations

import functools
import importlib.util
import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

V1 = "v1"
CLASSIC = "classic"
STACK_VAR = "WEBSANDBOX_STACK"


def verifiers_version() -> str | None:
    """The installed verifiers' version string, for messages only (None when it is not installed)."""
    try:
        return version("verifiers")
    except PackageNotFoundError:
        return None


def _package_folders() -> list[Path]:
    spec = importlib.util.find_spec("verifiers")
    if spec is None or spec.submodule_search_locations is None:
        return []
    return [Path(folder) for folder in spec.submodule_search_locations]


def _has_package(*names: str) -> bool:
    return any((folder / name / "__init__.py").is_file() for folder in _package_folders() for name in names)


@functools.cache
def has_v1_api() -> bool:
    """Whether the installed verifiers offers the v1 API (`verifiers.v1`)."""
    return _has_package("v1")


@functools.cache
def has_classic_api() -> bool:
    """Whether it offers the classic API: `verifiers.legacy` (builds with both) or the 0.3.0 layout (`verifiers.envs`)."""
    return _has_package("legacy", "envs")


def chosen_stack() -> str | None:
    """The stack WEBSANDBOX_STACK picks (None when unset), checked against what the build offers."""
    chosen = os.environ.get(STACK_VAR, "").strip().lower()
    if not chosen:
        return None
    offered = {V1: has_v1_api(), CLASSIC: has_classic_api()}
    if chosen not in offered:
        raise ValueError(f"{STACK_VAR}={chosen!r}: the stacks are {V1!r} and {CLASSIC!r}")
    if not offered[chosen]:
        raise ValueError(f"{STACK_VAR}={chosen}: the installed verifiers ({verifiers_version()}) has no {chosen} API")
    return chosen


def offered_doors() -> set[str]:
    """The front doors the `websandbox` module exports: every one the build offers, or the one WEBSANDBOX_STACK picks."""
    chosen = chosen_stack()
    if chosen:
        return {chosen}
    return {door for door, offered in ((V1, has_v1_api()), (CLASSIC, has_classic_api())) if offered}


def installed_stack() -> str:
    """The stack websandbox's own commands run: v1 wherever it exists, unless WEBSANDBOX_STACK picks another."""
    return chosen_stack() or (V1 if has_v1_api() else CLASSIC)
