"""Whether a container's supervisor was stopped from outside, read by the host from /proc.

A silent agent in a busy sandbox is the sandbox's own doing (blame rule 3, docs/architecture.md): its
processes starved the agent of its CPU. That holds only while the agent could run. Root on
the host (or anything with the host's rights: a debugger, a monitoring tool, a frozen
engine) can stop the agent itself with SIGSTOP or ptrace while the sandboxed code keeps
the CPU busy; the silence is then the harness's, whatever the CPU figures say.

The sandboxed code cannot do this: the agent and docker-init run as root and every
process the model starts runs as uid 1000 with no capability (docker/hardening.py), so a
root process of the container in the stopped (`T`) or traced (`t`) state was stopped by
someone outside. Only the container's init (`State.Pid`) and its root children (the agent)
are read: an orphan of the model's that docker-init adopted runs as uid 1000 and may be
stopped by the model at will.

Where /proc does not show the container's processes (an engine on another host, another
pid namespace), nothing is found and the other evidence decides.
"""

from __future__ import annotations

from pathlib import Path

PROC = Path("/proc")
STOPPED_STATES = {"T": "stopped by a signal", "t": "stopped by a tracer"}


def _status(pid: int, proc: Path) -> dict[str, str]:
    try:
        text = (proc / str(pid) / "status").read_text()
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        key, _, value = line.partition(":")
        fields[key] = value.strip()
    return fields


def _children(pid: int, proc: Path) -> list[int]:
    try:
        text = (proc / str(pid) / "task" / str(pid) / "children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split() if p.isdigit()]


def stopped_supervisor(init_pid: int | None, proc: Path = PROC) -> str | None:
    """Why the container whose init is host pid `init_pid` cannot answer: a root process of it stopped, or None."""
    if not init_pid or init_pid <= 0:
        return None
    for pid in [init_pid, *_children(init_pid, proc)]:
        status = _status(pid, proc)
        uid = (status.get("Uid") or "").split()
        state = (status.get("State") or " ")[0]
        if uid[:1] == ["0"] and state in STOPPED_STATES:
            name = status.get("Name", "?")
            return (
                f"its supervisor {name} (host pid {pid}, root) was {STOPPED_STATES[state]} from outside the "
                "sandbox, which code in the sandbox cannot do"
            )
    return None
