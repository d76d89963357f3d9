"""The Docker transport of the agent channel: a kept-open attach stream and its frame reader.

The protocol (request ids, heartbeats, silence, the line bound, what the host trusts) is
the transport-neutral half, sandbox/channel.py; this module only carries its bytes. The
Docker engine multiplexes a non-tty stream's stdout and stderr into frames with an 8-byte
header; stdin is raw. Frames are consumed as they arrive, never held whole, whatever size
their header claims; a frame of another kind breaks the channel.

Host memory per sandbox is bounded by `STREAM_BOUND` (16.3 MiB): one line of at most
`LINE_MAX` (16 MiB), one received chunk (256 KiB), and a ring of the last 64 KiB of the
agent's stderr, whose tail a broken stream reports as the agent's last words.
"""

from __future__ import annotations

import socket
import struct

import docker

from sandbox_env.constants import AGENT_STDERR_TAIL
from sandbox_env.sandbox.channel import LINE_MAX, SILENCE_LIMIT, AgentProtocol, ChannelError

RECV_CHUNK = 256 << 10
STDERR_RING = 64 << 10
STREAM_BOUND = LINE_MAX + RECV_CHUNK + STDERR_RING

__all__ = ["LINE_MAX", "SILENCE_LIMIT", "STREAM_BOUND", "AgentChannel", "ChannelError"]


class AgentChannel(AgentProtocol):
    """Speaks to the agent that runs as the container's main process, over an attach stream."""

    def __init__(self, api: docker.APIClient, container_id: str) -> None:
        super().__init__()
        self._api = api
        self._cid = container_id
        self._sock: socket.socket | None = None
        self._header = bytearray()  # the current frame's header while incomplete
        self._kind = 0  # stream of the current frame: 1 stdout, 2 stderr
        self._left = 0  # payload bytes of the current frame not yet received
        self._stderr = bytearray()  # the last STDERR_RING bytes of the agent's stderr

    def stderr_tail(self, n: int = AGENT_STDERR_TAIL) -> str:
        return bytes(self._stderr[-n:]).decode("utf-8", "replace").strip()

    # -- the transport ----------------------------------------------------------------
    def _connect(self) -> None:
        raw = self._api.attach_socket(self._cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        sock = getattr(raw, "_sock", raw)
        sock.settimeout(None)
        self._sock = sock

    def _connected(self) -> bool:
        return self._sock is not None

    def _send(self, data: bytes, timeout: float) -> None:
        assert self._sock is not None
        self._sock.settimeout(timeout)
        self._sock.sendall(data)

    def _receive(self, timeout: float) -> bytes:
        assert self._sock is not None
        self._sock.settimeout(timeout)
        return self._sock.recv(RECV_CHUNK)

    def _hang_up(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def _closed_reason(self) -> str:
        tail = self.stderr_tail()
        return super()._closed_reason() + (f"; its last words: {tail}" if tail else "")

    # -- the frames -----------------------------------------------------------------
    def _take(self, chunk: bytes, rid: str) -> None:
        """Demultiplex one received chunk, all of it: the frames after a reply are read too, so none is cut in half."""
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
                self._stdout(part, rid)
