"""The v1 front door (verifiers 0.4.x): the websandbox taskset, its toolset and env.

Importing this package needs verifiers 0.4.x; the classic front door is
`sandbox_env.doors.classic` (verifiers 0.3.x). Both drive the same families, graders and
Docker backend through the one rollout core (`sandbox_env/rollout/core.py`), which is all
of websandbox that this package uses besides the families' data.
"""

from sandbox_env.doors.v1.harness import WebSandboxHarness
from sandbox_env.doors.v1.taskset import (
    WebSandboxData,
    WebSandboxEnv,
    WebSandboxEnvConfig,
    WebSandboxTask,
    WebSandboxTaskConfig,
    WebSandboxTaskset,
    WebSandboxTasksetConfig,
)
from sandbox_env.doors.v1.toolset import WebSandboxState, WebSandboxToolset, WebSandboxToolsetConfig

__all__ = [
    "WebSandboxData",
    "WebSandboxEnv",
    "WebSandboxEnvConfig",
    "WebSandboxHarness",
    "WebSandboxState",
    "WebSandboxTask",
    "WebSandboxTaskConfig",
    "WebSandboxTaskset",
    "WebSandboxTasksetConfig",
    "WebSandboxToolset",
    "WebSandboxToolsetConfig",
]
