"""The agent's identity and its stream to the host: what keeps the supervisor out of reach.

Identity. The container starts the agent as root with only SETUID, SETGID, KILL and,
where the engine can grant it, SYS_RESOURCE (sandbox/docker/hardening.py on the host). It
first sets its own and docker-init's OOM score to -1000 when it may (children start
at 0 and cannot go lower), then drops
its supplementary groups and sets its filesystem uid/gid to the sandbox user, so every
file it opens or creates,
and every link it follows, is judged as uid 1000 would be: a link the model plants
towards `/proc/<agent>/...`, `/dev` or a root-owned file gets the model's own rights.
Its real and effective uid stay 0, so a uid-1000 process can neither signal, trace nor
open the descriptors of the agent. Every program it starts (tool commands, the Python
session, grader programs) gets uid/gid 1000 and no supplementary groups; going from
uid 0 to all-nonzero uids clears the capability sets, so they hold none. Children
never inherit the agent's stdin/stdout/stderr: theirs are pipes or /dev/null.

When the agent does not start as root (a backend that cannot grant it), it runs its
children as itself and says so in its ping reply (`"supervised": false`).

The stream. Only the agent writes to its stdout, through `Outbox`: one lock, whole
JSON lines, every reply and heartbeat carrying the host's request id. While a request
runs, a thread sends `{"id": ..., "hb": n}` every `HEARTBEAT_INTERVAL` seconds, so the
host can tell a busy agent from a stopped one. Replies are kept below `MAX_REPLY`
(the host refuses lines over 16 MiB).
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import selectors
import sys
import threading
import time

SANDBOX_UID = 1000
SANDBOX_GID = 1000
HEARTBEAT_INTERVAL = 1.0
MAX_REPLY = 15 << 20


class Identity:
    """Whether the agent supervises as root, the credentials its children get, and who the OOM killer spares."""

    def __init__(self) -> None:
        self.supervised = os.getuid() == 0
        self._oom_adj: int | None = None  # fd of /proc/self/oom_score_adj, opened while still root

    def protect_from_oom(self) -> None:
        """Make the agent and docker-init the OOM killer's last choice (needs CAP_SYS_RESOURCE).

        Without this, a model that spreads its memory over many processes each smaller
        than the agent gets the agent killed when the container runs out of memory.
        Children are started at 0 (see `spawning`) and cannot go below it.
        """
        if not self.supervised:
            return
        try:
            self._oom_adj = os.open("/proc/self/oom_score_adj", os.O_WRONLY | os.O_CLOEXEC)
            os.write(self._oom_adj, b"-1000")
            if os.getpid() != 1:
                with open("/proc/1/oom_score_adj", "w") as fh:
                    fh.write("-1000")
        except OSError as exc:
            self._oom_adj = None
            stderr_note(f"agent: cannot protect itself from the OOM killer: {exc}")

    @property
    def oom_protected(self) -> bool:
        return self._oom_adj is not None

    @contextlib.contextmanager
    def spawning(self):
        """Around starting a child: the child inherits an OOM score of 0 (and a floor of 0), the agent keeps -1000."""
        if self._oom_adj is None:
            yield
            return
        os.pwrite(self._oom_adj, b"0", 0)
        try:
            yield
        finally:
            os.pwrite(self._oom_adj, b"-1000", 0)

    def drop_file_rights(self) -> None:
        """Judge the agent's own file access as the sandbox user's (this thread and threads made later)."""
        if not self.supervised:
            return
        os.setgroups([])
        libc = ctypes.CDLL(None, use_errno=True)
        libc.setfsgid(SANDBOX_GID)
        libc.setfsuid(SANDBOX_UID)
        # setfsuid reports no error; read back what the kernel holds
        with open("/proc/thread-self/status") as fh:
            fields = {k: v.split() for k, _, v in (line.partition(":") for line in fh)}
        if fields["Uid"][3] != str(SANDBOX_UID) or fields["Gid"][3] != str(SANDBOX_GID):
            raise SystemExit(f"agent: cannot take filesystem uid {SANDBOX_UID}: {fields['Uid']} {fields['Gid']}")

    def child_credentials(self) -> dict:
        """Popen's arguments that start a child as the sandbox user with no supplementary groups.

        The child of the agent's fork sets them (setgroups, setregid, setreuid) just before
        its exec: one exec, the program's own. Going through `setpriv` instead lets Python
        vfork, but execs setpriv first: measured on a 2-core host at load 5-7, for
        `bash -c true` 7-9 ms of the container's CPU and 3-5 ms of its file server's
        (fuse-overlayfs) a start through setpriv, against 6-7 ms and 2-2.5 ms with the
        switch in the fork, and 25-28 ms of wall time against 13-18 ms; the fork costs the
        agent about 1 ms more CPU than a vfork.
        """
        if not self.supervised:
            return {}
        return {"user": SANDBOX_UID, "group": SANDBOX_GID, "extra_groups": []}


class Outbox:
    """The agent's stdout: whole lines under one lock, and heartbeats while a request runs."""

    def __init__(self, fd: int = 1) -> None:
        self._fd = fd
        self._lock = threading.Lock()
        self._current: str | None = None
        self._beats = 0
        threading.Thread(target=self._beat, name="heartbeat", daemon=True).start()

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]

    def begin(self, rid) -> None:
        with self._lock:
            self._current = rid if isinstance(rid, str) else None

    def reply(self, rid, reply: dict) -> None:
        """Send the reply for `rid` and stop its heartbeats; one that cannot be sent whole says why instead."""
        data = _encode({**reply, "id": rid})
        if data is None or len(data) > MAX_REPLY:
            data = _encode({**_stand_in(reply, data), "id": rid})
        with self._lock:
            self._current = None
            self._write(data + b"\n")

    def _beat(self) -> None:
        while True:
            time.sleep(HEARTBEAT_INTERVAL)
            with self._lock:
                if self._current is None:
                    continue
                self._beats += 1
                try:
                    self._write(json.dumps({"id": self._current, "hb": self._beats}).encode() + b"\n")
                except OSError:
                    return


