"""What `websandbox eval` checks before it starts anything: the tasks asked for, the Docker engine, the runtime image.

Each check ends bad input, or an engine or image the run cannot have, in one line that says
what to do, and main() turns it into exit status 2. They run in the `websandbox` process
before the policy server, vf-eval and the run's folder exist, so a refused run leaves
nothing behind and spends no rollout.

- The tasks: the `-a` filters (and `--family`) go through the very `select_rows` call both
  front doors make when they load (classic `load_environment`, the v1 taskset), on the same
  rows, so the check cannot pass a selection that loading refuses, or refuse one it loads.
- The engine: every image lookup asks the engine, so an unreachable one is found here
  (the backend's `unavailable` error, which names its address).
- The image: an `image` given in `-a` must exist (it is used as it is, never built). Without
  one the run uses the image for the installed sources, and `websandbox eval` builds it when
  it is missing, as it always has, unless `-a` sets `build_image` false; so "missing" means
  not there and not to be built, or a build that failed. Images are looked up on the
  default backend, as loading looks them up (rollout/core.py, ensure_image).
"""

from __future__ import annotations

from typing import Any

from sandbox_env.dataset import TASKSET_FILTERS, load_rows, select_rows

WRONG_TYPE = "family, difficulty and category take a name or a list of names, task_ids a list of task ids, split one name"


def check_selection(env_args: dict[str, Any]) -> int:
    """How many tasks the filters in `env_args` select; a ValueError naming the valid values when they select none.

    The values are passed as given (a `null` too), as the classic front door passes them.
    """
    filters = {key: env_args[key] for key in TASKSET_FILTERS if key in env_args}
    try:
        return len(select_rows(load_rows(), **filters))
    except TypeError as exc:  # e.g. an object where a name belongs: unhashable, not iterable
        raise ValueError(f"-a/--env-args: a task filter has a value of the wrong type ({exc}); {WRONG_TYPE}") from None


def check_runtime(env_args: dict[str, Any]) -> str:
    """The image the run's sandboxes will start from, once the engine has answered and the image is there."""
    image = env_args.get("image")
    if image:
        return _given_image(str(image))
    return _runtime_image(bool(env_args.get("build_image", True)))


def _given_image(image: str) -> str:
    """An image named in `-a`: it must be on the engine already (a run never builds an image it was handed)."""
    from sandbox_env.sandbox.registry import backend_tools

    tools = backend_tools()
    if not tools.image_exists(image):
        raise ValueError(
            f"image {image!r} (from -a) is not on the Docker engine at {tools.where()}: name an image the engine has "
            "(`docker images`), or leave `image` out to use the runtime image for these sources"
        )
    return image


def _runtime_image(build_if_missing: bool) -> str:
    """The image for the installed sources, built first when missing and `build_if_missing` (ensure_image).

    Its own refusals (not there and not to be built; a failed build step) are already one line;
    anything else a build raises (pip's download of the wheels, an engine error mid-build) is
    said in one line that points at `websandbox build-image`, which shows the whole build.
    """
    from sandbox_env.rollout.image import ensure_image, image_tag
    from sandbox_env.sandbox.registry import backend_tools

    try:
        return ensure_image(build_if_missing=build_if_missing)
    except (*backend_tools().unavailable, RuntimeError, ValueError):
        raise
    except Exception as exc:  # noqa: BLE001 - any failed build means this run cannot start
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise RuntimeError(
            f"the runtime image {image_tag()} is missing and could not be built ({first}): "
            "run `websandbox build-image` to see the whole build"
        ) from exc


def check_eval_input(env_args: dict[str, Any]) -> str:
    """Every check, cheapest first (the tasks need no engine); returns the image the run will use."""
    check_selection(env_args)
    return check_runtime(env_args)
