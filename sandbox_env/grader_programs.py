"""Which runtime programs live in the image, and which reach a container only when it grades.

The policy may read anything in its rollout container. The grader programs (the HTTP
driver and its app host, the pytest runner and its recorder, the report channel and
everything else in sandbox_env/runtime/ that is not listed in IMAGE_RUNTIME) are
therefore not in the image: the host writes them into a grading container, under
GRADER_DIR, just before it starts one of them (grading.Grader.run_program), and a
rollout container never receives them. The image keeps only what rollouts need: the
agent, the Python session, the orm fixture project, and the build-time preparation.
The modules both sides import (SHARED_RUNTIME: the sandboxed side's clock, which holds
no secret) are in the image and are shipped with the grader programs too, so a grader
never depends on which image it runs in.

A grading container is fresh and runs no submission code before the grader has read
its programs; the submission could rewrite the files in GRADER_DIR afterwards (it runs
as the same uid), so the graders drop GRADER_DIR from sys.path once their own imports
are done, and nothing they load later comes from a writable place.
"""

from __future__ import annotations

import functools
from pathlib import Path

from sandbox_env.constants import RUNTIME_DIR

SHARED_RUNTIME = ("clock.py",)
IMAGE_RUNTIME = ("agent.py", "ops.py", "supervisor.py", "session.py", "prepare_image.py", "orm_fixture", *SHARED_RUNTIME)
GRADER_DIR = "/tmp/websandbox-grader"


def _wanted(path: Path) -> bool:
    return path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"


def image_runtime_files() -> list[Path]:
    """The runtime files that go into the image (and into its hash)."""
    files: list[Path] = []
    for name in IMAGE_RUNTIME:
        path = RUNTIME_DIR / name
        files += sorted(p for p in path.rglob("*") if _wanted(p)) if path.is_dir() else [path]
    return files


def grader_paths() -> list[Path]:
    """The runtime files that grading containers get: those not in the image, and the shared modules."""
    return sorted(p for p in RUNTIME_DIR.iterdir() if _wanted(p) and (p.name not in IMAGE_RUNTIME or p.name in SHARED_RUNTIME))


@functools.cache
def grader_files() -> dict[str, bytes]:
    """{absolute path in a grading container: content} of every grader program."""
    return {f"{GRADER_DIR}/{p.name}": p.read_bytes() for p in grader_paths()}


def grader_argv(python: str, program: str) -> list[str]:
    if f"{GRADER_DIR}/{program}" not in grader_files():
        raise ValueError(f"{program!r} is not a grader program in {RUNTIME_DIR}")
    return [python, "-E", "-s", f"{GRADER_DIR}/{program}"]
