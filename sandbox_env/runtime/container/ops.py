"""The agent's operations: the one list of the request names the host sends and runtime/container/agent.py serves.

The agent imports it beside itself in the image (`import ops`); the host imports it as
`sandbox_env.runtime.container.ops` (sandbox/interface.py, the Docker client). A name changed here
changes both sides at once, and the image's tag with it. Standard library only, nothing
from its own folder: it is a container program like the agent.
"""

PING = "ping"  # is the agent there: {"pong": true, "pid", "supervised", "oom_protected"}
EXEC = "exec"  # run a command in its own process group, with a time limit and an output cap
SPAWN = "spawn"  # start a program that waits for its stdin (a grader program)
FEED = "feed"  # give a spawned program its stdin and finish it like exec
WRITE = "write"  # write files as the sandbox user
READ = "read"  # read regular files as the sandbox user
PY_START = "py_start"  # (re)start the persistent Python session with a preamble
PY_EXEC = "py_exec"  # run a cell in the session
PY_PROBE = "py_probe"  # a session variable as tagged JSON

ALL = frozenset({PING, EXEC, SPAWN, FEED, WRITE, READ, PY_START, PY_EXEC, PY_PROBE})
