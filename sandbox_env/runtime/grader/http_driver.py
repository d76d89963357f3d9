"""HTTP driver of the fastapi family: serves app.py in processes of its own and records their answers.

The driver never imports the submission. It starts the app host (app_host.py, a fork
server) before its request arrives; for every session of requests the host forks a
child that imports /workspace/app.py afresh and serves it with uvicorn on a unix
socket, lifespan on. The driver sends the session's requests over that socket with its
own httpx client (Host `testserver`, user-agent `testclient`, cookies kept for the
session, redirects not followed, as the TestClient did) and records what came back.
Replacing the driver's functions, its client or its report from app.py is therefore
impossible rather than detected: the app runs in another process, and this one and
the host are undumpable (process_guard.py), so the app cannot read their memory (the
nonce), open their descriptors (the report pipe) or trace them. It can still signal
them: a driver that is killed or stopped leaves the last progress note as evidence
("importing", "serving"). Where the app's processes are fenced (process_guard.fence_signals,
installed by the app host in every child before the app is imported; the notes say
`"fenced": true`), they cannot signal the driver at all, so a driver killed by a signal was
killed by the kernel or from outside the sandbox, and the host does not blame the
submission for it (families/fastapi.py); unfenced, the host blames the submission. The
fence names the driver's threads one by one (a thread's id given to kill signals its
process), so the driver has all its threads before the first app exists: the main thread
and one thread that sends the requests (`_fetcher`), never a thread per request.

The app's process carries a witness (app_host.Witness) whose events (a call, the status
sent, the end of the call) are compared with what the driver received: a response the
witness did not see the app send, or junk on the events pipe, is reported under
`cross_check` and the host calls it tampering. The events pipe is the one descriptor of the
driver's that the app holds, so what the driver reads from it is bounded by what an honest
witness owes for what was asked (imported, ready, stopped per session; call, status, end per
request): a junk line or a line past that due is tampering at once, the driver closes its end
and ends the run. A flood of valid events cannot keep the driver parsing (once, under a CPU
limit the app had set on it, until the kernel killed it; or until its clock saw the app
starved). After each response the driver also waits
for the witness to see the call end, so background tasks finish before the next request
(as with the TestClient).

Limits count the app's own time, not the wall clock (clock.py's readers, shared with the
agent's per-call limit). For each step (import, lifespan
startup, a request, shutdown) the driver samples the app's side of the container: the CPU
time of every process but the harness's (/proc/PID/stat, the app process and whatever it
forked, with the children they reaped), and the app's active time, the wall time minus the
time its threads (or the driver's) waited for a CPU (/proc/PID/task/*/schedstat run_delay)
that the app's own processes did not use meanwhile. A step whose CPU or active time passes
its limit is the app's: the run stops with `stalled` (blame "app"). A handler that sleeps is
active; a process starved by a busy host is not; a handler that waits for a CPU its own
forks or threads keep busy is active (it is starving itself). The whole run has a limit of
the same kind, `deadline`: when the app's active time over the run's steps passes it, the
run is the app's (kind "run", blame "app"), however slowly a busy host let that time pass.
The wall clock is only a backstop (`backstop`, by default GRADING_BACKSTOP_FACTOR deadlines):
when it passes first, the report says blame "harness" (the container did not get the CPU to
finish), and the host judges that claim with its own measure of the sandbox
(families/fastapi.py).

Between sessions, and before the final report, every process of the container other
than pid 1, the agent, the driver and the host is stopped and killed, so nothing an app
left running (threads die with their process; forks, setsid'd daemons) outlives its
session.

Request (stdin, read by open_channel): {"sessions": [[request, ...], ...],
"request_timeout": s, "deadline": s, "backstop": s, "app_path": "/workspace/app.py"}.
Report: {"stage": "done", "imported", "has_app", "import_error", "sessions": [{"error",
"responses": [{"status", "headers", "text"|"b64", "truncated", "over_budget", "app_calls",
"app_status"} | {"error"}]}], "stalled", "cross_check": [...]}.
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))

from process_guard import ancestors, fence_supported, state_of, sweep, undumpable  # noqa: E402

undumpable()  # before the nonce exists in this process, and before any app does

import base64  # noqa: E402
import json  # noqa: E402
import queue  # noqa: E402
import re  # noqa: E402
import select  # noqa: E402
import shutil  # noqa: E402
import signal  # noqa: E402
import stat  # noqa: E402
import subprocess  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402

from clock import CLK_TCK, sched, side_cpu, starved  # noqa: E402
from report_channel import grader_output_tail, open_channel  # noqa: E402

RUN_DIR = "/tmp/websandbox-http"
BODY_CAP = 256 * 1024
# What the responses may take of the report, as JSON. The agent sends back about 15 MiB of a
# program's output, and JSON escapes can double a report on its way: a report cut there would
# come back unreadable, a harness fault, so an app answering with many bodies of escaped
# characters could turn its own zero into a rescheduled grading. Past the budget a response
# keeps its status only (`over_budget`), and the checks that read its body fail.
REPORT_BUDGET = 6 << 20
_report = {"spent": 0}
MAX_LINE = 8192
MAX_ITEMS = 100_000
PUMP_BYTES = 1 << 20
TICK = 0.1  # how often a waiting driver samples the app's clock
STARTUP_FACTOR = 3  # import + lifespan startup may take this many request limits
EVENTS_PER_SESSION = 3  # imported or import_error; ready or stopped (startup failed); stopped
EVENTS_PER_REQUEST = 3  # call, status, end
_now = time.monotonic


class Lines:
    """JSON-object lines from a non-blocking pipe, bounded in size and count; anything else is junk.

    `allowed` (None: no bound) is how many lines the writer may have written so far: the
    driver raises it by what an honest writer owes for each thing it asks (EVENTS_PER_SESSION,
    EVENTS_PER_REQUEST). A line past it, or a junk line, is tampering (`over` says how): the
    driver closes its end at once and reads nothing more from the pipe.
    """

    def __init__(self, fd: int, allowed: int | None = None) -> None:
        self.fd = fd
        self.buf = b""
        self.items: list[dict] = []
        self.junk = 0
        self.closed = False
        self.allowed = allowed
        self.over: str | None = None

    def allow(self, n: int) -> None:
        if self.allowed is not None:
            self.allowed += n

    def pump(self) -> None:
        got = 0
        while got < PUMP_BYTES and not self.closed:
            try:
                chunk = os.read(self.fd, 65536)
            except BlockingIOError:
                return
            if not chunk:
                self.closed = True
                return
            got += len(chunk)
            *lines, self.buf = (self.buf + chunk).split(b"\n")
            for line in lines:
                self._take(line)
                if self.closed:
                    return
            if len(self.buf) > MAX_LINE:
                self.junk += 1
                self.buf = b""
                self._check()

    def _take(self, line: bytes) -> None:
        try:
            obj = json.loads(line) if len(line) <= MAX_LINE else None
        except (ValueError, RecursionError):  # nested past the parser's limit: junk, not the driver's crash
            obj = None
        if isinstance(obj, dict) and len(self.items) < MAX_ITEMS:
            self.items.append(obj)
        else:
            self.junk += 1
        self._check()

    def _check(self) -> None:
        if self.allowed is None:
            return
        if self.junk:
            self._refuse(f"{self.junk} line(s) on the witness's events pipe were not the witness's")
        elif len(self.items) > self.allowed:
            self._refuse(
                f"{len(self.items) - self.allowed} more line(s) on the witness's events pipe than an honest "
                f"witness writes for what was asked (at most {self.allowed})"
            )

    def _refuse(self, why: str) -> None:
        self.over, self.closed, self.buf = why, True, b""
        try:
            os.close(self.fd)
        except OSError:
            pass


def _start_host() -> tuple[subprocess.Popen, int, Lines, Lines]:
    """The app host, started now so that its imports overlap with the wait for the request."""
    os.makedirs(RUN_DIR, 0o700, exist_ok=True)
    cmd_r, cmd_w = os.pipe()
    rep_r, rep_w = os.pipe()
    ev_r, ev_w = os.pipe()
    log = os.open(f"{RUN_DIR}/host.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    proc = subprocess.Popen(
        [sys.executable, "-E", "-s", os.path.join(HERE, "app_host.py"), str(cmd_r), str(rep_w), str(ev_w)],
        pass_fds=(cmd_r, rep_w, ev_w),
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=log,
        cwd="/",
    )
    for fd in (cmd_r, rep_w, ev_w, log):
        os.close(fd)
    for fd in (rep_r, ev_r):
        os.set_blocking(fd, False)
    # the app's process holds the events pipe's write end (its witness writes there), never the replies'
    return proc, cmd_w, Lines(rep_r), Lines(ev_r, allowed=0)


host, host_cmd_fd, replies, events = _start_host()
# httpx after the host has started: on a cold container its import overlaps the host's (FastAPI's) imports
import httpx  # noqa: E402

WAKE_R, WAKE_W = os.pipe()  # a finished request wakes the waiting main thread
os.set_blocking(WAKE_R, False)
os.set_blocking(WAKE_W, False)
# From here on nothing is imported from this program's own folder, which sits in /tmp.
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE]

channel, request = open_channel()
FENCED = fence_supported()  # every app child fences its signals (app_host.serve_child); the notes say so
_started = _now()
REQUEST_TIMEOUT = float(request.get("request_timeout", 10))
DEADLINE = float(request.get("deadline", 60))  # of the app's active time over the run
BACKSTOP = float(request.get("backstop", 12 * DEADLINE))  # of wall clock
APP_PATH = request.get("app_path", "/workspace/app.py")
KEEP = ancestors(os.getpid()) | {host.pid}
channel.note({"stage": "started"})

state: dict = {
    "stage": "done",
    "imported": False,
    "has_app": False,
    "import_error": None,
    "sessions": [],
    "stalled": None,
    "cross_check": [],
    "phases": [],  # [what, wall seconds, app's active seconds]: where the run's time went
}
_run = {"active": 0.0}  # the app's active seconds over the whole run, for the deadline's blame


class Stalled(Exception):
    """The run stops here; the record says what did not finish, within what, and whose fault it is."""


class Tampered(Exception):
    """The run stops here: something other than the witness wrote on the events pipe (cross_check says what)."""


class Clock:
    """The app's own time in one step: CPU seconds, and active seconds (wall minus waiting for a CPU).

    CPU is that of every process on the app's side (forks included); waiting is the
    longest wait of an app or driver thread less the CPU the app's side used meanwhile
    (clock.py's readers and rule; judged between two samples, which keeps this driver's
    own work per sample small on a starved container).
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.cpu0 = self.cpu_last = side_cpu(KEEP)
        self.active = 0.0
        self.t = _now()
        self.app_rd = sched(pid)
        self.own_rd = sched("self")

    def tick(self) -> None:
        now, app_rd, own_rd, cpu = _now(), sched(self.pid), sched("self"), side_cpu(KEEP)
        used = max(0.0, cpu - self.cpu_last)
        lost = max(0.0, starved(self.app_rd, app_rd, used, True), starved(self.own_rd, own_rd, used, False))
        gained = max(0.0, (now - self.t) - lost)
        self.active += gained
        _run["active"] += gained
        self.t, self.app_rd, self.own_rd = now, app_rd or self.app_rd, own_rd
        self.cpu_last = max(self.cpu_last, cpu)

    @property
    def cpu(self) -> float:
        return self.cpu_last - self.cpu0


