"""Image distribution for the Docker backend: whether an image exists, the base to build on, the build.

rollout/image.py (above the sandbox layer) owns what goes into the runtime image and its
content-hashed tag; it asks this module, through the registry's `BackendTools`, to look
an image up on the engine and to build a prepared context into a tag. The build never
needs network inside `docker build`: wheels are downloaded on the host first. Where no
base image can be pulled (no registry), a Debian trixie root is made with debootstrap
and imported as the base.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

import docker.errors

from sandbox_env.constants import IMAGE_REPO
from sandbox_env.sandbox.docker import host_tree
from sandbox_env.sandbox.docker.engine import docker_client

PULL_BASE = "python:3.13-slim"
DEBOOTSTRAP_BASE = "websandbox-base:trixie-minbase"
DEBIAN_MIRROR = os.environ.get("WEBSANDBOX_DEBIAN_MIRROR", "http://deb.debian.org/debian")

Progress = Callable[[str], None]


def architecture() -> str:
    """The engine's machine architecture (`docker info`'s Architecture: `x86_64`, `aarch64`), not this host's:
    a remote engine (DOCKER_HOST) may run on another kind of machine."""
    return str(docker_client().info().get("Architecture") or "x86_64")


def image_exists(tag: str) -> bool:
    """Whether the engine holds an image of this tag."""
    try:
        docker_client().images.get(tag)
        return True
    except docker.errors.ImageNotFound:
        return False


def _make_debootstrap_base(say: Progress) -> str:
    if image_exists(DEBOOTSTRAP_BASE):
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
        docker_client().api.import_image_from_file(str(tarball), repository=repo, tag=tag)
    return DEBOOTSTRAP_BASE


def choose_base(base: str, say: Progress) -> str:
    """The base image to build on: "auto" (pull, else debootstrap), "pull", "debootstrap", or an image's name."""
    if base == "debootstrap":
        return _make_debootstrap_base(say)
    if base not in ("auto", "pull"):
        return base  # an image named by the caller
    if image_exists(PULL_BASE):
        return PULL_BASE
    try:
        say(f"pulling {PULL_BASE}")
        docker_client().images.pull(PULL_BASE)
        return PULL_BASE
    except docker.errors.APIError as exc:
        if base == "pull":
            raise
        say(f"cannot pull {PULL_BASE} ({str(exc).splitlines()[0][:120]})")
        return _make_debootstrap_base(say)


def build(context: Path, tag: str, base_image: str, say: Progress) -> None:
    """Build the prepared `context` on `base_image` (its Dockerfile's BASE) into `tag`, with no network; tag it latest."""
    client = docker_client()
    say(f"building {tag} from {base_image}")
    stream = client.api.build(
        path=str(context),
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
    built = client.images.get(tag)
    built.tag(IMAGE_REPO, "latest")
    if host_tree.wanted(client) is None:
        say("copying its program folders to the host, for sandboxes to read without the storage driver")
        host_tree.ready_tree(client, built.id)
