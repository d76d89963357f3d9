"""What keeps a grader's processes out of reach of the code they grade, inside one container.

Every process in a container runs as the same uid (1000), and this kernel has no Yama:
any process may read another's memory (/proc/PID/mem), open its descriptors
(/proc/PID/fd/N, e.g. the write end of a report pipe) or trace it. A process that calls
undumpable() (prctl PR_SET_DUMPABLE 0) has its /proc entries owned by root and cannot be
traced or read by a process without CAP_SYS_PTRACE, which no container process holds.
The flag survives fork and is reset by execve, so a trusted process sets it for itself
and the children it forks stay covered until they exec or call dumpable().

Signals are not covered by that, nor is what the kernel lets a process do to another of its
uid by a plain uid check: change its resource limits (prlimit64: a 1 s RLIMIT_CPU kills it),
its CPU affinity, scheduling policy and parameters (sched_set*), its nice value and its I/O
priority (setpriority and ioprio_set, for a process, a process group, or with PRIO_USER and
who 0 every process of the uid). Where the graded code runs in processes of its own (the
fastapi app), those processes are fenced instead (fence_signals, a seccomp filter installed
before the app is imported, inherited by everything it forks or execs):

- signals (kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo) never reach the harness:
  the target may not be 0, -1 or -PGID, nor any thread of the app host or the driver
  (harness_tasks(), read when the fence is made: kill and rt_sigqueueinfo given a thread's id
  signal its whole process, so every thread id is listed, and the driver starts no thread once
  an app exists; the agent and pid 1 are root's, out of reach anyway). Everything else in the
  container is the app's own (the driver sweeps it between sessions), so the app may signal
  its own forks: multiprocessing.Pool.terminate, Popen.kill and a subprocess timeout send
  SIGTERM or SIGKILL to a child; refused, they left honest apps with a PermissionError and a
  Pool worker stuck holding the app's connection (the next request hung to its limit).
  pidfd_send_signal is refused, and SIGIO or SIGURG cannot be aimed at another process
  (F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP);
- prlimit64, sched_setaffinity, sched_setparam, sched_setscheduler, sched_setattr,
  migrate_pages and move_pages take only pid 0 (the caller) or the fenced process's pid;
- setpriority and ioprio_set only for one process (PRIO_PROCESS, IOPRIO_WHO_PROCESS), who 0
  or the fenced process's pid: no process group, no user;
- ptrace, process_vm_readv, process_vm_writev, kcmp, pidfd_getfd, process_madvise and
  perf_event_open are refused whole (undumpable() already denies them against the grader's
  processes; the fence does not depend on that).

So the app may still renice, pin or limit itself (os.nice, os.sched_setaffinity(0, ...),
resource.setrlimit) and signal its own children: an honest app that does so works. A fork of
the app that renices, pins or limits itself must say pid 0 (for those knobs the fence knows
only the pid that installed it). Numbers are per architecture (x86_64,
aarch64, from the kernel's tables); the filter refuses any other audit arch and x32 calls.

Why a fence and not a uid of the app's own. A uid split would need a privileged spawn
(the in-container agent holds SETUID, but the driver runs as uid 1000 and cannot ask it
without a new agent command), a /workspace and a run folder readable and writable by two
uids, and it would still leave the app's own children sharing a uid with each other. The
fence needs no privilege, is enforced by the kernel on every thread and exec of the app, and
names what the app may do to others; its weakness is that it is a list: a future syscall
that acts on another process by a uid check would be open until it is listed here.

The other knobs a same-uid process has on its judge, and why they are closed:
- /proc/PID/* writes (oom_score_adj, timerslack_ns, comm, sched, clear_refs, autogroup,
  coredump_filter, mem) and /proc/PID/fd: the grader's processes are undumpable, so their
  entries belong to root, and timerslack_ns, autogroup and a lower oom_score_adj of another
  process need capabilities no container process holds;
- cgroup files: read-only inside the container (the sandbox cannot change its own limits);
- kill(-PGID), kill(0), kill(-1), and a signal to any thread of the driver or the app host:
  the fence refuses them (the app's own processes it lets through);
- filling /tmp or /dev/shm, or holding many tasks: bounded by the container's tmpfs sizes,
  memory and pids limits, and judged by the host's evidence (a limit its processes hit is
  the submission's, blame.limits_hit); a run folder the driver cannot prepare any more is
  the session's error;
- RLIMIT_NPROC counts the uid's tasks, so a swarm of forks can stop the driver from starting
  a thread: the pids limit is the lower bound, and the host's trace shows the swarm;
- the witness's events pipe, the one descriptor of the driver the app holds: the driver
  reads from it no more than an honest witness writes (http_driver.Lines), so a flood is
  tampering at once and cannot keep the driver busy.

A grader process that dies of a signal while every process of the graded code is fenced was
therefore killed by the kernel (the OOM killer, or a limit the sandbox's processes hit: the
cgroup's evidence, sandbox/blame.py) or from outside the sandbox, never by the graded code
(families/fastapi.py). Where the graded code shares the grader's process (pytest), the
graders treat a signal as what it may be: the graded code ending its own grading.
"""

