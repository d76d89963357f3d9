"""The channel a grader program reports on, out of reach of the prints of the code it grades.

Call open_channel() first, before importing anything under test. It makes the process
undumpable (process_guard.py: no other process of the container can read its memory,
where the nonce is, or open its descriptors, where the report goes), reads one JSON
line from stdin (the request, with the host's nonce), keeps a private duplicate of
the original stdout for the report, and points fd 1 and 2 at a log file, so that a
print or a stray write from the code under test never lands on the report stream.
"""

from __future__ import annotations

import json
import os
import sys

from process_guard import undumpable

LOG_PATH = "/tmp/grader-output.log"

# Bound at import, before any code under test runs: patching json.dumps, os.write or
# os._exit later cannot alter or stop what the channel sends.
_dumps, _write, _exit = json.dumps, os.write, os._exit


class Channel:
    def __init__(self, fd: int, nonce: str) -> None:
        self._fd = fd
        self._nonce = nonce.encode()

    def note(self, payload: dict) -> None:
        """A framed frame that does not end the process; the host reads the last frame sent."""
        body = _dumps(payload, default=repr).encode()
        view = memoryview(b"\n" + self._nonce + b"\n" + body + b"\n" + self._nonce + b"\n")
        while view:
            view = view[_write(self._fd, view) :]

    def pinned_note(self):
        """`note` bound to this channel's descriptor and nonce as they are now, for a caller that must
        keep reporting whatever later happens to this object's attributes."""
        fd, nonce, dumps, write = self._fd, self._nonce, _dumps, _write

        def note(payload: dict) -> None:
            view = memoryview(b"\n" + nonce + b"\n" + dumps(payload, default=repr).encode() + b"\n" + nonce + b"\n")
            while view:
                view = view[write(fd, view) :]

        return note

    def send(self, report: dict, exit_code: int = 0) -> None:
        """Write the framed report and end the process at once (no atexit, no finalizers)."""
        self.note(report)
        _exit(exit_code)


def open_channel() -> tuple[Channel, dict]:
    undumpable()
    line = sys.stdin.buffer.readline()
    request = json.loads(line)
    nonce = str(request.pop("nonce"))
    private = os.dup(1)
    log = os.open(LOG_PATH, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    sys.stdout = open(1, "w", buffering=1, closefd=False)
    sys.stderr = open(2, "w", buffering=1, closefd=False)
    return Channel(private, nonce), request


def grader_output_tail(limit: int = 4000) -> str:
    """The end of what the code under test printed, for a report's diagnostics."""
    try:
        with open(LOG_PATH, "rb") as fh:
            fh.seek(0, os.SEEK_END)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")
    except OSError:
        return ""
