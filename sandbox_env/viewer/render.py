"""One run as one self-contained HTML file: the page template, its CSS and JS, and the run as JSON.

The run travels as a single `<script type="application/json">` block that the page's
script parses once; `<`, `>` and `&` are written as JSON escapes, so no transcript text
can close the block or open a tag. Non-finite floats become null (JSON has no NaN).
The Content-Security-Policy allows no network request and only the viewer's own
script and style, named by their SHA-256, so the page runs nothing a transcript holds
even if a bug put it into the DOM as markup.

With a baseline run (`websandbox view RUN --compare BASELINE`) the same page also carries
the comparison (compare.py) under `compare`; the baseline's transcripts are not embedded
(open the baseline's own report for those), so a comparison costs little more than a report.

Served by `websandbox view --serve` (serve.py), the page follows the run: its data carries
`live` (where to ask for fresh data, how often, the version it holds) and its CSP adds
`connect-src 'self'` so that its own script may read the loopback server's JSON, and nothing
else. A written file never has `live` and keeps the CSP that allows no request at all.
The runs index (`/runs`) is a page of the same kind: the same frame, CSS and helpers, its own
body and small script.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

from sandbox_env.viewer.compare import compare_runs
from sandbox_env.viewer.notes import run_notes
from sandbox_env.viewer.record import Run
from sandbox_env.viewer.summary import family_table

ASSETS = Path(__file__).resolve().parent / "assets"
_MARKER = re.compile(r"@@(TITLE|CSS|JS|DATA|CSP)@@")


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_finite(v) for v in value]
    return value


def embed_json(data: Any) -> str:
    """JSON text safe inside a <script> element: no `<`, `>` or `&` outside escapes."""
    try:
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    except ValueError:  # NaN or infinity somewhere
        text = json.dumps(_finite(data), ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def _html_text(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def content_security_policy(js: str, css: str, live: bool) -> str:
    """Nothing but the page's own script and style; no request, unless `live` (served): then its own server only."""
    rules = [
        "default-src 'none'",
        f"script-src '{_csp_hash(js)}'",
        f"style-src '{_csp_hash(css)}'",
        "img-src data:",
        "base-uri 'none'",
        "form-action 'none'",
    ]
    return "; ".join(rules + (["connect-src 'self'"] if live else []))


def page_data(run: Run, base: Run | None = None, live: dict[str, Any] | None = None) -> dict[str, Any]:
    """What the page reads: the run as plain data, with its per-family table, what its transcripts say
    about the server (notes.py), the comparison with `base`, and (served only) how to follow the run."""
    data = asdict(run)
    data["families"] = family_table(run.rollouts)
    data["notes"] = run_notes(run.rollouts, run.meta)
    data["compare"] = compare_runs(run, base) if base is not None else None
    data["live"] = live
    return data


def _name(run: Run) -> str:
    return str(run.meta.get("model") or Path(run.source).name)


def title_of(run: Run, base: Run | None = None) -> str:
    if base is not None:
        return f"websandbox runs: {_name(run)} compared with {_name(base)}"
    return f"websandbox run: {_name(run)}"


def _page(body: str, script: str, title: str, data: dict[str, Any]) -> str:
    """A page: the frame both pages share (frame.html) around the page's body, with its title, the CSS,
    the script (the shared helpers of common.js, then the page's own) and the data inline."""
    css = (ASSETS / "viewer.css").read_text()
    js = (ASSETS / "common.js").read_text() + (ASSETS / script).read_text()
    if "</script" in js.lower() or "</style" in css.lower():
        raise ValueError("the viewer's assets must not contain </script or </style")
    parts = {
        "TITLE": _html_text(title),
        "CSS": css,
        "JS": js,
        "DATA": embed_json(data),
        "CSP": content_security_policy(js, css, live=data.get("live") is not None),
    }
    text = (ASSETS / "frame.html").read_text().replace("@@BODY@@\n", (ASSETS / body).read_text())
    return _MARKER.sub(lambda m: parts[m.group(1)], text)  # one pass: inserted text is never rescanned


def render_html(run: Run, base: Run | None = None, live: dict[str, Any] | None = None) -> str:
    """The whole report as one string; `live` only when the loopback server serves it."""
    return _page("page.html", "viewer.js", title_of(run, base), page_data(run, base, live))


def render_index(runs: list[dict[str, Any]], roots: list[str], live: dict[str, Any]) -> str:
    """The runs index page (served only): one line a run (index.summarize), each a link to its page."""
    return _page("runs.html", "runs.js", "websandbox runs", {"runs": runs, "roots": roots, "live": live})


def write_report(run: Run, out: Path, base: Run | None = None) -> Path:
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(run, base), encoding="utf-8")
    return out
