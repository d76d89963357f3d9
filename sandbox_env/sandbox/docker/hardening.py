"""How a sandbox container is locked down: the create arguments every sandbox gets.

Identities. The container's main process is `runtime/container/agent.py` under `docker-init`,
and both run as root (uid 0) with every capability dropped except the four the agent
needs to start, stop and outlive the sandboxed code: SETUID and SETGID (to spawn tool
commands, the Python session and grader programs as uid 1000 with no supplementary
groups), KILL (to stop their process groups), and SYS_RESOURCE (to set its own and
docker-init's OOM score to -1000: a model that spreads its memory over many processes
smaller than the agent, or holds it in socket buffers, would otherwise get the agent
killed when the container runs out of memory; children start at 0 and cannot go below
it). Some engines cannot grant SYS_RESOURCE (one that itself runs without it fails
every start with "unable to apply caps"). No throwaway container finds this out: the
first sandbox asks for it (`sys_resource_grant`: one start at a time until the engine
has answered), and when the engine refuses (`refuses_capability`) that sandbox starts
again without it, as every later one of this process; the agent then runs unprotected from the OOM killer
(its ping reply says `"oom_protected": false`). An engine that grants it, the usual
case, costs nothing extra: a one-task run starts only the containers its work needs. Everything the model runs is uid
1000: a process of another uid cannot open `/proc/<agent>/fd/*`, read its memory or
environment, signal it (`kill -STOP`, `kill -9 -1`) or trace it. Going from uid 0 to
uids that are all nonzero clears the permitted and effective capability sets, so the
sandboxed code holds no capability (CapPrm = CapEff = 0; the bounding set keeps the
four, which `no-new-privileges` makes useless: no setuid binary or file capability
can raise them again). The agent also reads and writes /workspace files under
filesystem uid/gid 1000 (see agent.py), so a link the model plants is followed with
the model's own rights, never root's.

Why root and not a dedicated supervisor uid: a nonzero uid that switches to 1000
keeps its permitted capabilities, so the children would have to drop them one by one;
from uid 0 the kernel drops them all. Root holds no DAC or admin capability here and
the root filesystem is read-only.

Memory outside the tmpfs limits. `/dev/shm` is a 16 MiB tmpfs (pages are charged to
the container's memory cgroup, so they also count within `memory_mb`); System V
shared memory is capped at the same 16 MiB in total and a segment dies with its last
user (`shm_rmid_forced`); System V message queues and semaphores get small counts;
POSIX message queues are unavailable (`fs.mqueue.queues_max=0`, `ulimit -q 0`): their
byte budget is per host uid, shared by every sandbox, so any nonzero allowance would
let one sandbox starve the others. The IPC namespace is private to the container.
dockerd 20.10 accepts all of these (IPC sysctls require a private IPC namespace).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

import docker
import docker.errors
import docker.types

from sandbox_env.constants import WORKSPACE

SANDBOX_UID = 1000
SUPERVISOR_USER = "0:0"
AGENT_CAPABILITIES = ["SETUID", "SETGID", "KILL"]
OOM_CAPABILITY = "SYS_RESOURCE"
SHM_MB = 16
IPC_SYSCTLS = {
    "kernel.shmmax": str(SHM_MB << 20),
    "kernel.shmall": str((SHM_MB << 20) // 4096),  # in pages
    "kernel.shmmni": "64",
    "kernel.shm_rmid_forced": "1",
    "kernel.msgmni": "8",
    "kernel.msgmnb": "16384",
    "kernel.msgmax": "8192",
    "kernel.sem": "250 4000 32 16",  # SEMMSL SEMMNS SEMOPM SEMMNI
    "fs.mqueue.queues_max": "0",
}


_GRANTED: set[str] = set()  # engines (by address) that started a sandbox holding SYS_RESOURCE
_REFUSED: set[str] = set()  # engines that refused it to this process
_KNOWN_LOCK = threading.Lock()
_LEARNING = threading.Lock()  # while an engine's answer is unknown, one start at a time asks


class Grant:
    """Whether one start asks for SYS_RESOURCE, and what it learnt."""

    def __init__(self, key: str, ask: bool) -> None:
        self.key = key
        self.ask = ask

    def granted(self) -> None:
        with _KNOWN_LOCK:
            _GRANTED.add(self.key)

    def refused(self) -> None:
        """The engine refused: this start and every later one of this process go without it."""
        with _KNOWN_LOCK:
            _REFUSED.add(self.key)
        self.ask = False


@contextlib.contextmanager
def sys_resource_grant(client: docker.DockerClient, key: str | None = None) -> Iterator[Grant]:
    """Around one container start: whether to ask `client`'s engine for SYS_RESOURCE.

    Until the engine has answered once, starts ask one at a time, so that concurrent
    first sandboxes cost one refused start at most, not one each. `key`: the engine's
    address (every unix socket's base URL reads `http+docker://localhost`).
    """
    key = key or client.api.base_url
    with _KNOWN_LOCK:
        known = key in _GRANTED or key in _REFUSED
    if known:
        yield Grant(key, ask=key not in _REFUSED)
        return
    with _LEARNING:
        with _KNOWN_LOCK:
            ask = key not in _REFUSED
        yield Grant(key, ask)


def refuses_capability(exc: BaseException) -> bool:
    """Whether a failed create or start is the engine refusing a capability ("unable to apply caps")."""
    return isinstance(exc, docker.errors.APIError) and "caps" in str(exc)


def create_kwargs(limits: Any, oom_protection: bool = False) -> dict[str, Any]:
    """`containers.create` arguments for identities, isolation and limits (`limits`: a sandbox Limits).

    `oom_protection`: also grant SYS_RESOURCE so the agent can keep the OOM killer off
    itself (`sys_resource_grant(...).ask`).
    """
    return {
        "user": SUPERVISOR_USER,
        "network_mode": "bridge" if limits.network else "none",
        "nano_cpus": int(limits.cpus * 1e9),
        "mem_limit": f"{limits.memory_mb}m",
        "memswap_limit": f"{limits.memory_mb}m",
        "pids_limit": limits.pids,
        "cap_drop": ["ALL"],
        "cap_add": AGENT_CAPABILITIES + ([OOM_CAPABILITY] if oom_protection else []),
        "security_opt": ["no-new-privileges"],
        "read_only": True,
        "tmpfs": {
            WORKSPACE: f"size={limits.workspace_mb}m,uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0755",
            "/tmp": f"size={limits.tmp_mb}m,mode=1777",
        },
        "ipc_mode": "private",
        "shm_size": f"{SHM_MB}m",
        "sysctls": dict(IPC_SYSCTLS),
        "ulimits": [docker.types.Ulimit(name="msgqueue", soft=0, hard=0)],
        "init": True,
        # the agent's stream is protocol, not a log: keeping it would cost a write per reply
        "log_config": docker.types.LogConfig(type="none"),
    }
