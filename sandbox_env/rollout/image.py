"""Build the runtime image, tagged by a hash of everything that goes into it.

The build never needs network inside `docker build`: wheels are downloaded on the
host first. This module prepares the build context and its tag; the backend looks the
image up and builds it (the registry's `BackendTools`; for Docker,
sandbox/docker/images.py, which also makes a Debian base with debootstrap where no base
image can be pulled).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from sandbox_env.constants import CONTAINER_PROGRAMS_DIR, IMAGE_REPO, IMAGES_DIR, short
from sandbox_env.grading.programs import image_runtime_files
from sandbox_env.sandbox.registry import DEFAULT_BACKEND, backend_tools

# The image's wheels are downloaded on the host for the engine's architecture (`uname -m` names;
# Docker reports arm64 machines as `aarch64`); pydantic-core and the like are compiled, so a wheel
# set of another architecture cannot build the image.
ARCH_ALIASES = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64", "armv8": "aarch64"}
MANYLINUX = ("manylinux2014", "manylinux_2_17", "manylinux_2_28")

Progress = Callable[[str], None]


def _say(msg: str) -> None:
    print(f"[image] {msg}", file=sys.stderr, flush=True)


def _build_inputs() -> list[Path]:
    files = [IMAGES_DIR / "Dockerfile", IMAGES_DIR / "requirements.txt"]
    files += image_runtime_files()  # grader programs are not in the image: grading/programs.py
    return files


def _hashed_name(path: Path) -> str:
    """The name a build input is hashed under: its place in the image's build context (`images/...`,
    and `sandbox_env/runtime/...` for what lands in /opt/websandbox/runtime), never its place in the
    package, so a checkout (`images/` at the top) and an installed wheel (`sandbox_env/images/`)
    compute the same tag for the same sources, and moving a module inside the package does not."""
    if path.is_relative_to(IMAGES_DIR):
        return "images/" + path.relative_to(IMAGES_DIR).as_posix()
    return "sandbox_env/runtime/" + path.relative_to(CONTAINER_PROGRAMS_DIR).as_posix()


def image_hash() -> str:
    """Hash of the Dockerfile, the pinned requirements and the runtime programs the image carries."""
    h = hashlib.sha256()
    for path in sorted(_build_inputs(), key=_hashed_name):
        h.update(_hashed_name(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return short(h.hexdigest())


def image_tag() -> str:
    return f"{IMAGE_REPO}:{image_hash()}"


def wheel_platforms(architecture: str) -> list[str]:
    """pip's `--platform` tags for an engine of `architecture` (x86_64 or aarch64, or an alias of either)."""
    arch = ARCH_ALIASES.get(architecture.lower(), architecture.lower())
    if arch not in ("x86_64", "aarch64"):
        raise ValueError(
            f"the engine runs on {architecture!r}: the runtime image is built from manylinux wheels for x86_64 or "
            "aarch64 only; use an engine on one of those (DOCKER_HOST)"
        )
    return [f"{tag}_{arch}" for tag in MANYLINUX]


def _fill_wheelhouse(dest: Path, say: Progress, architecture: str) -> None:
    """Copy the pinned wheels for `architecture` into the build context, downloading them once per requirements file."""
    reqs = (IMAGES_DIR / "requirements.txt").read_bytes()
    platforms = wheel_platforms(architecture)
    key = short(hashlib.sha256(reqs + "\0".join(platforms).encode()).hexdigest())
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "websandbox" / f"wheels-{key}"
    if not (cache / ".complete").exists():
        subprocess.run(wheel_download_command(cache, platforms), check=True)
        (cache / ".complete").touch()
    shutil.copytree(cache, dest, ignore=shutil.ignore_patterns(".complete"))


def wheel_download_command(dest: Path, platforms: list[str], extra: tuple[str, ...] = ()) -> list[str]:
    """pip's command that downloads the image's pinned wheels for CPython 3.13 on `platforms` into `dest`."""
    _say(f"downloading pinned wheels for CPython 3.13 on {platforms[-1]} on the host")
    cmd = [
        sys.executable,
        "-m",
        "pip",
        "download",
        "--quiet",
        "--no-deps",
        "--only-binary=:all:",
        "--python-version",
        "3.13",
        "--implementation",
        "cp",
        "--dest",
        str(dest),
        "-r",
        str(IMAGES_DIR / "requirements.txt"),
        *extra,
    ]
    for platform in platforms:
        cmd += ["--platform", platform]
    return cmd


def build_image(base: str = "auto", force: bool = False, say: Progress = _say, backend: str = DEFAULT_BACKEND) -> str:
    """Build the runtime image on `backend` unless the image for the current hash exists."""
    tools = backend_tools(backend)
    tag = image_tag()
    if not force and tools.image_exists(tag):
        say(f"{tag} is up to date")
        return tag
    base_image = tools.choose_base(base, say)
    with tempfile.TemporaryDirectory(prefix="websandbox-ctx-") as tmp:
        ctx = Path(tmp)
        shutil.copy(IMAGES_DIR / "Dockerfile", ctx / "Dockerfile")
        shutil.copy(IMAGES_DIR / "requirements.txt", ctx / "requirements.txt")
        # only what rollouts need (runtime/container/); grader programs come with each grading
        shutil.copytree(CONTAINER_PROGRAMS_DIR, ctx / "runtime", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        _fill_wheelhouse(ctx / "wheels", say, tools.architecture())
        tools.build_image(ctx, tag, base_image, say)
    return tag


def ensure_image(build_if_missing: bool = True, backend: str = DEFAULT_BACKEND) -> str:
    """The tag of the current runtime image on `backend`, built first when asked and missing."""
    tag = image_tag()
    if backend_tools(backend).image_exists(tag):
        return tag
    if not build_if_missing:
        raise RuntimeError(f"runtime image {tag} does not exist: run `websandbox build-image` first")
    return build_image(backend=backend)
