"""The in-container agent: one process per sandbox, reached over a kept-open attach stream.

Requests and responses are JSON lines on stdin/stdout, one request at a time; every
reply carries the request's id. Commands run in their own process group with a time
limit and an output cap; the persistent Python session is a child process
(session.py) that the agent starts, interrupts and restarts. Who the agent is, and how
it keeps out of the sandboxed code's reach, is in supervisor.py.

Time limits (`CallLimit`). A request that carries a `backstop` (the host's tool calls:
`exec`, `py_exec`, `py_probe`) has its `timeout` counted on the sandboxed side's active
time (clock.py: the wall time minus the time its threads, or the agent's, waited for a
CPU that the sandboxed side's own processes did not use), sampled every `TICK` seconds.
When that passes the limit, the command's group is killed (the cell interrupted) and the
reply says `timed_out`: the model's. A command that sleeps, or busy-loops, or races its
own forks for the CPU, is active and times out at its limit as on an idle machine. When
the wall-clock backstop passes first, the sandbox was starved by the host: the call ends
the same way, and the reply carries `starved` (wall, active and CPU seconds), which the
host takes for a harness fault, never for the model's timeout. A request without a
backstop (a grader program, which the host judges itself) counts the wall clock.

The clock costs nothing on a call that ends quickly: its first sample (the baseline, a
pass over /proc) is taken `FIRST_SAMPLE` seconds into the call, not at its start, so a
call that ends before then never samples. Up to FIRST_SAMPLE seconds before the baseline
count as active (the one error, at most 50 ms of a limit of seconds, and towards the
model's timeout, never towards a harness fault); when the agent itself gets to the
baseline late (a busy sandbox or host), the time past FIRST_SAMPLE before it counts as
not active, so the call runs on towards its backstop, where the host's own evidence
judges it (sandbox/interface.py, `_settle_backstop`). Measured on a 2-core host at load 6,
a baseline at the start of every call (0.2 ms of the agent's CPU) made `execute_code("1")`
take 3.4 ms instead of 0.1 ms inside the container: on a busy host, every bit of CPU on
the path of a call costs a wait for a CPU.

The session's replies are bound to their requests too: each request to the session
carries a fresh random id, and a line on the session's reply pipe that is not the
reply to the current request (something the model wrote to the session's private
descriptors, or a line over `SESSION_LINE_MAX`) is dropped and counted. The session
that carried such junk is restarted once the call ends, with its preamble, and the
model is told: a cell can break its own session, never shift a later reply.
"""

from __future__ import annotations

import binascii
import functools
import json
import os
import select
import selectors
import signal
import stat
import subprocess
import sys
import time

import ops
import standby
from clock import SideClock, stat_fields
from supervisor import MAX_REPLY, Identity, LineReader, Outbox, write_all

HERE = os.path.dirname(os.path.realpath(__file__))
DEFAULT_MAX_OUTPUT = 1 << 20
WORKSPACE = "/workspace"
SESSION_LINE_MAX = 8 << 20  # the session keeps its own replies under 4 MiB (session.py)
# What the agent reads of junk on the session's reply pipe in one call before it gives up on
# that session: the model's code can write there as fast as the agent parses, and the agent's
# work on it must stay bounded (it shares the sandbox's CPU with the model's processes).
SESSION_JUNK_MAX = 4 << 20
SESSION_JUNK_LINES = 4096
EXEC_REPLY_BUDGET = MAX_REPLY - (64 << 10)
READ_BUDGET = (MAX_REPLY - (256 << 10)) * 3 // 4  # raw bytes of files per read reply (base64 grows by 4/3)
IDENTITY = Identity()
TICK = 0.2  # seconds between samples of the sandboxed side's clock while a call runs
FIRST_SAMPLE = 0.05  # seconds into a call at which its clock takes its baseline (see the module)
# Samples are spaced out (up to MAX_TICK) so that they take at most 5% of a CPU, and more
# when a sample takes long on the wall clock: on a starved sandbox the agent's own CPU is
# scarce, and its heartbeats (supervisor.Outbox) must not wait behind its sampling.
MAX_TICK = 1.0
DRAIN_MAX = 4 << 20  # bytes read from a pipe once its call is over: more than a pipe holds (1 MiB unprivileged)


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode()  # what base64.b64encode returns, without its import


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@functools.cache
def _harness_pids() -> frozenset[int]:
    """The agent and the processes above it (docker-init): everything else in the container is the sandbox's.

    The same for the agent's whole life (it never changes parent), so read once.
    """
    pids, pid = {os.getpid()}, os.getpid()
    while pid > 1:
        fields = stat_fields(pid)
        try:
            pid = int(fields[1]) if fields else 1
        except (ValueError, IndexError):
            break
        pids.add(pid)
    return frozenset(pids)


