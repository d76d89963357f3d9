"""A loopback door from the tool server to the process that holds the rollout's sandbox.

verifiers v1 serves a task's tools as an MCP server in a process of its own, while
the task's `setup` / `finalize` (and so the sandbox: its kept-open agent channel,
the persistent Python session, the final-state collection) live in the env
worker. The tool server therefore forwards each call here.

Threat model: the model's code runs in a container without network, so it cannot
reach this port; other local processes can, which is why every rollout gets its
own 32-byte bearer token, valid only while its lease is open (`revoke` on
finalize). The token reaches the tool server through the rollout's shared state
channel (which v1 already authenticates per rollout) and is wiped from that state
before the trace is saved. Requests and replies are bounded.
"""

from __future__ import annotations

import asyncio
import hmac
import logging
import secrets
from typing import Any

from aiohttp import web

from sandbox_env.rollout.core import Lease, LeaseError

logger = logging.getLogger("websandbox.v1.bridge")

MAX_REQUEST_BYTES = 4 << 20


class Bridge:
    """One loopback HTTP endpoint per process (and event loop): POST /call."""

    def __init__(self) -> None:
        self._leases: dict[str, Lease] = {}
        self._runner: web.AppRunner | None = None
        self._starting = asyncio.Lock()
        self.url: str | None = None

    async def start(self) -> str:
        async with self._starting:
            if self.url is None:
                await self._start()
        assert self.url is not None
        return self.url

    async def _start(self) -> None:
        app = web.Application(client_max_size=MAX_REQUEST_BYTES)
        app.router.add_post("/call", self._handle)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # the OS-chosen port
        self._runner, self.url = runner, f"http://127.0.0.1:{port}"

    async def stop(self) -> None:
        runner, self._runner, self.url = self._runner, None, None
        self._leases.clear()
        if runner is not None:
            await runner.cleanup()

    def grant(self, lease: Lease) -> str:
        token = secrets.token_urlsafe(32)
        self._leases[token] = lease
        return token

    def revoke(self, token: str | None) -> None:
        if token:
            self._leases.pop(token, None)

    def _lease(self, request: web.Request) -> Lease | None:
        auth = request.headers.get("Authorization", "")
        given = auth.removeprefix("Bearer ").strip()
        for token, lease in self._leases.items():
            if hmac.compare_digest(token, given):
                return lease
        return None

    async def _handle(self, request: web.Request) -> web.Response:
        lease = self._lease(request)
        if lease is None:
            return web.json_response({"error": "unknown or expired rollout token"}, status=401)
        try:
            body: Any = await request.json()
            tool, args = body["tool"], body["args"]
            if not isinstance(args, dict):
                raise TypeError("args must be an object")
        except (ValueError, KeyError, TypeError) as exc:
            return web.json_response({"error": f"bad tool request: {exc}"}, status=400)
        try:
            output = await lease.call(tool, args)
        except LeaseError as exc:
            return web.json_response({"fault": str(exc)})
        except (ValueError, KeyError) as exc:
            return web.json_response({"error": f"bad tool request: {exc}"}, status=400)
        return web.json_response({"output": output})


_bridges: dict[asyncio.AbstractEventLoop, Bridge] = {}


def bridge() -> Bridge:
    """This event loop's bridge (vf-eval runs one loop; each env-server worker its own)."""
    loop = asyncio.get_running_loop()
    if loop not in _bridges:
        _bridges[loop] = Bridge()
    return _bridges[loop]


async def stop_bridge() -> None:
    loop = asyncio.get_running_loop()
    b = _bridges.pop(loop, None)
    if b is not None:
        await b.stop()
