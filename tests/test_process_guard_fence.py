"""The fence the fastapi app runs behind (runtime/grader/process_guard.fence_signals), installed in a forked child here.

Against another process (here the test's own, the child's parent) every knob is refused with
EPERM; against itself (pid 0 or its own pid) the same calls work, so an honest app may renice,
pin or limit itself. The numbers of each architecture come from the kernel's tables.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import resource
import struct
import sys

import pytest

from sandbox_env.constants import GRADER_PROGRAMS_DIR

_spec = importlib.util.spec_from_file_location("_grader_process_guard", GRADER_PROGRAMS_DIR / "process_guard.py")
guard = sys.modules["_grader_process_guard"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(guard)

pytestmark = pytest.mark.skipif(not guard.fence_supported(), reason="no seccomp fence on this machine")


def _in_fenced_child(calls: dict, protected: set[int] | None = None) -> dict[str, str]:
    """Run each call in a forked, fenced child; 'ok' or the error it raised (or why the fence did not install)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            try:
                guard.fence_signals(protected)
            except OSError as exc:
                os.write(w, json.dumps({"fence": str(exc)}).encode())
                os._exit(0)
            out = {}
            for name, call in calls.items():
                try:
                    call()
                    out[name] = "ok"
                except OSError as exc:
                    out[name] = os.strerror(exc.errno) if exc.errno else str(exc)
            os.write(w, json.dumps(out).encode())
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r, "rb") as fh:
        return json.loads(fh.read())


_libc = ctypes.CDLL(None, use_errno=True)
_NR = {
    "x86_64": {"ioprio_set": 251, "sched_setattr": 314, "process_vm_readv": 310, "kcmp": 312},
    "aarch64": {"ioprio_set": 30, "sched_setattr": 274, "process_vm_readv": 270, "kcmp": 272},
}.get(os.uname().machine, {})


def _sys(name, *args):
    if _libc.syscall(_NR[name], *args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def test_every_knob_on_another_process_is_refused():
    # each call would set what the test process already has (without the fence it succeeds and
    # changes nothing); the knobs that reach every process of the uid are tried in containers only
    # (tests/adversarial/test_the_app_cannot_turn_the_knobs_of_its_judges.py): here the uid may be root's
    judge = os.getpid()
    normal = struct.pack("IIQiIQQQ", 48, 0, 0, os.getpriority(os.PRIO_PROCESS, judge), 0, 0, 0, 0)
    nice = os.getpriority(os.PRIO_PROCESS, judge)
    got = _in_fenced_child(
        {
            "kill": lambda: os.kill(judge, 0),
            "kill group": lambda: os.kill(0, 0),
            "prlimit64": lambda: resource.prlimit(judge, resource.RLIMIT_CORE, resource.getrlimit(resource.RLIMIT_CORE)),
            "sched_setaffinity": lambda: os.sched_setaffinity(judge, os.sched_getaffinity(judge)),
            "sched_setscheduler": lambda: os.sched_setscheduler(judge, os.SCHED_OTHER, os.sched_param(0)),
            "sched_setparam": lambda: os.sched_setparam(judge, os.sched_param(0)),
            "sched_setattr": lambda: _sys("sched_setattr", judge, normal, 0),
            "setpriority process": lambda: os.setpriority(os.PRIO_PROCESS, judge, nice),
            "setpriority own group": lambda: os.setpriority(os.PRIO_PGRP, 0, 0),
            "process_vm_readv": lambda: _sys("process_vm_readv", judge, None, 0, None, 0, 0),
            "kcmp": lambda: _sys("kcmp", judge, judge, 0, 0, 0),
        }
    )
    assert got == dict.fromkeys(got, "Operation not permitted"), got


def test_the_same_knobs_on_itself_work():
    got = _in_fenced_child(
        {
            "kill self": lambda: os.kill(os.getpid(), 0),
            "nice": lambda: os.nice(5),
            "setpriority own pid": lambda: os.setpriority(os.PRIO_PROCESS, os.getpid(), 6),
            "sched_setaffinity 0": lambda: os.sched_setaffinity(0, os.sched_getaffinity(0)),
            "sched_setscheduler 0": lambda: os.sched_setscheduler(0, os.SCHED_BATCH, os.sched_param(0)),
            "getrlimit": lambda: resource.getrlimit(resource.RLIMIT_NOFILE),
            "prlimit own pid": lambda: resource.prlimit(os.getpid(), resource.RLIMIT_CORE, (0, 0)),
            "ioprio_set 0": lambda: _sys("ioprio_set", 1, 0, 0),
            "a child runs": lambda: os.waitpid(os.spawnv(os.P_NOWAIT, "/bin/true", ["true"]), 0),
        }
    )
    assert got == dict.fromkeys(got, "ok"), got


def test_its_own_children_it_may_signal():
    # multiprocessing.Pool.terminate, Popen.kill and subprocess's timeout signal the app's own children;
    # refused, a Pool left its workers running and the handler raised PermissionError
    import subprocess

    def kill_a_child():
        child = subprocess.Popen(["sleep", "30"])
        child.terminate()
        assert child.wait(10) == -15

    def time_out_a_child():
        try:
            subprocess.run(["sleep", "30"], timeout=0.2)
        except subprocess.TimeoutExpired:
            return
        raise AssertionError("no timeout")

    def pool_of_two():
        import multiprocessing
        import time

        with multiprocessing.get_context("fork").Pool(2) as pool:
            assert pool.map(abs, [-1, -2, -3]) == [1, 2, 3]
            pool.apply_async(time.sleep, (30,))
            time.sleep(0.2)  # a worker is still busy when `with` terminates the pool: SIGTERM reaches it

    got = _in_fenced_child({"kill a child": kill_a_child, "time out a child": time_out_a_child, "a pool": pool_of_two})
    assert got == dict.fromkeys(got, "ok"), got


def test_no_thread_of_the_judge_is_reachable_by_its_id():
    # kill() given a thread's id signals that thread's whole process: every thread of the judge is fenced off
    import threading

    stop = threading.Event()
    worker = threading.Thread(target=stop.wait, daemon=True)
    worker.start()
    try:
        judge, tid = os.getpid(), worker.native_id
        got = _in_fenced_child(
            {
                "kill a thread of the judge": lambda: os.kill(tid, 0),
                "tgkill a thread of the judge": lambda: signal_thread(judge, tid),
                "kill -1": lambda: os.kill(-1, 0),
                "kill its own group": lambda: os.kill(-os.getpgid(0), 0),
            }
        )
    finally:
        stop.set()
    assert got == dict.fromkeys(got, "Operation not permitted"), got


def signal_thread(tgid: int, tid: int) -> None:
    nr = {"x86_64": 234, "aarch64": 131}[os.uname().machine]  # tgkill
    if _libc.syscall(nr, tgid, tid, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def test_a_fence_that_protects_many_threads_still_installs():
    # the judge's processes may hold many threads (a pytest process late in a long run held enough for the
    # fence's jumps over their ids to pass a jump's one-byte offset): none of its jumps crosses the list
    import subprocess

    many = set(range(50_000, 50_900))

    def kill_a_child():
        child = subprocess.Popen(["sleep", "30"])
        child.kill()
        assert child.wait(10) == -9

    got = _in_fenced_child({"kill a child": kill_a_child, "signal a protected id": lambda: os.kill(50_450, 0)}, many)
    assert got == {"kill a child": "ok", "signal a protected id": "Operation not permitted"}, got
