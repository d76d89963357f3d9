"""What a model can do to its own sandbox, written as it would write it: from a tool call or in a deliverable.

Each attack is the model's own doing, so each must end in the submission's 0.0 (graded
deliverable) or a fresh sandbox and a tool message (tool call): never a scoring_error
(sandbox_env/blame rule 4, docs/architecture.md). Before the agent runs out of the sandboxed code's reach,
some of these end the agent itself; after, they end only what the sandboxed code owns.
The expectations hold either way.
"""

from __future__ import annotations

# -- from a tool call --------------------------------------------------------------------------
KILL_ALL_BASH = "kill -9 -1"
KILL_ALL_PYTHON = "import os\nos.kill(-1, 9)"
FORK_BOMB_BASH = "bomb() { bomb | bomb & }; bomb"
MEMORY_BOMB_BASH = "python -c \"chunks = []\nwhile True: chunks.append(b'x' * (64 << 20))\""
MEMORY_BOMB_PYTHON = "chunks = []\nwhile True:\n    chunks.append(b'x' * (64 << 20))"
# a broken JSON line onto every descriptor of every process it can open (the agent's stdout among them)
JUNK_ON_EVERY_FD_BASH = (
    r"""for f in /proc/[0-9]*/fd/[0-9]*; do timeout 1 sh -c 'echo "{\"id\": 1, \"junk" > "$1"' _ "$f" 2>/dev/null; done;"""
    " echo sprayed"
)

# -- at import of a deliverable (app.py / a Django module) -------------------------------------------
KILL_ALL_AT_IMPORT = "import os\nos.kill(-1, 9)\n"
FORK_BOMB_AT_IMPORT = """
import os
while True:
    try:
        os.fork()
    except OSError:
        pass
"""
MEMORY_BOMB_AT_IMPORT = """
chunks = []
while True:
    chunks.append(b"x" * (64 << 20))
"""
JUNK_ON_EVERY_FD_AT_IMPORT = """
import os
for pid in os.listdir("/proc"):
    if not pid.isdigit():
        continue
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            handle = os.open(f"/proc/{pid}/fd/{fd}", os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            os.write(handle, b'{"id": 1, "junk\\n')
        except OSError:
            pass
        os.close(handle)
for fd in range(3, 64):
    try:
        os.write(fd, b'{"junk": \\n')
    except OSError:
        pass
"""

AT_IMPORT = {
    "kill -9 -1": KILL_ALL_AT_IMPORT,
    "fork bomb": FORK_BOMB_AT_IMPORT,
    "memory bomb": MEMORY_BOMB_AT_IMPORT,
    "junk on every fd": JUNK_ON_EVERY_FD_AT_IMPORT,
}

FROM_A_TOOL_CALL = {
    "kill -9 -1 from bash": ("bash", {"command": KILL_ALL_BASH}),
    "kill -9 -1 from the Python session": ("execute_code", {"code": KILL_ALL_PYTHON}),
    "fork bomb from bash": ("bash", {"command": FORK_BOMB_BASH}),
    "memory bomb from bash": ("bash", {"command": MEMORY_BOMB_BASH}),
    "memory bomb in the Python session": ("execute_code", {"code": MEMORY_BOMB_PYTHON}),
    "junk on every fd from bash": ("bash", {"command": JUNK_ON_EVERY_FD_BASH}),
}
