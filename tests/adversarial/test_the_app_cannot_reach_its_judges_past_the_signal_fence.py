"""A fastapi app cannot stop, pause or rewrite the processes that judge it by routes the kill fence does not name.

The app runs in a child of the app host, fenced by a seccomp filter (runtime/grader/
process_guard.fence_signals) and below two undumpable harness processes (the driver and
the host). test_the_app_cannot_turn_the_knobs_of_its_judges.py covers kill, tgkill and the
scheduling knobs; these are the other routes a same-uid process has to another:

- a signal by pidfd (pidfd_open + pidfd_send_signal) or with a forged siginfo
  (rt_sigqueueinfo, rt_tgsigqueueinfo), aimed at the driver or one of its threads;
- the driver's memory: /proc/PID/mem, process_vm_writev, ptrace;
- what the app can do inside its own process to the trusted code that shares it: close every
  descriptor it holds (os.closerange, the witness's events pipe and the stop pipe among them),
  rewrite the witness's events with a profile function (sys.setprofile / threading.setprofile)
  so that it claims the statuses a correct app sends, and raise SystemExit in the server's
  own thread from another (ctypes.pythonapi.PyThreadState_SetAsyncExc).

Every app here is broken (no routes: 404 everywhere). A refused call fails the import with
PermissionError (the submission's plain 0.0); the in-process attacks must still leave a
wrong app its own 0.0 (or tampering), never 1.0 and never a harness fault it caused.
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
import os as _os
import signal as _signal

_libc = _ctypes.CDLL(None, use_errno=True)
_NR = {
    "x86_64": {"rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "pidfd_send_signal": 424, "pidfd_open": 434,
               "ptrace": 101, "process_vm_writev": 311},
    "aarch64": {"rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "pidfd_send_signal": 424, "pidfd_open": 434,
                "ptrace": 117, "process_vm_writev": 271},
}[_os.uname().machine]


def _syscall(name, *args):
    result = _libc.syscall(_NR[name], *args)
    if result < 0:
        err = _ctypes.get_errno()
        raise OSError(err, _os.strerror(err))
    return result


def _driver():
    return _grader_pids()["http_driver.py"][0]


def _drivers_newest_thread():
    return max(int(tid) for tid in _os.listdir(f"/proc/{_driver()}/task"))


# a siginfo_t as the kernel lays it out: si_signo, si_errno, si_code (SI_QUEUE = -1, which a
# process may send), then the sender's pid and uid; padded to 128 bytes
def _siginfo(sig):
    raw = (_ctypes.c_int * 32)()
    raw[0], raw[1], raw[2], raw[4], raw[5] = sig, 0, -1, _os.getpid(), _os.getuid()
    return raw


def _pidfd_signal(pid, sig):
    fd = _syscall("pidfd_open", pid, 0)
    try:
        _syscall("pidfd_send_signal", fd, sig, None, 0)
    finally:
        _os.close(fd)


def _write_mem(pid):
    with open(f"/proc/{pid}/mem", "r+b", buffering=0) as mem:
        mem.seek(0x400000)
        mem.write(b"\\xcc")


class _IoVec(_ctypes.Structure):
    _fields_ = [("base", _ctypes.c_void_p), ("len", _ctypes.c_size_t)]


def _vm_write(pid):
    data = _ctypes.create_string_buffer(b"\\xcc" * 8)
    local = _IoVec(_ctypes.cast(data, _ctypes.c_void_p), 8)
    remote = _IoVec(0x400000, 8)
    _syscall("process_vm_writev", pid, _ctypes.byref(local), 1, _ctypes.byref(remote), 1, 0)
"""
)

# (name, the call against `_target`)
ROUTES = {
    "pidfd_send_signal SIGSTOP to the driver": ("_driver()", "_pidfd_signal(_target, _signal.SIGSTOP)"),
    "pidfd_send_signal SIGKILL to the app host": ("_os.getppid()", "_pidfd_signal(_target, _signal.SIGKILL)"),
    "rt_sigqueueinfo SIGSTOP to the driver": (
        "_driver()",
        "_syscall('rt_sigqueueinfo', _target, _signal.SIGSTOP, _siginfo(_signal.SIGSTOP))",
    ),
    "rt_tgsigqueueinfo SIGSTOP to the driver's request thread": (
        "_drivers_newest_thread()",
        "_syscall('rt_tgsigqueueinfo', _driver(), _target, _signal.SIGSTOP, _siginfo(_signal.SIGSTOP))",
    ),
    "a write into the driver's /proc/PID/mem": ("_driver()", "_write_mem(_target)"),
    "process_vm_writev into the driver": ("_driver()", "_vm_write(_target)"),
    "ptrace PTRACE_SEIZE of the driver": ("_driver()", "_syscall('ptrace', 0x4206, _target, None, None)"),
}


