"""HTTP driver of the fastapi family: sends the host's requests to /workspace/app.py, reports raw responses.

The request on stdin (read by open_channel before the app is imported) holds
`sessions`: lists of requests. Each session gets a freshly imported app.py and its own
`TestClient` used as a context manager (so lifespan runs), with server exceptions turned
into 500 responses and redirects not followed. The driver knows nothing of what the
answers should be: expectations stay on the host.

Progress frames. Before importing the app and once it is imported, the driver writes a
framed note ({"stage": ...}) on the private report fd, so that a host which finds no
final report can still tell "the app ended the process" (the submission's fault) from
"the driver never got as far as the app" (a harness fault). The final report carries
"stage": "done".

Limits. A watchdog thread ends the run with a report marked `stalled` when one request
takes longer than `request_timeout` or the whole run passes `deadline` seconds, so a
hanging endpoint gives a readable reason instead of a killed container.

Integrity. The test client's and httpx's request methods are noted before the app is
imported and compared at the end; an app that replaced them is reported. The app is also
wrapped in a witness (an outer ASGI layer of the driver's own) that records, for every
request, whether the app was called and the status it sent: each response carries
`app_calls` and `app_status`, so the host can tell a response the app produced from one
made up in the client.
"""

from __future__ import annotations

import base64
import importlib.util
import json
import os
import sys
import threading
import time
import traceback

# Trusted libraries first: a driver started ahead of time imports them while it waits.
import fastapi.testclient  # noqa: E402, F401
from report_channel import grader_output_tail, open_channel

channel, request = open_channel()
_now = time.monotonic  # the driver's own references: an app that patches time does not blind the watchdog
_sleep = time.sleep
_started = _now()
_lock = threading.Lock()
_final = threading.Lock()
# What the report path uses, saved before the app can patch it; restored before the report goes out.
_write, _exit, _dumps, _loads = os.write, os._exit, json.dumps, json.loads
BODY_CAP = 256 * 1024
REQUEST_TIMEOUT = float(request.get("request_timeout", 10))


def note(payload: dict) -> None:
    """A framed progress note on the private fd; unlike channel.send it does not end the process."""
    channel.note(payload)


note({"stage": "started"})

sys.path.insert(1, "/workspace")
import httpx  # noqa: E402  (trusted imports, before the app)
import starlette.testclient  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

_WATCHED = {
    "TestClient.request": (TestClient, "request"),
    "TestClient.__enter__": (TestClient, "__enter__"),
    "httpx.Client.request": (httpx.Client, "request"),
    "httpx.Client.send": (httpx.Client, "send"),
    "starlette.testclient._TestClientTransport.handle_request": (
        starlette.testclient._TestClientTransport,
        "handle_request",
    ),
}
_ORIGINALS = {name: owner.__dict__.get(attr) for name, (owner, attr) in _WATCHED.items()}
_TestClient = TestClient
_send = channel.send

state: dict = {
    "stage": "done",
    "imported": False,
    "has_app": False,
    "import_error": None,
    "sessions": [],
    "stalled": None,
    "integrity": [],
}
_current: dict = {"since": None, "what": None, "limit": None}  # what runs now, since when, and its own limit


class Witness:
    """The outermost ASGI layer: notes each HTTP call into the app and the status the app sent."""

    def __init__(self, app) -> None:
        self.app = app
        self.seen: list[dict] = []

    async def __call__(self, scope, receive, send):
        if scope.get("type") != "http":
            return await self.app(scope, receive, send)
        entry = {"status": None}
        self.seen.append(entry)

        async def noting_send(message):
            if message.get("type") == "http.response.start":
                entry["status"] = message.get("status")
            await send(message)

        return await self.app(scope, receive, noting_send)


def integrity_problems() -> list[str]:
    return [name for name, (owner, attr) in _WATCHED.items() if owner.__dict__.get(attr) is not _ORIGINALS[name]]


def finish() -> None:
    """Send the report and end the process; a second caller (main or watchdog) waits for that exit."""
    _final.acquire()
    report = None
    for _ in range(5):  # the main thread may still be writing into a session while the watchdog reports
        try:
            with _lock:
                state["integrity"] = integrity_problems()
                state["elapsed"] = round(_now() - _started, 3)
                state["log_tail"] = grader_output_tail(2000)
                report = _loads(_dumps(state, default=repr))
            break
        except RuntimeError:
            _sleep(0.01)
    if report is None:
        report = {"stage": "done", "imported": state["imported"], "has_app": state["has_app"],
                  "stalled": state["stalled"] or {"what": "reporting", "limit": 0, "kind": "run"}}  # fmt: skip
    os.write, os._exit, json.dumps, json.loads = _write, _exit, _dumps, _loads
    _send(report)


