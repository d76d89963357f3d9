"""A kept-open attach stream to the in-container agent: one docker exec for the sandbox's life.

The Docker engine multiplexes a non-tty exec's stdout and stderr into frames with an
8-byte header; stdin is raw. Requests are JSON lines; replies come back in order.
"""

from __future__ import annotations

import json
import secrets
import socket
import struct
import threading
import time
from typing import Any

import docker

from sandbox_env.constants import AGENT_STDERR_TAIL


class ChannelError(RuntimeError):
    """The agent channel broke: the container is gone, or the agent died."""


class AgentChannel:
    """Speaks to the agent that runs as the container's main process, over an attach stream.

    The agent exits when its stdin closes, so a host that dies takes its sandboxes'
    agents with it; a broken stream is therefore not reopened but reported.
    """

    def __init__(self, api: docker.APIClient, container_id: str) -> None:
        self._api = api
        self._cid = container_id
        self._opened = False
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._buf = bytearray()  # undemultiplexed bytes
        self._lines = bytearray()  # stdout payload not yet split into lines
        self._stderr = bytearray()
        self._next_id = 0
        self.dropped = 0  # lines on the stream that were no reply to the call waiting for one

    def open(self) -> None:
        if self._opened:
            raise ChannelError("the stream to the sandbox agent was closed earlier (the agent has exited)")
        raw = self._api.attach_socket(self._cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        self._opened = True
        sock = getattr(raw, "_sock", raw)
        sock.settimeout(None)
        self._sock = sock
        self._buf.clear()
        self._lines.clear()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _read_frame(self, deadline: float) -> None:
        assert self._sock is not None
        while True:
            if len(self._buf) >= 8:
                kind, size = self._buf[0], struct.unpack(">I", self._buf[4:8])[0]
                if len(self._buf) >= 8 + size:
                    payload = bytes(self._buf[8 : 8 + size])
                    del self._buf[: 8 + size]
                    (self._lines if kind == 1 else self._stderr).extend(payload)
                    return
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError
            self._sock.settimeout(remaining)
            try:
                chunk = self._sock.recv(262144)
            except TimeoutError as exc:
                raise TimeoutError from exc
            if not chunk:
                tail = bytes(self._stderr[-AGENT_STDERR_TAIL:]).decode("utf-8", "replace").strip()
                raise ChannelError("the sandbox agent closed its stream" + (f": {tail}" if tail else ""))
            self._buf.extend(chunk)

    def _read_line(self, deadline: float) -> bytes:
        while True:
            nl = self._lines.find(b"\n")
            if nl >= 0:
                line = bytes(self._lines[: nl + 1])
                del self._lines[: nl + 1]
                return line
            self._read_frame(deadline)

    def call(self, request: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send one request and wait for its reply; blocking, so run it in a worker thread."""
        with self._lock:
            if self._sock is None:
                self.open()
            self._next_id += 1
            rid = f"{self._next_id}-{secrets.token_hex(8)}"  # unguessable: a forged line cannot pose as the reply
            data = json.dumps({**request, "id": rid}).encode() + b"\n"
            try:
                assert self._sock is not None
                self._sock.sendall(data)
                deadline = time.monotonic() + timeout
                while True:
                    line = self._read_line(deadline)
                    if not line.strip():
                        continue  # the agent starts every reply with a newline
                    try:  # whatever a sandboxed process wrote into the stream is skipped, never taken as a reply
                        reply = json.loads(line)
                    except ValueError:
                        self.dropped += 1
                        continue
                    if isinstance(reply, dict) and reply.get("id") == rid:
                        return reply
                    self.dropped += 1
            except TimeoutError as exc:
                self.close()
                raise ChannelError(f"the sandbox agent did not answer within {timeout:g}s") from exc
            except (OSError, ValueError) as exc:
                self.close()
                raise ChannelError(f"the sandbox agent channel broke: {exc}") from exc
            except ChannelError:
                self.close()
                raise
