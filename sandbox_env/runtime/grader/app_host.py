"""The fastapi family's app host: a fork server whose children each serve app.py with uvicorn.

Started by http_driver.py (never by the submission) before the request arrives, it
imports FastAPI, Starlette, pydantic and uvicorn once, then waits for commands. For
each session of requests it forks a child that imports /workspace/app.py afresh and
serves it with uvicorn on a unix socket the driver names, lifespan on. The driver talks
to that socket with its own HTTP client from another process: nothing the app does in
its own process can change what the driver records.

Processes and what each may touch:
  driver (trusted, undumpable) ── commands ──► app host (trusted, undumpable)
                               ◄── replies ──      │ fork per session
                               ◄── events ─── child: app.py + uvicorn (untrusted)
The child closes the command and reply pipes at once, before app.py is imported, so
the app can neither order forks nor fake the host's replies. It keeps one write end, the
events pipe, on which its witness (the outermost ASGI layer, trusted code in an
untrusted process) writes what it saw the app do: a call, the status sent, the end of
the call. The driver treats these events as a cross-check only: it scores the bytes it
received over the socket, and a witness that disagrees with them means the app reached
into its own server (tampered). The app can write on that pipe too, so the driver reads
from it only what an honest witness owes (http_driver.Lines): more is tampering at once.
Before app.py is imported the child is fenced (process_guard.fence_signals): it may limit or
reschedule only itself, and signal its own processes (a Pool's workers, a subprocess), never
the driver, this host or anything above them. Its `__main__` is an empty module, as under an
interpreter with no script: multiprocessing's spawn and forkserver start methods re-run the
parent's main script in every worker, and this program is nothing for an app's workers to run
(they failed at its first import, and the Pool started new ones without end).

The witness also fills in what uvicorn does not give over a unix socket and the
TestClient always gave: scope["client"] = ("testclient", 50000) and scope["server"] =
("testserver", 80).

Commands (JSON lines on CMD_FD): {"op": "serve", "socket", "log", "app"} → reply
{"forked": pid}; {"op": "stop", "pid"} closes that child's stop pipe, which makes its
uvicorn shut down (lifespan shutdown included). Replies also carry {"exited": pid,
"code": n} when a child ends. Child events (EVENT_FD): imported / import_error, ready,
call / status / end per request, stopped (with startup_failed, shutdown_failed).

Usage: app_host.py CMD_FD REPLY_FD EVENT_FD
"""

from __future__ import annotations

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))

from process_guard import dumpable, fence_signals, undumpable  # noqa: E402

undumpable()

# Trusted imports, once, before any app exists; every child inherits them by fork.
import asyncio  # noqa: E402
import contextlib  # noqa: E402
import fcntl  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import select  # noqa: E402
import threading  # noqa: E402
import traceback  # noqa: E402
import types  # noqa: E402

# FastAPI, Starlette, pydantic, uvicorn, and what they import lazily on the first app, first schema or
# first request of a process (anyio's backend and streams, pydantic.v1, which FastAPI's compat layer
# imports when the first route is added: about half of a small app's import), which every session's
# child would otherwise pay again. Modules only: importing them starts no thread and builds no app,
# so the fork hands the child nothing but loaded code.
import anyio._backends._asyncio  # noqa: E402, F401
import anyio.streams.memory  # noqa: E402, F401
import anyio.streams.stapled  # noqa: E402, F401
import anyio.streams.tls  # noqa: E402, F401
import fastapi  # noqa: E402, F401
import fastapi.responses  # noqa: E402, F401
import fastapi.security  # noqa: E402, F401
import fastapi.sse  # noqa: E402, F401
import pydantic  # noqa: E402, F401
import pydantic._internal._dataclasses  # noqa: E402, F401
import pydantic.v1  # noqa: E402, F401
import python_multipart  # noqa: E402, F401
import starlette.middleware.base  # noqa: E402, F401
import uvicorn  # noqa: E402
import uvicorn.lifespan.on  # noqa: E402, F401
import uvicorn.loops.asyncio  # noqa: E402, F401
import uvicorn.protocols.http.h11_impl  # noqa: E402, F401

# From here on nothing is imported from this program's own folder, which sits in /tmp.
sys.path[:] = [p for p in sys.path if os.path.realpath(p or ".") != HERE]

