"""The image's program folders read from the host, not through each container's file server.

Why. On the fuse-overlayfs storage driver every file a container opens is a request to that
container's own fuse-overlayfs process, and a new container has read nothing yet: its first
Python (the interpreter, the standard library, the agent's modules) and a grader's imports
(Django, FastAPI, pytest) are all first reads through a fresh server. Measured on a 2-core
host, quiet: the agent's first reply came 74-78 ms after the container's start returned, and
30 ms when the folders below came from the host (the start itself took 7 ms longer): a cold
sandbox in 246 ms instead of 287 ms, against 209 ms for the engine's own create and start.

What. The image's `usr/bin`, `usr/lib` and `opt` (the interpreter, shared libraries, the
standard library, the virtualenv with the frameworks, the runtime programs and the orm
fixture databases) are copied out once per image, by image id, into the user's cache
(`$XDG_CACHE_HOME/websandbox/trees/<id>`), and every sandbox of that image gets them as
read-only bind mounts over the same paths. The container is created from the image id, not
its tag, so a tag moved to another build can never pair one image's root with another's
folders. The rest of the root (`/etc`, `/usr/share`, ...) is still the image's own, read
through its server.

Threat model: the sandboxed code is hostile and has read this. The mounts are read-only
binds: every write, create, unlink, rename, chmod, chown, utime and xattr change fails with
EROFS, and making them writable again needs a remount, which needs CAP_SYS_ADMIN, which no
process in a sandbox holds (hardening.py); the root filesystem was read-only already, so no
write the model could make before is lost to it. The bytes are the image's (extracted from
a container of that id; setuid, setgid and sticky bits and group or other write bits are
cleared on the way, which changes nothing a sandbox can do: `no-new-privileges` already made
setuid files useless). What one sandbox now shares with the others is the host's inodes and
their page cache: a sandbox can tell (inotify's IN_ACCESS, cache timing) when another one
reads these files, and `flock` on them is shared. Nothing of a task is in them (hidden tests,
grader programs and drawn values go to each container's own tmpfs: /tmp, /workspace), and
nothing of ours takes a `flock` on them, so neither tells a sandbox anything it could score
with or lets it stall another. Reading these files is now the reader's own kernel work, in
its own cgroup; but every path walk from `/` still has the root's server revalidate its first
name (`opt`, `usr`, and `workspace` too), so the server's CPU stays part of the usage evidence
(fuse.py): measured in a sandbox, 3 s of a loop that stats a missing name used 2.83 s of CPU
in the cgroup and 1.51 s in the server under /opt/venv, 1.61 and 0.85 s under /workspace
(a tmpfs). The host's copy is the host user's to keep: nothing in a sandbox can reach it but
through these read-only mounts.

When. Only where it helps and the engine sees the host's paths: the fuse-overlayfs driver
(the kernel's overlay shares lower files between containers already), an engine on a local
socket whose host name is this machine's (not a socket mounted into a container, whose
paths are another machine's), and `WEBSANDBOX_HOST_TREE` not `0`. A missing copy is made at
first use under a lock (about 5 s, once per image on a machine; `websandbox build-image`
makes it right after a build). When the copy cannot be made, sandboxes start as before and
a warning says why. Copies of images the engine no longer has are removed when a new one
is made.
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import logging
import os
import shutil
import socket
import stat
import tarfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import docker
import docker.errors
import docker.types

from sandbox_env.sandbox.docker.engine import engine_on_local_socket

logger = logging.getLogger("websandbox.sandbox")

MOUNTED = ("usr/bin", "usr/lib", "opt")  # folders of the image served from the host, relative to /
DRIVER = "fuse-overlayfs"
SWITCH = "WEBSANDBOX_HOST_TREE"  # "0": never serve the image's folders from the host
COMPLETE = "complete"  # written in a copy's folder once every file is in place
EXPORT_CHUNK = 1 << 20


@dataclass(frozen=True)
class HostTree:
    """A complete copy of one image's MOUNTED folders on the host."""

    image_id: str
    root: Path

    def mounts(self) -> list[docker.types.Mount]:
        return [docker.types.Mount(f"/{rel}", str(self.root / "tree" / rel), type="bind", read_only=True) for rel in MOUNTED]


def cache_dir() -> Path:
    """Where the copies live: `$XDG_CACHE_HOME/websandbox/trees` (else `~/.cache/...`)."""
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "websandbox" / "trees"


def wanted(client: docker.DockerClient) -> str | None:
    """None when this engine's sandboxes should read the image's folders from the host, else why not."""
    if os.environ.get(SWITCH, "1") == "0":
        return f"{SWITCH}=0"
    if not hasattr(tarfile, "tar_filter"):
        return "this Python's tarfile has no extraction filters (Python 3.11.4 or later has them)"
    if not engine_on_local_socket():
        return "the engine is not on a local socket"
    info = client.info()
    if info.get("Driver") != DRIVER:
        return f"the storage driver is {info.get('Driver')!r}, not {DRIVER}"
    if info.get("Name") != socket.gethostname():
        return f"the engine runs on host {info.get('Name')!r}, not this one"
    return None


def refuses_mount(exc: BaseException) -> bool:
    """Whether a failed create or start is the engine refusing a bind mount (its source is not on its host)."""
    text = str(exc).lower()
    return isinstance(exc, docker.errors.APIError) and ("bind source" in text or "mount" in text)


def _folder(image_id: str) -> Path:
    return cache_dir() / image_id.split(":", 1)[-1]


