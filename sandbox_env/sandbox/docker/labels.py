"""The labels every websandbox container carries, so that cleanup can always find it."""

from __future__ import annotations

import os

from sandbox_env.sandbox.runs import current_run_id

LABEL = "websandbox"  # every container
LABEL_CLIENT = "websandbox.client"  # the backend instance that made it
LABEL_PID = "websandbox.pid"  # the host process that owns it (gc removes it once that process is gone)
LABEL_ROLE = "websandbox.role"  # rollout | pool | grader ...
LABEL_RUN = "websandbox.run"  # the run it belongs to (runs.py): what a run counts as its own


def labels_for(client_id: str, role: str, run_id: str | None = None) -> dict[str, str]:
    return {
        LABEL: "1",
        LABEL_CLIENT: client_id,
        LABEL_PID: str(os.getpid()),
        LABEL_ROLE: role,
        LABEL_RUN: run_id or current_run_id(),
    }