def pump() -> None:
    replies.pump()
    events.pump()
    if events.over:
        raise Tampered(events.over)


def wait(done, what: str, limit: float | None, clock: Clock | None) -> None:
    """Pump the pipes until done() holds; raise Stalled when the app's time for this step passes `limit`.

    It sleeps in select() on the pipes and the wake pipe (a finished request writes there),
    so it wakes for every event at once and samples the app's clock only every TICK.
    """
    t0 = last_tick = _now()
    while True:
        pump()
        if done():
            if clock is not None:
                clock.tick()
            if len(state["phases"]) < 200:
                state["phases"].append([what, round(_now() - t0, 3), round(clock.active, 3) if clock else None])
            return
        if clock is not None and _now() - last_tick >= TICK:
            last_tick = _now()
            clock.tick()
            if limit is not None and (clock.cpu > limit or clock.active > limit):
                kind = "CPU" if clock.cpu > limit else "active"
                raise Stalled(
                    {
                        "what": what,
                        "limit": limit,
                        "kind": "step",
                        "blame": "app",
                        "cpu": round(clock.cpu, 3),
                        "active": round(clock.active, 3),
                        "measure": kind,
                    }
                )
        if _run["active"] > DEADLINE:
            raise Stalled({"what": what, "limit": DEADLINE, "kind": "run", "blame": "app", "active": round(_run["active"], 3)})
        if _now() - _started > BACKSTOP:
            raise Stalled(
                {
                    "what": what,
                    "limit": DEADLINE,
                    "backstop": BACKSTOP,
                    "kind": "run",
                    "blame": "harness",
                    "active": round(_run["active"], 3),
                }
            )
        fds = [lines.fd for lines in (replies, events) if not lines.closed]
        ready, _, _ = select.select([*fds, WAKE_R], [], [], TICK)
        if WAKE_R in ready:
            try:
                os.read(WAKE_R, 4096)
            except BlockingIOError:
                pass