class CallLimit:
    """One call's time limit: on the sandboxed side's active time with a wall-clock backstop, or on the wall clock.

    It is the deadline that every wait of the call uses (supervisor.time_left): `remaining()`
    samples the clock when a sample is due and returns how long to wait before looking
    again, or 0 once the call is over; `outcome` then says whose end it is.
    """

    TIMED_OUT = "timed out"  # the limit passed: the model's
    STARVED = "starved"  # the backstop passed first: the host's load

    def __init__(self, limit: float, backstop: float | None = None) -> None:
        self.limit = limit
        self.started = time.monotonic()
        self.end = self.started + max(limit, float(backstop or 0))
        self.on_side_clock = bool(backstop)
        self.clock: SideClock | None = None  # made at the first sample, FIRST_SAMPLE into the call
        self.credit = 0.0  # active seconds before the clock's baseline (at most FIRST_SAMPLE)
        self.next_tick = self.started + FIRST_SAMPLE
        self.outcome: str | None = None

    @property
    def active(self) -> float:
        return self.credit + (self.clock.active if self.clock is not None else 0.0)

    def remaining(self) -> float:
        if self.outcome is not None:
            return 0.0
        now = time.monotonic()
        if not self.on_side_clock:
            if now >= self.end:
                self.outcome = self.TIMED_OUT
                return 0.0
            return self.end - now
        if now >= self.next_tick or now >= self.end:
            if self.clock is None:
                self.clock = SideClock(_harness_pids())
                self.credit = min(now - self.started, FIRST_SAMPLE)
            else:
                self.clock.tick()
            took = time.monotonic() - now  # long when the agent itself waits for a CPU
            self.next_tick = now + min(MAX_TICK, max(TICK, 20 * self.clock.cost, 10 * took))
            if self.active >= self.limit:
                self.outcome = self.TIMED_OUT
            elif now >= self.end:
                self.outcome = self.STARVED
            if self.outcome is not None:
                return 0.0
        return max(0.001, min(self.next_tick, self.end) - now)

    def report(self) -> dict:
        """What the sandbox got of the call's wall time (the evidence in a `starved` reply)."""
        out = {"limit": self.limit, "wall": round(time.monotonic() - self.started, 3)}
        if self.on_side_clock:
            cpu = self.clock.cpu if self.clock is not None else 0.0
            out.update(active=round(self.active, 3), cpu=round(cpu, 3))
        return out


def _drain(proc: subprocess.Popen, stdin: bytes, limit: CallLimit, cap: int) -> tuple[bytes, bytes, int, str | None]:
    """Feed stdin, read both pipes up to cap bytes each; stop when the limit says the call is over.

    Once the main process has exited, a background child that keeps the pipes open
    gets a short grace, then the call returns without waiting for it. Whatever ends the
    call, what is already in the pipes is read (`_read_rest`). The last item is the
    limit's outcome when it ended a command still running (its group is killed), else None.
    """
    sel = selectors.DefaultSelector()
    bufs = {proc.stdout: bytearray(), proc.stderr: bytearray()}
    read = 0  # bytes read from both pipes; what the caps did not keep was dropped
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
    ended: str | None = None
    exited_at: float | None = None
    while sel.get_map():
        left = limit.remaining()
        if left <= 0:
            ended = limit.outcome if proc.poll() is None else None
            break
        now = time.monotonic()
        if exited_at is None and proc.poll() is not None:
            exited_at = now
        if exited_at is not None and now - exited_at > 0.2:
            break
        wait = min(left, 0.05 if exited_at is None else 0.02)
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
            n = _read_into(stream.fileno(), bufs[stream], cap)
            if n is None:
                sel.unregister(stream)
            else:
                read += n
    if ended is not None:
        _kill_group(proc)
    for key in list(sel.get_map().values()):  # the last words of a program the limit overtook
        if key.fileobj in bufs:
            read += _read_rest(key.fileobj.fileno(), bufs[key.fileobj], cap)
    sel.close()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()
    out, err = bytes(bufs[proc.stdout]), bytes(bufs[proc.stderr])
    return out, err, read - len(out) - len(err), ended


def _read_into(fd: int, buf: bytearray, cap: int) -> int | None:
    """One read of a pipe, kept in `buf` up to `cap` bytes: how many bytes it gave (0: none yet), None at end of file."""
    try:
        chunk = os.read(fd, 65536)
    except BlockingIOError:
        return 0
    if not chunk:
        return None
    buf.extend(chunk[: max(0, cap - len(buf))])
    return len(chunk)


def _read_rest(fd: int, buf: bytearray, cap: int) -> int:
    """What is left in a pipe once its call is over, kept in `buf` up to `cap`: how many bytes it gave.

    A program writes its last words (a grader's report) just before it exits, and the
    limit may pass between that exit and the agent's next read: what the program wrote
    is still in the pipe, and it is the call's output. Reads stop when the pipe is empty
    (a process the program left may hold it open) or after DRAIN_MAX bytes.
    """
    got = 0
    while got < DRAIN_MAX:
        n = _read_into(fd, buf, cap)
        if not n:
            break
        got += n
    return got