from __future__ import annotations

import ctypes
import os
import signal
from dataclasses import dataclass

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


def harness_tasks(pid: int | None = None) -> set[int]:
    """Every thread id of every process above `pid` (default: this process) that it may signal, up to pid 1.

    What a fence made in `pid` protects from signals: the processes that started it, thread by
    thread (a thread's id given to kill or rt_sigqueueinfo signals its whole process). Only
    threads alive now are listed; the harness starts none once the fenced process exists.
    Processes the kernel already keeps out of reach (root's: pid 1, the agent) are left out,
    so that an id of theirs that a short-lived thread held and gave back cannot make one of
    the app's own processes unsignalable.
    """
    pid = os.getpid() if pid is None else pid
    out: set[int] = set()
    for above in ancestors(pid) - {pid}:
        try:
            os.kill(above, 0)  # the kernel's own check: may this process signal it at all?
        except (PermissionError, ProcessLookupError):
            continue
        out.add(above)
        try:
            out.update(int(tid) for tid in os.listdir(f"/proc/{above}/task") if tid.isdigit())
        except OSError:
            pass
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


# -- the fence --------------------------------------------------------------------------------
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
_RET_ALLOW = 0x7FFF0000
_RET_EPERM = 0x00050000 | 1
_LD_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_NR, _ARCH, _ARG0, _ARG1 = 0, 4, 16, 24  # offsets in struct seccomp_data (the low word of an argument)
F_SETOWN, F_SETOWN_EX, FIOSETOWN, SIOCSPGRP = 8, 15, 0x8901, 0x8902
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
X32_BIT = 0x40000000  # x86_64's x32 syscalls: refused whole
NEGATIVE = 0x80000000  # a pid's low word at or above this is a negative pid_t (-1, -PGID)
BPF_MAXINSNS = 4096  # the kernel's bound on a filter's length


@dataclass(frozen=True)
class _Arch:
    """One architecture's AUDIT_ARCH and syscall numbers, as its kernel headers give them.

    x86_64: arch/x86/entry/syscalls/syscall_64.tbl (asm/unistd_64.h); aarch64: the generic
    table, include/uapi/asm-generic/unistd.h (fcntl and prlimit64 are its 3264 names).
    """

    audit: int
    signal_pid: tuple[int, ...]  # kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo: arg0 a pid
    self_pid: tuple[int, ...]  # prlimit64, sched_setaffinity, sched_setparam, sched_setscheduler,
    # sched_setattr, migrate_pages, move_pages: arg0 a pid, 0 for the caller
    setpriority: int  # (which, who, prio)
    ioprio_set: int  # (which, who, ioprio)
    refused: tuple[int, ...]  # pidfd_send_signal, ptrace, process_vm_readv, process_vm_writev, kcmp,
    # pidfd_getfd, process_madvise, perf_event_open
    fcntl: int
    ioctl: int


_ARCHES = {
    "x86_64": _Arch(
        audit=0xC000003E,
        signal_pid=(62, 200, 234, 129, 297),
        self_pid=(302, 203, 142, 144, 314, 256, 279),
        setpriority=141,
        ioprio_set=251,
        refused=(424, 101, 310, 311, 312, 438, 440, 298),
        fcntl=72,
        ioctl=16,
    ),
    "aarch64": _Arch(
        audit=0xC00000B7,
        signal_pid=(129, 130, 131, 138, 240),
        self_pid=(261, 122, 118, 119, 274, 238, 239),
        setpriority=140,
        ioprio_set=30,
        refused=(424, 117, 270, 271, 272, 438, 440, 241),
        fcntl=25,
        ioctl=29,
    ),
}


def fence_supported() -> bool:
    """Whether fence_signals can be installed here (a known architecture; the kernel has seccomp)."""
    return os.uname().machine in _ARCHES and _libc.prctl(21, 0, 0, 0, 0) >= 0  # PR_GET_SECCOMP


