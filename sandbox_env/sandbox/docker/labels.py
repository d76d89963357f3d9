"""The labels every websandbox container carries, so that cleanup can always find it and tell whose it is.

`websandbox.owner` is the owner's identity (scope, pid, start time: owner.py); gc decides on
it. `websandbox.pid` stays for readers of the bare pid (and for containers of older
versions); `websandbox.host` and `websandbox.server` name the machine and the env server.
"""

from __future__ import annotations

import os
import socket

from sandbox_env.sandbox.owner import server_name, this_owner
from sandbox_env.sandbox.runs import current_run_id

LABEL = "websandbox"  # every container
LABEL_CLIENT = "websandbox.client"  # the backend instance that made it
LABEL_PID = "websandbox.pid"  # the host process that owns it, as a bare pid
LABEL_OWNER = "websandbox.owner"  # that process's identity on any machine: <boot id>.<pid ns>/<pid>/<start> (owner.py)
LABEL_HOST = "websandbox.host"  # the owner's host name (for people: gc names it)
LABEL_SERVER = "websandbox.server"  # the env server it belongs to (`websandbox serve --name`, WEBSANDBOX_SERVER)
LABEL_ROLE = "websandbox.role"  # rollout | pool | grader ...
LABEL_RUN = "websandbox.run"  # the run it belongs to (runs.py): what a run counts as its own


def labels_for(client_id: str, role: str, run_id: str | None = None) -> dict[str, str]:
    return {
        LABEL: "1",
        LABEL_CLIENT: client_id,
        LABEL_PID: str(os.getpid()),
        LABEL_OWNER: this_owner().label(),
        LABEL_HOST: socket.gethostname(),
        LABEL_SERVER: server_name(),
        LABEL_ROLE: role,
        LABEL_RUN: run_id or current_run_id(),
    }