def host_send(cmd: dict) -> None:
    try:
        os.write(host_cmd_fd, json.dumps(cmd).encode() + b"\n")
    except OSError:  # the host was killed (only an app can do that): its children are watched through /proc
        pass


def exit_code(pid: int) -> int | None:
    """The exit code the host reported for a child, or None while it runs."""
    for item in replies.items:
        if item.get("exited") == pid:
            return int(item.get("code", -1))
    return None


def ended(pid: int) -> bool:
    """Whether the app's process has ended: reported by the host, or (the host gone) seen in /proc."""
    if exit_code(pid) is not None:
        return True
    return host.poll() is not None and state_of(pid) in ("Z", "X", "gone")


def how_it_ended(pid: int) -> str:
    code = exit_code(pid)
    return "exit code unknown: the process that started it was killed" if code is None else f"exit code {code}"


def log_tail(path: str, limit: int = 1500) -> str:
    """The end of an app's log; anything but a regular file (an app may plant a FIFO) reads as empty."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW)
    except OSError:
        return ""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return ""
        size = os.lseek(fd, 0, os.SEEK_END)
        os.lseek(fd, max(0, size - limit), os.SEEK_SET)
        return os.read(fd, limit).decode("utf-8", "replace").strip()
    except OSError:
        return ""
    finally:
        os.close(fd)


def fresh_file(path: str) -> None:
    """Remove whatever an earlier app left at `path` (a FIFO, a symlink, a socket) and make an empty file."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644))


