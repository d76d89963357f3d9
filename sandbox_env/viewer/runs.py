"""Where runs are: the newest saved run when the reader names none.

vf-eval 0.3.x saves a run to `environments/<env>/outputs/evals/<env>--<model>/<run id>/`
under the directory it ran in when that `environments/<env>` folder exists (a checkout),
else to `outputs/evals/...` there; `websandbox eval` runs it in the caller's directory. A
run is a folder holding `results.jsonl`; the newest is the one whose results were written last.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sandbox_env.constants import REPO_ROOT

EVALS = Path("environments") / "websandbox" / "outputs" / "evals"


def search_roots(cwd: Path) -> list[Path]:
    """Where a run made from `cwd` is: the checkout's folder, vf-eval's fallback, and this checkout's."""
    roots = [cwd / EVALS, cwd / "outputs" / "evals"]
    return roots + ([REPO_ROOT / EVALS] if (REPO_ROOT / "environments").is_dir() else [])


def runs_under(root: Path) -> list[Path]:
    return [p for p in Path(root).glob("*/*") if (p / "results.jsonl").is_file()]


def newest_run(roots: Iterable[Path]) -> Path:
    """The most recently written run under any of `roots` (each an `.../outputs/evals` folder)."""
    roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
    runs = [p for root in roots for p in runs_under(root)]
    if not runs:
        where = " or ".join(str(r) for r in roots)
        raise FileNotFoundError(
            f"no saved run under {where}: make one with `websandbox eval` (or vf-eval ... -s -C grade), or give the run's folder"
        )
    return max(runs, key=lambda p: (p / "results.jsonl").stat().st_mtime)
