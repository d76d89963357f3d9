"""Which runtime programs live in the image, and which reach a container only when it grades.

The folder is the boundary: runtime/container/ is what the image carries (the agent, the
Python session, the orm fixture project, the build-time preparation), runtime/grader/ is the
grader programs (the HTTP driver and its app host, the pytest runner and its recorder, the
report channel and the guards they share). The policy may read anything in its rollout
container, so the grader programs are not in the image: the host writes them into a
grading container, under GRADER_DIR, just before it starts one of them
(grading/grader.py, Grader.run_program), and a rollout container never receives them. The
modules a grader imports from runtime/container/ (SHARED_RUNTIME: the sandboxed side's
clock, which holds no secret) are shipped with the grader programs too, so a grader never
depends on which image it runs in; tests/test_import_rules.py keeps the container side from
importing any grader module and the grader side to SHARED_RUNTIME.

A grading container is fresh and runs no submission code before the grader has read
its programs; the submission could rewrite the files in GRADER_DIR afterwards (it runs
as the same uid), so the graders drop GRADER_DIR from sys.path once their own imports
are done, and nothing they load later comes from a writable place.
"""

from __future__ import annotations

import functools
from pathlib import Path

from sandbox_env.constants import CONTAINER_PROGRAMS_DIR, GRADER_PROGRAMS_DIR

SHARED_RUNTIME = ("clock.py",)
GRADER_DIR = "/tmp/websandbox-grader"


def _wanted(path: Path) -> bool:
    return path.is_file() and "__pycache__" not in path.parts and path.suffix != ".pyc"


def image_runtime_files() -> list[Path]:
    """The runtime files that go into the image (and into its hash): all of runtime/container/."""
    return sorted(p for p in CONTAINER_PROGRAMS_DIR.rglob("*") if _wanted(p))


def grader_paths() -> list[Path]:
    """The runtime files that grading containers get: the grader programs and the shared modules."""
    shared = [CONTAINER_PROGRAMS_DIR / name for name in SHARED_RUNTIME]
    return sorted([p for p in GRADER_PROGRAMS_DIR.iterdir() if _wanted(p)] + shared)


@functools.cache
def grader_files() -> dict[str, bytes]:
    """{absolute path in a grading container: content} of every grader program."""
    return {f"{GRADER_DIR}/{p.name}": p.read_bytes() for p in grader_paths()}


def grader_argv(python: str, program: str) -> list[str]:
    if f"{GRADER_DIR}/{program}" not in grader_files():
        raise ValueError(f"{program!r} is not a grader program in {GRADER_PROGRAMS_DIR}")
    return [python, "-E", "-s", f"{GRADER_DIR}/{program}"]
