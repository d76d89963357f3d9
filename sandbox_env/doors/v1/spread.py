"""Episodes spread over several v1 env servers, the way prime-rl's orchestrator spreads them.

How prime-rl does it (orchestrator at commit 559b447): each train source is one env server
(`serve.address`, `env_addresses`), one `EnvClient` each; the taskset is loaded on the
orchestrator's side and each episode ships its task's data. `TrainSource.next_task` draws
the source of every new task with `random.Random(42).choices(names, weights=ratios)`.
`EnvClient.run` waits for the episode without a deadline. An episode whose run raised
becomes `WireEpisode(ok=False, errors=[Error(type, message)])`
(`Dispatcher.handle_completed_episode`); errored traces are never trained on, and the
orchestrator draws more tasks. `Spread` does the same: one client per address, the same
weighted draw, the same failed episode for a run that raised.

What prime-rl does not do, and `Spread` adds: a liveness watch. ZMQ reconnects silently
and a run has no deadline, so an episode on a server that died (killed, its host lost)
never comes back, and the next draw may send more work there. Here every server's
`health` is asked every `interval` seconds; a server that has not answered for
`lost_after` seconds is lost: its episodes in flight come back failed with an
`EnvServerLost` error (so they are rescheduled like any errored episode), and no new
episode is drawn for it. Under prime-rl itself, a source whose server is gone waits on
its episodes forever (the launcher stops the whole run when a server it started exits;
a server at an explicit `serve.address` is not watched).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import verifiers.v1 as vf
from verifiers.v1.serve import EnvClient

from sandbox_env.constants import ENV_ID

LOST = "EnvServerLost"


@dataclass
class Outcome:
    """One episode and the server it ran on."""

    server: str  # the address
    episode: vf.WireEpisode
    seconds: float

    @property
    def ok(self) -> bool:
        return self.episode.ok and bool(self.episode.traces) and all(t.ok for t in self.episode.traces)

    @property
    def error(self) -> vf.Error | None:
        """The error that ended it (the episode's, else its first failed trace's), or None."""
        if self.episode.errors:
            return self.episode.errors[-1]
        return next((t.errors[-1] for t in self.episode.traces if t.errors), None)

    @property
    def reward(self) -> float | None:
        return self.episode.traces[0].reward if self.episode.traces else None


@dataclass
class _Server:
    address: str
    weight: float
    client: EnvClient
    last_seen: float = field(default_factory=time.monotonic)
    lost: bool = False
    inflight: set[asyncio.Task] = field(default_factory=set)


def failed_episode(task: vf.Task, address: str, error_type: str, message: str) -> vf.WireEpisode:
    """The episode prime-rl's dispatcher makes of a run that raised: not ok, the error recorded."""
    return vf.WireEpisode.model_validate(
        {
            "env": {"id": ENV_ID, "name": address},
            "task": {"type": type(task).__name__, "data": task.data.model_dump(mode="json"), "key": task.key},
            "ok": False,
            "errors": [{"type": error_type, "message": message}],
        }
    )


class Spread:
    """Several env servers behind one `run(task, ...)`; use as `async with Spread(addresses) as spread:`."""

    def __init__(
        self,
        addresses: Sequence[str],
        weights: Sequence[float] | None = None,
        *,
        seed: int = 42,
        interval: float = 1.0,
        lost_after: float = 30.0,
        startup_timeout: float = 600.0,
    ) -> None:
        if not addresses:
            raise ValueError("Spread needs at least one env server address")
        weights = list(weights) if weights is not None else [1.0] * len(addresses)
        if len(weights) != len(addresses) or any(w <= 0 for w in weights):
            raise ValueError("one positive weight per address")
        self._addresses = list(addresses)
        self._weights = weights
        self._rng = random.Random(seed)
        self.interval, self.lost_after, self.startup_timeout = interval, lost_after, startup_timeout
        self._servers: dict[str, _Server] = {}
        self._watch: asyncio.Task | None = None

    async def __aenter__(self) -> Spread:
        for address, weight in zip(self._addresses, self._weights, strict=True):
            self._servers[address] = _Server(address, weight, EnvClient(address=address))
        await asyncio.gather(*(s.client.wait_for_server_startup(timeout=self.startup_timeout) for s in self._servers.values()))
        now = time.monotonic()
        for s in self._servers.values():
            s.last_seen = now
        self._watch = asyncio.create_task(self._watch_all())
        return self

    async def __aexit__(self, *exc) -> None:
        await self.close()

    @property
    def live(self) -> list[str]:
        return [a for a, s in self._servers.items() if not s.lost]

    @property
    def lost(self) -> list[str]:
        return [a for a, s in self._servers.items() if s.lost]

    def draw(self) -> str:
        """The server of the next episode: a weighted draw over the live ones (prime-rl's `next_task`)."""
        live = [s for s in self._servers.values() if not s.lost]
        if not live:
            raise RuntimeError(f"every env server is lost: {', '.join(self._servers)}")
        return self._rng.choices([s.address for s in live], weights=[s.weight for s in live], k=1)[0]

    async def run(
        self,
        task: vf.Task,
        client: vf.ClientConfig,
        model: str,
        sampling: vf.SamplingConfig | None = None,
        server: str | None = None,
    ) -> Outcome:
        """Run one episode on `server` (default: drawn); a run that raised or a lost server gives a failed episode."""
        target = self._servers[server or self.draw()]
        t0 = time.monotonic()
        run = asyncio.create_task(
            target.client.run(
                task_data=task.data.model_dump(mode="json"),
                client=client,
                model=model,
                sampling=sampling or vf.SamplingConfig(),
            )
        )
        target.inflight.add(run)
        try:
            episode = await run
        except asyncio.CancelledError:
            if not target.lost or not run.cancelled():
                raise
            episode = failed_episode(task, target.address, LOST, f"env server {target.address} stopped answering")
        except Exception as exc:  # noqa: BLE001 - as prime-rl's dispatcher: a failed run is a failed episode
            episode = failed_episode(task, target.address, type(exc).__name__, str(exc))
        finally:
            target.inflight.discard(run)
        episode.env.name = target.address
        return Outcome(target.address, episode, time.monotonic() - t0)

    async def _watch_all(self) -> None:
        await asyncio.gather(*(self._watch_one(s) for s in self._servers.values()))

    async def _watch_one(self, server: _Server) -> None:
        while not server.lost:
            t0 = time.monotonic()
            if await server.client.health(timeout=max(self.interval, 2.0)):
                server.last_seen = time.monotonic()
            elif time.monotonic() - server.last_seen > self.lost_after:
                server.lost = True
                for run in list(server.inflight):
                    run.cancel()
                return
            await asyncio.sleep(max(0.0, self.interval - (time.monotonic() - t0)))

    async def close(self) -> None:
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
            self._watch = None
        for s in self._servers.values():
            for run in list(s.inflight):
                run.cancel()
            await s.client.close()
        self._servers.clear()
