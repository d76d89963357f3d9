"""Where runs are: the newest saved run, of either verifiers stack, when the reader names none.

vf-eval 0.3.x saves a run to `environments/<env>/outputs/evals/<env>--<model>/<run id>/`
under the directory it ran in when that `environments/<env>` folder exists (a checkout),
else to `outputs/evals/...` there; `websandbox eval` runs it in the caller's directory. A
classic run is a folder holding `results.jsonl`.

`websandbox eval` on verifiers 0.4.x saves a v1 run to `environments/websandbox/outputs/v1/<run
name>/` in a checkout, else `outputs/v1/<run name>/` (eval_v1.output_dir): a folder holding
`traces.jsonl`.

The newest run is the one whose results (or traces) were written last, whichever stack made it.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from sandbox_env.constants import REPO_ROOT

OUTPUTS = Path("environments") / "websandbox" / "outputs"
EVALS = OUTPUTS / "evals"
V1 = OUTPUTS / "v1"
RUN_FILES = ("results.jsonl", "traces.jsonl")


def search_roots(cwd: Path) -> list[Path]:
    """Where a run made from `cwd` is: the checkout's folders, the fallbacks, and this checkout's."""
    here = [cwd / EVALS, cwd / "outputs" / "evals", cwd / V1, cwd / "outputs" / "v1"]
    return here + ([REPO_ROOT / EVALS, REPO_ROOT / V1] if (REPO_ROOT / "environments").is_dir() else [])


def run_file(run: Path) -> Path | None:
    """The file that makes `run` a run (results.jsonl or traces.jsonl), or None."""
    return next((run / name for name in RUN_FILES if (run / name).is_file()), None)


def runs_under(root: Path) -> list[Path]:
    """Runs in `root`: classic ones two levels down (`<env>--<model>/<run id>`), v1 ones one level down."""
    root = Path(root)
    return [p for p in (*root.glob("*/*"), *root.glob("*")) if p.is_dir() and run_file(p)]


def newest_run(roots: Iterable[Path]) -> Path:
    """The most recently written run under any of `roots` (`.../outputs/evals` or `.../outputs/v1` folders)."""
    roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
    runs = list(dict.fromkeys(p for root in roots for p in runs_under(root)))
    if not runs:
        where = " or ".join(str(r) for r in roots)
        raise FileNotFoundError(
            f"no saved run under {where}: make one with `websandbox eval` (or vf-eval ... -s -C grade), or give the run's folder"
        )
    return max(runs, key=lambda p: run_file(p).stat().st_mtime)