_EXCEPTION_LINE = re.compile(r"^[\w.]*(Error|Exception|Exit|Interrupt)\b.*")


def explain(summary: str, log: str) -> str:
    """The app's own output first, then what happened with its last exception (or last line).

    Readers, and the host, take the last line of such a text.
    """
    tail = log_tail(log)
    lines = [line.strip() for line in tail.splitlines() if line.strip()]
    cause = next((line for line in reversed(lines) if _EXCEPTION_LINE.match(line)), lines[-1] if lines else "")
    return (tail + "\n" if tail else "") + summary + (f": {cause[:300]}" if cause else "")


def error_text(exc: BaseException, limit: int = 3000) -> str:
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))[-limit:]


def record(resp: httpx.Response, body: bytes) -> dict:
    """A response as the report carries it; once the responses have spent REPORT_BUDGET, its status alone."""
    out = {
        "status": resp.status_code,
        "headers": [[k.decode("latin-1").lower(), v.decode("latin-1")] for k, v in resp.headers.raw],
        "truncated": len(body) > BODY_CAP,
    }
    body = body[:BODY_CAP]
    try:
        out["text"] = body.decode("utf-8")
    except UnicodeDecodeError:
        out["b64"] = base64.b64encode(body).decode()
    _report["spent"] += len(json.dumps(out))
    if _report["spent"] > REPORT_BUDGET:
        return {"status": out["status"], "headers": [], "text": "", "truncated": True, "over_budget": True}
    return out


