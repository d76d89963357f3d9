"""Showing a written report: serve it on loopback, or open it in the reader's browser.

The server binds 127.0.0.1 only and answers with the one report file (at `/` and at
its own name), nothing else: the run folder beside it (logs, metadata) is not exposed.
`--open` hands the file's URI to the `webbrowser` module; where no graphical session
exists (no DISPLAY or WAYLAND_DISPLAY on Linux), the default is to print the path and
how to serve it rather than start a text browser.
"""

from __future__ import annotations

import os
import sys
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

LOOPBACK = "127.0.0.1"


def make_server(report: Path, port: int = 0) -> ThreadingHTTPServer:
    """A server (not yet serving) that answers GET / with the report's bytes."""
    body = Path(report).read_bytes()
    paths = {"/", "/" + Path(report).name}

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server API
            if self.path.split("?", 1)[0] not in paths:
                self.send_error(404, "only the report is served here")
                return
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Content-Type-Options", "nosniff")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - quiet
            pass

    return ThreadingHTTPServer((LOOPBACK, port), Handler)


def serve(report: Path, port: int = 0) -> int:
    server = make_server(report, port)
    print(f"serving {report} at http://{LOOPBACK}:{server.server_address[1]}/ (Ctrl-C to stop)", flush=True)
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


def show(report: Path, mode: str | None, port: int = 0) -> int:
    """mode: "serve", "open", "none", or None (open where a display exists, else print how)."""
    if mode == "serve":
        return serve(report, port)
    if mode == "open" or (mode is None and has_display()):
        if webbrowser.open(Path(report).resolve().as_uri()):
            return 0
        print(f"no browser could be started: open {report} yourself, or use --serve", file=sys.stderr)
        return 1 if mode == "open" else 0
    if mode is None:
        print(f"open it in a browser, or serve it on {LOOPBACK}: websandbox view {report.parent} --serve")
    return 0
