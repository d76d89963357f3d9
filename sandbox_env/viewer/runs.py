"""Where runs are: every saved run, of either verifiers stack, under the usual outputs folders.

Where each tool saves, relative to the directory it ran in:
- vf-eval 0.3.x: `environments/<env>/outputs/evals/<env>--<model>/<run id>/` when that
  `environments/<env>` folder exists (a checkout), else `outputs/evals/...`; `websandbox
  eval` runs it in the caller's directory. A classic run is a folder holding `results.jsonl`.
- `websandbox eval` on verifiers 0.4.x: `environments/websandbox/outputs/v1/<run name>/` in a
  checkout, else `outputs/v1/<run name>/` (eval_v1.output_dir).
- plain `vf-eval websandbox` of verifiers 0.4.x: `outputs/<run name>/` (its `--output-dir`
  default), whatever the folder; a replay: `outputs/<name>--replay/<uuid>/`.
  A v1 run is a folder holding `traces.jsonl` (and `configs/`).

So the roots are the `outputs` folders (the caller's, a checkout's environment folder's, and
this checkout's), and a run is any folder up to three levels below a root that holds a run
file; the walk does not enter a run (its `logs/` and `configs/` hold none), hidden folders or
symbolic links (no loops, nothing outside the root). The newest run is the one whose results
(or traces) were written last, whichever stack made it.

A run's `run_id` (a hash of its resolved path) is how the loopback server names it in a URL:
the server serves only runs it found itself, so no path from a request ever reaches the disk.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

from sandbox_env.constants import REPO_ROOT

OUTPUTS = Path("environments") / "websandbox" / "outputs"
EVALS = OUTPUTS / "evals"
V1 = OUTPUTS / "v1"
RUN_FILES = ("results.jsonl", "traces.jsonl")
# beside the run file, what a run writes about itself: a change to any of them is a change to the run
SIDE_FILES = ("metadata.json", str(Path("configs") / "resolved" / "eval.json"), str(Path("configs") / "eval.toml"))
DEPTH = 3  # outputs/evals/<env>--<model>/<run id> is the deepest run


def search_roots(cwd: Path) -> list[Path]:
    """The outputs folders a run made from `cwd` lands in (either stack, vf-eval or `websandbox eval`),
    then this checkout's."""
    here = [cwd / OUTPUTS, cwd / "outputs"]
    checkout = [REPO_ROOT / OUTPUTS, REPO_ROOT / "outputs"] if (REPO_ROOT / "environments").is_dir() else []
    return here + checkout


def run_file(run: Path) -> Path | None:
    """The file that makes `run` a run (results.jsonl or traces.jsonl), or None."""
    return next((run / name for name in RUN_FILES if (run / name).is_file()), None)


def _walk(folder: Path, depth: int) -> Iterable[Path]:
    """Run folders below `folder`, at most `depth` levels down, not entering runs, hidden folders or links."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:  # gone, unreadable, not a folder
        return
    for entry in entries:
        if entry.name.startswith(".") or not entry.is_dir(follow_symlinks=False):
            continue
        path = Path(entry.path)
        if run_file(path):
            yield path
        elif depth > 1:
            yield from _walk(path, depth - 1)


def runs_under(root: Path, depth: int = DEPTH) -> list[Path]:
    """Runs in `root`: classic ones (`[evals/]<env>--<model>/<run id>`), v1 ones (`[v1/]<run name>`)."""
    return list(_walk(Path(root), depth))


def find_runs(roots: Iterable[Path]) -> list[Path]:
    """Every run under any of `roots`, each once (roots may overlap), newest first."""
    roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
    runs = list(dict.fromkeys(p for root in roots for p in runs_under(root)))
    return sorted(runs, key=written, reverse=True)


def written(run: Path) -> float:
    """When the run's results (or traces) were last written; 0 for a run whose file went away."""
    found = run_file(run)
    try:
        return found.stat().st_mtime if found else 0.0
    except OSError:
        return 0.0


def no_runs_error(roots: Iterable[Path]) -> FileNotFoundError:
    where = " or ".join(str(r) for r in dict.fromkeys(Path(r).resolve() for r in roots))
    return FileNotFoundError(
        f"no saved run under {where}: make one with `websandbox eval` (or vf-eval ... -s -C grade), or give the run's folder"
    )


def newest_run(roots: Iterable[Path]) -> Path:
    """The most recently written run under any of `roots` (outputs folders, or the `evals`, `v1` folders in them)."""
    roots = list(roots)
    runs = find_runs(roots)
    if not runs:
        raise no_runs_error(roots)
    return runs[0]


def signature(run: Path) -> str:
    """A short text that changes whenever the run's file or what it says about itself changes (size, time)."""
    parts = []
    for name in (*RUN_FILES, *SIDE_FILES):
        try:
            st = (run / name).stat()
        except OSError:
            continue
        parts.append(f"{name}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha1("|".join(parts).encode()).hexdigest()[:16]


def run_id(run: Path) -> str:
    """The run's name in the server's URLs: a hash of its resolved path."""
    return hashlib.sha1(str(Path(run).resolve()).encode()).hexdigest()[:12]
