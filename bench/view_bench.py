"""How fast a large run's report opens in a browser, beside the 2 s the viewer must stay under.

    python bench/view_bench.py [--rollouts 1000] [--repeat 3] [--longer 1] [--run RUN_DIR]

Makes a run of N rollouts by repeating the rows of a saved run (default: the fixture run in
tests/fixtures/view_run/, real vf-eval rows of all three families), each copy with its own
example id; `--longer K` repeats every transcript K times, for runs of long conversations.
Then it times, in Debian's headless Chromium (the same driver as the browser test):
- open: navigation start to the page saying it is ready (family table and the first page
  of rows built, one frame painted), the median over --repeat fresh loads;
- expand: a click on a rollout to its grade and transcript being in the DOM;
- search: a query over every transcript (the first one builds the search index);
- filter: choosing a family to the table being rebuilt.
It also prints the report's size and the Python time to read the run and write the file.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sandbox_env.viewer import load_run, write_report  # noqa: E402
from sandbox_env.viewer.headless import open_report, start_chromium  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "view_run"
OPEN_FLOOR_S = 2.0

TIME_JS = """
const [action, arg] = [arguments[0], arguments[1]];
const done = arguments[arguments.length - 1];
const t0 = performance.now();
if (action === "expand") document.querySelector("tr.rollout").click();
if (action === "filter") { const s = document.getElementById("f-family"); s.value = arg; s.dispatchEvent(new Event("change")); }
if (action === "search") { const s = document.getElementById("f-search"); s.value = arg; s.dispatchEvent(new Event("input")); }
const wait = action === "search" ? 150 : 0;  // the search box waits 150 ms for typing to pause
setTimeout(() => requestAnimationFrame(() => done(performance.now() - t0 - wait)), wait);
"""


def synth_run(source: Path, n: int, longer: int, out: Path) -> Path:
    rows = [json.loads(ln) for ln in (source / "results.jsonl").read_text().splitlines() if ln.strip().endswith("}")]
    out.mkdir(parents=True, exist_ok=True)
    with (out / "results.jsonl").open("w") as f:
        for i in range(n):
            row = dict(rows[i % len(rows)])
            row["example_id"] = i
            row["completion"] = (row.get("completion") or []) * longer
            f.write(json.dumps(row) + "\n")
    meta = source / "metadata.json"
    if meta.is_file():
        (out / "metadata.json").write_text(meta.read_text())
    return out


def timed(driver, action: str, arg: str = "") -> float:
    return float(driver.execute_async_script(TIME_JS, action, arg))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rollouts", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--longer", type=int, default=1, help="repeat every transcript this many times")
    ap.add_argument("--run", type=Path, default=FIXTURE, help="the run whose rows are repeated")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = synth_run(args.run, args.rollouts, args.longer, Path(tmp) / "run")
        t0, c0 = time.perf_counter(), time.process_time()
        report = write_report(load_run(run_dir), Path(tmp) / "report.html")
        write_s, write_cpu = time.perf_counter() - t0, time.process_time() - c0
        size = report.stat().st_size
        driver = start_chromium(1280, 900)
        try:
            opens = [open_report(driver, report) / 1000 for _ in range(args.repeat)]
            expand = timed(driver, "expand")
            search = timed(driver, "search", "assertionerror")
            found = driver.execute_script("return document.getElementById('count').textContent")
            family = driver.execute_script("return document.querySelector('tr.rollout td:nth-child(2)').textContent")
            filt = timed(driver, "filter", family)
        finally:
            driver.quit()

    median = statistics.median(opens)
    print(
        f"report of {args.rollouts} rollouts (transcripts x{args.longer}): {size / 1e6:.1f} MB, "
        f"read + written in {write_s:.2f} s ({write_cpu:.2f} s CPU)"
    )
    print(
        f"  open in headless Chromium   {median:6.2f} s median of {args.repeat} "
        f"({', '.join(f'{x:.2f}' for x in opens)})   floor: under {OPEN_FLOOR_S:.0f} s  "
        f"{'ok' if median < OPEN_FLOOR_S else 'TOO SLOW'}"
    )
    print(f"  expand one rollout          {expand:6.0f} ms")
    print(f"  first search (builds index) {search:6.0f} ms   (found {found})")
    print(f"  filter by family            {filt:6.0f} ms")
    return 0 if median < OPEN_FLOOR_S else 1


if __name__ == "__main__":
    sys.exit(main())