def ready_tree(client: docker.DockerClient, image_id: str) -> HostTree:
    """The copy of `image_id`'s folders, made first when missing (one maker at a time per image)."""
    root = _folder(image_id)
    if (root / COMPLETE).exists():
        return HostTree(image_id, root)
    root.parent.mkdir(parents=True, exist_ok=True)
    with _locked(root.with_name(root.name + ".lock")):
        if not (root / COMPLETE).exists():
            _make(client, image_id, root)
    prune(client, keep=root)
    return HostTree(image_id, root)


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def _make(client: docker.DockerClient, image_id: str, root: Path) -> None:
    """Extract the MOUNTED folders of a (never started) container of `image_id` into `root`."""
    partial = root.with_name(root.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    logger.info("copying the folders of image %s to %s (once per image)", image_id[:19], root)
    container = client.containers.create(image_id, ["true"], network_disabled=True)
    try:
        stream = _Reader(client.api.export(container.id, chunk_size=EXPORT_CHUNK))
        with tarfile.open(fileobj=io.BufferedReader(stream, EXPORT_CHUNK), mode="r|") as archive:
            # extractall sets folders' modes last (a read-only folder still receives its files); "tar" clears
            # setuid, setgid, sticky and group/other write bits and keeps every name inside `partial`
            members = (m for m in archive if _mounted(m.name))
            if TAR_FILTER:
                archive.extractall(partial / "tree", members=members, numeric_owner=True, **TAR_FILTER)
            else:  # Python before 3.11.4 (Debian 12's 3.11.2) has no extraction filters: the same rules, here
                tree = partial / "tree"
                archive.extractall(tree, members=(_as_tar_filter(m, tree) for m in members), numeric_owner=True)
    finally:
        container.remove(force=True)
    missing = [rel for rel in MOUNTED if not (partial / "tree" / rel).is_dir()]
    if missing:
        shutil.rmtree(partial, ignore_errors=True)
        raise RuntimeError(f"image {image_id[:19]} has no {', '.join('/' + m for m in missing)}")
    (partial / COMPLETE).write_text(image_id + "\n")
    partial.rename(root)


TAR_FILTER = {"filter": "tar"} if hasattr(tarfile, "tar_filter") else {}
_CLEARED = stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | stat.S_IWGRP | stat.S_IWOTH


def _as_tar_filter(member: tarfile.TarInfo, dest: Path) -> tarfile.TarInfo:
    """What the standard library's "tar" filter does to a member: no name outside `dest`, no setuid, setgid,
    sticky or group/other write bits."""
    name = member.name.lstrip("/")
    if not os.path.realpath(dest / name).startswith(os.path.realpath(dest) + os.sep):
        raise tarfile.ExtractError(f"{member.name!r} would land outside {dest}")
    member.name = name
    member.mode &= ~_CLEARED
    return member


def _mounted(name: str) -> bool:
    name = name.removeprefix("./")
    return any(name == rel or name.startswith(rel + "/") for rel in MOUNTED)


class _Reader(io.RawIOBase):
    """The engine's export stream (an iterator of chunks) as a readable raw file."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._left = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # noqa: ANN001 - a writable buffer
        if not self._left:
            self._left = memoryview(next(self._chunks, b""))
        n = min(len(buffer), len(self._left))
        buffer[:n] = self._left[:n]
        self._left = self._left[n:]
        return n


def prune(client: docker.DockerClient, keep: Path) -> None:
    """Remove the copies (and leftovers) of images the engine no longer has: no sandbox can be using them."""
    for path in cache_dir().iterdir():
        if path == keep:
            continue
        try:
            client.images.get("sha256:" + path.name.split(".")[0])
            continue
        except docker.errors.ImageNotFound:
            pass
        except docker.errors.APIError:
            continue
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)


class HostTrees:
    """One backend's view: for each image it starts sandboxes of, what to create them from and what to mount.

    Decided once per image (and whether the engine is one to do it for, once per backend);
    `forget` drops an image's answer (its id is gone), `refuse` stops mounting for this backend
    (the engine could not use a copy).
    """

    def __init__(self, client: docker.DockerClient) -> None:
        self._client = client
        self._lock = threading.Lock()
        self._by_image: dict[str, tuple[str, list[docker.types.Mount]]] = {}
        self._refused: str | None = None

    def for_image(self, image: str) -> tuple[str, list[docker.types.Mount]]:
        """(what to create the container from, its mounts): (`image`, []) where nothing is served from the host."""
        with self._lock:
            known = self._by_image.get(image)
            if known is None:
                known = self._resolve(image)
                if known is not None:
                    self._by_image[image] = known
            return known or (image, [])

    def forget(self, image: str) -> None:
        with self._lock:
            self._by_image.pop(image, None)

    def refuse(self, why: str) -> None:
        with self._lock:
            if not self._refused:  # None: not yet decided, "": serving
                logger.warning("sandboxes read the image's folders through its file server from now on: %s", why)
            self._refused = why
            self._by_image.clear()

    def _resolve(self, image: str) -> tuple[str, list[docker.types.Mount]] | None:
        if self._refused is None:
            self._refused = wanted(self._client) or ""
        if self._refused:
            return image, []
        try:
            image_id = self._client.images.get(image).id
        except docker.errors.ImageNotFound:
            return None  # the create says so, with what to do; a later build is seen
        try:
            return image_id, ready_tree(self._client, image_id).mounts()
        except Exception as exc:  # noqa: BLE001 - the sandbox still works, only slower to start
            logger.warning(
                "cannot copy the folders of image %s to %s, sandboxes read them through its file server: %s",
                image,
                cache_dir(),
                exc,
            )
            return image, []
