"""Where runs are: the newest saved run when the reader names none.

vf-eval 0.3.x saves a run to `environments/<env>/outputs/evals/<env>--<model>/<run id>/`
under the directory it ran in (`websandbox eval` runs it in the checkout). A run is a
folder holding `results.jsonl`; the newest is the one whose results were written last.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

EVALS = Path("environments") / "websandbox" / "outputs" / "evals"


def runs_under(root: Path) -> list[Path]:
    return [p for p in Path(root).glob("*/*") if (p / "results.jsonl").is_file()]


def newest_run(roots: Iterable[Path]) -> Path:
    """The most recently written run under any of `roots` (each an `.../outputs/evals` folder)."""
    roots = list(dict.fromkeys(Path(r).resolve() for r in roots))
    runs = [p for root in roots for p in runs_under(root)]
    if not runs:
        where = " or ".join(str(r) for r in roots)
        raise FileNotFoundError(f"no saved run under {where}: make one with `websandbox eval` "
                                "(or vf-eval ... -s -C grade), or give the run's folder")  # fmt: skip
    return max(runs, key=lambda p: (p / "results.jsonl").stat().st_mtime)
