"""What the tests that install the environment as a user would share: uv, and commands whose output is shown."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest


def uv_path() -> str:
    """This venv's uv (make setup and make setup-v1 install it)."""
    found = shutil.which("uv") or str(Path(sys.executable).with_name("uv"))
    if not Path(found).exists():
        pytest.fail("uv is needed to build and install the wheel: pip install uv (make setup installs it)")
    return found


def run_shown(cmd: list[str], cwd: Path, env: dict | None = None, timeout: float = 900) -> subprocess.CompletedProcess:
    """Run `cmd`, print its command line and the tails of its output, and fail on a non-zero exit."""
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    print(f"$ {' '.join(cmd)}  (exit {proc.returncode})\n{proc.stdout[-6000:]}\n{proc.stderr[-6000:]}")
    assert proc.returncode == 0, f"{cmd[0]} {cmd[1]} failed with exit code {proc.returncode}"
    return proc
