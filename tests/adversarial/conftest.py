"""Fixtures for attacks run from inside a sandbox, as a model would, and for a stand-in agent stream.

`agent_pid` finds the agent from inside the sandbox the way a model would (scanning
/proc), so the attacks aim at the real process. `fake_agent` gives an AgentChannel
whose stream is a local socket played by a script, for what no sandboxed code can
make the real agent send any more (floods on its stdout and stderr, silence).
`peak_rss` measures how far this process's resident memory rose while a
function ran (the kernel's high-water mark, reset first); `alone` runs a function in a
forked child that holds only the calling thread, so that what other threads of the test
process allocate meanwhile (a suite's background work) does not count in its peak.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import threading
from collections.abc import Callable

import pytest

from sandbox_env.rollout.tools import run_bash
from sandbox_env.sandbox.docker.channel import AgentChannel, ChannelError

FIND_AGENT = (
    "for p in /proc/[0-9]*; do tr '\\0' ' ' < $p/cmdline 2>/dev/null | grep -v docker-init "
    "| grep -q 'runtime/agent.py' && echo ${p#/proc/}; done | head -1"
)


@pytest.fixture
async def agent_pid(sandbox) -> str:
    pid = (await run_bash(sandbox, FIND_AGENT, timeout=10)).strip()
    assert pid.isdigit(), pid
    return pid


@pytest.fixture
async def session(sandbox):
    await sandbox.start_python()
    return sandbox


class Peer:
    """The agent's end of a fake stream: what a script writes, framed as Docker frames it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock

    def raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def frame(self, kind: int, payload: bytes) -> None:
        """One frame of Docker's multiplexed stream: kind 1 stdout, 2 stderr."""
        self.sock.sendall(struct.pack(">BxxxI", kind, len(payload)) + payload)

    def line(self, msg: dict | bytes) -> None:
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.frame(1, data + b"\n")

    def stderr(self, data: bytes) -> None:
        self.frame(2, data)


class FakeAgent:
    """The host end is an AgentChannel; the other end runs `script(peer, request)` for each request."""

    def __init__(self, script: Callable[[Peer, dict], None]) -> None:
        self.host_end, self.peer = socket.socketpair()
        self.script = script
        self.errors: list[BaseException] = []
        api = type("Api", (), {"attach_socket": lambda _self, cid, params: self.host_end})()
        self.channel = AgentChannel(api, "fake")
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        buf = b""
        peer = Peer(self.peer)
        try:
            while True:
                chunk = self.peer.recv(65536)
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    self.script(peer, json.loads(line))
        except OSError:
            return  # the channel closed its end
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            self.errors.append(exc)

    def close(self) -> None:
        self.channel.close()
        self.peer.close()


@pytest.fixture
def fake_agent():
    made: list[FakeAgent] = []

    def make(script: Callable[[Peer, dict], None]) -> FakeAgent:
        made.append(FakeAgent(script))
        return made[-1]

    yield make
    for agent in made:
        agent.close()


def _status(field: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise LookupError(field)


class PeakRss:
    """`reset()`, then `growth()`: how far resident memory peaked above its level at the reset."""

    def reset(self) -> None:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")  # the kernel resets VmHWM to the current RSS
        self.base = _status("VmRSS")

    def growth(self) -> int:
        return _status("VmHWM") - self.base


@pytest.fixture
def peak_rss() -> PeakRss:
    peak = PeakRss()
    peak.reset()
    return peak


@pytest.fixture
def alone() -> Callable[[Callable[[], object]], object]:
    """`alone(fn)`: fn's JSON-able result, computed in a forked child; its exception is raised here as a RuntimeError."""

    def run(fn: Callable[[], object]) -> object:
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: only this thread exists here
            try:
                os.close(read)
                out = {"value": fn()}
            except BaseException as exc:  # noqa: BLE001 - carried to the parent
                out = {"error": f"{type(exc).__name__}: {exc}"}
            with os.fdopen(write, "w") as fh:
                fh.write(json.dumps(out))
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as fh:
            text = fh.read()
        os.waitpid(pid, 0)
        out = json.loads(text or '{"error": "the child died without a word"}')
        if "error" in out:
            raise RuntimeError(out["error"])
        return out["value"]

    return run


@pytest.fixture
def flood_alone(alone) -> Callable[..., tuple[int, list[str]]]:
    """`flood_alone(script, calls=1)`: a fake stream played by `script`, alone in a child: the host's peak growth
    over the first call, and each call's reply (its repr) or channel error."""

    def play(script: Callable[[Peer, dict], None], calls: int = 1) -> tuple[int, list[str]]:
        def child() -> tuple[int, list[str]]:
            agent, peak, said = FakeAgent(script), PeakRss(), []
            peak.reset()
            growth = 0
            for n in range(calls):
                try:
                    said.append(repr(agent.channel.call({"op": "ping"}, wait=60)))
                except ChannelError as exc:
                    said.append(f"ChannelError: {exc}")
                if n == 0:
                    growth = peak.growth()
            agent.close()
            return growth, said

        growth, said = alone(child)
        return growth, said

    return play