def _spawn(argv: list[str], **kwargs) -> subprocess.Popen:
    """Start a program as the sandbox user, in its own session, with an OOM score above the agent's."""
    with IDENTITY.spawning():
        return subprocess.Popen(argv, start_new_session=True, close_fds=True, **IDENTITY.child_credentials(), **kwargs)


def _reap(proc: subprocess.Popen, timeout: float) -> int | None:
    """The exit code of `proc` once it exits, waiting up to `timeout` seconds; None if it has not.

    Waits on a pidfd, so it returns as soon as the process exits (Popen.wait with a timeout
    polls with sleeps: about 1 ms of a call's wall time whenever the command has closed its
    pipes but not yet exited).
    """
    code = proc.poll()
    if code is not None:
        return code
    try:
        fd = os.pidfd_open(proc.pid)
    except (OSError, AttributeError):  # a kernel without pidfds: poll
        try:
            return proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
    try:
        select.select([fd], [], [], timeout)
    finally:
        os.close(fd)
    return proc.poll()


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
    limit = CallLimit(float(req.get("timeout") or 30), req.get("backstop"))
    cap = int(req.get("max_output") or DEFAULT_MAX_OUTPUT)
    stdin = binascii.a2b_base64(req.get("stdin_b64") or "")
    out, err, dropped, ended = _drain(proc, stdin, limit, cap)
    code = _reap(proc, 2)
    if code is None:
        _kill_group(proc)
        code = proc.wait()
    if ended is None:
        _kill_group(proc)  # nothing of a finished command lingers in its group
    texts, cut = _fit([out.decode("utf-8", "replace"), err.decode("utf-8", "replace")], EXEC_REPLY_BUDGET)
    reply = {
        "stdout": texts[0],
        "stderr": texts[1],
        "exit_code": -9 if ended else code,
        "timed_out": ended == CallLimit.TIMED_OUT,
        "truncated": dropped + cut,
    }
    if ended == CallLimit.STARVED:
        reply["starved"] = limit.report()
    return reply


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
    proc = STANDBY.take(req["command"]) if standby.fits(req, WORKSPACE) else None
    if proc is None:
        proc = _popen(req)
    return proc if isinstance(proc, dict) else _finish(proc, req)


STANDBY = standby.StandbyShell(_spawn)


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


def _resolve(path: str) -> str:
    return os.path.join(WORKSPACE, path)  # an absolute `path` stays itself


def op_write(req: dict) -> dict:
    """Write files with the sandbox user's rights (see supervisor.py), only ever into regular files."""
    for path, data in req["files"].items():
        target = _resolve(path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        # O_NONBLOCK: a planted FIFO must not hang the agent; only a regular file is written
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC, 0o644)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise OSError(f"{path} is not a regular file")
            os.ftruncate(fd, 0)
            os.set_blocking(fd, True)
            view = memoryview(binascii.a2b_base64(data))
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