def request_kwargs(req: dict) -> dict:
    kw: dict = {}
    if req.get("query"):
        kw["params"] = [tuple(p) for p in req["query"]]
    if req.get("headers"):
        kw["headers"] = [tuple(p) for p in req["headers"]]
    if "json" in req:
        kw["json"] = req["json"]
    if "form" in req:
        kw["data"] = req["form"]
    if "files" in req:
        kw["files"] = [(f[0], (f[1], f[2].encode(), f[3])) for f in req["files"]]
    if "content" in req:
        kw["content"] = req["content"].encode()
    return kw


def fetch(client: httpx.Client, req: dict, box: dict, done: threading.Event) -> None:
    try:
        with client.stream(req["method"], req["path"], **request_kwargs(req)) as resp:
            body = bytearray()
            for chunk in resp.iter_bytes():
                body += chunk
                if len(body) > BODY_CAP:
                    break
            box["resp"] = record(resp, bytes(body))
    except BaseException as exc:  # noqa: BLE001 - a broken connection is data about the app
        box["resp"] = {"error": error_text(exc, 1500)}
    finally:
        done.set()
        try:
            os.write(WAKE_W, b"x")
        except BlockingIOError:
            pass


_JOBS: queue.SimpleQueue = queue.SimpleQueue()


def _fetcher() -> None:
    """The driver's one request thread: every request is sent from here, one at a time.

    It starts before the first app process exists, so the app's fence (which protects the
    threads alive when it is made: process_guard.harness_tasks) covers it; a thread started
    per request would get an id no fence knows, and the app could kill the driver through it.
    """
    while True:
        fetch(*_JOBS.get())


threading.Thread(target=_fetcher, daemon=True, name="fetch").start()


def send_one(client: httpx.Client, pid: int, req: dict) -> dict:
    """One request, timed on the app's clock; the answer with what the witness saw of it."""
    box: dict = {}
    done = threading.Event()
    mark = len(events.items)
    events.allow(EVENTS_PER_REQUEST)
    clock = Clock(pid)
    _JOBS.put((client, req, box, done))

    def finished() -> bool:
        if not done.is_set():
            return False
        pump()
        seen = events.items[mark:]
        calls = sum(e.get("ev") == "call" for e in seen)
        return sum(e.get("ev") == "end" for e in seen) >= calls or ended(pid)

    wait(finished, f"{req['method']} {req['path']}", REQUEST_TIMEOUT, clock)
    resp = box["resp"]
    seen = events.items[mark:]
    statuses = [e.get("status") for e in seen if e.get("ev") == "status"]
    resp["app_calls"] = sum(e.get("ev") == "call" for e in seen)
    resp["app_status"] = statuses[-1] if statuses else None
    return resp


def first_event(kinds: tuple[str, ...], since: int) -> dict | None:
    return next((e for e in events.items[since:] if e.get("ev") in kinds), None)