def _encode(msg: dict) -> bytes | None:
    try:
        return json.dumps(msg).encode()
    except (ValueError, TypeError, RecursionError):  # e.g. a value nested too deep, relayed from the session
        return None


def _stand_in(reply: dict, data: bytes | None) -> dict:
    """What is sent in place of a reply too large (or too deep) to send: the model's part is replaced, not lost.

    A session value becomes the same "too large" tag the session itself uses, a cell's
    output is cut; anything else (a host request asking for too much) is an error.
    """
    why = "could not be encoded" if data is None else f"was {len(data)} bytes, over the limit of {MAX_REPLY}"
    flags = {"timed_out": bool(reply.get("timed_out")), "restarted": bool(reply.get("restarted"))}
    if isinstance(reply.get("starved"), dict):  # the agent's own measurement, small and plain
        flags["starved"] = reply["starved"]
    if "value" in reply:
        return {"value": {"other": "too large", "repr": f"the reply {why}"}, "output": "", **flags}
    if isinstance(reply.get("output"), str):
        return {"output": reply["output"][: MAX_REPLY // 16] + f"\n[the output was cut: the reply {why}]", **flags}
    return {"error": f"the reply to this request {why}: ask for less (fewer or smaller files, a lower max_output)"}


class LineReader:
    """Lines from a child's pipe, holding at most `limit` bytes: of a longer line only its end is returned.

    The bytes dropped from over-long lines are counted in `junk`.
    """

    EOF = object()
    TIMEOUT = object()
    FLOODED = object()  # more than `junk_cap` bytes were junk: the reader gives up on this pipe

    def __init__(self, fd: int, limit: int, junk_cap: int | None = None) -> None:
        self.fd = fd
        self.limit = limit
        self.junk_cap = junk_cap
        self.buf = bytearray()
        self.scanned = 0  # bytes of buf known to hold no newline
        self.junk = 0  # bytes skipped or not parsed as a line the caller wanted
        self.junk_lines = 0  # lines the caller did not want (it counts them)
        os.set_blocking(fd, False)

    def read(self, deadline):
        """One line (bytes, without its newline), or EOF, or TIMEOUT at the deadline (see `time_left`)."""
        sel = selectors.DefaultSelector()
        sel.register(self.fd, selectors.EVENT_READ)
        try:
            while True:
                nl = self.buf.find(b"\n", self.scanned)
                if nl >= 0:
                    # the end of an over-long line comes back too: the caller judges it (and counts it)
                    line = bytes(self.buf[:nl])
                    del self.buf[: nl + 1]
                    self.scanned = 0
                    return line
                self.scanned = len(self.buf)
                if len(self.buf) > self.limit:
                    self.junk += len(self.buf)
                    self.buf.clear()
                    self.scanned = 0
                if self.junk_cap is not None and self.junk > self.junk_cap:
                    return self.FLOODED
                remaining = time_left(deadline)
                if remaining <= 0:
                    return self.TIMEOUT
                if not sel.select(timeout=remaining):
                    continue
                try:
                    chunk = os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    continue
                if not chunk:
                    return self.EOF
                self.buf += chunk
        finally:
            sel.close()


def time_left(deadline) -> float:
    """Seconds to wait before looking again, 0 or less once `deadline` has passed.

    `deadline` is a time.monotonic() value, or an object whose `remaining()` says (the
    agent's per-call limit on the sandboxed side's active time, which must be looked at
    now and then while the call waits).
    """
    if isinstance(deadline, (int, float)):
        return deadline - time.monotonic()
    return deadline.remaining()


def write_all(fd: int, data: bytes, deadline) -> bool:
    """Write to a non-blocking pipe until done or the deadline (see `time_left`); False when it could not be written."""
    os.set_blocking(fd, False)
    view = memoryview(data)
    sel = selectors.DefaultSelector()
    sel.register(fd, selectors.EVENT_WRITE)
    try:
        while view:
            remaining = time_left(deadline)
            if remaining <= 0:
                return False
            if not sel.select(timeout=remaining):
                continue
            try:
                view = view[os.write(fd, view) :]
            except BlockingIOError:
                continue
            except OSError:
                return False
        return True
    finally:
        sel.close()


def stderr_note(text: str) -> None:
    """A line on the agent's stderr (the host keeps the last 64 KiB for its error messages)."""
    sys.stderr.write(text.rstrip("\n") + "\n")
    sys.stderr.flush()
