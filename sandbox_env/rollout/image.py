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

WHEEL_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")

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


def _fill_wheelhouse(dest: Path, say: Progress) -> None:
    """Copy the pinned wheels into the build context, downloading them once per requirements file."""
    reqs = (IMAGES_DIR / "requirements.txt").read_bytes()
    cache = (
        Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
        / "websandbox"
        / ("wheels-" + short(hashlib.sha256(reqs).hexdigest()))
    )
    if not (cache / ".complete").exists():
        _download_wheels(cache, say)
        (cache / ".complete").touch()
    shutil.copytree(cache, dest, ignore=shutil.ignore_patterns(".complete"))


def _download_wheels(dest: Path, say: Progress) -> None:
    say("downloading pinned wheels for CPython 3.13 on the host")
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
    ]
    for platform in WHEEL_PLATFORMS:
        cmd += ["--platform", platform]
    subprocess.run(cmd, check=True)


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
        # only what rollouts need (runtime/container/); grader programs come with each grading run
        shutil.copytree(CONTAINER_PROGRAMS_DIR, ctx / "runtime", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        _fill_wheelhouse(ctx / "wheels", say)
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
