"""Why a sandbox's agent was lost, and whose doing it was (blame.py, rule 3), from the host's evidence.

Called when a request to the agent fails at the channel (the stream closed or broke, the
agent fell silent, or it missed its deadline). The answer is an exception to raise:
`SandboxEndedFromInside` when the evidence shows that the container's own processes did
it, a plain `SandboxError` (a harness fault) otherwise.

Evidence, in order:
1. The engine's record (events.py). The container died: with an `oom` first, its
   processes ran out of memory; with an outside `kill` first, or a removal this backend
   asked for, someone outside ended it; otherwise its own processes ended its agent
   (`kill -9 -1`, or killing the agent by pid). A container that is gone with no record
   of how is a harness fault.
2. The stream carried junk the agent never writes (a line that is not JSON): sandboxed code
   wrote it there through the agent's descriptors.
3. The container still runs and its agent is silent: its cgroup over one second
   (cgroup.py) says whether the sandbox kept its CPU busy or sat at its pids or memory
   limit (its own doing) or was idle (the harness: a starved or faulty agent).
"""

from __future__ import annotations

from collections.abc import Callable

from sandbox_env.blame import judge_silence
from sandbox_env.constants import short
from sandbox_env.sandbox.docker.events import ContainerEvents, Ending
from sandbox_env.sandbox.types import SandboxEndedFromInside, SandboxError, Usage

DEATH_WAIT = 3.0  # seconds to wait for the engine's `die` event after the stream closed
SILENCE_WINDOW = 1.0  # seconds over which a silent agent's sandbox is measured


def _ending_verdict(ending: Ending, removing: bool) -> tuple[bool, str]:
    if removing:
        return False, "it was being removed by this backend"
    if ending.killed is not None:
        return False, f"it was killed from outside (signal {ending.killed}: docker kill or rm, gc, or the engine)"
    if ending.oom:
        return True, "its processes ran out of memory: the kernel's OOM killer ended the agent"
    code = ending.exit_code
    how = f"exit code {code}" + (" (SIGKILL)" if code == 137 else "") if code is not None else "no exit code"
    return True, f"its processes ended the agent from inside ({how}; for example kill -9 -1)"


def diagnose(sandbox_id: str, error: Exception, *, events: ContainerEvents, removing: bool,
             stream_closed: bool, protocol_broken: bool, running: Callable[[], bool | None],
             measure: Callable[[float], Usage | None]) -> SandboxError:  # fmt: skip
    """The exception that says why the agent of `sandbox_id` was lost and whose doing it was.

    `running()` asks the engine whether the container still runs (None: it is gone);
    `measure(seconds)` samples its cgroup over that many seconds.
    """
    who = f"sandbox {short(sandbox_id)}"
    ending = events.wait_for_death(sandbox_id, DEATH_WAIT if stream_closed else 0.0)
    if ending is None:
        state = running()
        if state is None:
            ending = events.wait_for_death(sandbox_id, DEATH_WAIT)
            if ending is None:
                return SandboxError(f"{who}: {error} (the container no longer exists and the engine kept no record "
                                    "of how it ended)")  # fmt: skip
        elif state is False:
            ending = events.wait_for_death(sandbox_id, DEATH_WAIT)
    if ending is not None:
        inside, why = _ending_verdict(ending, removing)
        if inside:
            return SandboxEndedFromInside(f"{who}: {error} ({why})", why)
        return SandboxError(f"{who}: {error} ({why})")
    if removing:
        return SandboxError(f"{who}: {error} (it was being removed by this backend)")
    if protocol_broken:
        why = "junk that the agent never writes was put onto its stream (code in the sandbox wrote to the agent's descriptors)"
        return SandboxEndedFromInside(f"{who}: {error} ({why})", why)
    verdict = judge_silence(measure(SILENCE_WINDOW))
    if verdict.submission:
        why = f"the agent could not answer because {verdict.why}"
        return SandboxEndedFromInside(f"{who}: {error} ({why})", why)
    return SandboxError(f"{who}: {error} ({verdict.why})")
