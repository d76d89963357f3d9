"""A warm pool of fresh, ready sandboxes, refilled in the background.

A rollout or a grading takes a container that is already started and whose
agent already answers; the pool starts a replacement. A container is never handed
out twice. The pool knows nothing of any backend: it is given a `factory` that starts
one ready sandbox and a `destroy` that removes one. Starts are paced (a few at a time) so that a burst of rollouts does not
thrash the engine; when the pool is empty a caller starts its own container with
`demand_factory` (refills use `factory`, which may wait for spare capacity only).

Sizing. A pool only moves a container's start earlier; it never saves CPU, and it
cannot know how much work is left, so every run ends with `size` containers (and, for
prewarmed graders, their imports: about a core-second each for fastapi or django) that
were started and never used. On a machine whose cores are the bound (the reference
policy's throughput is flat from `-c 1` to `-c 32`) those are pure waste, and a
one-task run would start several containers for one rollout. So the default is no
pool: a container is started when a rollout or a grading asks for one, and every
container started is used. A pool is for runs where the latency of a start matters
more than its CPU (`pool_size` of load_environment).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any

logger = logging.getLogger("websandbox.pool")


def default_pool_size() -> int:
    """No pool: containers start when work asks for them, so none is started and never used."""
    return 0


class WarmPool:
    def __init__(
        self,
        factory: Callable[[], Awaitable[str]],
        destroy: Callable[[str], Awaitable[None]],
        size: int,
        max_starting: int = 2,
        prepare: Callable[[str], Awaitable[Any]] | None = None,
        demand_factory: Callable[[], Awaitable[str]] | None = None,
    ) -> None:
        """`prepare(sid)` runs on each new sandbox (e.g. starts a grader program); its result rides along."""
        self.factory = factory
        self.demand_factory = demand_factory or factory
        self.destroy = destroy
        self.size = size
        self.max_starting = max(1, max_starting)
        self.prepare = prepare
        self._ready: asyncio.Queue[tuple[str, Any]] = asyncio.Queue()
        self._starting = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._inflight: set[asyncio.Task] = set()

    def _ensure_running(self) -> None:
        loop = asyncio.get_running_loop()
        if self._task is None or self._task.done() or self._loop is not loop:
            # a new event loop (vf-eval may run several) gets its own queue and refiller
            if self._loop is not None and self._loop is not loop:
                self._ready = asyncio.Queue()
                self._wake = asyncio.Event()
                self._starting = 0
            self._loop = loop
            self._task = loop.create_task(self._refill(), name="websandbox-pool-refill")

    async def start(self) -> None:
        self._ensure_running()
        self._wake.set()

    async def _new(self, demand: bool = False) -> tuple[str, Any]:
        sid = await (self.demand_factory if demand else self.factory)()
        try:
            token = await self.prepare(sid) if self.prepare is not None else None
        except BaseException:
            await self.destroy(sid)
            raise
        return sid, token

    async def _start_one(self) -> None:
        try:
            self._ready.put_nowait(await self._new())
        except Exception as exc:  # noqa: BLE001 - a failed start is retried by the next refill
            logger.warning("warm pool: could not start a sandbox: %s", exc)
            await asyncio.sleep(1.0)
        finally:
            self._starting -= 1
            self._wake.set()

    async def _refill(self) -> None:
        while True:
            while self._ready.qsize() + self._starting < self.size and self._starting < self.max_starting:
                self._starting += 1
                task = asyncio.get_running_loop().create_task(self._start_one())
                self._inflight.add(task)
                task.add_done_callback(self._inflight.discard)
            self._wake.clear()
            await self._wake.wait()

    async def acquire(self) -> str:
        """A ready sandbox id: from the pool when one is waiting, else started now."""
        return (await self.acquire_prepared())[0]

    async def acquire_prepared(self) -> tuple[str, Any]:
        """A ready sandbox and what `prepare` made of it."""
        self._ensure_running()
        try:
            entry = self._ready.get_nowait()
        except asyncio.QueueEmpty:
            entry = None
        self._wake.set()
        return entry if entry is not None else await self._new(demand=True)

    async def wait_full(self, timeout: float = 60) -> None:
        self._ensure_running()
        deadline = asyncio.get_running_loop().time() + timeout
        while self._ready.qsize() < self.size:
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError(f"the warm pool did not fill to {self.size} within {timeout:g}s")
            await asyncio.sleep(0.02)

    async def stop(self) -> None:
        tasks = [t for t in (self._task, *self._inflight) if t is not None]
        for t in tasks:
            t.cancel()
        for t in tasks:
            with contextlib.suppress(BaseException):
                await t
        self._task = None
        while not self._ready.empty():
            await self.destroy(self._ready.get_nowait()[0])