def _fence_program(machine: str, own_pid: int, protected: set[int]) -> list[tuple[int, int, int, int]]:
    a = _ARCHES[machine]
    protected = {p for p in protected if 0 < p < NEGATIVE and p != own_pid}
    prog: list[tuple] = [
        (_LD_ABS, 0, 0, _ARCH),
        (_JEQ, None, "deny", a.audit),
        (_LD_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":
        prog.append((_JGE, "deny", None, X32_BIT))
    prog += [(_JEQ, "signal", None, nr) for nr in a.signal_pid]
    prog += [(_JEQ, "self", None, nr) for nr in a.self_pid]
    prog += [(_JEQ, "deny", None, nr) for nr in a.refused]
    prog += [
        (_JEQ, "setpriority", None, a.setpriority),
        (_JEQ, "ioprio_set", None, a.ioprio_set),
        (_JEQ, "fcntl", None, a.fcntl),
        (_JEQ, "ioctl", None, a.ioctl),
        (_RET, 0, 0, _RET_ALLOW),
        "self",  # a pid argument: 0 (the caller) or this process
        (_LD_ABS, 0, 0, _ARG0),
        (_JEQ, "allow", None, 0),
        (_JEQ, "allow", "deny", own_pid),
        "setpriority",  # PRIO_PROCESS only (PRIO_PGRP, PRIO_USER reach other processes), then `who`
        (_LD_ABS, 0, 0, _ARG0),
        (_JEQ, "who", "deny", PRIO_PROCESS),
        "ioprio_set",  # IOPRIO_WHO_PROCESS only, then `who`
        (_LD_ABS, 0, 0, _ARG0),
        (_JEQ, "who", "deny", IOPRIO_WHO_PROCESS),
        "who",
        (_LD_ABS, 0, 0, _ARG1),
        (_JEQ, "allow", None, 0),
        (_JEQ, "allow", "deny", own_pid),
        "fcntl",
        (_LD_ABS, 0, 0, _ARG1),
        (_JEQ, "deny", None, F_SETOWN),
        (_JEQ, "deny", "allow", F_SETOWN_EX),
        "ioctl",
        (_LD_ABS, 0, 0, _ARG1),
        (_JEQ, "deny", None, FIOSETOWN),
        (_JEQ, "deny", "allow", SIOCSPGRP),
        "allow",  # every jump goes forward: the verdicts come after the checks that jump to them
        (_RET, 0, 0, _RET_ALLOW),
        "deny",
        (_RET, 0, 0, _RET_EPERM),
        # Last, so that no jump crosses it however many ids it lists (a jump's offset is one byte):
        # a pid (or thread id) above 0 that is none of the harness's (0, a group or -1 reach others),
        # every verdict returned on the spot.
        "signal",
        (_LD_ABS, 0, 0, _ARG0),
        (_JEQ, 0, 1, 0),
        (_RET, 0, 0, _RET_EPERM),
        (_JGE, 0, 1, NEGATIVE),
        (_RET, 0, 0, _RET_EPERM),
        *[step for tid in sorted(protected) for step in ((_JEQ, 0, 1, tid), (_RET, 0, 0, _RET_EPERM))],
        (_RET, 0, 0, _RET_ALLOW),
    ]
    labels, code = {}, []
    for item in prog:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)

    def rel(target, i: int) -> int:
        if target is None:
            return 0
        if isinstance(target, int):  # an offset as it stands
            return target
        offset = labels[target] - (i + 1)
        if not 0 <= offset <= 255:  # a jump's offset is one byte
            raise OSError(f"the signal fence cannot jump {offset} instructions")
        return offset

    return [(op, rel(jt, i), rel(jf, i), k) for i, (op, jt, jf, k) in enumerate(code)]


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def fence_signals(protected: set[int] | None = None) -> None:
    """From now on this process, and everything it forks or execs, may limit or reschedule only itself,
    and signal only processes that are not the harness's.

    `protected`: the pids and thread ids no signal may reach (default: harness_tasks(), every
    thread of the processes above this one). Raises OSError when the fence cannot be installed:
    the caller must then not run the graded code (a grader that claims the fence must have it).
    """
    machine = os.uname().machine
    if machine not in _ARCHES:
        raise OSError(f"no signal fence for the {machine} architecture")
    code = _fence_program(machine, os.getpid(), harness_tasks() if protected is None else set(protected))
    if len(code) > BPF_MAXINSNS:
        raise OSError(f"the signal fence is too long to install ({len(code)} instructions)")
    filters = (_SockFilter * len(code))(*[_SockFilter(*c) for c in code])
    prog = _SockFprog(len(code), filters)
    if _libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_NO_NEW_PRIVS) failed: {os.strerror(err)}")
    if _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP) failed: {os.strerror(err)}")
