"""The run viewer: one saved evaluation run as one self-contained HTML page.

`websandbox view [RUN_DIR]` reads a run (`load`), turns it into plain records
(`classic` for vf-eval 0.3.x `results.jsonl` runs, `v1` for verifiers 0.4.x traces; another
reader plugs into `load.LOADERS`), counts it per family (`summary`), writes one HTML file
(`render`) and opens it (`serve.show`). `runs` finds every saved run and the newest, `index`
summarises them (`--list`), `export` writes the rollout table as CSV or JSONL (`--export`),
and `serve` is the loopback server (`--serve`) whose pages follow a run as it grows and list
every run.

Decisions:
- One file, nothing fetched: CSS, JS and the run's data are inline, so the report can be
  mailed, archived or opened offline, and a Content-Security-Policy with
  `default-src 'none'` forbids every network request. Only a page the loopback server
  serves may make one: to its own server (`connect-src 'self'`), for the run's fresh data.
- Transcripts are written by the model, which the threat model treats as hostile: the
  page only ever puts run data into the DOM as text (never as HTML), the data travels
  in a `<script type="application/json">` block with `<`, `>` and `&` escaped, and the
  only script allowed to run is the viewer's own, pinned by its SHA-256 in the CSP.
- Large runs open fast because the page builds little up front: the run is one JSON
  blob, table rows are built a page at a time as the reader scrolls, and a rollout's
  grade and transcript are built when its row is clicked. `bench/view_bench.py` times
  a 1,000-rollout report in headless Chromium.
- The reader does not import verifiers (its import costs seconds, and its
  `load_outputs` drops rows we would rather show); it follows the same JSONL rules
  (skip blank, malformed and non-object lines) and says what it skipped.
"""

from __future__ import annotations

from sandbox_env.viewer.load import load_run
from sandbox_env.viewer.record import Run, RunFormatError
from sandbox_env.viewer.render import render_html, write_report

__all__ = ["Run", "RunFormatError", "load_run", "render_html", "write_report"]
