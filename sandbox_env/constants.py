"""One home for paths, time limits and their slack, sizes, id lengths, and the defaults.

Every module reads its fixed values from here, and the env, `load_environment` and the
CLI all read one `DEFAULTS` object, so a default is written once.

Paths inside containers are fixed by `images/Dockerfile`; paths on the host are found
from this file, so they hold in a checkout and in an installed wheel alike. Everything the
environment needs at run time is inside the package but the image sources: in a checkout
they sit at the top (`images/`, beside `sandbox_env/`), and every wheel and sdist carries
them into the package (`sandbox_env/images/`), so `IMAGES_DIR` is the package's copy where
there is one and the checkout's otherwise. The repo root only exists in a checkout:
`REPO_ROOT` is for the tools that live there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# -- names ---------------------------------------------------------------------------
ENV_ID = "websandbox"
IMAGE_REPO = "websandbox-runtime"
TOOL_NAMES = ("bash", "execute_code")

# -- host paths ------------------------------------------------------------------------
PACKAGE_DIR = Path(__file__).resolve().parent
REPO_ROOT = PACKAGE_DIR.parent
TASKS_DIR = PACKAGE_DIR / "tasks"
DATA_FILE = PACKAGE_DIR / "data" / "tasks.jsonl"
RUNTIME_DIR = PACKAGE_DIR / "runtime"
# Two trust zones, one folder each: what every container has (the image carries it, and a
# rollout container is where the policy reads it) and what only a grading container receives.
CONTAINER_PROGRAMS_DIR = RUNTIME_DIR / "container"
GRADER_PROGRAMS_DIR = RUNTIME_DIR / "grader"
# an installed wheel's copy, else the checkout's (never both: the checkout keeps none in the package)
IMAGES_DIR = PACKAGE_DIR / "images" if (PACKAGE_DIR / "images").is_dir() else REPO_ROOT / "images"

# -- container paths and identities ----------------------------------------------------------
CONTAINER_PYTHON = "/opt/venv/bin/python"
CONTAINER_RUNTIME = "/opt/websandbox/runtime"
WORKSPACE = "/workspace"
SANDBOX_USER = "1000:1000"
ORM_IMAGE_DB = "/opt/websandbox/orm.sqlite3"  # built at image build time by runtime/container/prepare_image.py
# -S: the agent needs only the standard library, so it skips site-packages at start.
AGENT_ARGV = [CONTAINER_PYTHON, "-S", "-u", f"{CONTAINER_RUNTIME}/agent.py"]

# -- time (seconds) ------------------------------------------------------------------------
# The host waits this long past an in-container limit before it calls the agent lost:
# the agent enforces the limit itself and needs time to kill, collect and answer.
CALL_SLACK = 15.0
# A tool call's limit counts the sandbox's active time (runtime/container/agent.py, CallLimit); the
# agent ends a call as starved (a harness fault) when this many limits of wall clock pass
# first. The host waits CALL_BACKSTOP_FACTOR * limit + CALL_SLACK for the reply. Not 4:
# the default budget (4 sandboxes a core, sandbox/budget.py) all busy gives each a quarter
# of a core, which would put a CPU-bound command exactly at a backstop of 4 limits.
CALL_BACKSTOP_FACTOR = 6.0
# A grading's limit counts the grading sandbox's active time the same way, and the
# verdict at its backstop counts the CPU its processes consumed (sandbox/verdicts.py,
# judge_backstop), so a busy wrong answer reaches its limit, its own 0, at any share of a
# CPU it gets above 1/GRADING_BACKSTOP_FACTOR. Twelve: the budget all busy grading gives
# each a quarter of a core, and a host whose other processes hold half of it an eighth;
# twelve leaves half as much again. The price: a run really starved waits twelve limits
# before it is called the harness's.
GRADING_BACKSTOP_FACTOR = 12.0
# A grading sandbox's CPU weight (`docker update --cpu-shares`) against the engine's 1024 for
# every other sandbox: busy rollouts beside it cannot starve a grading.
GRADING_CPU_SHARES = 4096
READY_TIMEOUT = 60.0  # a new sandbox's agent must answer within this
SPAWN_TIMEOUT = 30.0  # starting a grader program
FILE_IO_TIMEOUT = 60.0  # writing or reading files
SESSION_START_TIMEOUT = 90.0  # the persistent Python session's first cell (imports Django)
POLICY_SERVER_START_TIMEOUT = 15.0

# -- sizes -----------------------------------------------------------------------------------
SHORT_ID = 12  # characters of a container id or a hash in messages, labels and tags
NAME_SUFFIX = 10  # random characters in a container name
GRADER_MAX_OUTPUT = 64 << 20  # bytes of a grader program's output read back
ENGINE_MESSAGE_CHARS = 400  # first line of an engine error, in a message
REPORT_TAIL_CHARS = 800  # grader output quoted when no report came back
AGENT_STDERR_TAIL = 2000  # agent stderr quoted when its stream closes
REASON_CHARS = 300  # one quoted line in a grade's reason
REPR_CHARS = 200  # a value's repr in a probe's answer


def short(identifier: str) -> str:
    """The short form of a container id or hash used in messages and names."""
    return identifier[:SHORT_ID]


@dataclass(frozen=True)
class Defaults:
    """The defaults of every tunable; `load_environment`, the env and the CLI read these."""

    # grading and tools
    timeout_seconds: float = 90.0  # one grading
    timeout_per_command_seconds: float = 30.0  # one tool call
    output_cap: int = 8000  # characters of one tool output shown to the model
    max_turns: int = 20
    orm_max_turns: int = 5
    # container limits
    cpus: float = 1.0
    memory_mb: int = 1024
    pids_limit: int = 256
    workspace_mb: int = 256
    tmp_mb: int = 256
    network: bool = False
    # the main job
    eval_concurrency: int = 4
    verify_concurrency: int = 2


DEFAULTS = Defaults()

REPLACEMENT_SLACK = 60.0  # seconds: a call whose sandbox was ended from inside waits for a fresh one


def tool_call_wait_seconds(timeout_per_command_seconds: float) -> float:
    """The longest a tool call can take before its answer: its wall-clock backstop, the host's slack, a replacement.

    A front door that waits less (a bridge, a client) would answer "unreachable" while the
    sandbox still works on the call.
    """
    return CALL_BACKSTOP_FACTOR * timeout_per_command_seconds + CALL_SLACK + REPLACEMENT_SLACK
