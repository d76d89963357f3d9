"""Why a sandbox's agent was lost, and whose doing it was (blame rule 3, docs/architecture.md), from the host's evidence.

Called when a request to the agent fails at the channel (the stream closed or broke, the
agent fell silent, or it missed its deadline). The answer is an exception to raise:
`SandboxEndedFromInside` when the evidence shows that the container's own processes did
it, a plain `SandboxError` (a harness fault) otherwise.

Evidence, in order:
1. A removal this backend asked for: the harness.
2. The stream carried junk the agent never writes (a line that is not JSON): sandboxed code
   wrote it there through the agent's descriptors.
3. The engine's record (events.py). The container died: with an `oom` first, its
   processes ran out of memory; with an outside `kill` first, someone outside ended it
   (docker kill or rm, gc, the engine); killed by a signal otherwise (exit code 128+N),
   its own processes ended the agent (`kill -9 -1`, or the agent's pid), but only where
   the agent runs as the sandboxed code's user: an agent out of its reach was killed from
   outside, and junk on its stream cannot be the sandbox's either. Exit code 0 is
   the agent leaving on end of input, which follows from the host closing the stream
   after the failure: no evidence either way. Any other exit code is the agent failing
   by itself: the harness. A container that is gone with no record of how: the harness.
   An ending that would be the sandbox's (out of memory, a signal from inside) is the
   harness's when its memory or pids limit had been changed from outside (blame rule 5, docs/architecture.md:
   `docker update --memory` lowered under correct code runs it out of memory).
4. The agent fell silent in a container that still runs. A container paused from outside
   (`docker pause`), or a root process of it (docker-init, the agent) stopped by a signal or
   a tracer (procs.py): someone outside held it, which the sandboxed code cannot do, so the
   harness, however busy the sandbox's other processes kept its CPU.
5. Otherwise the agent fell silent: the sandbox's cgroup over the last seconds before the
   failure (sampled while the call ran: cgroup.py) says whether it kept its CPU busy or
   sat at its pids or memory limit (its own doing) or was idle or starved (the harness).
"""

from __future__ import annotations

from collections.abc import Callable

from sandbox_env.constants import short
from sandbox_env.sandbox.docker.events import ContainerEvents, Ending
from sandbox_env.sandbox.types import SandboxEndedFromInside, SandboxError, Usage
from sandbox_env.sandbox.verdicts import judge_silence, outside_change

DEATH_WAIT = 3.0  # seconds to wait for the engine's `die` event after the stream closed
SIGNAL_NAMES = {9: "SIGKILL", 15: "SIGTERM", 6: "SIGABRT", 11: "SIGSEGV"}


def _ending_verdict(ending: Ending, agent_reachable: bool) -> tuple[bool | None, str]:
    """(True: the sandbox's doing, False: the harness's, None: no evidence) and why."""
    if ending.killed is not None:
        return False, f"it was killed from outside (signal {ending.killed}: docker kill or rm, gc, or the engine)"
    if ending.oom:
        return True, "its processes ran out of memory: the kernel's OOM killer ended the agent"
    code = ending.exit_code
    if code is None:
        return False, "it died and the engine gave no exit code"
    if code == 0:
        return None, "the agent left on end of input after the host closed the stream"
    if code > 128:
        name = SIGNAL_NAMES.get(code - 128, f"signal {code - 128}")
        if not agent_reachable:  # sandboxed code cannot signal an agent that runs as another user
            return False, f"the agent was killed by {name}, which code in the sandbox cannot send it"
        return True, f"its processes ended the agent from inside (killed by {name}; for example kill -9 -1)"
    return False, f"the agent failed by itself (exit code {code})"


def diagnose(
    sandbox_id: str,
    error: Exception,
    *,
    events: ContainerEvents,
    removing: bool,
    stream_closed: bool,
    protocol_broken: bool,
    running: Callable[[], bool | None],
    measure: Callable[[], Usage | None],
    agent_reachable: bool = True,
    held: Callable[[], str | None] = lambda: None,
) -> SandboxError:
    """The exception that says why the agent of `sandbox_id` was lost and whose doing it was.

    `running()` asks the engine whether the container still runs (None: it is gone);
    `measure()` is the sandbox's usage over the last seconds before the failure;
    `held()` says how the container or its supervisor was held from outside (paused,
    stopped), or None;
    `agent_reachable` whether the agent runs as the sandboxed code's own user (then that
    code can signal it and write to its descriptors; otherwise a signal or junk can only
    have come from outside).
    """
    who = f"sandbox {short(sandbox_id)}"
    if removing:
        return SandboxError(f"{who}: {error} (it was being removed by this backend)")
    if protocol_broken and agent_reachable:
        why = "junk that the agent never writes was put onto its stream (code in the sandbox wrote to the agent's descriptors)"
        return SandboxEndedFromInside(f"{who}: {error} ({why})", why)
    if protocol_broken:
        return SandboxError(f"{who}: {error} (the agent's stream carried junk, which code in the sandbox cannot write)")
    ending = events.wait_for_death(sandbox_id, DEATH_WAIT if stream_closed else 0.0)
    if ending is None and running() is not True:
        ending = events.wait_for_death(sandbox_id, DEATH_WAIT)
        if ending is None:
            return SandboxError(f"{who}: {error} (the container is gone and the engine kept no record of how it ended)")
    usage = measure()
    change = outside_change(usage)
    if ending is not None:
        inside, why = _ending_verdict(ending, agent_reachable)
        if inside and change:
            return SandboxError(f"{who}: {error} ({why}; but {change}, so that proves nothing against them)")
        if inside:
            return SandboxEndedFromInside(f"{who}: {error} ({why})", why)
        if inside is False:
            return SandboxError(f"{who}: {error} ({why})")
    hold = held()
    if hold:
        return SandboxError(f"{who}: {error} ({hold})")
    verdict = judge_silence(usage)
    if verdict.submission:
        why = f"the agent could not answer because {verdict.why}"
        return SandboxEndedFromInside(f"{who}: {error} ({why})", why)
    return SandboxError(f"{who}: {error} ({verdict.why})")
