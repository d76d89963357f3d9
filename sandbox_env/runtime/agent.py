"""The in-container agent: one process per sandbox, reached over a kept-open attach stream.

Requests and responses are JSON lines on stdin/stdout, one request at a time; every
reply carries the request's id. Commands run in their own process group with a
deadline and an output cap; the persistent Python session is a child process
(session.py) that the agent starts, interrupts and restarts. Who the agent is, and how
it keeps out of the sandboxed code's reach, is in supervisor.py.

The session's replies are bound to their requests too: each request to the session
carries a fresh random id, and a line on the session's reply pipe that is not the
reply to the current request (something the model wrote to the session's private
descriptors, or a line over `SESSION_LINE_MAX`) is dropped and counted. The session
that carried such junk is restarted once the call ends, with its preamble, and the
model is told: a cell can break its own session, never shift a later reply.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import selectors
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

from supervisor import MAX_REPLY, Identity, LineReader, Outbox, write_all

HERE = Path(__file__).resolve().parent
DEFAULT_MAX_OUTPUT = 1 << 20
WORKSPACE = "/workspace"
SESSION_LINE_MAX = 8 << 20  # the session keeps its own replies under 4 MiB (session.py)
EXEC_REPLY_BUDGET = MAX_REPLY - (64 << 10)
READ_BUDGET = (MAX_REPLY - (256 << 10)) * 3 // 4  # raw bytes of files per read reply (base64 grows by 4/3)
IDENTITY = Identity()


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _drain(proc: subprocess.Popen, stdin: bytes, deadline: float, cap: int) -> tuple[bytes, bytes, int, bool]:
    """Feed stdin, read both pipes up to cap bytes each; stop at the deadline.

    Once the main process has exited, a background child that keeps the pipes open
    gets a short grace, then the call returns without waiting for it.
    """
    sel = selectors.DefaultSelector()
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    dropped = 0
    for stream in bufs:
        os.set_blocking(stream.fileno(), False)
        sel.register(stream, selectors.EVENT_READ)
    pending = memoryview(stdin)
    if proc.stdin is not None:
        if pending:
            os.set_blocking(proc.stdin.fileno(), False)
            sel.register(proc.stdin, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
    timed_out = False
    exited_at: float | None = None
    while sel.get_map():
        now = time.monotonic()
        if now >= deadline:
            timed_out = proc.poll() is None
            break
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > 0.2:
            break
        wait = min(deadline - now, 0.05 if exited_at is None else 0.02)
        for key, _ in sel.select(timeout=max(wait, 0.001)):
            stream = key.fileobj
            if stream is proc.stdin:
                try:
                    n = os.write(stream.fileno(), pending[:65536])
                    pending = pending[n:]
                except (BrokenPipeError, OSError):
                    pending = memoryview(b"")
                if not pending:
                    sel.unregister(stream)
                    stream.close()
                continue
            try:
                chunk = os.read(stream.fileno(), 65536)
            except BlockingIOError:
                continue
            if not chunk:
                sel.unregister(stream)
                continue
            buf = bufs[stream]
            room = cap - len(buf)
            if room > 0:
                buf.extend(chunk[:room])
            dropped += max(0, len(chunk) - max(room, 0))
    sel.close()
    if timed_out:
        _kill_group(proc)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()
    return bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr]), dropped, timed_out


def _spawn(argv: list[str], **kwargs) -> subprocess.Popen:
    """Start a program as the sandbox user, in its own session, with an OOM score above the agent's."""
    with IDENTITY.spawning():
        return subprocess.Popen(IDENTITY.child_argv(argv), start_new_session=True, close_fds=True, **kwargs)