MAX_EVENT = 3500  # below PIPE_BUF once framed, so one event is one atomic write
WORKSPACE = "/workspace"


def _emitter(fd: int):
    def emit(event: dict) -> None:
        line = json.dumps(event, default=repr)
        if len(line) > MAX_EVENT:
            event = {**event, "error": str(event.get("error", ""))[-(MAX_EVENT // 2) :]}
            line = json.dumps(event, default=repr)[:MAX_EVENT]
        try:
            os.write(fd, line.encode() + b"\n")
        except OSError:
            pass

    return emit


class Witness:
    """The outermost ASGI layer: notes each HTTP call into the app, the status sent and the call's end."""

    def __init__(self, app, emit) -> None:
        self.app = app
        self.emit = emit

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        scope = dict(scope)
        if not scope.get("client"):
            scope["client"] = ("testclient", 50000)
        server = scope.get("server")
        if not (isinstance(server, tuple) and len(server) == 2 and isinstance(server[1], int)):
            scope["server"] = ("testserver", 80)
        self.emit({"ev": "call"})

        async def noting_send(message):
            if message.get("type") == "http.response.start":
                self.emit({"ev": "status", "status": message.get("status")})
            await send(message)

        try:
            await self.app(scope, receive, noting_send)
        except BaseException:
            self.emit({"ev": "end", "raised": True})
            raise
        self.emit({"ev": "end", "raised": False})


POLL = 0.005  # seconds between the checks of a stopping server (uvicorn's own: 0.1)


class PromptServer(uvicorn.Server):
    """uvicorn's server, stopped as soon as it is told, its shutdown the same steps without uvicorn's naps.

    uvicorn (0.54) looks at `should_exit` every 0.1 s, then sleeps a fixed 0.1 s after
    asking connections to close, then polls them every 0.1 s: measured at 0.13-0.22 s of
    every session's "application shutdown", four to six sessions a grading. Here the stop
    wakes the loop at once (`stop()`, from the thread that waits on the stop pipe; a
    `should_exit` set any other way is still seen within 0.1 s), and the shutdown polls
    every POLL seconds. The steps and their order are uvicorn's: stop accepting, shut
    connections down, wait for connections and tasks (as long as they take, as uvicorn does
    with no graceful timeout), lifespan shutdown. It installs no signal handlers
    (`capture_signals`).
    """

    _loop: asyncio.AbstractEventLoop | None = None
    _woken: asyncio.Event | None = None

    @contextlib.contextmanager
    def capture_signals(self):
        """No handlers: SIGINT and SIGTERM keep Python's defaults in the app's process and its forks.

        The host stops this server through its stop pipe, never by a signal. uvicorn's handlers
        (SIGTERM sets should_exit and nothing more) would be inherited by every process the app
        forks: a multiprocessing.Pool worker that Pool.terminate() sends SIGTERM to would note
        it and go on waiting for work, and the pool's join, and the request, would hang.
        """
        yield

    def stop(self) -> None:
        self.should_exit = True
        loop, woken = self._loop, self._woken
        if loop is not None and woken is not None:
            try:
                loop.call_soon_threadsafe(woken.set)
            except RuntimeError:  # the loop has closed: the server is past its main loop
                pass

    async def main_loop(self) -> None:
        self._woken = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        while not await self.on_tick(counter):
            counter = (counter + 1) % 864000
            try:
                await asyncio.wait_for(self._woken.wait(), 0.1)
            except TimeoutError:
                pass

    async def shutdown(self, sockets=None) -> None:
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for connection in list(self.server_state.connections):
            connection.shutdown()
        await asyncio.sleep(POLL)
        await self._wait_tasks_to_complete()
        if not self.force_exit:
            await self.lifespan.shutdown()

    async def _wait_tasks_to_complete(self) -> None:
        while self.server_state.connections and not self.force_exit:
            await asyncio.sleep(POLL)
        while self.server_state.tasks and not self.force_exit:
            await asyncio.sleep(POLL)
        for server in self.servers:
            await server.wait_closed()


def _import_app(path: str):
    sys.modules.pop("app", None)
    spec = importlib.util.spec_from_file_location("app", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["app"] = module
    spec.loader.exec_module(module)
    return module


def serve_child(cmd: dict, event_fd: int, stop_fd: int) -> None:
    """In the forked child: keep only the events and stop pipes, import app.py, serve it until stopped."""
    os.setsid()
    try:
        fence_signals()  # before any of the app's code: no signal of its processes reaches the harness (process_guard.py)
    except OSError as exc:  # the driver promised the fence (its notes say "fenced"): never serve without it
        os.write(2, f"app host: cannot fence the app's signals: {exc}\n".encode())
        os._exit(70)
    event_fd = fcntl.fcntl(event_fd, fcntl.F_DUPFD_CLOEXEC, 200)
    stop_fd = fcntl.fcntl(stop_fd, fcntl.F_DUPFD_CLOEXEC, 201)
    log = os.open(cmd["log"], os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.closerange(3, 200)  # the command and reply pipes, the host's other stop pipes, the log's spare fd
    dumpable()
    emit = _emitter(event_fd)
    os.chdir(WORKSPACE)
    sys.path.insert(0, WORKSPACE)
    sys.argv = [cmd["app"]]
    sys.modules["__main__"] = types.ModuleType("__main__")  # no script for spawned workers to re-run
    try:
        module = _import_app(cmd["app"])
    except BaseException:  # noqa: BLE001 - SyntaxError, SystemExit, anything: the app's failure is data
        emit({"ev": "import_error", "error": traceback.format_exc()[-3000:]})
        os._exit(1)
    has_app = hasattr(module, "app")
    emit({"ev": "imported", "has_app": has_app})
    if not has_app:
        os._exit(0)
    config = uvicorn.Config(
        Witness(module.app, emit),
        uds=cmd["socket"],
        lifespan="on",
        interface="asgi3",
        http="h11",
        ws="none",
        loop="asyncio",
        log_level="warning",
        access_log=False,
        server_header=False,
        date_header=False,
        proxy_headers=False,
        timeout_keep_alive=3600,
    )
    server = PromptServer(config)
    real_startup = server.startup

    async def startup(sockets=None):
        await real_startup(sockets=sockets)
        if server.started:
            emit({"ev": "ready"})

    server.startup = startup

    def stop_when_told() -> None:
        try:
            os.read(stop_fd, 1)  # a byte, or end of file when the host is gone: either way, stop
        except OSError:
            pass
        server.stop()

    threading.Thread(target=stop_when_told, daemon=True).start()
    try:
        server.run()
    except SystemExit:
        pass  # uvicorn's exit after a failed startup: it has logged the app's own error already
    except BaseException:  # noqa: BLE001 - the app's own crash
        traceback.print_exc()
    lifespan = getattr(server, "lifespan", None)
    emit(
        {
            "ev": "stopped",
            "startup_failed": not server.started,
            "shutdown_failed": bool(
                lifespan is not None and server.started and (lifespan.shutdown_failed or lifespan.error_occurred)
            ),
        }
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


class Host:
    def __init__(self, cmd_fd: int, reply_fd: int, event_fd: int) -> None:
        self.cmd_fd, self.reply_fd, self.event_fd = cmd_fd, reply_fd, event_fd
        self.stops: dict[int, int] = {}

    def reply(self, message: dict) -> None:
        os.write(self.reply_fd, json.dumps(message).encode() + b"\n")

    def serve(self, cmd: dict) -> None:
        stop_r, stop_w = os.pipe()
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            try:
                os.close(stop_w)
                serve_child(cmd, self.event_fd, stop_r)
            finally:
                os._exit(70)
        os.close(stop_r)
        self.stops[pid] = stop_w
        self.reply({"forked": pid})

    def stop(self, pid: int) -> None:
        fd = self.stops.pop(pid, None)
        if fd is not None:
            os.close(fd)

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.stop(pid)
            self.reply({"exited": pid, "code": os.waitstatus_to_exitcode(status)})

    def run(self) -> None:
        buf = b""
        while True:
            ready, _, _ = select.select([self.cmd_fd], [], [], 0.05)
            self.reap()
            if not ready:
                continue
            chunk = os.read(self.cmd_fd, 65536)
            if not chunk:
                os._exit(0)  # the driver is gone
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                cmd = json.loads(line)
                if cmd["op"] == "serve":
                    self.serve(cmd)
                elif cmd["op"] == "stop":
                    self.stop(int(cmd["pid"]))


if __name__ == "__main__":
    Host(*(int(a) for a in sys.argv[1:4])).run()