def serve_session(n: int, steps: list[dict], out: dict) -> bool:
    """One session in a fresh app process; False when the run cannot go on (the app does not import)."""
    sock, log = f"{RUN_DIR}/s{n}.sock", f"{RUN_DIR}/s{n}.log"
    sweep(KEEP)  # whatever an earlier session left running
    try:
        fresh_file(log)
        if os.path.lexists(sock):
            os.unlink(sock)
    except OSError as exc:  # e.g. an earlier app filled /tmp
        out["error"] = f"the app's run folder could not be prepared ({exc}): an earlier session's app left it unusable"
        return True
    pump()
    mark = len(events.items)
    if host.poll() is not None:
        out["error"] = "the process that starts the app was killed (by the app, in an earlier session)"
        return True
    os.kill(host.pid, signal.SIGCONT)  # an earlier app may have stopped it; that app is gone now
    n_replies = len(replies.items)
    events.allow(EVENTS_PER_SESSION)
    host_send({"op": "serve", "socket": sock, "log": log, "app": APP_PATH})
    forked = lambda: next((r["forked"] for r in replies.items[n_replies:] if "forked" in r), None)  # noqa: E731
    wait(lambda: forked() is not None or host.poll() is not None, "starting the app's process", None, None)
    pid = forked()
    if pid is None:
        out["error"] = "the process that starts the app ended before starting this session's app"
        return True

    wait(
        lambda: first_event(("imported", "import_error"), mark) is not None or ended(pid),
        "importing app.py",
        STARTUP_FACTOR * REQUEST_TIMEOUT,
        Clock(pid),
    )
    got = first_event(("imported", "import_error"), mark)
    if got is None or got["ev"] == "import_error":
        text = (
            str(got.get("error", ""))
            if got
            else (explain(f"the app's process ended while importing app.py ({how_it_ended(pid)})", log))
        )
        if n == 0:
            state["import_error"] = text
            return False
        out["error"] = "importing app.py again failed: " + text[-1500:]
        return True
    if n == 0:
        state["imported"], state["has_app"] = True, bool(got.get("has_app"))
        channel.note({"stage": "serving", "imported": True, "fenced": FENCED})
        if not state["has_app"]:
            return False

    wait(
        lambda: first_event(("ready", "stopped"), mark) is not None or ended(pid),
        "application startup (lifespan)",
        REQUEST_TIMEOUT,
        Clock(pid),
    )
    if first_event(("ready",), mark) is None:
        code = exit_code(pid)
        how = "" if code in (None, 0, 3) else f" and its process ended (exit code {code})"
        out["error"] = explain(f"the app's lifespan failed at startup{how}", log)
        return True

    client = httpx.Client(
        transport=httpx.HTTPTransport(uds=sock, verify=False),
        base_url="http://testserver",
        headers={"user-agent": "testclient"},
        follow_redirects=False,
        timeout=None,
    )
    try:
        for req in steps:
            resp = send_one(client, pid, req)
            out["responses"].append(resp)
            if ended(pid):
                why = f"the app's process ended ({how_it_ended(pid)}) while answering {req['method']} {req['path']}"
                out["error"] = explain(why, log)
                if "error" in resp:
                    resp["error"] = out["error"]
                return True
    finally:
        client.close()

    host_send({"op": "stop", "pid": pid})
    wait(
        lambda: first_event(("stopped",), mark) is not None or ended(pid),
        "application shutdown (lifespan)",
        REQUEST_TIMEOUT,
        Clock(pid),
    )
    stopped = first_event(("stopped",), mark)
    if stopped is None or stopped.get("shutdown_failed"):
        out["error"] = explain("the app's lifespan failed at shutdown", log)
    return True


def cross_check() -> list[str]:
    return [events.over] if events.over else []