class SessionHandle:
    """The agent's handle on the persistent Python session process behind execute_code (session.py)."""

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
        try:
            self.proc = _spawn(
                [sys.executable, "-u", "-s", os.path.join(HERE, "session.py")],
                cwd=WORKSPACE,
                env=full_env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
        except OSError as exc:  # an unwritable /workspace, the pids limit used up: no process to start
            self.proc = None
            return {"error": f"the Python session could not start: {exc}"}
        self.reader = LineReader(self.proc.stdout.fileno(), SESSION_LINE_MAX, SESSION_JUNK_MAX)
        reply, _ = self._call({"op": "init", "preamble": self.preamble}, CallLimit(60))
        if not isinstance(reply, dict):
            self.stop()  # the next call starts afresh
            return {"error": "the Python session did not start"}
        return {"output": _text(reply.get("output")), "ready": True}

    def restart(self) -> str:
        """Start the session again after model code ran; what the model must be told when that failed.

        Whatever stops a restart now (an unwritable /workspace, every pid of the limit
        held) is the sandboxed code's doing: it is said in the call's output, never
        raised as an error of the agent, which the host would have to take for a harness
        fault. The next call tries again.
        """
        started = self.start()
        if "error" not in started:
            return ""
        return f"\n[{started['error']}; the next call tries again]"

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

    def _recv(self, rid: str, deadline) -> dict | str:
        """The reply carrying `rid` by `deadline` (a CallLimit or a monotonic time); other lines are junk."""
        assert self.reader is not None
        while True:
            line = self.reader.read(deadline)
            if line is LineReader.TIMEOUT:
                return self.TIMEOUT
            if line is LineReader.EOF:
                return self.DEAD
            if line is LineReader.FLOODED:
                return self.LOST
            try:
                msg = json.loads(line)
            except (ValueError, RecursionError):
                msg = None
            if isinstance(msg, dict) and msg.get("id") == rid:
                return msg
            self.reader.junk += len(line) + 1
            self.reader.junk_lines += 1
            if rid.encode() in line or self.reader.junk > SESSION_JUNK_MAX or self.reader.junk_lines > SESSION_JUNK_LINES:
                return self.LOST

    def _call(self, msg: dict, limit: CallLimit) -> tuple[dict | str, str]:
        assert self.proc is not None and self.proc.stdin is not None
        rid = os.urandom(16).hex()  # what secrets.token_hex gives, without loading OpenSSL at every start
        if not write_all(self.proc.stdin.fileno(), json.dumps({**msg, "id": rid}).encode() + b"\n", limit):
            return (self.DEAD if self.proc.poll() is not None else self.TIMEOUT), rid
        return self._recv(rid, limit), rid

    def run(self, req: dict) -> dict:
        notes: list[str] = []
        restarted = False
        if self.proc is None or self.proc.poll() is not None:
            was_running = self.proc is not None
            started = self.start()
            if "error" in started:
                return {"output": f"[{started['error']}; the next call tries again]", "timed_out": False, "restarted": True}
            if was_running:
                notes.append("[the Python session had exited and was restarted: the namespace was lost]\n")
                restarted = True
        timeout = float(req.get("timeout") or 30)
        limit = CallLimit(timeout, req.get("backstop"))
        msg = {k: v for k, v in req.items() if k not in ("id", "timeout", "backstop")}
        reply, rid = self._call(msg, limit)
        timed_out = starved = False
        if reply == self.TIMEOUT:  # past the limit: interrupt the cell, keep the namespace if we can
            starved = limit.outcome == CallLimit.STARVED
            timed_out = not starved
            evidence = limit.report()
            why = f"the call reached its wall-clock backstop first ({evidence})" if starved else f"timed out after {timeout:g}s"
            try:
                os.kill(self.proc.pid, signal.SIGINT)
            except ProcessLookupError:
                pass
            reply = self._recv(rid, time.monotonic() + 2.0)
            if isinstance(reply, dict):
                reply["output"] = _text(reply.get("output")) + f"\n[{why}: the cell was interrupted; the namespace is kept]"
            elif reply in (self.TIMEOUT, self.DEAD):
                reply = {
                    "output": f"[{why} and did not stop when interrupted: "
                    "the Python session was restarted and the namespace was lost]"
                }
                if starved:  # the host ends the rollout: no restart on a starved machine to hold up the reply
                    self.stop()
                else:
                    reply["output"] += self.restart()
                restarted = True
        if reply == self.DEAD:
            reply = {
                "output": "[the Python session died during this cell (out of memory, or it exited): "
                "it was restarted and the namespace was lost]"
            }
            reply["output"] += self.restart()
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
            notes.append(self.restart().lstrip("\n"))
            restarted = True
        out = {"output": "".join(notes) + _text(reply.get("output")), "timed_out": timed_out, "restarted": restarted}
        if starved:
            out["starved"] = evidence
        if req["op"] == "probe" and "value" in reply and not reply.get("output"):
            out["value"] = reply["value"]
        return out


def _text(value) -> str:
    return value if isinstance(value, str) else ("" if value is None else str(value))


SESSION = SessionHandle()


def handle(req: dict) -> dict:
    op = req.get("op")
    if op == ops.PING:
        return {"pong": True, "pid": os.getpid(), "supervised": IDENTITY.supervised, "oom_protected": IDENTITY.oom_protected}
    if op == ops.EXEC:
        return op_exec(req)
    if op == ops.SPAWN:
        return op_spawn(req)
    if op == ops.FEED:
        return op_feed(req)
    if op == ops.WRITE:
        return op_write(req)
    if op == ops.READ:
        return op_read(req)
    if op == ops.PY_START:
        return SESSION.start(req.get("preamble", ""), req.get("env") or {})
    if op in (ops.PY_EXEC, ops.PY_PROBE):
        try:
            return SESSION.run({**req, "op": "exec" if op == ops.PY_EXEC else "probe"})
        except OSError as exc:  # the sandboxed code left the session unusable: the model's, said to it
            SESSION.stop()
            output = f"[the Python session failed ({exc}): it was stopped and the namespace was lost]"
            return {"output": output, "timed_out": False, "restarted": True}
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
        if isinstance(req, dict) and req.get("op") == ops.EXEC and standby.fits(req, WORKSPACE):
            STANDBY.fill(WORKSPACE)  # between calls: the next plain command need not wait for bash to start
    SESSION.stop()
    STANDBY.stop()


if __name__ == "__main__":
    main()
