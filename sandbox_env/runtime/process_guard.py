"""What keeps a grader's processes out of reach of the code they grade, inside one container.

Every process in a container runs as the same uid (1000), and this kernel has no Yama:
any process may read another's memory (/proc/PID/mem), open its descriptors
(/proc/PID/fd/N, e.g. the write end of a report pipe) or trace it. A process that calls
undumpable() (prctl PR_SET_DUMPABLE 0) has its /proc entries owned by root and cannot be
traced or read by a process without CAP_SYS_PTRACE, which no container process holds.
The flag survives fork and is reset by execve, so a trusted process sets it for itself
and the children it forks stay covered until they exec or call dumpable().

Signals are not covered by that: a process of the same uid can stop or kill a trusted
one. Where the graded code runs in processes of its own (the fastapi app), those
processes are fenced instead (fence_signals, a seccomp filter installed before the app is
imported, inherited by everything it forks or execs): they may signal only the process
that installed the fence, never the driver or any other process of the container, and
cannot aim SIGIO/SIGURG at another process (F_SETOWN, FIOSETOWN). A grader process that
dies of a signal while every process of the graded code is fenced was therefore killed by
the kernel (the OOM killer: the cgroup's evidence, blame.py) or from outside the sandbox,
never by the graded code (families/fastapi.py). Where the graded code shares the grader's
process (pytest), the graders treat a signal as what it may be: the graded code ending its
own grading.
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


# -- the signal fence -----------------------------------------------------------------------
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (the low word of an argument)
F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP = 8, 15, 0x8901, 0x8902
# AUDIT_ARCH, then the syscalls that send a signal to a pid, pidfd_send_signal, fcntl, ioctl
_ARCHES = {
    "x86_64": (0xC000003E, (62, 200, 234, 129, 297), 424, 72, 16),
    "aarch64": (0xC00000B7, (129, 130, 131, 138, 240), 424, 25, 29),
}
X32_BIT = 0x40000000  # x86_64's x32 syscalls: refused whole


def fence_supported() -> bool:
    """Whether fence_signals can be installed here (a known architecture; the kernel has seccomp)."""
    return os.uname().machine in _ARCHES and _libc.prctl(21, 0, 0, 0, 0) >= 0  # PR_GET_SECCOMP


def _fence_program(machine: str, own_pid: int) -> list[tuple[int, int, int, int]]:
    arch, to_pid, pidfd, fcntl_nr, ioctl_nr = _ARCHES[machine]
    prog: list[tuple] = [
        (_LD_ABS, 0, 0, _ARCH),
        (_JEQ, None, "deny", arch),
        (_LD_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":
        prog.append((_JGE, "deny", None, X32_BIT))
    prog += [(_JEQ, "own", None, nr) for nr in to_pid]
    prog += [
        (_JEQ, "deny", None, pidfd),
        (_JEQ, "fcntl", None, fcntl_nr),
        (_JEQ, "ioctl", None, ioctl_nr),
        (_RET, 0, 0, _RET_ALLOW),
        "own",
        (_LD_ABS, 0, 0, _ARG0),
        (_JEQ, "allow", "deny", own_pid),
        "fcntl",
        (_LD_ABS, 0, 0, _ARG1),
        (_JEQ, "deny", None, F_SETOWN),
        (_JEQ, "deny", "allow", F_SETOWN_EX),
        "ioctl",
        (_LD_ABS, 0, 0, _ARG1),
        (_JEQ, "deny", None, FIOSETOWN),
        (_JEQ, "deny", "allow", SIOCSPGRP),
        "allow",  # every jump goes forward: the verdicts come last
        (_RET, 0, 0, _RET_ALLOW),
        "deny",
        (_RET, 0, 0, _RET_EPERM),
    ]
    labels, code = {}, []
    for item in prog:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)

    def rel(target, i: int) -> int:
        return 0 if target in (0, None) else labels[target] - (i + 1)

    return [(op, rel(jt, i), rel(jf, i), k) for i, (op, jt, jf, k) in enumerate(code)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def fence_signals() -> None:
    """From now on this process, and everything it forks or execs, may send signals only to this process.

    Raises OSError when the fence cannot be installed: the caller must then not run the
    graded code (a grader that claims the fence must have it).
    """
    machine = os.uname().machine
    if machine not in _ARCHES:
        raise OSError(f"no signal fence for the {machine} architecture")
    code = _fence_program(machine, os.getpid())
    filters = (_SockFilter * len(code))(*[_SockFilter(*c) for c in code])
    prog = _SockFprog(len(code), filters)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(err)}")
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP) failed: {os.strerror(err)}")
