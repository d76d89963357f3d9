"""A kept-open attach stream to the in-container agent: one stream for the sandbox's life.

The Docker engine multiplexes a non-tty stream's stdout and stderr into frames with an
8-byte header; stdin is raw. Requests are JSON lines; each carries an id drawn from
`secrets`, and the agent's reply and its heartbeats carry it back.

What the host trusts, and what bounds it. Only the agent (root, out of the sandboxed
code's reach: see docker/hardening.py) writes to this stream. Even so, anything on it that is
not a well-formed line with the current request's id is dropped and counted
(`dropped_lines`), never taken as a reply. Host memory per sandbox is bounded by
`STREAM_BOUND` (16.3 MiB): one line of at most `LINE_MAX` (16 MiB; the agent keeps its
replies below it), one received chunk (256 KiB), and a ring of the last 64 KiB of the
agent's stderr. Frames are consumed as they arrive, never held whole, whatever size
their header claims. A longer line breaks the channel with a message saying so.

Deadlines. While a request runs the agent sends a heartbeat line every second. A call
fails with "the sandbox agent stopped answering" when nothing arrives for
`SILENCE_LIMIT` seconds (a stopped, frozen or starved agent), and with "did not finish"
at the call's own deadline. Either way, and when the stream breaks, the channel is
marked broken: later calls fail at once with the same reason, and the stream is not
reopened (the agent exits when its stdin closes, so a dead host takes its agents with
it). Silence is only judged once the agent has answered once: its start may be slow on
a loaded machine, and the first call's own deadline covers it.
"""

from __future__ import annotations

import json
import logging
import secrets
import socket
import struct
import threading
import time
from typing import Any

import docker

from sandbox_env.constants import AGENT_STDERR_TAIL
from sandbox_env.text import valid_json_text

LINE_MAX = 16 << 20
RECV_CHUNK = 256 << 10
STDERR_RING = 64 << 10
STREAM_BOUND = LINE_MAX + RECV_CHUNK + STDERR_RING
SILENCE_LIMIT = 5.0

logger = logging.getLogger("websandbox.channel")


class ChannelError(RuntimeError):
    """The agent channel broke: the stream failed, the agent stopped answering, or it broke the protocol."""


class _Reply(Exception):
    """Internal: the reply to the current request was found."""

    def __init__(self, reply: dict[str, Any]) -> None:
        self.reply = reply


class AgentChannel:
    """Speaks to the agent that runs as the container's main process, over an attach stream."""

    def __init__(self, api: docker.APIClient, container_id: str) -> None:
        self._api = api
        self._cid = container_id
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._header = bytearray()  # the current frame's header while incomplete
        self._kind = 0  # stream of the current frame: 1 stdout, 2 stderr
        self._left = 0  # payload bytes of the current frame not yet received
        self._lines = bytearray()  # stdout payload not yet split into lines (at most LINE_MAX)
        self._stderr = bytearray()  # the last STDERR_RING bytes of the agent's stderr
        self._broken: str | None = None
        self._heard = False  # the agent has answered at least once
        self.dropped_lines = 0
        self.dropped_bytes = 0

    @property
    def broken(self) -> str | None:
        """Why the channel can no longer be used, or None."""
        return self._broken

    def open(self) -> None:
        if self._broken is not None:
            raise ChannelError(self._broken)
        raw = self._api.attach_socket(self._cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        sock = getattr(raw, "_sock", raw)
        sock.settimeout(None)
        self._sock = sock

    def close(self, reason: str = "the sandbox was deleted") -> None:
        if self._broken is None:
            self._broken = reason
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def stderr_tail(self, n: int = AGENT_STDERR_TAIL) -> str:
        return bytes(self._stderr[-n:]).decode("utf-8", "replace").strip()

    # -- the stream -------------------------------------------------------------
    def _take(self, chunk: bytes, rid: str) -> None:
        """Demultiplex one received chunk; raises _Reply when the current request's reply is complete."""
        view = memoryview(chunk)
        while view:
            if self._left == 0:
                need = 8 - len(self._header)
                self._header += view[:need]
                view = view[need:]
                if len(self._header) < 8:
                    return
                self._kind, self._left = self._header[0], struct.unpack(">I", self._header[4:8])[0]
                self._header.clear()
                if self._kind not in (1, 2):
                    raise ChannelError(f"the stream to the sandbox agent broke: a frame of unknown kind {self._kind}")
                continue
            part = view[: self._left]
            view = view[len(part) :]
            self._left -= len(part)
            if self._kind == 2:
                self._stderr += part
                del self._stderr[:-STDERR_RING]
            else:
                self._lines += part
                self._split_lines(rid)

    def _split_lines(self, rid: str) -> None:
        while True:
            nl = self._lines.find(b"\n")
            if nl < 0:
                if len(self._lines) > LINE_MAX:
                    raise ChannelError(f"the sandbox agent broke the protocol: more than {LINE_MAX >> 20} MiB without a line end")
                return
            line = bytes(self._lines[:nl])
            del self._lines[: nl + 1]
            if len(line) > LINE_MAX:
                raise ChannelError(f"the sandbox agent broke the protocol: a line over {LINE_MAX >> 20} MiB")
            self._line(line, rid)

    def _line(self, line: bytes, rid: str) -> None:
        if not line.strip():
            return
        try:
            msg = json.loads(line)
        except (ValueError, RecursionError):
            msg = None
        if not isinstance(msg, dict) or msg.get("id") != rid:
            self.dropped_lines += 1
            self.dropped_bytes += len(line) + 1
            logger.warning("dropped a line that is not a reply to the current request (%d bytes)", len(line))
            return
        if "hb" in msg:
            return
        raise _Reply(valid_json_text(msg))

    def _wait_reply(self, rid: str, timeout: float) -> dict[str, Any]:
        assert self._sock is not None
        deadline = time.monotonic() + timeout
        last_heard = time.monotonic()
        while True:
            now = time.monotonic()
            limit = deadline
            if self._heard:
                limit = min(limit, last_heard + SILENCE_LIMIT)
            if now >= limit:
                if now >= deadline:
                    raise ChannelError(f"the sandbox agent did not finish the call within {timeout:g}s")
                raise ChannelError(
                    f"the sandbox agent stopped answering: nothing for {SILENCE_LIMIT:g}s during a call "
                    "(it sends a heartbeat every second while it works; it was stopped, frozen or starved)"
                )
            self._sock.settimeout(limit - now)
            try:
                chunk = self._sock.recv(RECV_CHUNK)
            except TimeoutError:
                continue
            if not chunk:
                tail = self.stderr_tail()
                raise ChannelError(
                    "the stream to the sandbox agent broke: it closed (the agent exited or its container stopped)"
                    + (f"; its last words: {tail}" if tail else "")
                )
            last_heard = time.monotonic()
            try:
                self._take(chunk, rid)
            except _Reply as found:
                self._heard = True
                return found.reply

    def call(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait for its reply; blocking, so run it in a worker thread."""
        with self._lock:
            if self._broken is not None:
                raise ChannelError(f"{self._broken} (earlier in this sandbox, which cannot be used any more)")
            if self._sock is None:
                self.open()
            rid = secrets.token_hex(16)
            data = json.dumps({**request, "id": rid}).encode() + b"\n"
            try:
                assert self._sock is not None
                self._sock.settimeout(timeout)
                self._sock.sendall(data)
                return self._wait_reply(rid, timeout)
            except ChannelError as exc:
                self.close(str(exc))
                raise
            except OSError as exc:
                reason = f"the stream to the sandbox agent broke: {exc}"
                self.close(reason)
                raise ChannelError(reason) from exc
