"""A run knows its own: the run id every container carries, and whether a run is still live.

A run is one `websandbox eval` (or one evaluation or training job): the CLI makes an id,
puts it in `WEBSANDBOX_RUN_ID` for its vf-eval child, and every env-server worker that
vf-eval starts inherits it. A process started without that variable makes its own id,
so its containers are still told apart from every other process's.

Every process that makes containers for a run holds a shared lock on the run's file in
the runtime directory (locks.py) for as long as it lives; the CLI holds one for the
whole run. A run is live while any such lock is held: `websandbox gc` leaves the
containers of live runs alone, and a run's "containers left afterwards" counts only
containers that carry its id.
"""

from __future__ import annotations

import os
import re
import threading
import time
import uuid
from pathlib import Path

from sandbox_env.constants import SHORT_ID
from sandbox_env.sandbox.locks import is_held, runtime_dir, try_lock

RUN_ID_VAR = "WEBSANDBOX_RUN_ID"
_VALID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_held: dict[str, int] = {}
_own_id: str | None = None
_mutex = threading.Lock()


def new_run_id() -> str:
    return uuid.uuid4().hex[:SHORT_ID]


def current_run_id() -> str:
    """`WEBSANDBOX_RUN_ID` when set (and well formed), else an id made once for this process."""
    global _own_id
    given = os.environ.get(RUN_ID_VAR, "")
    if given:
        if not _VALID.match(given):
            raise ValueError(f"{RUN_ID_VAR}={given!r} is not a run id (letters, digits, '_', '.', '-'; at most 64)")
        return given
    with _mutex:
        if _own_id is None:
            _own_id = new_run_id()
        return _own_id


def _run_file(run_id: str) -> Path:
    runs = runtime_dir() / "runs"
    runs.mkdir(mode=0o700, exist_ok=True)
    return runs / f"{run_id}.lock"


def hold_run(run_id: str) -> None:
    """Mark `run_id` live for as long as this process lives (idempotent)."""
    with _mutex:
        if run_id in _held:
            return
        for _ in range(200):  # is_held() of another process takes the lock for a moment
            fd = try_lock(_run_file(run_id), shared=True)
            if fd is not None:
                _held[run_id] = fd
                return
            time.sleep(0.01)
        raise RuntimeError(f"cannot mark run {run_id} live: its lock file stays taken")


def run_is_live(run_id: str) -> bool:
    """Whether some process on this host still holds `run_id`."""
    if not _VALID.match(run_id or ""):
        return False
    return is_held(runtime_dir() / "runs" / f"{run_id}.lock")
