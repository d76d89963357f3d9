"""What keeps a grader's processes out of reach of the code they grade, inside one container.

Every process in a container runs as the same uid (1000), and this kernel has no Yama:
any process may read another's memory (/proc/PID/mem), open its descriptors
(/proc/PID/fd/N, e.g. the write end of a report pipe) or trace it. A process that calls
undumpable() (prctl PR_SET_DUMPABLE 0) has its /proc entries owned by root and cannot be
traced or read by a process without CAP_SYS_PTRACE, which no container process holds.
The flag survives fork and is reset by execve, so a trusted process sets it for itself
and the children it forks stay covered until they exec or call dumpable().

Signals are not covered: a process of the same uid can still stop or kill a trusted
one. The graders treat that as what it is, the graded code ending its own grading.
"""

from __future__ import annotations

import ctypes
import os
import signal

PR_SET_DUMPABLE = 4

_libc = ctypes.CDLL(None, use_errno=True)


def _set_dumpable(flag: int) -> None:
    if _libc.prctl(PR_SET_DUMPABLE, flag, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_DUMPABLE, {flag}) failed: {os.strerror(err)}")


def undumpable() -> None:
    """Close this process's memory, descriptors and environment to every other process of its uid."""
    _set_dumpable(0)


def dumpable() -> None:
    """Undo undumpable() in a forked child that is about to run untrusted code like any program."""
    _set_dumpable(1)


def state_of(pid: int) -> str:
    """The one-letter state of a process (R, S, T, Z...), or "gone"."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0].decode()
    except (OSError, IndexError):
        return "gone"


def other_pids(keep: set[int]) -> list[int]:
    """Every live process of the container not in `keep` (zombies, already dead, are left out)."""
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit() and int(name) not in keep and state_of(int(name)) not in ("Z", "X", "gone"):
            out.append(int(name))
    return out


def ancestors(pid: int) -> set[int]:
    """pid and every process above it, up to pid 1."""
    chain = {pid}
    while pid > 1:
        try:
            with open(f"/proc/{pid}/stat", "rb") as fh:
                pid = int(fh.read().rsplit(b")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            break
        chain.add(pid)
    return chain


def sweep(keep: set[int], rounds: int = 50) -> int:
    """Stop, then kill, every process not in `keep`; repeat while new ones appear (forks racing).

    Returns how many distinct processes were killed.
    """
    killed: set[int] = set()
    for _ in range(rounds):
        victims = other_pids(keep)
        if not victims:
            break
        for sig in (signal.SIGSTOP, signal.SIGKILL):
            for pid in victims:
                try:
                    os.kill(pid, sig)
                except (ProcessLookupError, PermissionError):
                    pass
        killed.update(victims)
        _reap()
    return len(killed)


def _reap() -> None:
    """Collect exit statuses of this process's own children so they leave /proc."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