def route_app(name: str) -> str:
    return refused_at_import(KIT, name, *ROUTES[name])


@pytest.mark.parametrize("route", list(ROUTES))
async def test_the_app_cannot_signal_or_write_its_judges_by_another_route(backend, image, route):
    g = await grade_fastapi(backend, image, route_app(route), timeout=60)
    assert_zero(g, tampered=False)
    assert f"PermissionError: {route} refused: [Errno" in g.reason, g.reason
    assert g.metrics["module_imported"] == 0.0


# Every descriptor of the app's process closed at import, the witness's events pipe and the stop pipe
# among them: the driver hears nothing from the witness (no "imported", no "ready").
CLOSES_EVERY_DESCRIPTOR = (
    BROKEN_APP
    + """
import os

os.closerange(3, 65536)
"""
)


async def test_an_app_that_closes_every_descriptor_it_holds_scores_its_own_zero(backend, image):
    g = await grade_fastapi(backend, image, CLOSES_EVERY_DESCRIPTOR, timeout=20)
    assert_zero(g)


# A profile function on every thread of the app that, whenever the witness emits a status event,
# rewrites the event (not the response) into the status a correct app gives: the witness's events then
# claim a correct app. What the driver scores is the bytes it received.
WITNESS_REWRITTEN_BY_A_PROFILE_FUNCTION = (
    BROKEN_APP
    + """
import sys
import threading


def _rewrite(frame, event, arg):
    if event == "call" and frame.f_code.co_name == "emit":
        sent = frame.f_locals.get("event")
        if isinstance(sent, dict) and sent.get("ev") == "status" and sent.get("status") == 404:
            sent["status"] = 204
    return None


sys.setprofile(_rewrite)
threading.setprofile(_rewrite)
"""
)


async def test_an_app_whose_profile_function_rewrites_what_its_witness_sees_scores_below_one(backend, image):
    g = await grade_fastapi(backend, image, WITNESS_REWRITTEN_BY_A_PROFILE_FUNCTION, timeout=30)
    assert g.scoring_error is None, g.reason
    assert g.score < 1.0, g.reason


# A thread of the app that raises SystemExit, asynchronously, in every other thread of its process
# once the server runs (the server's own loop, the witness's stop thread), over and over.
SYSTEM_EXIT_IN_THE_SERVERS_THREADS = (
    BROKEN_APP
    + """
import ctypes
import threading
import time


def _exit_everywhere():
    time.sleep(0.2)
    me = threading.get_ident()
    for _ in range(200):
        for thread in list(threading.enumerate()):
            if thread.ident and thread.ident != me:
                ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(SystemExit))
        time.sleep(0.01)


threading.Thread(target=_exit_everywhere, daemon=True).start()
"""
)


async def test_an_app_that_raises_system_exit_in_its_servers_threads_scores_its_own_zero(backend, image):
    g = await grade_fastapi(backend, image, SYSTEM_EXIT_IN_THE_SERVERS_THREADS, timeout=20)
    assert_zero(g)


# The app may signal its own processes: a handler that stops its own process (SIGSTOP), so that
# neither it nor its server ever answers or stops again; a stopped process uses no CPU and never
# waits for one, which must not read as a starved sandbox.
STOPS_ITSELF_IN_A_HANDLER = """
import os
import signal

from fastapi import FastAPI

app = FastAPI()


@app.api_route("/{path:path}", methods=["GET", "POST", "PUT", "PATCH", "DELETE"])
def anything(path: str):
    os.kill(os.getpid(), signal.SIGSTOP)
    return {}
"""


async def test_an_app_that_stops_its_own_process_scores_its_own_zero(backend, image):
    g = await grade_fastapi(backend, image, STOPS_ITSELF_IN_A_HANDLER, timeout=20)
    assert_zero(g)


# The app fills every writable folder of the grading container at import (the driver's run folder,
# where it keeps each session's log and socket, is on the same /tmp), then serves no routes.
FILLS_THE_CONTAINERS_FOLDERS = (
    BROKEN_APP
    + """
import os

for _folder in ("/tmp", "/dev/shm", "/workspace"):
    _n = 0
    while True:
        try:
            with open(os.path.join(_folder, f".fill{_n}"), "wb") as _fh:
                _fh.write(b"x" * (8 << 20))
        except OSError:
            break
        _n += 1
"""
)


async def test_an_app_that_fills_the_containers_folders_scores_its_own_zero(backend, image):
    g = await grade_fastapi(backend, image, FILLS_THE_CONTAINERS_FOLDERS, timeout=20)
    assert_zero(g)