def watchdog(deadline: float) -> None:
    while True:
        _sleep(0.05)
        now = _now()
        since, limit = _current["since"], _current["limit"]
        late = since is not None and limit is not None and now - since > limit
        if late or now - _started > deadline:
            state["stalled"] = {
                "what": _current["what"] or "the run",
                "limit": limit if late else deadline,
                "kind": "step" if late else "run",
            }
            finish()


def doing(what: str | None, limit: float | None = None) -> None:
    _current.update(since=None if what is None else _now(), what=what, limit=limit)


def load_app(path: str):
    """Import app.py afresh (a new module object each time) and return it."""
    sys.modules.pop("app", None)
    spec = importlib.util.spec_from_file_location("app", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["app"] = module
    spec.loader.exec_module(module)
    return module


def error_text(exc: BaseException, limit: int = 3000) -> str:
    text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return text[-limit:]


def record(resp) -> dict:
    body = resp.content[:BODY_CAP]
    out = {
        "status": resp.status_code,
        "headers": [[k.decode("latin-1").lower(), v.decode("latin-1")] for k, v in resp.headers.raw],
        "truncated": len(resp.content) > BODY_CAP,
    }
    try:
        out["text"] = body.decode("utf-8")
    except UnicodeDecodeError:
        out["b64"] = base64.b64encode(body).decode()
    return out


def send_one(client, witness: Witness, req: dict) -> dict:
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
    before = len(witness.seen)
    out = record(client.request(req["method"], req["path"], **kw))
    calls = witness.seen[before:]
    out["app_calls"] = len(calls)
    out["app_status"] = calls[-1]["status"] if calls else None
    return out


def run_session(steps: list[dict], get_app, out: dict) -> None:
    """Serve one session's requests with its own TestClient; fill `out` as responses come."""
    try:
        doing("importing app.py")  # bounded by the run's deadline only
        try:
            app = get_app()
        except BaseException as exc:  # noqa: BLE001 - the app's failure is data
            out["error"] = "importing app.py again failed: " + error_text(exc, 1500)
            return
        doing("application startup (lifespan)", REQUEST_TIMEOUT)
        witness = Witness(app)
        with _TestClient(witness, raise_server_exceptions=False, follow_redirects=False) as client:
            for i, req in enumerate(steps):
                doing(f"{req['method']} {req['path']}", REQUEST_TIMEOUT)
                try:
                    resp = send_one(client, witness, req)
                except BaseException as exc:  # noqa: BLE001
                    resp = {"error": error_text(exc, 1500)}
                with _lock:
                    out["responses"].append(resp)
                if i == len(steps) - 1:
                    doing("application shutdown (lifespan)", REQUEST_TIMEOUT)
    except BaseException as exc:  # noqa: BLE001 - a lifespan failure fails this session
        out["error"] = "the app's lifespan failed: " + error_text(exc, 1500)
    finally:
        doing(None)


def main() -> None:
    app_path = request.get("app_path", "/workspace/app.py")
    threading.Thread(target=watchdog, args=(float(request.get("deadline", 60)),), daemon=True).start()
    note({"stage": "importing"})
    doing("importing app.py")
    try:
        module = load_app(app_path)
    except BaseException as exc:  # noqa: BLE001 - SyntaxError, SystemExit, anything
        state["import_error"] = error_text(exc)
        doing(None)
        finish()
    doing(None)
    state["imported"] = True
    state["has_app"] = hasattr(module, "app")
    note({"stage": "serving", "imported": True})
    if not state["has_app"]:
        finish()
    for n, steps in enumerate(request.get("sessions", [])):
        out: dict = {"error": None, "responses": []}
        with _lock:
            state["sessions"].append(out)
        # the module imported above serves the first session; every later one gets a fresh import
        get_app = (lambda: module.app) if n == 0 else (lambda: load_app(app_path).app)
        run_session(steps, get_app, out)
    finish()


main()
