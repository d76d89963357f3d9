"""The fastapi app cannot change the limits, scheduling or priorities of the processes that judge it.

The app, the HTTP driver and the app host all run as uid 1000, and the kernel lets a
process change much of another process of its uid: its resource limits (prlimit64), CPU
affinity, scheduling policy and parameters, nice value and I/O priority. Two held-out
exploits used that to turn a wrong answer into a harness fault, rescheduled by the trainer:

- the driver's RLIMIT_CPU set to 1 s, then the witness's events pipe flooded with valid
  events until the kernel killed the parsing driver: "killed by a signal while fenced";
- the driver pinned to one CPU where nice-19 threads of the app spin, while the events pipe
  is flooded: the driver's clock saw the app starved, and the deadline blamed the harness.

The defence: the signal fence (runtime/grader/process_guard.fence_signals) refuses every such call aimed
at another process, and the driver reads no more from the events pipe than an honest
witness writes for what it asked (http_driver.Lines): the flood is tampering at once.
Each knob below is turned at import; when it is refused, the import fails with
PermissionError, the submission's plain 0.0: without the fence each call succeeds (the
import goes on, or the driver is killed outright), and the reason does not say so.
"""

from __future__ import annotations

import pytest
from attack_kit import BROKEN_APP, GRADER_PIDS, assert_zero, grade_fastapi, refused_at_import

pytestmark = pytest.mark.docker

KIT = (
    BROKEN_APP
    + GRADER_PIDS
    + """
import ctypes as _ctypes
import json as _json
import os as _os
import resource as _resource
import struct as _struct
import threading as _threading

_libc = _ctypes.CDLL(None, use_errno=True)
_NR = {
    "x86_64": {"ioprio_set": 251, "sched_setattr": 314, "prlimit64": 302, "tgkill": 234},
    "aarch64": {"ioprio_set": 30, "sched_setattr": 274, "prlimit64": 261, "tgkill": 131},
}
_NR = _NR[_os.uname().machine]
_IDLE = 3 << 13  # IOPRIO_CLASS_IDLE


def _syscall(name, *args):
    if _libc.syscall(_NR[name], *args) != 0:
        err = _ctypes.get_errno()
        raise OSError(err, _os.strerror(err))


def _driver():
    return _grader_pids()["http_driver.py"][0]


# the driver's request thread (its main thread's id is its pid): kill() given it stops the whole driver
def _drivers_newest_thread():
    return max(int(tid) for tid in _os.listdir(f"/proc/{_driver()}/task"))


# `call` in a forked child, whose pid is not the one the fence was installed with; OSError when refused
def _in_a_fork(call):
    pid = _os.fork()
    if pid == 0:
        try:
            call()
        except OSError:
            _os._exit(1)
        _os._exit(0)
    if _os.waitstatus_to_exitcode(_os.waitpid(pid, 0)[1]) == 1:
        raise OSError(1, _os.strerror(1))


_EVENTS = (_json.dumps({"ev": "status", "status": 200}) + "\\n").encode() * 64


def _write_ends():
    targets = []
    for fd in range(3, 256):
        try:
            _os.write(fd, b"")  # a write end (the witness's events pipe is one)
            targets.append(fd)
        except OSError:
            pass
    return targets


def _flood_once(targets):
    for fd in list(targets):
        try:
            _os.write(fd, _EVENTS)
        except OSError:
            targets.remove(fd)


def _flood_forever(targets):
    while targets:
        _flood_once(targets)


# The first batch is written at import, before the driver asks anything: on a busy machine a
# starved flood thread may otherwise write nothing before a broken app's checks are all done,
# and a flood that never reached the driver leaves nothing to show.
def _flood():
    targets = _write_ends()
    _flood_once(targets)
    _threading.Thread(target=_flood_forever, args=(targets,), daemon=True).start()
"""
)

