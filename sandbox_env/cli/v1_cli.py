"""Where verifiers' v1 eval CLI is: by module, whatever name the installed verifiers gives its script.

verifiers 0.4.0 installs the v1 eval as `vf-eval`; the builds prime-rl pins install it
as `eval` and keep `vf-eval` for the legacy classic script. Both point at the same
module, `verifiers.v1.cli.eval.main:main`, so `websandbox eval` runs that module with
this interpreter (`python -c`, as its script would) and says which script name this
verifiers installs for it, so a user can run the same thing by hand.
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

V1_EVAL_ENTRY = "verifiers.v1.cli.eval.main:main"
_module, _function = V1_EVAL_ENTRY.split(":")
V1_EVAL_RUNNER = f"import sys; from {_module} import {_function}; sys.exit({_function}())"


def v1_eval_script_name() -> str | None:
    """The console script the installed verifiers names for its v1 eval (`vf-eval` or `eval`), None if none."""
    for entry in entry_points(group="console_scripts"):
        if entry.value.replace(" ", "") == V1_EVAL_ENTRY and (entry.dist is None or entry.dist.name == "verifiers"):
            return entry.name
    return None


def v1_eval_command(*args: str) -> list[str]:
    """The argv that runs v1's eval with this interpreter on `args`."""
    return [sys.executable, "-c", V1_EVAL_RUNNER, *args]


def v1_eval_description() -> str:
    """One line for the log: which CLI runs, under which name a user finds it."""
    name = v1_eval_script_name()
    where = f"installed as `{name}`" if name else "installed under no script name"
    return f"verifiers' v1 eval ({V1_EVAL_ENTRY}, {where})"
