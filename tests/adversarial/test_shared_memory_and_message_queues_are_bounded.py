"""Memory the kernel holds outside the tmpfs limits is bounded or unavailable.

The threat: memory outside the tmpfs limits (/dev/shm at the engine's 64 MiB default,
System V segments of any size, POSIX message queues). The decision: /dev/shm is 16 MiB,
System V segments total at most 16 MiB and die with their last user, message queues are
unavailable; all of it is charged to the container's memory cgroup.
"""

from __future__ import annotations

import pytest

from sandbox_env.rollout.tools import run_bash, run_code
from sandbox_env.sandbox.docker.hardening import SHM_MB

pytestmark = pytest.mark.docker


async def test_dev_shm_holds_at_most_its_bound(session):
    out = await run_bash(session, "head -c 100M /dev/zero > /dev/shm/fill; du -m /dev/shm/fill", timeout=30)
    assert "No space left on device" in out
    assert out.splitlines()[0].split() == [str(SHM_MB), "/dev/shm/fill"], out


async def test_posix_message_queues_are_unavailable(session):
    code = (
        "import ctypes, os\nrt = ctypes.CDLL('librt.so.1', use_errno=True)\n"
        "fd = rt.mq_open(b'/q', os.O_CREAT | os.O_RDWR, 0o600, None)\n"
        "print(fd, os.strerror(ctypes.get_errno()))"
    )
    assert (await run_code(session, code, timeout=10)).startswith("-1 ")
    out = await run_bash(session, "touch /dev/mqueue/q; ls /dev/mqueue | wc -l", timeout=10)
    assert out.splitlines()[0] == "0" and "No space left" in out


async def test_system_v_shared_memory_is_capped(session):
    code = (
        "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        "def get(size): return libc.shmget(0, ctypes.c_size_t(size), 0o1000 | 0o600)\n"
        "print(get(100 << 20) < 0, get(1 << 20) >= 0)"  # IPC_PRIVATE, IPC_CREAT
    )
    assert await run_code(session, code, timeout=10) == "True True"
    limits = await run_bash(session, "cat /proc/sys/kernel/shmall /proc/sys/kernel/shm_rmid_forced", timeout=10)
    assert limits.split() == [str((SHM_MB << 20) // 4096), "1"]
