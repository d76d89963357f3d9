"""A bash started ahead of the model's next command, so a call does not wait for bash to start.

Starting `bash -c` in the sandbox costs more than the rest of a call: the agent's fork with
its uid switch, then bash's exec, its dynamic linking and its locale, every file of which is
a round trip to the root filesystem's file server (fuse-overlayfs). Measured on a 2-core host
at load ~8: `bash('true')` took 10.8 ms of round trip, 5.4 ms of it `bash -c true` started
from Python inside the container. A standby shell pays all of that between calls: the agent
starts it after it has answered a plain command, and the next plain command is handed to it.
Only the model's bash tool sends plain commands (graders run argv programs), so a grading
container never holds a standby, and a rollout's first command starts its bash as before.

The standby runs `SCRIPT`: it reads the command from a pipe (the descriptor number the agent
got for it, passed down as it is) up to a NUL byte,
closes it, changes to the workspace (recreated since, perhaps) and evaluates the command, so
what the command sees is what `bash -c COMMAND` gives it: the same environment, `$0`, no
positional parameters, stdin, stdout and stderr pipes, its own session and process group
(killed at the limit and after the call as any command's). Two differences remain, both
only in what the model reads: a syntax error is reported as `eval: line N` rather than
`-c: line N`, and a lone command killed by a signal is reported by the shell (`Killed`,
exit code 128+N) rather than as the signal, because `eval` does not exec its last command.

Only a plain command takes the standby: no argv, no environment or working directory of its
own, at most `MAX_COMMAND` bytes and no NUL byte. The command and its NUL go in one write of
at most PIPE_BUF bytes on a non-blocking pipe, so the write is whole or refused and never
blocks the agent; a longer command would be read byte by byte by bash (its `read` on a pipe),
so it starts a fresh bash as before.

Threat model. The standby is the sandbox's process (uid 1000), as the command it will run
is: what the model's lingering processes can do to it (kill it, stop it, write into its
command pipe through /proc/PID/fd/N) they can do to that command once it runs. Each changes
only what the model's own next call returns, never a grade, and none can hold the agent:
a standby that has ended, is stopped or traced, or whose pipe refuses the whole command is
discarded, and the command starts a fresh bash.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
from collections.abc import Callable

MAX_COMMAND = 4095  # bytes; with the NUL, one PIPE_BUF write
SCRIPT = (
    'IFS= read -r -d "" __websandbox_command <&{fd}; exec {fd}<&-; cd -- {workspace} || exit 127; '
    'eval "unset __websandbox_command; $__websandbox_command"'
)


def fits(req: dict, workspace: str) -> bool:
    """True when an exec request is a plain command a standby shell runs as `bash -c` would."""
    command = req.get("command")
    return (
        isinstance(command, str)
        and not req.get("argv")
        and not req.get("env")
        and req.get("cwd") in (None, "", workspace)
        and "\0" not in command
        and len(command.encode()) <= MAX_COMMAND
    )


def _runnable(pid: int) -> bool:
    """True unless the process is stopped, traced or gone (a shell still starting up is fine)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] not in (b"T", b"t", b"Z", b"X")
    except (OSError, IndexError):
        return False


def discard(proc: subprocess.Popen) -> None:
    """Kill a shell's group, reap it and close its pipes."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.wait(timeout=2)
    except subprocess.TimeoutExpired:
        pass
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None and not stream.closed:
            stream.close()


class StandbyShell:
    """At most one bash waiting for the next plain command; `spawn` starts it as any command starts."""

    def __init__(self, spawn: Callable[..., subprocess.Popen]) -> None:
        self._spawn = spawn
        self._proc: subprocess.Popen | None = None
        self._fd: int | None = None

    def fill(self, workspace: str) -> None:
        """Start a standby shell in `workspace` unless one is waiting; one that cannot start is not there."""
        if self._proc is not None:
            if self._proc.poll() is None:
                return
            self._drop()
        r, w = os.pipe()
        try:
            self._proc = self._spawn(
                ["/bin/bash", "-c", SCRIPT.format(fd=r, workspace=shlex.quote(workspace))],
                cwd=workspace,
                env=dict(os.environ),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                pass_fds=(r,),
            )
        except OSError:
            os.close(w)
            return
        finally:
            os.close(r)
        os.set_blocking(w, False)
        self._fd = w

    def take(self, command: str) -> subprocess.Popen | None:
        """The standby, now running `command`; None when there is none fit to run it."""
        proc, fd = self._proc, self._fd
        self._proc = self._fd = None
        if proc is None or fd is None:
            return None
        data = command.encode() + b"\0"
        try:
            ok = proc.poll() is None and _runnable(proc.pid) and os.write(fd, data) == len(data)
        except OSError:  # a pipe filled by someone else (the write is refused whole), or no reader
            ok = False
        os.close(fd)
        if not ok:
            discard(proc)
            return None
        return proc

    def _drop(self) -> None:
        if self._proc is not None:
            discard(self._proc)
        if self._fd is not None:
            os.close(self._fd)
        self._proc = self._fd = None

    def stop(self) -> None:
        self._drop()
