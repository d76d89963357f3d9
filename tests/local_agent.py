"""The runtime agent run on this machine for the local test backend (local_backend.py): init, then the agent.

Run as `local_agent.py HOME` as the first process of a fresh PID namespace. It forks: the
parent is the namespace's init (it reaps orphans and leaves with the agent's status, which
ends every process of the namespace), the child is the real agent (runtime/container/agent.py) with
its workspace moved into HOME: commands and the Python session start in HOME/workspace,
and the file requests' /workspace and /tmp paths are read and written under HOME. The agent
is not pid 1, so the sandboxed code can end it as it could any agent that runs as its
own user.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

RUNTIME = Path(__file__).resolve().parents[1] / "sandbox_env" / "runtime" / "container"


def _agent(home: Path) -> None:
    sys.path.insert(0, str(RUNTIME))
    import agent

    workspace = home / "workspace"
    moved = {"/workspace": workspace, "/tmp": home / "tmp"}

    def resolve(path: str) -> Path:
        p = Path(path)
        if not p.is_absolute():
            return workspace / p
        for prefix, target in moved.items():
            if p == Path(prefix) or p.is_relative_to(prefix):
                return target / p.relative_to(prefix)
        return p

    agent.WORKSPACE = str(workspace)
    agent._resolve = resolve
    os.chdir(workspace)
    os.environ["TMPDIR"] = str(home / "tmp")
    agent.main()


def main() -> None:
    home = Path(sys.argv[1])
    child = os.fork()
    if child == 0:
        code = 1
        try:
            _agent(home)
            code = 0
        finally:
            os._exit(code)
    os.close(0)  # only the agent reads the host's requests and writes its replies
    os.close(1)
    while True:
        pid, status = os.wait()
        if pid == child:
            os._exit(os.waitstatus_to_exitcode(status) & 0xFF)


if __name__ == "__main__":
    main()