# (name, the call against `_target`)
KNOBS = {
    "prlimit64 RLIMIT_CPU of the driver": ("_driver()", "_resource.prlimit(_target, _resource.RLIMIT_CPU, (1, 1))"),
    "prlimit64 RLIMIT_NOFILE of the app host": (
        "_os.getppid()",
        "_resource.prlimit(_target, _resource.RLIMIT_NOFILE, (8, 8))",
    ),
    "sched_setaffinity of the driver": ("_driver()", "_os.sched_setaffinity(_target, {min(_os.sched_getaffinity(0))})"),
    "sched_setscheduler SCHED_IDLE of the driver": (
        "_driver()",
        "_os.sched_setscheduler(_target, _os.SCHED_IDLE, _os.sched_param(0))",
    ),
    "sched_setparam of the driver": ("_driver()", "_os.sched_setparam(_target, _os.sched_param(0))"),
    "sched_setattr SCHED_IDLE of the driver": (
        "_driver()",
        "_syscall('sched_setattr', _target, _struct.pack('IIQiIQQQ', 48, 5, 0, 0, 0, 0, 0, 0), 0)",
    ),
    "setpriority PRIO_PROCESS of the driver": ("_driver()", "_os.setpriority(_os.PRIO_PROCESS, _target, 19)"),
    "setpriority PRIO_PROCESS of the app host": ("_os.getppid()", "_os.setpriority(_os.PRIO_PROCESS, _target, 19)"),
    "setpriority PRIO_PGRP of the driver's group": (
        "_driver()",
        "_os.setpriority(_os.PRIO_PGRP, _os.getpgid(_target), 19)",
    ),
    "setpriority PRIO_USER 0 (every process of the uid)": ("0", "_os.setpriority(_os.PRIO_USER, 0, 19)"),
    "ioprio_set IOPRIO_WHO_PROCESS of the driver": ("_driver()", "_syscall('ioprio_set', 1, _target, _IDLE)"),
    "ioprio_set IOPRIO_WHO_PGRP of the driver's group": (
        "_driver()",
        "_syscall('ioprio_set', 2, _os.getpgid(_target), _IDLE)",
    ),
    "ioprio_set IOPRIO_WHO_USER 0 (every process of the uid)": ("0", "_syscall('ioprio_set', 3, 0, _IDLE)"),
    # the filter reads an argument's low word only: a pid with high bits set must not slip past it
    "prlimit64 raw, the driver's pid with high bits set": (
        "_driver()",
        "_syscall('prlimit64', _ctypes.c_long(_target | (1 << 32)), 0, (_ctypes.c_uint64 * 2)(1, 1), None)",
    ),
    # the app may signal its own forks (a Pool's workers), never a thread of the harness's
    "kill SIGSTOP of the driver's request thread": ("_drivers_newest_thread()", "_os.kill(_target, 19)"),
    "tgkill SIGSTOP of the driver's request thread": (
        "_drivers_newest_thread()",
        "_syscall('tgkill', _driver(), _target, 19)",
    ),
    "kill SIGKILL of the app host from a fork": ("_os.getppid()", "_in_a_fork(lambda: _os.kill(_target, 9))"),
    "kill SIGSTOP of the driver from a fork": ("_driver()", "_in_a_fork(lambda: _os.kill(_target, 19))"),
    # a fork's pid is not the one the fence was installed with: it is fenced all the same
    "prlimit64 RLIMIT_CPU of the driver from a fork": (
        "_driver()",
        "_in_a_fork(lambda: _resource.prlimit(_target, _resource.RLIMIT_CPU, (1, 1)))",
    ),
}


def knob_app(name: str) -> str:
    return refused_at_import(KIT, name, *KNOBS[name])


@pytest.mark.parametrize("knob", list(KNOBS))
async def test_the_app_cannot_turn_a_knob_of_its_judges(backend, image, knob):
    g = await grade_fastapi(backend, image, knob_app(knob), timeout=60)
    assert_zero(g, tampered=False)
    assert f"PermissionError: {knob} refused: [Errno 1] Operation not permitted" in g.reason, g.reason
    assert g.metrics["module_imported"] == 0.0


# Exploit 1 as it was held out: the driver's CPU limit cut to 1 s, then the events pipe flooded with
# valid events for the driver to parse until the kernel killed it (a "fenced" signal death: a harness
# fault, 8 of 8). The limit is refused, and the flood is tampering as soon as it passes the witness's due.
CPU_LIMIT_THEN_FLOOD = (
    KIT
    + """
for _pid in _grader_pids().get("http_driver.py", []):
    try:
        _resource.prlimit(_pid, _resource.RLIMIT_CPU, (1, 1))
    except OSError:
        pass
_flood()
"""
)

# Exploit 2 as it was held out: the driver pinned to one CPU, nice-19 threads of the app spinning on
# that CPU, the events pipe flooded; the driver saw the app starved and blamed the harness (8 of 8).
PIN_STARVE_AND_FLOOD = (
    KIT
    + """
_cpu = min(_os.sched_getaffinity(0))
for _pid in _grader_pids().get("http_driver.py", []):
    try:
        _os.sched_setaffinity(_pid, {_cpu})
    except OSError:
        pass


def _spin_low():
    _os.sched_setaffinity(0, {_cpu})
    _os.nice(19)  # per thread on Linux
    while True:
        pass


for _ in range(4):
    _threading.Thread(target=_spin_low, daemon=True).start()
_flood()
"""
)


def assert_flood_is_tampering(g) -> None:
    assert_zero(g, tampered=True)
    assert "more line(s) on the witness's events pipe than an honest witness writes" in g.reason, g.reason


async def test_a_cpu_limit_set_on_the_driver_then_a_flood_of_events_is_refused_then_tampering(backend, image):
    g = await grade_fastapi(backend, image, CPU_LIMIT_THEN_FLOOD, timeout=60)
    assert_flood_is_tampering(g)


async def test_pinning_the_driver_beside_low_priority_spinners_and_flooding_its_pipe_is_not_a_harness_fault(backend, image):
    g = await grade_fastapi(backend, image, PIN_STARVE_AND_FLOOD, timeout=60)
    assert_flood_is_tampering(g)


# A handler that kills the driver's request thread by its id while that thread waits for the answer: a
# driver killed by a signal while fenced would be a harness fault, rescheduled. The driver sends every
# request from one thread started before any app exists, so the fence names it and the kill is refused.
KILL_THE_REQUEST_THREAD_WHILE_SERVING = (
    KIT
    + """
import signal as _signal


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def anything(path: str):
    _os.kill(_drivers_newest_thread(), _signal.SIGKILL)
    return {}
"""
)


async def test_a_handler_cannot_kill_the_thread_that_sends_its_request(backend, image):
    g = await grade_fastapi(backend, image, KILL_THE_REQUEST_THREAD_WHILE_SERVING, timeout=60)
    assert_zero(g)
