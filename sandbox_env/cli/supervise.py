"""Running a child command (vf-eval) so that it never outlives the process that started it.

The child runs in its own session and process group, so a terminal's Ctrl-C reaches only
the parent, which decides what the child gets:

- SIGINT, SIGTERM or SIGHUP to the parent is forwarded to the child's whole group
  (vf-eval, its env server and its env-server workers); the group then has `GRACE`
  seconds in all to finish its own cleanup, and what is left of it is killed (its
  containers end on their own when their host process dies: sandbox/docker/spec.py).
- When the child ends by itself (or is signalled directly), stragglers of its group
  (an env-server worker whose parent died) get SIGTERM, then SIGKILL after `STRAGGLER_GRACE`.
- When the parent dies without a chance to forward anything (SIGKILL), the kernel sends
  the child SIGTERM (`PR_SET_PDEATHSIG`, Linux), so vf-eval is never left orphaned.

The child's stdout is the parent's own; its stderr (where vf-eval logs, and draws its
progress bar) is copied through as it comes, byte for byte so that the bar still redraws,
and each line of it is shown to `on_line` (the CLI finds there the results folder that
vf-eval reports).
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable

GRACE = 8.0  # seconds the child's group gets to clean up after a forwarded signal
STRAGGLER_GRACE = 10.0  # seconds members of the group get after SIGTERM once the child has ended
FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_PR_SET_PDEATHSIG = 1


def _die_with_parent() -> None:
    """In the child, before exec: SIGTERM when the parent (this thread's process) dies."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False
    except PermissionError:
        return True


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _copy(fd: int, out, on_line: Callable[[str], None]) -> None:
    pending = b""
    raw = getattr(out, "buffer", None)
    while chunk := os.read(fd, 65536):
        if raw is not None:
            raw.write(chunk)
        else:
            out.write(chunk.decode("utf-8", "replace"))
        out.flush()
        pending += chunk
        *lines, pending = pending.replace(b"\r", b"\n").split(b"\n")
        for line in lines:
            try:
                on_line(line.decode("utf-8", "replace"))
            except Exception:  # noqa: BLE001 - a watcher's bug must not stop the copy
                pass
    if pending:
        on_line(pending.decode("utf-8", "replace"))
    os.close(fd)


class Supervised:
    """One child command under supervision; `run()` returns its exit code (128+N when we stopped it with N)."""

    def __init__(
        self,
        cmd: list[str],
        *,
        cwd: str | os.PathLike | None = None,
        env: dict[str, str] | None = None,
        on_line: Callable[[str], None] = lambda line: None,
        stdout=None,
    ) -> None:
        """`stdout`: where the child's stdout goes (a file, DEVNULL); by default this process's own."""
        self.cmd = cmd
        self.cwd = cwd
        self.env = env
        self.on_line = on_line
        self.stdout = stdout
        self.stopped_by: int | None = None
        self.proc: subprocess.Popen | None = None

    def _forward(self, signum: int, _frame) -> None:
        if self.stopped_by is None:
            self.stopped_by = signum
        if self.proc is not None:
            _signal_group(self.proc.pid, signum)

    def run(self) -> int:
        previous = {sig: signal.getsignal(sig) for sig in FORWARDED}
        for sig in FORWARDED:
            signal.signal(sig, self._forward)
        try:
            self.proc = subprocess.Popen(
                self.cmd,
                cwd=self.cwd,
                env=self.env,
                stdout=self.stdout,
                stderr=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=_die_with_parent,
            )
            assert self.proc.stderr is not None
            fd = os.dup(self.proc.stderr.fileno())
            self.proc.stderr.close()
            copy = threading.Thread(target=_copy, args=(fd, sys.stderr, self.on_line), daemon=True)
            copy.start()
            code = self._wait()
            copy.join(timeout=5)
            return code
        finally:
            if self.proc is not None and group_alive(self.proc.pid):
                _signal_group(self.proc.pid, signal.SIGKILL)
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _group_done(self, timeout: float) -> bool:
        """Wait up to `timeout` until the child is reaped and nothing of its group is left."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while True:
            self.proc.poll()  # reap the child, so that a zombie does not count as a member
            if self.proc.returncode is not None and not group_alive(self.proc.pid):
                return True
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.1)

    def _wait(self) -> int:
        assert self.proc is not None
        pgid = self.proc.pid
        while self.proc.poll() is None and self.stopped_by is None:
            time.sleep(0.1)
        if self.stopped_by is not None:
            if not self._group_done(GRACE):  # the whole group had the signal: GRACE in all to clean up
                _signal_group(pgid, signal.SIGKILL)
        elif not self._group_done(0):  # it ended by itself: stragglers of its group get SIGTERM, then SIGKILL
            _signal_group(pgid, signal.SIGTERM)
            if not self._group_done(STRAGGLER_GRACE):
                _signal_group(pgid, signal.SIGKILL)
        self._group_done(5)
        code = self.proc.wait()
        if self.stopped_by is not None:
            return 128 + self.stopped_by
        return code if code >= 0 else 128 - code
