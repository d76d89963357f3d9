"""Serving a scripted policy on loopback in a background thread (the main jobs and the tests use it)."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

from sandbox_env.constants import POLICY_SERVER_START_TIMEOUT


def _free_port(host: str) -> int:
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def start_policy_server(
    policy: str,
    script: Path | None,
    host: str,
    port: int,
    fail_after: int | None = None,
    tokens: bool = False,
    tokenizer_dir: Path | None = None,
):
    """Serve the policy in a background thread; returns (server, base_url).

    `fail_after` (policy/server.py): answer HTTP 500 after that many requests of a rollout.
    `tokens`: whole responses carry token ids and logprobs as vLLM returns them.
    `tokenizer_dir`: also serve vLLM's `/inference/v1/generate` over that chat tokenizer.
    """
    import uvicorn

    from sandbox_env.policy.policies import make_policy
    from sandbox_env.policy.server import create_app

    app = create_app(
        make_policy(policy, script),
        fail_after=fail_after,
        tokens=tokens,
        tokenizer_dir=None if tokenizer_dir is None else str(tokenizer_dir),
    )
    port = port or _free_port(host)
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True, name="policy-server")
    thread.start()
    deadline = time.monotonic() + POLICY_SERVER_START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError(f"the policy server did not start on {host}:{port}")
        time.sleep(0.05)
    return server, f"http://{host}:{port}/v1"
