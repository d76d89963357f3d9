"""The in-container agent: one process per sandbox, reached over a kept-open exec stream.

Requests and responses are JSON lines on stdin/stdout. One request at a time.
Commands run in their own process group with a deadline and an output cap; the
persistent Python session is a child process (session.py) that the agent starts,
interrupts and restarts.
"""

from __future__ import annotations

import base64
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_MAX_OUTPUT = 1 << 20
WORKSPACE = "/workspace"


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


def _popen(req: dict) -> subprocess.Popen | dict:
    cmd = req.get("argv") or ["/bin/bash", "-c", req["command"]]
    env = dict(os.environ)
    env.update(req.get("env") or {})
    try:
        return subprocess.Popen(
            cmd,
            cwd=req.get("cwd") or WORKSPACE,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as exc:
        return {"stdout": "", "stderr": f"cannot start {cmd[0]}: {exc}", "exit_code": 127,
                "timed_out": False, "truncated": 0}


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
    return {
        "stdout": out.decode("utf-8", "replace"),
        "stderr": err.decode("utf-8", "replace"),
        "exit_code": -9 if timed_out else code,
        "timed_out": timed_out,
        "truncated": dropped,
    }


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
    for path, data in req["files"].items():
        target = _resolve(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(base64.b64decode(data))
        if req.get("mode"):
            target.chmod(int(req["mode"], 8))
    return {"written": len(req["files"])}


def op_read(req: dict) -> dict:
    cap = int(req.get("max_bytes") or 16 << 20)
    out: dict[str, str | None] = {}
    for path in req["paths"]:
        target = _resolve(path)
        try:
            with open(target, "rb") as fh:
                out[path] = _b64(fh.read(cap))
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            out[path] = None
    return {"files": out}


class Session:
    """The persistent Python process behind execute_code."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen | None = None
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
        self.proc = subprocess.Popen(
            [sys.executable, "-u", str(HERE / "session.py")],
            cwd=WORKSPACE,
            env=full_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        reply = self._call({"op": "init", "preamble": self.preamble}, timeout=60)
        if reply is None:
            return {"error": "the Python session did not start"}
        return reply

    def stop(self) -> None:
        if self.proc is not None:
            _kill_group(self.proc)
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            self.proc = None

    def _send(self, msg: dict) -> None:
        assert self.proc is not None and self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(msg).encode() + b"\n")
        self.proc.stdin.flush()

    def _recv(self, deadline: float) -> dict | None:
        assert self.proc is not None and self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        sel = selectors.DefaultSelector()
        sel.register(fd, selectors.EVENT_READ)
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                if sel.select(timeout=remaining):
                    line = self.proc.stdout.readline()
                    if not line:
                        return {"dead": True}
                    try:  # a cell can write anything on the session's reply pipe: junk ends the session
                        reply = json.loads(line)
                    except ValueError:
                        return {"dead": True}
                    return reply if isinstance(reply, dict) else {"dead": True}
        finally:
            sel.close()

    def _call(self, msg: dict, timeout: float) -> dict | None:
        try:
            self._send(msg)
        except (BrokenPipeError, OSError):
            return {"dead": True}
        return self._recv(time.monotonic() + timeout)

    def run(self, req: dict) -> dict:
        if self.proc is None or self.proc.poll() is not None:
            was_running = self.proc is not None
            started = self.start()
            if "error" in started:
                return {"output": started["error"], "timed_out": False, "restarted": True}
            if was_running:
                note = "[the Python session had exited and was restarted: the namespace was lost]\n"
                reply = self.run(req)
                reply["output"] = note + reply["output"]
                reply["restarted"] = True
                return reply
        timeout = float(req.get("timeout") or 30)
        reply = self._call({"op": req["op"], **{k: v for k, v in req.items() if k != "op"}}, timeout)
        if reply is not None and not reply.get("dead"):
            reply.setdefault("timed_out", False)
            reply.setdefault("restarted", False)
            return reply
        if reply is None:  # past the limit: interrupt the cell, keep the namespace if we can
            try:
                os.kill(self.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            reply = self._recv(time.monotonic() + 2.0)
            if reply is not None and not reply.get("dead"):
                reply["output"] = (reply.get("output") or "") + (
                    f"\n[timed out after {timeout:g}s: the cell was interrupted; the namespace is kept]"
                )
                reply["timed_out"] = True
                reply["restarted"] = False
                return reply
            self.start()
            return {
                "output": f"[timed out after {timeout:g}s and did not stop when interrupted: "
                "the Python session was restarted and the namespace was lost]",
                "timed_out": True,
                "restarted": True,
            }
        self.start()
        return {
            "output": "[the Python session died during this cell (out of memory, or it exited): "
            "it was restarted and the namespace was lost]",
            "timed_out": False,
            "restarted": True,
        }


SESSION = Session()


def handle(req: dict) -> dict:
    op = req.get("op")
    if op == "ping":
        return {"pong": True, "pid": os.getpid()}
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


def _undumpable() -> None:
    """No process of the sandbox may read this process's memory (requests, nonces) or open its fds.

    Same uid, no Yama: without this a tool command or a graded app could read a grading
    request's nonce from /proc/<agent>/mem or write into /proc/<agent>/fd/N. The flag is
    reset by execve, so the commands and the session the agent starts are ordinary.
    """
    import ctypes

    if ctypes.CDLL(None, use_errno=True).prctl(4, 0, 0, 0, 0) != 0:  # PR_SET_DUMPABLE, 0
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0) failed")


def main() -> None:
    _undumpable()
    out = sys.stdout.buffer
    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            reply = handle(req)
        except Exception as exc:  # a bad request must not end the agent
            req = req if isinstance(req, dict) else {}
            reply = {"error": f"{type(exc).__name__}: {exc}"}
        reply["id"] = req.get("id")
        # A leading newline ends whatever unterminated junk a sandboxed process wrote into the
        # stream (pid 1's descriptors are the same stream): the junk becomes a line of its own.
        out.write(b"\n" + json.dumps(reply).encode() + b"\n")
        out.flush()
    SESSION.stop()


if __name__ == "__main__":
    main()
