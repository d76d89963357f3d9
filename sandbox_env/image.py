"""Build the runtime image, tagged by a hash of everything that goes into it.

The build never needs network inside `docker build`: wheels are downloaded on the
host first. Where no base image can be pulled (no registry), a Debian trixie root
is made with debootstrap and imported as the base.
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

import docker
import docker.errors

from sandbox_env.constants import IMAGE_REPO, IMAGES_DIR, PACKAGE_DIR, RUNTIME_DIR, short
from sandbox_env.grader_programs import IMAGE_RUNTIME, image_runtime_files
from sandbox_env.sandbox.docker.engine import docker_client

PULL_BASE = "python:3.13-slim"
DEBOOTSTRAP_BASE = "websandbox-base:trixie-minbase"
DEBIAN_MIRROR = os.environ.get("WEBSANDBOX_DEBIAN_MIRROR", "http://deb.debian.org/debian")
WHEEL_PLATFORMS = ("manylinux2014_x86_64", "manylinux_2_17_x86_64", "manylinux_2_28_x86_64")

Progress = Callable[[str], None]


def _say(msg: str) -> None:
    print(f"[image] {msg}", file=sys.stderr, flush=True)


def _build_inputs() -> list[Path]:
    files = [IMAGES_DIR / "Dockerfile", IMAGES_DIR / "requirements.txt"]
    files += image_runtime_files()  # grader programs are not in the image: grader_programs.py
    return files


def _hashed_name(path: Path) -> str:
    """The name a build input is hashed under: its place in the checkout (`images/...`,
    `sandbox_env/runtime/...`) wherever it is read from, so a checkout (`images/` at the top) and an
    installed wheel (`sandbox_env/images/`) compute the same tag for the same sources."""
    if path.is_relative_to(IMAGES_DIR):
        return "images/" + path.relative_to(IMAGES_DIR).as_posix()
    return "sandbox_env/" + path.relative_to(PACKAGE_DIR).as_posix()


def image_hash() -> str:
    """Hash of the Dockerfile, the pinned requirements and the runtime programs the image carries."""
    h = hashlib.sha256()
    for path in _build_inputs():
        h.update(_hashed_name(path).encode() + b"\0" + path.read_bytes() + b"\0")
    return short(h.hexdigest())


def image_tag() -> str:
    return f"{IMAGE_REPO}:{image_hash()}"


def _image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


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


def _make_debootstrap_base(client: docker.DockerClient, say: Progress) -> str:
    if _image_exists(client, DEBOOTSTRAP_BASE):
        return DEBOOTSTRAP_BASE
    if os.geteuid() != 0:
        raise RuntimeError(
            f"cannot pull {PULL_BASE}, and making a Debian base with debootstrap needs root: "
            "run `websandbox build-image` as root (or with sudo), or make the base image reachable"
        )
    if shutil.which("debootstrap") is None:
        if shutil.which("apt-get") is None:
            raise RuntimeError(f"cannot pull {PULL_BASE} and debootstrap is not installed: install debootstrap")
        say("installing debootstrap with apt-get")
        subprocess.run(["apt-get", "install", "-y", "-q", "debootstrap"], check=True, stdout=subprocess.DEVNULL)
    with tempfile.TemporaryDirectory(prefix="websandbox-root-") as tmp:
        root = Path(tmp) / "root"
        say(f"no base image can be pulled: making Debian trixie with debootstrap from {DEBIAN_MIRROR}")
        subprocess.run(
            ["debootstrap", "--variant=minbase", "--include=python3,python3-venv", "trixie", str(root), DEBIAN_MIRROR],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
            shutil.rmtree(root / junk, ignore_errors=True)
        tarball = Path(tmp) / "root.tar"
        say("packing the root and importing it as " + DEBOOTSTRAP_BASE)
        subprocess.run(["tar", "-C", str(root), "-cf", str(tarball), "."], check=True)
        repo, tag = DEBOOTSTRAP_BASE.split(":")
        client.api.import_image_from_file(str(tarball), repository=repo, tag=tag)
    return DEBOOTSTRAP_BASE


def _choose_base(client: docker.DockerClient, base: str, say: Progress) -> str:
    if base == "debootstrap":
        return _make_debootstrap_base(client, say)
    if base not in ("auto", "pull"):
        return base  # an image named by the caller
    if _image_exists(client, PULL_BASE):
        return PULL_BASE
    try:
        say(f"pulling {PULL_BASE}")
        client.images.pull(PULL_BASE)
        return PULL_BASE
    except docker.errors.APIError as exc:
        if base == "pull":
            raise
        say(f"cannot pull {PULL_BASE} ({str(exc).splitlines()[0][:120]})")
        return _make_debootstrap_base(client, say)


def build_image(base: str = "auto", force: bool = False, say: Progress = _say) -> str:
    """Build the runtime image unless the image for the current hash exists."""
    client = docker_client()
    tag = image_tag()
    if not force and _image_exists(client, tag):
        say(f"{tag} is up to date")
        return tag
    base_image = _choose_base(client, base, say)
    with tempfile.TemporaryDirectory(prefix="websandbox-ctx-") as tmp:
        ctx = Path(tmp)
        shutil.copy(IMAGES_DIR / "Dockerfile", ctx / "Dockerfile")
        shutil.copy(IMAGES_DIR / "requirements.txt", ctx / "requirements.txt")
        keep = shutil.ignore_patterns("__pycache__", "*.pyc")
        (ctx / "runtime").mkdir()
        for name in IMAGE_RUNTIME:  # only what rollouts need; grader programs come with each grading run
            src = RUNTIME_DIR / name
            if src.is_dir():
                shutil.copytree(src, ctx / "runtime" / name, ignore=keep)
            else:
                shutil.copy(src, ctx / "runtime" / name)
        _fill_wheelhouse(ctx / "wheels", say)
        say(f"building {tag} from {base_image}")
        stream = client.api.build(
            path=str(ctx),
            tag=tag,
            buildargs={"BASE": base_image},
            network_mode="none",
            rm=True,
            forcerm=True,
            decode=True,
        )
        for chunk in stream:
            if "error" in chunk:
                raise RuntimeError(f"image build failed: {chunk['error'].strip()}")
            line = (chunk.get("stream") or "").strip()
            if line.startswith("Step ") or line.startswith("Successfully"):
                say(line)
    client.images.get(tag).tag(IMAGE_REPO, "latest")
    return tag


def ensure_image(build_if_missing: bool = True) -> str:
    """The tag of the current runtime image, built first when asked and missing."""
    tag = image_tag()
    if _image_exists(docker_client(), tag):
        return tag
    if not build_if_missing:
        raise RuntimeError(f"runtime image {tag} does not exist: run `websandbox build-image` first")
    return build_image()
