"""The container budget: at most `max_sandboxes` sandboxes at once on one Docker engine, for this user on this machine.

Every sandbox a backend starts (rollout, warm pool, prewarmed grader, grading) holds
one slot from the moment its creation is asked until it is removed. A slot is a lock file
`slots/<engine>/slot-<i>` in the per-user runtime directory (locks.py), i < max_sandboxes,
held with `flock`: every env-server worker process of the machine that uses that engine
draws on the same slots, and a process that dies, however it dies, frees its slots at once
(the kernel drops its locks). Past the budget, work waits in a queue; it never fails for
want of a slot.

"One host" is one engine: `<engine>` is the key of the engine's own id (engine.py), so an
engine reached through two URLs (its socket, a `tcp://` proxy) is one budget, and two
engines (the local one, a remote `DOCKER_HOST`) are two. Lock files are this machine's,
so the processes of one machine share a budget; two machines sending work to one remote
engine each keep their own: give each its share with `max_sandboxes` so that the shares
add up to what the engine can hold.

Waiting: inside one process demand waits in arrival order (one waiter probes the files at
a time); between processes the slots are polled (every 20 ms at first, backing off to
250 ms), which is fair enough for a few workers. Processes started with different
`max_sandboxes` share the first slots: each respects its own bound over the shared count.

Warm pools take only spare slots: a pool refill waits while fewer than `reserve` slots
(a quarter of the budget, at least one) would stay free, so sandboxes that sit idle in
pools can never hold the whole budget while a rollout or a grading waits. No holder
waits for a second slot while it holds one (a rollout's container is removed before its
grading container is asked for), so the budget cannot deadlock.

The default (`default_max_sandboxes`): four sandboxes per CPU core of the engine's
machine (`docker info`: NCPU, MemTotal; this machine's figures when it cannot say), and no
more than would fit in three quarters of its memory if every one of them filled its memory
limit. Four per core because a sandbox is mostly idle (waiting for the model, or for its
turn on the engine) and a busy one is capped at one CPU (`Limits.cpus`); past about four
per core on the 2-core machines this project is built on, container starts and grading
runs slow each other down until wall-clock backstops are hit (the false zeros of issue 12).
The memory bound makes a memory bomb in every sandbox at once unable to push the host
into its own OOM killer. On a 2-core, 24 GiB host with the 1 GiB default limit: min(8, 17) = 8.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from sandbox_env.constants import DEFAULTS
from sandbox_env.sandbox.locks import is_held, private_dir, runtime_dir, try_lock, unlock

SANDBOXES_PER_CORE = 4
MEMORY_SHARE = 0.75
POLL_FIRST, POLL_MAX = 0.02, 0.25


def host_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def host_memory_bytes() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 0


def default_max_sandboxes(cores: int | None = None, memory_bytes: int | None = None, memory_mb: int = DEFAULTS.memory_mb) -> int:
    """Four per core, bounded so that every sandbox at its memory limit fits in 3/4 of the memory; at least 2."""
    cores = host_cores() if cores is None else cores
    memory_bytes = host_memory_bytes() if memory_bytes is None else memory_bytes
    by_cpu = SANDBOXES_PER_CORE * max(1, cores)
    by_memory = int(memory_bytes * MEMORY_SHARE) // (max(1, memory_mb) << 20) if memory_bytes else by_cpu
    return max(2, min(by_cpu, by_memory))


@dataclass
class Slot:
    index: int
    fd: int


class SandboxBudget:
    """A counting semaphore over lock files, shared by every process of this user on this machine that uses the engine."""

    def __init__(self, limit: int, directory: Path | None = None, engine: str = "local") -> None:
        """`directory` holds the slot files; by default the runtime directory's `slots/<engine>`."""
        if limit < 1:
            raise ValueError(f"max_sandboxes must be at least 1, got {limit}")
        self.limit = limit
        self.reserve = max(1, limit // 4) if limit > 1 else 0
        if directory is None:
            private_dir(runtime_dir() / "slots")
            directory = runtime_dir() / "slots" / engine
        self.directory = private_dir(directory)
        self._queues: dict[asyncio.AbstractEventLoop, asyncio.Lock] = {}

    def _path(self, index: int) -> Path:
        return self.directory / f"slot-{index:03d}"

    def try_acquire(self) -> Slot | None:
        """A free slot now, or None when all `limit` are held."""
        for i in range(self.limit):
            fd = try_lock(self._path(i))
            if fd is not None:
                return Slot(i, fd)
        return None

    def free_slots(self) -> int:
        """How many of the `limit` slots no process holds (a snapshot)."""
        return sum(not is_held(self._path(i)) for i in range(self.limit))

    def in_use(self) -> int:
        return self.limit - self.free_slots()

    def _try_spare(self) -> Slot | None:
        if self.free_slots() <= self.reserve:
            return None
        return self.try_acquire()

    async def acquire(self, *, spare: bool = False) -> Slot:
        """A slot, waiting as long as it takes; `spare` (warm pools) leaves `reserve` slots to demand."""
        if spare:
            return await self._poll(self._try_spare)
        slot = self.try_acquire()
        if slot is not None:
            return slot
        loop = asyncio.get_running_loop()
        queue = self._queues.setdefault(loop, asyncio.Lock())
        async with queue:  # one waiter of this process probes at a time, in arrival order
            return await self._poll(self.try_acquire)

    async def _poll(self, attempt) -> Slot:
        delay = POLL_FIRST
        while True:
            slot = attempt()
            if slot is not None:
                return slot
            await asyncio.sleep(delay)
            delay = min(POLL_MAX, delay * 1.5)

    @staticmethod
    def release(slot: Slot | None) -> None:
        """Give a slot back (a second release of the same slot does nothing)."""
        if slot is not None and slot.fd >= 0:
            fd, slot.fd = slot.fd, -1
            unlock(fd)
