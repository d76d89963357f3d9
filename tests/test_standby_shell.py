"""A plain bash command runs in the standby shell the agent started after the previous one, as `bash -c` would.

runtime/container/standby.py: after answering a plain command the agent starts the next bash, so
the next plain command does not wait for bash to start. What the command sees and what comes
back must be what a fresh `bash -c COMMAND` gives (an argv request, `["/bin/bash", "-c", CMD]`,
never takes the standby, so it is the reference here), except the two differences the module
states.
"""

from __future__ import annotations

import pytest

from sandbox_env.runtime.container.standby import MAX_COMMAND

pytestmark = pytest.mark.docker

SHELL_OF_THIS_COMMAND = "tr '\\0' ' ' < /proc/$$/cmdline"

SAME_AS_BASH_C = [
    "true",
    "exit 7",
    "echo out; echo err >&2; exit 3",
    'echo $0 $# "$*"; printf \'%s|\' "$@"',
    "pwd; id -u; id -G; umask; ulimit -n",
    "echo $HOME $PATH $LANG; echo $-",
    "shopt -p | md5sum; set -o | md5sum",
    "compgen -v | grep -ci websandbox",
    "cat; echo",
    "set -e; false; echo never",
    "trap 'echo bye' EXIT; echo hi",
    "ls /nonexistent",
    "no_such_command_here",
    "echo $LINENO\necho $LINENO",
    "x=1; for i in 1 2 3; do x=$((x*i)); done; echo $x",
    "sleep 0.1 & wait $!; echo waited $?",
    "cd /tmp && pwd",
    "echo 'single \" quoted $HOME' \"double ' $HOME\" \\$HOME",
]


async def test_a_plain_command_after_another_runs_in_the_standby_shell(sandbox):
    first = await sandbox.exec(SHELL_OF_THIS_COMMAND)
    second = await sandbox.exec(SHELL_OF_THIS_COMMAND)
    assert "__websandbox_command" not in first.stdout, first  # a sandbox's first command starts its bash
    assert "__websandbox_command" in second.stdout, second
    own_env = await sandbox.exec(SHELL_OF_THIS_COMMAND, env={"X": "1"})
    assert "__websandbox_command" not in own_env.stdout, own_env


@pytest.mark.parametrize("command", SAME_AS_BASH_C)
async def test_a_command_in_the_standby_answers_as_bash_c_does(sandbox, command):
    await sandbox.exec("true")
    got = await sandbox.exec(command, stdin=b"from stdin")
    want = await sandbox.exec(["/bin/bash", "-c", command], stdin=b"from stdin")
    assert (got.stdout, got.stderr, got.exit_code) == (want.stdout, want.stderr, want.exit_code)


async def test_each_command_starts_in_the_workspace_whatever_the_last_one_did(sandbox):
    await sandbox.exec("cd /tmp; export LEFT=1; set -e")
    got = await sandbox.exec("pwd; echo ${LEFT:-unset}; echo $-")
    assert got.stdout == "/workspace\nunset\nhBc\n", got


async def test_a_command_too_long_for_one_pipe_write_starts_its_own_bash_and_runs_whole(sandbox):
    await sandbox.exec("true")
    body = "x" * MAX_COMMAND
    got = await sandbox.exec(f"s='{body}'; echo ${{#s}}; " + SHELL_OF_THIS_COMMAND)
    assert got.stdout.startswith(f"{MAX_COMMAND}\n") and "__websandbox_command" not in got.stdout, got.stdout[:200]


async def test_the_two_stated_differences_are_all_a_model_reads(sandbox):
    await sandbox.exec("true")
    syntax = await sandbox.exec("echo a; (")
    assert syntax.exit_code == 2 and "eval: line 2: syntax error" in syntax.stderr, syntax
    await sandbox.exec("true")
    killed = await sandbox.exec("python -c 'import os; os.kill(os.getpid(), 9)'")
    assert killed.exit_code == 137 and "Killed" in killed.stderr and not killed.timed_out, killed
