"""Every way a `websandbox eval` can end leaves nothing of its run: no container, no process, within 30 s.

Each test starts a real run (scripted rollouts that sleep in their sandboxes, so containers
are up), waits until the run has containers, ends it one way, and measures how many
containers carrying the run's id remain and how long they took to go. The ways: Ctrl-C
(SIGINT to the process group, as a terminal sends it), SIGTERM to `websandbox eval`,
SIGTERM to its vf-eval child, and SIGKILL of the whole process tree, after which the
containers must end on their own (sandbox/docker/spec.py, reaper.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid

import pytest

from sandbox_env.constants import REPO_ROOT
from sandbox_env.sandbox.docker import docker_client, run_containers
from sandbox_env.sandbox.runs import RUN_ID_VAR

pytestmark = pytest.mark.docker

LIMIT = 30.0  # seconds within which nothing of the run may remain
SLEEPY = {"calls": [{"tool": "bash", "args": {"command": "sleep 25"}}] * 4, "final": "done"}


def _children(root: int) -> set[int]:
    """Every live descendant of `root`, by walking /proc."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    parents[int(entry)] = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = set(), {root}
    while frontier:
        frontier = {pid for pid, ppid in parents.items() if ppid in frontier} - found
        found |= frontier
    return found


def _processes_of_run(run_id: str) -> set[int]:
    """Processes whose environment carries the run's id (the CLI's children, vf-eval's workers, reapers)."""
    mark = f"{RUN_ID_VAR}={run_id}".encode()
    out = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and int(entry) != os.getpid():
            try:
                with open(f"/proc/{entry}/environ", "rb") as fh:
                    if mark in fh.read().split(b"\0"):
                        out.add(int(entry))
            except OSError:
                continue
    return out


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


@pytest.fixture
def run(tmp_path, image):
    """A `websandbox eval` of sleeping rollouts, in its own session like a job started from a terminal."""
    script = tmp_path / "sleepy.json"
    script.write_text(json.dumps({"smoke_hello": SLEEPY, "smoke_sum": SLEEPY}))
    run_id = f"exit-{uuid.uuid4().hex[:8]}"
    log = open(tmp_path / "eval.log", "wb")  # noqa: SIM115 - closed below
    cmd = [
        sys.executable,
        "-m",
        "sandbox_env.cli.main",
        "eval",
        "--script",
        str(script),
        "--family",
        "smoke",
        "-r",
        "3",
        "-c",
        "4",
        "-a",
        json.dumps({"image": image}),
    ]
    proc = subprocess.Popen(
        cmd, cwd=REPO_ROOT, env={**os.environ, RUN_ID_VAR: run_id}, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    try:
        deadline = time.monotonic() + 300
        while len(run_containers(run_id)) < 3:
            assert proc.poll() is None, (tmp_path / "eval.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "the run never started its rollouts"
            time.sleep(0.5)
        yield proc, run_id
    finally:
        for pid in _children(proc.pid) | {proc.pid}:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait(timeout=30)
        log.close()


def _measure(run_id: str, t0: float) -> tuple[int, float]:
    """Containers of the run left once LIMIT seconds have passed (or as soon as none is), and when that was."""
    while (left := len(run_containers(run_id))) and time.monotonic() - t0 < LIMIT:
        time.sleep(0.25)
    return left, time.monotonic() - t0


def _settled(path: str, run_id: str, t0: float) -> None:
    left, seconds = _measure(run_id, t0)
    while _processes_of_run(run_id) and time.monotonic() - t0 < LIMIT:
        time.sleep(0.25)
    procs = {pid: _cmdline(pid)[:120] for pid in _processes_of_run(run_id)}
    print(f"\nexit path | {path} | containers left {left} | {seconds:.1f} s | processes left {len(procs)}")
    assert left == 0, f"{path}: {left} container(s) of the run still there after {LIMIT:g} s"
    assert procs == {}, f"{path}: processes of the run still running after {LIMIT:g} s: {procs}"


def test_ctrl_c_to_the_process_group_leaves_nothing(run):
    proc, run_id = run
    t0 = time.monotonic()
    os.killpg(proc.pid, signal.SIGINT)
    assert proc.wait(timeout=LIMIT + 10) == 128 + signal.SIGINT
    _settled("Ctrl-C (SIGINT to the process group)", run_id, t0)


def test_sigterm_to_websandbox_eval_leaves_nothing(run):
    proc, run_id = run
    t0 = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=LIMIT + 10) == 128 + signal.SIGTERM
    _settled("SIGTERM to websandbox eval", run_id, t0)


def test_sigterm_to_vf_eval_leaves_nothing(run):
    proc, run_id = run
    vf_eval = [pid for pid in _children(proc.pid) if "vf-eval" in _cmdline(pid)]
    assert vf_eval, "no vf-eval child found"
    t0 = time.monotonic()
    os.kill(min(vf_eval), signal.SIGTERM)
    assert proc.wait(timeout=LIMIT + 10) != 0
    _settled("SIGTERM to vf-eval", run_id, t0)


def test_sigkill_of_the_whole_tree_leaves_nothing(run):
    proc, run_id = run
    tree = _children(proc.pid) | {proc.pid}
    t0 = time.monotonic()
    for pid in tree:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait(timeout=10)
    _settled("SIGKILL of the whole tree", run_id, t0)


def test_a_process_that_exits_without_teardown_removes_its_containers_at_exit(image):
    """The backend's atexit teardown runs after the interpreter stops new threads; it still removes, without a traceback."""
    script = (
        "import asyncio, sys\n"
        "from sandbox_env.sandbox.docker import DockerBackend\n"
        "backend = DockerBackend()\n"
        "print(asyncio.run(backend.create(sys.argv[1])), flush=True)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, image], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300, check=True
    )
    sandbox_id = done.stdout.strip()
    assert sandbox_id
    assert "Traceback" not in done.stderr, done.stderr
    left = docker_client().containers.list(all=True, filters={"id": sandbox_id})
    assert left == []  # gone when the process has exited, not later through the reaper
