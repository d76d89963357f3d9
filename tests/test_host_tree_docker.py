"""A sandbox whose image folders come from the host (host_tree.py) sees the image's own files, and works without them.

On an engine where the folders are served from the host, a sandbox lists the same paths, types and
sizes under them as a plain container of the image does; where the copy cannot be made, or
`WEBSANDBOX_HOST_TREE=0`, sandboxes start as before, without the mounts; copies of images the
engine no longer has are removed when a copy is made.
"""

from __future__ import annotations

import logging

import pytest

from sandbox_env.constants import SANDBOX_USER
from sandbox_env.rollout.tools import run_bash
from sandbox_env.sandbox.docker import DockerBackend, docker_client
from sandbox_env.sandbox.docker.host_tree import MOUNTED, SWITCH, cache_dir, prune, wanted
from sandbox_env.sandbox.docker.labels import LABEL

pytestmark = pytest.mark.docker

LISTING = "find " + " ".join(f"/{rel}" for rel in MOUNTED) + " -printf '%y %s %p\\n' 2>/dev/null | sort | sha256sum"
SERVED = "grep -c -E ' /(usr/bin|usr/lib|opt) ' /proc/self/mountinfo"


@pytest.fixture
def served():
    why = wanted(docker_client())
    if why is not None:
        pytest.skip(f"this engine's sandboxes read the image through its storage driver: {why}")


def _plain_listing(image: str) -> str:
    client = docker_client()
    container = client.containers.create(
        image, ["bash", "-c", LISTING], user=SANDBOX_USER, network_mode="none", labels={LABEL: "test"}
    )
    try:
        container.start()
        assert container.wait(timeout=120)["StatusCode"] == 0
        return container.logs().decode()
    finally:
        container.remove(force=True)


async def test_a_sandbox_lists_the_images_own_files_under_the_served_folders(served, sandbox, image):
    assert (await run_bash(sandbox, SERVED, timeout=10)).strip() == str(len(MOUNTED))
    assert (await run_bash(sandbox, LISTING, timeout=60)).strip() == _plain_listing(image).strip()


async def _mounted_folders(image: str) -> list[str]:
    backend = DockerBackend()
    try:
        async with backend.sandbox(image) as sb:
            return (await run_bash(sb, SERVED + "; python -c 'import django; print(\"works\")'", timeout=30)).split()
    finally:
        backend.teardown()


async def test_switched_off_sandboxes_start_without_the_mounts(served, image, monkeypatch):
    monkeypatch.setenv(SWITCH, "0")
    assert await _mounted_folders(image) == ["0", "works"]


async def test_a_copy_that_cannot_be_made_leaves_sandboxes_working_and_says_why(served, image, tmp_path, monkeypatch, caplog):
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    with caplog.at_level(logging.WARNING, logger="websandbox.sandbox"):
        assert await _mounted_folders(image) == ["0", "works"]
    assert any("cannot copy the folders of image" in r.getMessage() for r in caplog.records), caplog.records


def test_copies_of_images_the_engine_no_longer_has_are_removed(tmp_path, monkeypatch, image):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    client = docker_client()
    kept = client.images.get(image).id.split(":", 1)[1]
    gone = "0" * 64
    cache_dir().mkdir(parents=True)
    for name in (kept, gone, f"{gone}.partial", "f" * 64):
        (cache_dir() / name / "tree").mkdir(parents=True)
    for name in (f"{kept}.lock", f"{gone}.lock"):
        (cache_dir() / name).touch()
    prune(client, keep=cache_dir() / ("f" * 64))
    assert sorted(p.name for p in cache_dir().iterdir()) == sorted([kept, f"{kept}.lock", "f" * 64])


async def test_an_engine_that_cannot_see_the_copy_starts_the_sandbox_without_it_and_says_why(
    served, image, tmp_path, monkeypatch, caplog
):
    """As when the engine's host is not this one or cannot reach the cache (a copy it has no path to)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    unseen = cache_dir() / docker_client().images.get(image).id.split(":", 1)[1]
    unseen.mkdir(parents=True)
    (unseen / "complete").write_text("")  # complete by its marker, but no folder the engine could mount
    with caplog.at_level(logging.WARNING, logger="websandbox.sandbox"):
        assert await _mounted_folders(image) == ["0", "works"]
    assert any("through its file server from now on" in r.getMessage() for r in caplog.records), caplog.records


def test_without_extraction_filters_the_copy_applies_the_tar_filters_rules_itself(tmp_path):
    """Python before 3.11.4 (Debian 12's 3.11.2) has no tarfile filters: the copy clears the same bits and refuses
    the same escapes as the standard library's "tar" filter."""
    import stat
    import tarfile

    import pytest

    from sandbox_env.sandbox.docker.host_tree import _as_tar_filter

    member = tarfile.TarInfo("/usr/bin/tool")
    member.mode = 0o6777
    kept = _as_tar_filter(member, tmp_path)
    assert kept.name == "usr/bin/tool" and kept.mode & (stat.S_ISUID | stat.S_ISGID | stat.S_ISVTX | 0o022) == 0
    with pytest.raises(tarfile.ExtractError, match="outside"):
        _as_tar_filter(tarfile.TarInfo("usr/../../etc/passwd"), tmp_path)