def _cpu_split() -> dict:
    """CPU seconds of the driver, the host and the app processes the host has reaped."""
    out = {"driver": round(sum(os.times()[:2]), 3)}
    try:
        with open(f"/proc/{host.pid}/stat", "rb") as fh:
            f = fh.read().rsplit(b")", 1)[1].split()
        out["host"] = round((int(f[11]) + int(f[12])) / CLK_TCK, 3)
        out["apps"] = round((int(f[13]) + int(f[14])) / CLK_TCK, 3)
    except (OSError, ValueError, IndexError):
        pass
    return out


def finish() -> None:
    """Kill every app process and the host, then send the report and end."""
    sweep(KEEP)
    replies.pump()
    events.pump()
    state["cpu_seconds"] = _cpu_split()
    sweep(KEEP - {host.pid})
    replies.pump()
    events.pump()
    state["cross_check"] = cross_check()
    state["elapsed"] = round(_now() - _started, 3)
    state["app_active_seconds"] = round(_run["active"], 3)
    state["log_tail"] = grader_output_tail(2000)
    channel.send(state)


def run_sessions(sessions: list) -> bool:
    """Every session of one deliverable, into `state`; False when the events pipe was tampered with."""
    try:
        for n, steps in enumerate(sessions):
            out: dict = {"error": None, "responses": []}
            state["sessions"].append(out)
            if not serve_session(n, steps, out):
                break
    except Stalled as exc:
        state["stalled"] = exc.args[0]
    except Tampered:
        return False  # cross_check() reports it
    return True


def clear_leftovers(keep: set) -> bool:
    """Remove what a job's app left in /workspace and /tmp, but `keep`; False when something stays."""
    for top in ("/workspace", "/tmp"):
        try:
            names = os.listdir(top)
        except OSError:
            return False
        for name in names:
            path = os.path.join(top, name)
            if path in keep:
                continue
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                return False
    return True


def run_jobs(jobs: list) -> None:
    """Verification's batch (verify/batched.py, the project's own deliverables only): one job after another.

    Each job is one deliverable with its own app path, sessions and limits, and gets a report of its
    own, shaped as a single run's; its clock, deadline and backstop start afresh, and nothing of an
    earlier job survives: not its processes (serve_session sweeps before every session, and after
    each job), nor its files (everything in /workspace and /tmp but the later jobs' folders, this
    driver's programs and its run folder is removed after each job). The report budget is the
    run's, shared: a job past it shows `over_budget` and is graded again alone. The batch stops at
    the first tampering (the events pipe is closed then) and at leftovers it cannot remove.
    """
    global REQUEST_TIMEOUT, DEADLINE, BACKSTOP, APP_PATH, _started, state
    reports = []
    for job in jobs:
        REQUEST_TIMEOUT = float(job.get("request_timeout", 10))
        DEADLINE = float(job.get("deadline", 60))
        BACKSTOP = float(job.get("backstop", 12 * DEADLINE))
        APP_PATH = job["app_path"]
        _started, _run["active"] = _now(), 0.0
        state = {"stage": "done", "imported": False, "has_app": False, "import_error": None, "sessions": []}
        state.update(stalled=None, cross_check=[], phases=[])
        intact = run_sessions(job["sessions"])
        sweep(KEEP)
        later = {os.path.dirname(j["app_path"]) for j in jobs[len(reports) + 1 :]}
        intact = clear_leftovers(later | {RUN_DIR, HERE}) and intact
        state["cross_check"] = cross_check()
        state["elapsed"] = round(_now() - _started, 3)
        state["app_active_seconds"] = round(_run["active"], 3)
        reports.append(state)
        if not intact:
            break
    state = {"stage": "done", "jobs": reports, "stalled": None, "cross_check": [], "phases": []}


def main() -> None:
    channel.note({"stage": "importing", "fenced": FENCED})
    if "jobs" in request:
        run_jobs(request["jobs"])
    else:
        run_sessions(request.get("sessions", []))
    finish()


main()
