"""A second sandbox backend for the contract suite: the real agent in a PID namespace on this machine.

It gives no isolation, so the installed package never registers it: tests do
(`register_local_backend`). Each sandbox is `unshare --pid --fork --mount-proc` running
local_agent.py as uid 1000: the namespace's init, and under it the real runtime agent
(runtime/container/agent.py) with its workspace in a temp folder. The sandbox's processes can signal
only what runs in their namespace, and deleting the sandbox ends all of them (the init's
parent dies, and with the init every process of the namespace); but they read the host's
files as uid 1000 and share its network. Its limits are not enforced (Limits is kept for
the interface).

Evidence, at most what it can prove (`evidence()` declares none):
- The agent is not root, so it does not supervise (supervisor.py): the sandboxed code runs
  as the agent's own user and can end it (`kill -9 $PPID`). A lost agent is a plain
  SandboxError that says the backend cannot tell whose doing it was: any root process of
  the host could have sent the same signal, and no engine keeps a record of who did.
- It measures nothing from outside (`usage_point`, `recent_usage` None): a call the agent
  ended at its wall-clock backstop is `SandboxStarved`, a harness fault, whatever the
  sandbox did. Its per-call limits count the sandbox's active time as on Docker, because
  the PID namespace's /proc shows the agent the sandbox's own processes only.

`starve(sandbox_id)` is this backend's own way to hold a sandbox back, for the contract's
starved check: a CPU quota on the sandbox's cpu cgroup (cgroup v1, set up at creation).

Paths: commands start in the sandbox's folder, not at /workspace (no mount is made); the
agent's file requests map /workspace/... and /tmp/... into that folder (local_agent.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import select
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from sandbox_env.sandbox import Limits, SandboxBackend, SandboxError
from sandbox_env.sandbox.registry import register_backend

NAME = "local"
AGENT = Path(__file__).resolve().with_name("local_agent.py")
CONTAINER_PROGRAMS = AGENT.parents[1] / "sandbox_env" / "runtime" / "container"
SANDBOX_UID = 1000
CPU_CGROUPS = Path("/sys/fs/cgroup/cpu")
SILENCE_LIMIT = 5.0  # seconds without a heartbeat during a call: the agent stopped answering
REPLY_LIMIT = 16 << 20  # the agent keeps its replies below 15 MiB (supervisor.MAX_REPLY)
CFS_PERIOD_US = 100_000
PYTHON = "/usr/bin/python3"  # the agent and the sandbox's Python: one that uid 1000 can run (not a venv under /root)
PATH = "/usr/local/bin:/usr/bin:/bin"


def available() -> str | None:
    """Why this backend cannot run here (None: it can): it needs root, unshare and a cpu cgroup."""
    if os.geteuid() != 0:
        return "the local backend needs root (a PID namespace, a cpu cgroup, uid 1000 for the sandbox)"
    if not shutil.which("unshare") or not shutil.which("setpriv"):
        return "the local backend needs util-linux's unshare and setpriv"
    if not os.access(PYTHON, os.X_OK):
        return f"the local backend runs the agent with {PYTHON}, which is missing"
    if not os.access(CPU_CGROUPS, os.W_OK):
        return f"the local backend needs a writable cgroup v1 cpu hierarchy at {CPU_CGROUPS}"
    return None


class _Box:
    """One sandbox: its process (unshare), its folder and cgroup, and the agent's stream read line by line."""

    def __init__(self, proc: subprocess.Popen, home: Path, cgroup: Path) -> None:
        self.proc, self.home, self.cgroup = proc, home, cgroup
        self.lock = threading.Lock()
        self.removing = False
        self._buf = bytearray()

    def readline(self, wait: float) -> bytes | None:
        """The next line of the agent's stream (b"" at its end), or None when none came within `wait` seconds."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + wait
        while True:
            cut = self._buf.find(b"\n")
            if cut >= 0:
                line = bytes(self._buf[: cut + 1])
                del self._buf[: cut + 1]
                return line
            if len(self._buf) > REPLY_LIMIT:
                raise ValueError(f"a line over {REPLY_LIMIT} bytes")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b""
            self._buf += chunk


class LocalBackend(SandboxBackend):
    """Sandboxes as PID namespaces with the real agent in temp folders (see the module docstring).

    Its calls block in worker threads (as the Docker backend's do), so one backend serves
    any event loop.
    """

    def __init__(self, limits: Limits | None = None, *, max_sandboxes: int | None = None) -> None:
        super().__init__(limits)
        self.root = Path(tempfile.mkdtemp(prefix="websandbox-local-"))
        self.root.chmod(0o755)
        self.agent = self._copy_programs()
        self._boxes: dict[str, _Box] = {}
        self._closed = False

    def _copy_programs(self) -> Path:
        """The agent and the container programs copied where uid 1000 can read them, whatever the checkout's mode.

        A checkout in a folder only root may enter (a `mktemp -d`, a home under /root) would
        otherwise leave the agent unreadable to the user it runs as. The copy keeps the layout
        local_agent.py finds the runtime by.
        """
        code = self.root / "programs"
        shutil.copytree(CONTAINER_PROGRAMS, code / "sandbox_env" / "runtime" / "container",
                        ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
        (code / "tests").mkdir()
        shutil.copy2(AGENT, code / "tests" / AGENT.name)
        for path in [code, *code.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        return code / "tests" / AGENT.name

    async def create(self, image: str, *, role: str = "rollout") -> str:
        if self._closed:
            raise SandboxError("this local backend was torn down: it creates no more sandboxes")
        sid = f"local-{secrets.token_hex(6)}"
        self._boxes[sid] = await asyncio.to_thread(self._start, sid)
        try:
            reply = await self.call(sid, {"op": "ping"}, wait=30)
            if not reply.get("pong"):
                raise SandboxError(f"sandbox {sid}: its agent answered a ping with {reply!r}")
        except BaseException:
            await self.delete(sid)
            raise
        return sid

    def _start(self, sid: str) -> _Box:
        home = self.root / sid
        for sub in ("workspace", "tmp"):
            (home / sub).mkdir(parents=True)
        for path in (home, home / "workspace", home / "tmp"):
            os.chown(path, SANDBOX_UID, SANDBOX_UID)
        cgroup = CPU_CGROUPS / f"websandbox-{sid}"
        cgroup.mkdir()
        procs = cgroup / "cgroup.procs"

        def join_cgroup() -> None:
            procs.write_text(str(os.getpid()))

        argv = ["unshare", "--pid", "--fork", "--mount-proc", "--kill-child"]
        argv += ["setpriv", f"--reuid={SANDBOX_UID}", f"--regid={SANDBOX_UID}", "--clear-groups"]
        argv += [PYTHON, "-u", "-s", str(self.agent), str(home)]
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            preexec_fn=join_cgroup,
            env={"PATH": PATH, "HOME": str(home / "workspace"), "LANG": "C.UTF-8"},
        )
        return _Box(proc, home, cgroup)

    async def call(self, sandbox_id: str, request: dict[str, Any], wait: float) -> dict[str, Any]:
        box = self._boxes.get(sandbox_id)
        if box is None:
            raise SandboxError(f"sandbox {sandbox_id}: no such sandbox on this backend (it was deleted or never made)")
        reply = await asyncio.to_thread(self._call, sandbox_id, box, request, wait)
        if "error" in reply:
            raise SandboxError(f"sandbox {sandbox_id}: {reply['error']}")
        return reply

    def _call(self, sid: str, box: _Box, request: dict[str, Any], wait: float) -> dict[str, Any]:
        with box.lock:
            return self._exchange(sid, box, request, wait)

    def _exchange(self, sid: str, box: _Box, request: dict[str, Any], wait: float) -> dict[str, Any]:
        assert box.proc.stdin is not None
        rid = secrets.token_hex(8)
        try:
            box.proc.stdin.write(json.dumps({**request, "id": rid}).encode() + b"\n")
            box.proc.stdin.flush()
        except (BrokenPipeError, ConnectionResetError, ValueError) as exc:
            raise self._lost(sid, box, f"its agent's stdin is closed ({exc})") from exc
        deadline = time.monotonic() + wait
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SandboxError(f"sandbox {sid}: the agent did not finish the request within {wait:g}s")
            try:
                line = box.readline(min(left, SILENCE_LIMIT))
            except (ValueError, OSError) as exc:
                raise self._lost(sid, box, f"its agent's stream broke ({exc})") from exc
            if line is None:
                if deadline - time.monotonic() <= 0:
                    continue
                raise SandboxError(
                    f"sandbox {sid}: the sandbox agent stopped answering: nothing for {SILENCE_LIMIT:g}s during a call"
                )
            if not line:
                raise self._lost(sid, box, "its agent's stream closed")
            try:
                msg = json.loads(line)
            except ValueError:
                raise self._lost(sid, box, "its agent's stream carried a line that is not JSON") from None
            if not isinstance(msg, dict) or msg.get("id") != rid or "hb" in msg:
                continue
            msg.pop("id", None)
            return msg

    def _lost(self, sid: str, box: _Box, what: str) -> SandboxError:
        """A lost agent: this backend cannot tell whether the sandbox's own processes or something outside did it."""
        if box.removing:
            return SandboxError(f"sandbox {sid}: {what} (it was being removed by this backend)")
        return SandboxError(
            f"sandbox {sid}: {what}; the local backend cannot tell whether the sandbox's own processes or "
            "something outside ended its agent (it declares no evidence of a sandbox ended from inside)"
        )

    async def delete(self, sandbox_id: str) -> None:
        box = self._boxes.pop(sandbox_id, None)
        if box is not None:
            await asyncio.to_thread(_end, box)

    def delete_later(self, sandbox_id: str) -> None:
        box = self._boxes.pop(sandbox_id, None)
        if box is not None:
            threading.Thread(target=_end, args=(box,), daemon=True).start()

    def teardown(self) -> None:
        self._closed = True
        boxes = list(self._boxes.values())
        self._boxes.clear()
        for box in boxes:
            _end(box)
        shutil.rmtree(self.root, ignore_errors=True)

    # -- this backend's own way to starve a sandbox (the contract's starved check) -------------
    def starve(self, sandbox_id: str, cpus: float = 0.02) -> None:
        """Cut the sandbox's CPU to `cpus` of a CPU, as a host too busy to run it would."""
        box = self._boxes[sandbox_id]
        (box.cgroup / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
        (box.cgroup / "cpu.cfs_quota_us").write_text(str(max(1000, int(CFS_PERIOD_US * cpus))))


def _end(box: _Box) -> None:
    """Kill the sandbox (unshare: --kill-child ends the namespace's init, and with it every process in it)."""
    box.removing = True
    with contextlib.suppress(ProcessLookupError):
        box.proc.kill()
    box.proc.wait()
    for stream in (box.proc.stdin, box.proc.stdout):
        with contextlib.suppress(OSError):
            if stream is not None:
                stream.close()
    _remove(box)


def _remove(box: _Box) -> None:
    """Remove the sandbox's cgroup (once its processes are gone) and its folder."""
    deadline = time.monotonic() + 10
    while True:
        try:
            box.cgroup.rmdir()
            break
        except FileNotFoundError:
            break
        except OSError:  # its processes are still being reaped
            if time.monotonic() > deadline:
                break
            time.sleep(0.05)
    shutil.rmtree(box.home, ignore_errors=True)


def register_local_backend() -> None:
    """Make the local backend available by name (tests only: it gives no isolation)."""
    register_backend(NAME, LocalBackend)
