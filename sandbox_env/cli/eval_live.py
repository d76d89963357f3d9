"""Counts shown while `websandbox eval` runs: what grading found, beside vf-eval's progress bar.

vf-eval 0.3.1 shows done/total and the mean reward; what tells a run apart (rollouts
that ended with an error, scoring errors, tamper flags) it shows only at the end. It
appends every finished group of rollouts to the run's `results.jsonl` as it goes, so a
thread here reads the file as it grows and prints one line each time rollouts finish:

    [websandbox] 12 done · errored 0 · scoring errors 0 · tampered 0 · tool calls 31 · mean reward 0.917 (finished 0.917)

(`cut at the token limit N` joins it once a rollout had a reply cut there, and a count of tool
calls that stays 0 is the first sign of a server that dropped the tools: viewer/notes.py.)

On verifiers 0.4 (`websandbox eval` on v1, cli/eval_v1.py) the same thread reads the run's
`traces.jsonl`, one episode a line (`v1_records`), and, since the run's size is known there,
the line starts with done/total and ends with an estimate of the time left:

    [websandbox] 12/40 done · errored 0 · ... · mean reward 0.917 (finished 0.917) · about 2 min left

Decisions: lines, not a redrawn status line, because vf-eval owns the terminal (a tqdm
bar on stderr, or its Rich display) and two processes redrawing one line garble both; the
lines go to stderr, where the bar is, and clear the bar's partial line first on a
terminal (in a log they start on a line of their own). Only whole lines are read (a
group being written is read on the next look), and the counts are the viewer's
(viewer/classic.py records), so they end where the final table starts. A resumed run
counts the rollouts it already had.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from sandbox_env.cli.eval_runs import RESULTS, RunLocation
from sandbox_env.viewer.classic import rollout
from sandbox_env.viewer.notes import tool_calls
from sandbox_env.viewer.summary import errored_cell, family_table

POLL_SECONDS = 0.5


class Tally:
    """The finished rollouts so far, counted as the final table counts them (viewer/summary.py)."""

    def __init__(self) -> None:
        self.records: list[dict] = []

    def add(self, record: dict) -> None:
        self.records.append(record)

    @property
    def done(self) -> int:
        return len(self.records)

    def counts(self) -> dict:
        """The table's row over every rollout so far (its last row: "all", or the only family)."""
        return family_table(self.records)[-1]

    def line(self, total: int | None = None, elapsed: float | None = None) -> str:
        row = self.counts()
        done = f"{row['rollouts']}/{total} done" if total else f"{row['rollouts']} done"
        parts = [
            done,
            f"errored {errored_cell(row)}",
            f"scoring errors {row['scoring_errors']}",
            f"tampered {row['tampered']}",
        ]
        parts.append(f"tool calls {sum(tool_calls(r) for r in self.records)}")
        cut = sum(1 for r in self.records if r.get("truncated"))
        if cut:
            parts.append(f"cut at the token limit {cut}")
        if row["mean_reward"] is not None:
            fin = row["mean_finished"]
            finished = f"finished {fin:.3f}" if fin is not None else "none finished"
            parts.append(f"mean reward {row['mean_reward']:.3f} ({finished})")
        if total and elapsed is not None and 0 < row["rollouts"] < total:
            parts.append(f"about {_duration(elapsed / row['rollouts'] * (total - row['rollouts']))} left")
        return "[websandbox] " + " · ".join(parts)


def _duration(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds < 90 else f"{seconds / 60:.0f} min"


Records = Callable[[dict, int], list[dict]]  # one saved line -> viewer records (the index of the first given)


def classic_records(row: dict, first: int) -> list[dict]:
    """A classic `results.jsonl` line: one rollout."""
    return [rollout(row, first, "")]


def v1_records(episode: dict, first: int) -> list[dict]:
    """A v1 `traces.jsonl` line: an episode, one record per trace (viewer/v1.py reads them alike)."""
    from sandbox_env.viewer.v1 import rollout as v1_rollout
    from sandbox_env.viewer.v1 import transcript

    traces = [t for t in episode.get("traces") or [] if isinstance(t, dict)]
    return [v1_rollout(t, episode, first + i, "", transcript(t)[1]) for i, t in enumerate(traces)]


@dataclass
class KnownRun:
    """A run whose folder is known before it is written (v1: the config names it)."""

    path: Path

    def find(self) -> Path | None:
        return self.path if self.path.is_dir() else None


class LiveCounts:
    """Tails the run that `where` finds and prints the tally each time rollouts finish."""

    def __init__(
        self,
        where: RunLocation | KnownRun,
        out: TextIO | None = None,
        interval: float = POLL_SECONDS,
        results: str = RESULTS,
        records: Records = classic_records,
        total: int | None = None,
    ) -> None:
        self.where = where
        self.results, self.records, self.total = results, records, total
        self.started = time.monotonic()
        self.out = out or sys.stderr
        self.interval = interval
        self.tally = Tally()
        self.run: Path | None = None
        self._offset = 0
        self._partial = b""
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True, name="live-counts")

    def start(self) -> LiveCounts:
        self._thread.start()
        return self

    def stop(self) -> Path | None:
        """Stop after a last read; returns the run folder, once found."""
        self._stop.set()
        self._thread.join()
        self.poll()
        return self.run

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.poll()
            except OSError:  # the file is being replaced or removed: look again next time
                continue

    def poll(self) -> int:
        """Read what the results file gained; returns how many rollouts finished since the last look."""
        if self.run is None:
            self.run = self.where.find()
            if self.run is None:
                return 0
        path = self.run / self.results
        if not path.is_file():
            return 0
        with path.open("rb") as f:
            f.seek(self._offset)
            data = f.read()
        self._offset += len(data)
        data, self._partial = self._partial + data, b""
        lines = data.split(b"\n")
        self._partial = lines.pop()  # an unfinished last line waits for the next look
        added = 0
        for raw in lines:
            row = _parse(raw)
            if row is not None:
                for record in self.records(row, self.tally.done):
                    self.tally.add(record)
                    added += 1
        if added:
            self._say(self.tally.line(self.total, time.monotonic() - self.started))
        return added

    def _say(self, text: str) -> None:
        # on a terminal, clear the bar's line (tqdm redraws it); in a log, start a line of our own
        lead = "\r\x1b[K" if getattr(self.out, "isatty", lambda: False)() else "\n"
        print(lead + text, file=self.out, flush=True)


def _parse(raw: bytes) -> dict | None:
    if not raw.strip():
        return None
    try:
        row = json.loads(raw)
    except (UnicodeDecodeError, ValueError):
        return None
    return row if isinstance(row, dict) else None
