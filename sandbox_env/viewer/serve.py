"""Showing runs: a loopback server that follows them (`--serve`), or a written report opened in the browser.

`websandbox view --serve [RUN]` starts `make_server(Site(...))`. It answers:
- `/`: the run's page (RUN given), else the runs index;
- `/run.json?since=VERSION`: the run's data, read again from disk when its files changed
  (runs.signature: size and time of results.jsonl / traces.jsonl and of what the run says
  about itself), 204 when the page already holds that version;
- `/runs` and `/runs.json?since=VERSION`: the runs index (index.py) of every run under the
  usual outputs folders;
- `/run/<id>/` and `/run/<id>/run.json`: any run of that index, by its id (runs.run_id).
The page polls its JSON and re-renders (viewer.js), so a run in progress is shown as it grows.

Threat model: the page shows the model's text, and anything on this machine (another user,
a web page in the reader's browser) can send requests to a loopback port. So:
- the server binds 127.0.0.1 only and answers GET for those routes and nothing else: no
  path from a request reaches the disk (a run is named by the hash of a path the server
  found itself), so neither the run folders' other files nor anything beside them is served;
- a request whose Host is not this server's own address (127.0.0.1:PORT or localhost:PORT)
  is refused, so a page that rebinds a DNS name to 127.0.0.1 cannot read the runs;
- no response allows another origin to read it (no CORS headers), and the pages carry the
  report's CSP plus `connect-src 'self'` (render.py): their own script may read this
  server's JSON, nothing may load or send anything else.

Where no graphical session exists (no DISPLAY or WAYLAND_DISPLAY on Linux), showing a written
report prints the path and how to serve it rather than starting a text browser.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import threading
import webbrowser
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from sandbox_env.viewer.index import Summaries
from sandbox_env.viewer.load import load_run
from sandbox_env.viewer.record import Run
from sandbox_env.viewer.render import embed_json, page_data, render_html, render_index
from sandbox_env.viewer.runs import find_runs, run_id, signature

LOOPBACK = "127.0.0.1"
EVERY_MS = 2000  # how often a run's page asks for fresh data
INDEX_EVERY_MS = 5000  # and the runs index


@dataclass
class Answer:
    status: int
    body: bytes = b""
    content_type: str = "text/plain; charset=utf-8"


def _json(version: str, data: Any) -> Answer:
    return Answer(200, embed_json({"version": version, "data": data}).encode(), "application/json")


def _text(status: int, text: str) -> Answer:
    return Answer(status, text.encode())


def _html(text: str) -> Answer:
    return Answer(200, text.encode(), "text/html; charset=utf-8")


class LiveRun:
    """One run as the server follows it: read again only when its files changed since the last read."""

    def __init__(self, path: Path, prefix: str, every_ms: int, base: Run | None = None) -> None:
        self.path, self.prefix, self.every_ms, self.base = Path(path), prefix, every_ms, base
        self._lock = threading.Lock()
        self._read: tuple[str, Run] | None = None

    def live(self, version: str) -> dict[str, Any]:
        """What the page needs to follow the run (viewer.js `follow`)."""
        return {"url": self.prefix + "run.json", "version": version, "every": self.every_ms, "index": "/runs"}

    def read(self) -> tuple[str, Run]:
        """(version, run): the version is the signature taken before reading, so a write during the
        read makes the next poll read again rather than be missed."""
        with self._lock:
            version = signature(self.path)
            if self._read is None or self._read[0] != version:
                self._read = (version, load_run(self.path))
            return self._read

    def page(self) -> Answer:
        version, run = self.read()
        return _html(render_html(run, self.base, self.live(version)))

    def data(self, since: str | None) -> Answer:
        if since is not None and since == signature(self.path):
            return Answer(204)
        version, run = self.read()
        return _json(version, page_data(run, self.base, self.live(version)))


class Site:
    """What the server answers, by path (see the module's docstring); `run` is the run shown at `/`, if any."""

    def __init__(
        self,
        roots: list[Path],
        run: Path | None = None,
        base: Run | None = None,
        every_ms: int = EVERY_MS,
        index_every_ms: int = INDEX_EVERY_MS,
    ) -> None:
        self.roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
        self.every_ms, self.index_every_ms = every_ms, index_every_ms
        self.summaries = Summaries(self.roots)
        self.main = LiveRun(run, "/", every_ms, base) if run is not None else None
        self._runs: dict[str, LiveRun] = {}
        self._lock = threading.Lock()

    def answer(self, target: str) -> Answer:
        url = urlsplit(target)
        since = parse_qs(url.query).get("since", [None])[0]
        path = url.path
        if path == "/":
            return self.main.page() if self.main else self.index_page()
        if path == "/run.json":
            return self.main.data(since) if self.main else _text(404, "no run is shown at /: open /runs for the list")
        if path == "/runs":
            return self.index_page()
        if path == "/runs.json":
            return self.index_data(since)
        parts = path.split("/")  # "/run/<id>/", "/run/<id>/run.json"
        if len(parts) in (3, 4) and parts[1] == "run" and (len(parts) == 3 or parts[3] in ("", "run.json")):
            run = self.run(parts[2])
            if run is None:
                return _text(404, "no such run here (it may have been removed): open /runs for the list")
            return run.data(since) if len(parts) == 4 and parts[3] == "run.json" else run.page()
        return _text(404, "not served here: this server answers /, /runs and the runs' pages only")

    def run(self, rid: str) -> LiveRun | None:
        """A run of the index by its id; only runs the server found itself."""
        with self._lock:
            if rid not in self._runs:
                found = [self.main.path] if self.main else []
                path = next((p for p in [*found, *find_runs(self.roots)] if run_id(p) == rid), None)
                if path is None:
                    return None
                self._runs[rid] = LiveRun(path, f"/run/{rid}/", self.every_ms)
            return self._runs[rid]

    def index_lines(self) -> tuple[str, list[dict[str, Any]]]:
        lines = [line | {"url": f"/run/{line['id']}/"} for line in self.summaries.runs()]
        version = hashlib.sha1(json.dumps(lines, sort_keys=True, default=str).encode()).hexdigest()[:16]
        return version, lines

    def _index_live(self, version: str) -> dict[str, Any]:
        return {"url": "/runs.json", "version": version, "every": self.index_every_ms}

    def index_page(self) -> Answer:
        version, lines = self.index_lines()
        return _html(render_index(lines, self.roots_shown(), self._index_live(version)))

    def index_data(self, since: str | None) -> Answer:
        version, lines = self.index_lines()
        if since == version:
            return Answer(204)
        return _json(version, {"runs": lines, "roots": self.roots_shown(), "live": None})

    def roots_shown(self) -> list[str]:
        """The folders searched that exist (all of them when none does, so the reader sees where to save)."""
        return [str(r) for r in ([r for r in self.roots if r.is_dir()] or self.roots)]


def make_server(site: Site, port: int = 0) -> ThreadingHTTPServer:
    """A server (not yet serving) on 127.0.0.1 that answers GET with `site`."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            own = {f"{LOOPBACK}:{self.server.server_address[1]}", f"localhost:{self.server.server_address[1]}"}
            if self.headers.get("Host") not in own:
                self._send(_text(403, "only requests to this server's own loopback address are answered"))
                return
            try:
                answer = site.answer(self.path)
            except (OSError, ValueError) as exc:  # a run that went away or can no longer be read
                answer = _text(503, f"could not read the run: {exc}")
            self._send(answer)

        def _send(self, answer: Answer) -> None:
            self.send_response(answer.status)
            if answer.status != 204:
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.send_header("Referrer-Policy", "no-referrer")
            self.end_headers()
            if answer.status != 204:
                self.wfile.write(answer.body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            pass

    return ThreadingHTTPServer((LOOPBACK, port), Handler)


def serve(site: Site, port: int = 0) -> int:
    server = make_server(site, port)
    address = f"http://{LOOPBACK}:{server.server_address[1]}"
    if site.main is not None:
        print(f"following {site.main.path} at {address}/ (the page updates as results arrive); every run: {address}/runs")
    else:
        version, lines = site.index_lines()
        newest = f"; the newest: {address}{lines[0]['url']}" if lines else ""
        print(f"{len(lines)} run(s) at {address}/{newest}")
    print("Ctrl-C to stop", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def has_display() -> bool:
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def show(report: Path, mode: str | None, run: Path | None = None) -> int:
    """A written report of `run`: mode "open", "none", or None (open where a display exists, else print how)."""
    if mode == "open" or (mode is None and has_display()):
        if webbrowser.open(Path(report).resolve().as_uri()):
            return 0
        print(f"no browser could be started: open {report} yourself, or use --serve", file=sys.stderr)
        return 1 if mode == "open" else 0
    if mode is None:
        print(f"open it in a browser, or follow the run on {LOOPBACK}: websandbox view {run or report.parent} --serve")
    return 0
