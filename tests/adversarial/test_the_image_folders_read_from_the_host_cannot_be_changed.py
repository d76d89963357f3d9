"""The image's folders a sandbox reads from the host (host_tree.py) are read-only, to the model and to code at import.

Every way a model could try to change them from a tool call or its Python session fails (write,
create, append, unlink, rename, link, chmod, utime, xattr, remount, a bind of its own), the host's
copy has the same bytes afterwards, and a file planted there is never seen by a later sandbox.
"""

from __future__ import annotations

import hashlib

import pytest

from sandbox_env.rollout.tools import run_bash, run_code
from sandbox_env.sandbox.docker import docker_client
from sandbox_env.sandbox.docker.host_tree import MOUNTED, cache_dir, wanted

pytestmark = pytest.mark.docker

SITE = "/opt/venv/lib/python3.13/site-packages"
TARGETS = (f"{SITE}/django/__init__.py", "/opt/websandbox/runtime/agent.py", "/usr/lib/python3.13/os.py")

ATTACKS = "\n".join(
    [
        f"echo 'print(1)' > {SITE}/sitecustomize.py",
        f"echo '#' >> {TARGETS[0]}",
        f"rm -f {TARGETS[1]}",
        f"mv {TARGETS[2]} /usr/lib/python3.13/os_.py",
        f"ln -s /workspace/x {SITE}/planted.pth",
        "mkdir /usr/bin/planted",
        "chmod 777 /usr/bin/python3.13",
        f"touch -d 2001-01-01 {TARGETS[0]}",
        f"setfattr -n user.x -v 1 {TARGETS[0]}",
        "mount -o remount,rw /opt",
        "mount --bind /workspace /opt/venv",
        f"truncate -s 0 {TARGETS[0]}",
    ]
)

PYTHON_ATTACKS = f"""
import os
results = []
for attempt in (
    lambda: open({TARGETS[0]!r}, "a").write("#"),
    lambda: os.chmod({TARGETS[1]!r}, 0o777),
    lambda: os.utime({TARGETS[1]!r}, (0, 0)),
    lambda: os.unlink({TARGETS[2]!r}),
    lambda: os.setxattr({TARGETS[0]!r}, "user.x", b"1"),
    lambda: open({SITE!r} + "/planted.pth", "w").write("/workspace"),
):
    try:
        attempt()
        results.append("changed")
    except OSError as exc:
        results.append(exc.strerror)
print(results)
"""


def _host_digests(image: str) -> dict[str, str]:
    root = cache_dir() / docker_client().images.get(image).id.split(":", 1)[1]
    assert (root / "complete").exists(), root
    return {t: hashlib.sha256((root / "tree" / t.lstrip("/")).read_bytes()).hexdigest() for t in TARGETS}


@pytest.fixture
def served():
    why = wanted(docker_client())
    if why is not None:
        pytest.skip(f"this engine's sandboxes read the image through its storage driver: {why}")


async def test_the_folders_are_read_only_binds_in_a_sandbox(served, sandbox):
    mounts = await run_bash(sandbox, "cat /proc/self/mountinfo", timeout=10)
    for rel in MOUNTED:
        (line,) = [m for m in mounts.splitlines() if m.split()[4] == f"/{rel}"]
        assert "ro" in line.split()[5].split(","), line


async def test_no_change_from_a_tool_call_or_the_session_reaches_the_host_or_a_later_sandbox(served, backend, image):
    async with backend.sandbox(image) as sb:
        before = _host_digests(image)
        out = await run_bash(sb, ATTACKS.replace("\n", " 2>&1; ") + " 2>&1; echo done", timeout=30)
        assert "done" in out
        refusals = sum(out.count(r) for r in ("Read-only file system", "Permission denied", "must be superuser"))
        assert refusals >= len(ATTACKS.splitlines()) - out.count("command not found"), out
        await sb.start_python()
        out = await run_code(sb, PYTHON_ATTACKS, timeout=30)
        assert "changed" not in out and out.count("'") == 12, out  # six refusals, each its reason in quotes
        assert _host_digests(image) == before
    async with backend.sandbox(image) as later:
        out = await run_bash(
            later,
            f"ls {SITE}/sitecustomize.py {SITE}/planted.pth /usr/bin/planted 2>&1; "
            f"stat -c %a /usr/bin/python3.13; python -c 'import django; print(django.__version__)'",
            timeout=30,
        )
        assert out.count("No such file or directory") == 3, out
        assert "777" not in out and out.strip().splitlines()[-1][:1].isdigit(), out
