"""`websandbox serve`: one v1 env server for websandbox, for prime-rl's orchestrator (or any `EnvClient`).

It is what prime-rl's `env-server` entry point runs (`verifiers.v1.serve.serve_env` with
the env config as data), without prime-rl installed on the env host: run one on each
Docker host, bound to an address the orchestrator can reach, and list those addresses as
sources' `serve.address` (README, "Past one machine").

The server is named (`--name`, default the host name): every container it starts carries
the name in its `websandbox.server` label (labels.py), beside its owner identity, so that
`docker ps --filter label=websandbox.server=NAME` lists one server's containers on a
shared engine. The engine is the one `DOCKER_HOST` names (engine.py), the budget is that
engine's (budget.py).

The bound address is printed on one line, `serving on tcp://HOST:PORT` (with `:0` in
`--address`, the port the system chose), before the first request can arrive.
"""

from __future__ import annotations

import os
import socket
from typing import Any

from sandbox_env.dataset import taskset_spec


def env_config_data(task_args: dict[str, Any] | None = None) -> dict[str, Any]:
    """The websandbox env config as data: taskset filters and task knobs by their classic names."""
    import verifiers.v1 as vf
    from verifiers.v1.serve import env_config_data as as_data

    return as_data(vf.resolve_env_config({"taskset": taskset_spec(task_args)}))


class _Announce:
    """serve_env's address queue: prints the bound address instead of queueing it."""

    def __init__(self, name: str) -> None:
        self.name = name

    def put(self, address: str) -> None:
        print(f"websandbox env server {self.name}: serving on {address}", flush=True)


def serve(
    address: str,
    *,
    name: str | None = None,
    workers: int = 1,
    max_concurrent: int | None = None,
    task_args: dict[str, Any] | None = None,
) -> None:
    """Serve until SIGTERM or Ctrl-C (blocks). `workers` > 1: verifiers' worker pool behind one address."""
    from verifiers.v1.serve import serve_env

    from sandbox_env.sandbox.owner import SERVER_VAR

    name = name or os.environ.get(SERVER_VAR) or socket.gethostname()
    os.environ[SERVER_VAR] = name  # the pool's workers inherit it: their containers carry the same name
    serve_env(
        max_workers=workers,
        address=address,
        address_queue=_Announce(name),
        config_data=env_config_data(task_args),
        max_concurrent=max_concurrent,
    )