def _popen(req: dict) -> subprocess.Popen | dict:
    cmd = req.get("argv") or ["/bin/bash", "-c", req["command"]]
    env = dict(os.environ)
    env.update(req.get("env") or {})
    try:
        return _spawn(
            cmd,
            cwd=req.get("cwd") or WORKSPACE,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
    except OSError as exc:
        return {"stdout": "", "stderr": f"cannot start {cmd[0]}: {exc}", "exit_code": 127, "timed_out": False, "truncated": 0}


def _finish(proc: subprocess.Popen, req: dict) -> dict:
    """Feed the request's stdin, collect output until exit or the deadline, reap the group."""
    timeout = float(req.get("timeout") or 30)
    cap = int(req.get("max_output") or DEFAULT_MAX_OUTPUT)
    stdin = base64.b64decode(req.get("stdin_b64") or "")
    out, err, dropped, timed_out = _drain(proc, stdin, time.monotonic() + timeout, cap)
    try:
        code = proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        code = proc.wait()
    if not timed_out:
        _kill_group(proc)  # nothing of a finished command lingers in its group
    texts, cut = _fit([out.decode("utf-8", "replace"), err.decode("utf-8", "replace")], EXEC_REPLY_BUDGET)
    return {
        "stdout": texts[0],
        "stderr": texts[1],
        "exit_code": -9 if timed_out else code,
        "timed_out": timed_out,
        "truncated": dropped + cut,
    }


def _fit(texts: list[str], budget: int) -> tuple[list[str], int]:
    """Cut the longest texts until their JSON encodings fit in `budget`; also returns the bytes cut.

    JSON escapes make encoded size depend on content (a control character takes 6
    bytes), so the cut is measured, not guessed from the byte cap.
    """
    sizes = [len(json.dumps(t)) for t in texts]
    cut = 0
    while sum(sizes) > budget:
        i = max(range(len(texts)), key=sizes.__getitem__)
        text, excess = texts[i], sum(sizes) - budget
        keep = max(0, min(len(text) - 1, int(len(text) * (sizes[i] - excess) / sizes[i]) - 16))
        cut += len(text[keep:].encode("utf-8", "replace"))
        texts[i] = text[:keep]
        sizes[i] = len(json.dumps(texts[i]))
    return texts, cut


def op_exec(req: dict) -> dict:
    proc = _popen(req)
    return proc if isinstance(proc, dict) else _finish(proc, req)


SPAWNED: dict[int, subprocess.Popen] = {}


def op_spawn(req: dict) -> dict:
    """Start a program that waits for its stdin: a grader that imports its libraries ahead of time."""
    proc = _popen(req)
    if isinstance(proc, dict):
        return {"error": proc["stderr"]}
    SPAWNED[proc.pid] = proc
    return {"handle": proc.pid}


def op_feed(req: dict) -> dict:
    """Give a spawned program its stdin and finish it like exec."""
    proc = SPAWNED.pop(int(req["handle"]), None)
    if proc is None:
        return {"error": f"no spawned process {req['handle']}"}
    return _finish(proc, req)


def _resolve(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else Path(WORKSPACE) / p


def op_write(req: dict) -> dict:
    """Write files with the sandbox user's rights (see supervisor.py), only ever into regular files."""
    for path, data in req["files"].items():
        target = _resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        # O_NONBLOCK: a planted FIFO must not hang the agent; only a regular file is written
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{path} is not a regular file")
            os.ftruncate(fd, 0)
            os.set_blocking(fd, True)
            view = memoryview(base64.b64decode(data))
            while view:
                view = view[os.write(fd, view) :]
            if req.get("mode"):
                os.fchmod(fd, int(req["mode"], 8))
        finally:
            os.close(fd)
    return {"written": len(req["files"])}


def op_read(req: dict) -> dict:
    """Read regular files with the sandbox user's rights; anything else (FIFO, device, missing) is None.

    Each file is cut at `max_bytes`, and all of them together at READ_BUDGET, so the
    reply fits the agent stream. Any path that cannot be opened or read (a link loop, a
    socket, a link to a file that fails its reads) is None too: what the sandboxed code
    left at a path is its own, and must never turn into an error of the agent, which the
    host would have to take for a harness fault.
    """
    budget = READ_BUDGET
    cap = int(req.get("max_bytes") or 16 << 20)
    out: dict[str, str | None] = {}
    for path in req["paths"]:
        try:
            fd = os.open(_resolve(path), os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError:
            out[path] = None
            continue
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                out[path] = None
                continue
            with os.fdopen(os.dup(fd), "rb") as fh:
                data = fh.read(max(0, min(cap, budget)))
            budget -= len(data)
            out[path] = _b64(data)
        except OSError:
            out[path] = None
        finally:
            os.close(fd)
    return {"files": out}


class Session:
    """The persistent Python process behind execute_code."""

    TIMEOUT = "timeout"
    DEAD = "dead"
    LOST = "lost"  # the reply line was there but spoiled by junk written into the same pipe

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
        self.reader: LineReader | None = None
        self.preamble = ""
        self.env: dict[str, str] = {}

    def start(self, preamble: str | None = None, env: dict | None = None) -> dict:
        if preamble is not None:
            self.preamble = preamble
        if env is not None:
            self.env = dict(env)
        self.stop()
        full_env = dict(os.environ)
        full_env.update(self.env)
        self.proc = _spawn(
            [sys.executable, "-u", "-s", str(HERE / "session.py")],
            cwd=WORKSPACE,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.reader = LineReader(self.proc.stdout.fileno(), SESSION_LINE_MAX)
        reply, _ = self._call({"op": "init", "preamble": self.preamble}, timeout=60)
        if not isinstance(reply, dict):
            self.stop()  # the next call starts afresh
            return {"error": "the Python session did not start"}
        return {"output": _text(reply.get("output")), "ready": True}

    def stop(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc)
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            for stream in (self.proc.stdin, self.proc.stdout):
                if stream is not None:
                    stream.close()
            self.proc = None
            self.reader = None

    def _recv(self, rid: str, deadline: float) -> dict | str:
        """The reply carrying `rid`; every other line on the pipe is junk, counted by the reader."""
        assert self.reader is not None
        while True:
            line = self.reader.read(deadline)
            if line is LineReader.TIMEOUT:
                return self.TIMEOUT
            if line is LineReader.EOF:
                return self.DEAD
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):
                msg = None
            if isinstance(msg, dict) and msg.get("id") == rid:
                return msg
            self.reader.junk += len(line) + 1
            if rid.encode() in line:
                return self.LOST

    def _call(self, msg: dict, timeout: float) -> tuple[dict | str, str]:
        assert self.proc is not None and self.proc.stdin is not None
        rid = secrets.token_hex(16)
        deadline = time.monotonic() + timeout
        if not write_all(self.proc.stdin.fileno(), json.dumps({**msg, "id": rid}).encode() + b"\n", deadline):
            return (self.DEAD if self.proc.poll() is not None else self.TIMEOUT), rid
        return self._recv(rid, deadline), rid

    def run(self, req: dict) -> dict:
        notes: list[str] = []
        restarted = False
        if self.proc is None or self.proc.poll() is not None:
            was_running = self.proc is not None
            started = self.start()
            if "error" in started:
                return {"output": started["error"], "timed_out": False, "restarted": True}
            if was_running:
                notes.append("[the Python session had exited and was restarted: the namespace was lost]\n")
                restarted = True
        timeout = float(req.get("timeout") or 30)
        msg = {k: v for k, v in req.items() if k not in ("id", "timeout")}
        reply, rid = self._call(msg, timeout)
        timed_out = False
        if reply == self.TIMEOUT:  # past the limit: interrupt the cell, keep the namespace if we can
            timed_out = True
            try:
                os.kill(self.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            reply = self._recv(rid, time.monotonic() + 2.0)
            if isinstance(reply, dict):
                reply["output"] = _text(reply.get("output")) + (
                    f"\n[timed out after {timeout:g}s: the cell was interrupted; the namespace is kept]"
                )
            elif reply in (self.TIMEOUT, self.DEAD):
                reply = {
                    "output": f"[timed out after {timeout:g}s and did not stop when interrupted: "
                    "the Python session was restarted and the namespace was lost]"
                }
                self.start()
                restarted = True
        if reply == self.DEAD:
            reply = {
                "output": "[the Python session died during this cell (out of memory, or it exited): "
                "it was restarted and the namespace was lost]"
            }
            self.start()
            restarted = True
        junk = self.reader.junk if self.reader is not None else 0
        if reply == self.LOST or junk:
            if reply == self.LOST:
                reply = {"output": "[the Python session's reply to this cell was destroyed]"}
            notes.append(
                f"[the Python session's private reply pipe carried {junk} bytes that were not its reply "
                "(something wrote to the session's descriptors): the session was restarted and the "
                "namespace was lost]\n"
            )
            self.start()
            restarted = True
        out = {"output": "".join(notes) + _text(reply.get("output")), "timed_out": timed_out, "restarted": restarted}
        if req["op"] == "probe" and "value" in reply and not reply.get("output"):
            out["value"] = reply["value"]
        return out


def _text(value) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


SESSION = Session()


def handle(req: dict) -> dict:
    op = req.get("op")
    if op == "ping":
        return {"pong": True, "pid": os.getpid(), "supervised": IDENTITY.supervised, "oom_protected": IDENTITY.oom_protected}
    if op == "exec":
        return op_exec(req)
    if op == "spawn":
        return op_spawn(req)
    if op == "feed":
        return op_feed(req)
    if op == "write":
        return op_write(req)
    if op == "read":
        return op_read(req)
    if op == "py_start":
        return SESSION.start(req.get("preamble", ""), req.get("env") or {})
    if op in ("py_exec", "py_probe"):
        return SESSION.run({**req, "op": "exec" if op == "py_exec" else "probe"})
    return {"error": f"unknown op {op!r}"}


def main() -> None:
    IDENTITY.protect_from_oom()
    IDENTITY.drop_file_rights()
    outbox = Outbox()
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        req: dict = {}
        try:
            req = json.loads(line)
            outbox.begin(req.get("id"))
            reply = handle(req)
        except Exception as exc:  # a bad request must not end the agent
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        outbox.reply(req.get("id") if isinstance(req, dict) else None, reply)
    SESSION.stop()


if __name__ == "__main__":
    main()
