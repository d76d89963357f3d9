"""What `websandbox eval` says about a finished run: the per-family table, the error line, the exit status.

The table is the viewer's (viewer/summary.py over the records of viewer/classic.py or,
for a verifiers 0.4.x run, viewer/v1.py), so the terminal and the browser, and both
stacks, count alike: rollouts, mean reward over all and over finished
rollouts, rewards of 1.0, scoring errors, tampered, and errored with its kinds.

A run whose rollouts ended with an error (`state["error"]`: the model server failed a
request, a harness fault, a sandbox that never became ready) did not measure the model.
vf-eval 0.3.1 still exits 0 and its table reads like a run of zeros, which a user
comparing models or a trainer's dashboard would record as a score. So whenever any
rollout errored, one line names the commonest error, how many rollouts it ended, and one
of its messages; when more than half errored, the exit status is non-zero
(`RUN_ERRORED`), whatever vf-eval's was.

Two more lines say what the transcripts show about the model server (viewer/notes.py, the
same sentences the viewer puts above its table): that no rollout called a tool (the server
probably dropped the tools: `websandbox check-server` tells), and how many rollouts had a
reply cut at the token limit. They do not change the exit status: the rollouts finished
and were graded; the lines say why their zeros may be the server's or the limit's.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

from sandbox_env.constants import REASON_CHARS
from sandbox_env.viewer import load_run
from sandbox_env.viewer.notes import run_notes
from sandbox_env.viewer.summary import errored_cell
from sandbox_env.viewer.summary import family_table as _summary

RUN_ERRORED = 3  # exit status of `websandbox eval` when more than half of the rollouts errored


def family_table(run_dir: Path) -> list[dict[str, Any]]:
    """Per-family rows of a saved run (viewer/summary.py lists the keys)."""
    return _summary(load_run(run_dir).rollouts)


def print_table(rows: list[dict[str, Any]], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    def reward(x: float | None) -> str:
        return "–" if x is None else f"{x:.3f}"

    table = Table(title=title)
    cols = ("family", "rollouts", "mean reward", "mean, finished", "95 % interval", "reward 1.0", "scoring errors",
            "tampered", "errored")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="left" if col in ("family", "errored") else "right")
    for r in rows:
        table.add_row(
            r["family"],
            str(r["rollouts"]),
            reward(r["mean_reward"]),
            reward(r["mean_finished"]),
            "–" if r["ci_low"] is None else f"{r['ci_low']:.3f} – {r['ci_high']:.3f}",
            str(r["perfect"]),
            str(r["scoring_errors"]),
            str(r["tampered"]),
            errored_cell(r),
        )
    console = Console()
    # off a terminal (a log, a pipe, CI) nothing limits the width: keep each row on one line
    (console if console.is_terminal else Console(width=200)).print(table)


def error_line(rollouts: list[dict[str, Any]]) -> str | None:
    """One line on the rollouts that errored, the commonest kind first; None when none did."""
    errored = [r for r in rollouts if r["error"]]
    if not errored:
        return None
    kinds = Counter(r["error_kind"] or "error" for r in errored)
    kind, count = max(kinds.items(), key=lambda kv: (kv[1], kv[0]))
    example = next(r["error"] for r in errored if (r["error_kind"] or "error") == kind)
    if len(example) > REASON_CHARS:
        example = example[:REASON_CHARS] + "..."
    others = len(kinds) - 1
    return (
        f"{len(errored)} of {len(rollouts)} rollouts ended with an error; the commonest, {kind}, ended {count}"
        + (f" ({others} other kind{'s' if others > 1 else ''})" if others else "")
        + f": {example}"
    )


def mostly_errored(rollouts: list[dict[str, Any]]) -> bool:
    """More than half of the rollouts ended with an error: the run measured the server or the harness."""
    return 2 * sum(1 for r in rollouts if r["error"]) > len(rollouts)


def report(run_dir: Path, title: str) -> int:
    """Print the table, the server notes and the error line; returns RUN_ERRORED when more than half errored, else 0."""
    run = load_run(run_dir)
    rollouts = run.rollouts
    print_table(_summary(rollouts), title)
    for note in run_notes(rollouts, run.meta):
        print(f"websandbox eval: {note}", file=sys.stderr, flush=True)
    line = error_line(rollouts)
    if line is None:
        return 0
    if mostly_errored(rollouts):
        print(f"websandbox eval: the run did not measure the model: {line}", file=sys.stderr, flush=True)
        return RUN_ERRORED
    print(f"websandbox eval: {line}", file=sys.stderr, flush=True)
    return 0
