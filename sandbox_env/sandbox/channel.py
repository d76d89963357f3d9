"""The transport-neutral half of the agent channel: request ids, heartbeats, silence, bounds.

A backend reaches its in-sandbox agent over some byte stream (Docker: a kept-open attach
stream, docker/channel.py). Whatever carries the bytes, the protocol and what the host
trusts on it are the same, and live here; a transport supplies only how to connect, send,
receive and hang up, and how its received bytes become the agent's stdout.

Requests are JSON lines; each carries an id drawn from `secrets`, and the agent's reply and
its heartbeats carry it back. Only the agent (root, out of the sandboxed code's reach) writes
to its stdout. Even so, anything that is not a well-formed line with the current request's
id is dropped and counted (`dropped_lines`), never taken as a reply. One line holds at most
`LINE_MAX` bytes (16 MiB; the agent keeps its replies below it): a longer one breaks the
channel with a message saying so, so host memory per sandbox stays bounded whatever the
stream carries.

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
import threading
import time
from typing import Any

from sandbox_env.text import valid_json_text

LINE_MAX = 16 << 20
SILENCE_LIMIT = 5.0

logger = logging.getLogger("websandbox.channel")


class ChannelError(RuntimeError):
    """The agent channel broke: the stream failed, the agent stopped answering, or it broke the protocol."""


class AgentProtocol:
    """One request at a time to an in-sandbox agent, over a transport a subclass provides.

    A transport implements `_connect`, `_connected`, `_send`, `_receive` and `_hang_up`, and
    overrides `_take` when its bytes are not the agent's stdout as they come (Docker frames).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._parts: list[bytes] = []  # the unfinished line, as received (at most LINE_MAX bytes in all)
        self._held = 0  # bytes in self._parts
        self._found: dict[str, Any] | None = None  # the current request's reply, once its line is complete
        self._broken: str | None = None
        self._heard = False  # the agent has answered at least once
        self.dropped_lines = 0
        self.dropped_bytes = 0

    # -- the transport ----------------------------------------------------------------
    def _connect(self) -> None:
        raise NotImplementedError

    def _connected(self) -> bool:
        raise NotImplementedError

    def _send(self, data: bytes, timeout: float) -> None:
        raise NotImplementedError

    def _receive(self, timeout: float) -> bytes:
        """Bytes that arrived within `timeout` (TimeoutError when none did; b"" when the stream closed)."""
        raise NotImplementedError

    def _hang_up(self) -> None:
        raise NotImplementedError

    def _closed_reason(self) -> str:
        return "the stream to the sandbox agent broke: it closed (the agent exited or its container stopped)"

    def _take(self, chunk: bytes, rid: str) -> None:
        """Consume received bytes whole; the current request's reply, once complete, is kept in `_found`."""
        self._stdout(chunk, rid)

    # -- the protocol -------------------------------------------------------------------
    @property
    def broken(self) -> str | None:
        """Why the channel can no longer be used, or None."""
        return self._broken

    def open(self) -> None:
        if self._broken is not None:
            raise ChannelError(self._broken)
        self._connect()

    def close(self, reason: str = "the sandbox was deleted") -> None:
        if self._broken is None:
            self._broken = reason
        self._hang_up()

    def _stdout(self, part: bytes | memoryview, rid: str) -> None:
        """Split the agent's stdout into lines; an unfinished line is held as its parts.

        Parts, not one growing buffer: a buffer that grows by reallocation may hold its old and
        new copies at once, so a flood would cost up to twice the bound before it is refused.
        """
        data, start = bytes(part), 0
        while (nl := data.find(b"\n", start)) >= 0:
            line = data[start:nl]
            if self._parts:
                line = b"".join([*self._parts, line])
                self._parts, self._held = [], 0
            start = nl + 1
            if len(line) > LINE_MAX:
                raise ChannelError(f"the sandbox agent broke the protocol: a line over {LINE_MAX >> 20} MiB")
            self._line(line, rid)
        if start < len(data):
            self._held += len(data) - start
            if self._held > LINE_MAX:
                raise ChannelError(f"the sandbox agent broke the protocol: more than {LINE_MAX >> 20} MiB without a line end")
            self._parts.append(data[start:] if start else data)

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
        if "hb" in msg or self._found is not None:
            return
        self._found = valid_json_text(msg)

    def _wait_reply(self, rid: str, wait: float) -> dict[str, Any]:
        deadline = time.monotonic() + wait
        last_heard = time.monotonic()
        while True:
            now = time.monotonic()
            limit = deadline
            if self._heard:
                limit = min(limit, last_heard + SILENCE_LIMIT)
            if now >= limit:
                if now >= deadline:
                    raise ChannelError(f"the sandbox agent did not finish the call within {wait:g}s")
                raise ChannelError(
                    f"the sandbox agent stopped answering: nothing for {SILENCE_LIMIT:g}s during a call "
                    "(it sends a heartbeat every second while it works; it was stopped, frozen or starved)"
                )
            try:
                chunk = self._receive(limit - now)
            except TimeoutError:
                continue
            if not chunk:
                raise ChannelError(self._closed_reason())
            last_heard = time.monotonic()
            self._take(chunk, rid)
            if self._found is not None:
                reply, self._found = self._found, None
                self._heard = True
                return reply

    def call(self, request: dict[str, Any], wait: float) -> dict[str, Any]:
        """Send one request and wait for its reply; blocking, so run it in a worker thread."""
        with self._lock:
            if self._broken is not None:
                raise ChannelError(f"{self._broken} (earlier in this sandbox, which cannot be used any more)")
            if not self._connected():
                self.open()
            rid = secrets.token_hex(16)
            data = json.dumps({**request, "id": rid}).encode() + b"\n"
            try:
                self._send(data, wait)
                return self._wait_reply(rid, wait)
            except ChannelError as exc:
                self.close(str(exc))
                raise
            except OSError as exc:
                reason = f"the stream to the sandbox agent broke: {exc}"
                self.close(reason)
                raise ChannelError(reason) from exc
