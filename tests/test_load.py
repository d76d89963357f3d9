"""Fair blame under load: the reference policy through the real vf-eval while the host is short of CPU.

24 tasks (8 of each family) at -c 16 while two busy loops hog the CPU: every rollout must
score 1.0 or carry `error` (a harness fault the trainer reschedules); a correct answer is
never a silent 0.0. Then the same tasks at -c 32 without the hog: no error at all. The
counts and the wall time are printed (pytest -s shows them); nothing asserts a time.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from sandbox_env.cli.main import run_eval
from sandbox_env.dataset import load_rows
from sandbox_env.sandbox.docker import run_containers
from sandbox_env.sandbox.runs import new_run_id

# slow tier: 24 rollouts twice through vf-eval; the quicker sibling is tests/test_faults_in_grading.py's
# correct answers graded under a host CPU hog (score 1.0 or a harness fault, never a plain 0)
pytestmark = [pytest.mark.docker, pytest.mark.slow]

PER_FAMILY = 8


def _tasks() -> list[str]:
    rows = load_rows()
    out = []
    for family in ("orm", "django", "fastapi"):
        ids = sorted(r["info"]["task_id"] for r in rows if r["info"]["family"] == family)
        out += ids[:: max(1, len(ids) // PER_FAMILY)][:PER_FAMILY]
    return out


def _counts(run: Path) -> dict[str, int]:
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines() if line.strip()]
    counts = {"rollouts": len(rows), "reward 1.0": 0, "errored": 0, "scoring errors": 0, "silent zeros": 0}
    for r in rows:
        errored = r.get("error") is not None
        counts["reward 1.0"] += r.get("reward") == 1.0
        counts["errored"] += errored
        counts["scoring errors"] += bool((r.get("metrics") or {}).get("scoring_error"))
        counts["silent zeros"] += r.get("reward") != 1.0 and not errored
    return counts


def _eval(image: str, concurrency: int) -> tuple[dict[str, int], float]:
    tasks = _tasks()
    t0 = time.perf_counter()
    run_id = new_run_id()
    code, run = run_eval("reference", concurrency=concurrency, env_args={"task_ids": tasks, "image": image}, run_id=run_id)
    wall = time.perf_counter() - t0
    assert code == 0 and run is not None, f"vf-eval exited with {code}"
    counts = _counts(run)
    print(f"\nload test -c {concurrency}: {counts} in {wall:.0f} s wall ({run.name})")
    assert counts["rollouts"] == len(tasks) == 3 * PER_FAMILY
    assert run_containers(run_id) == []
    return counts, wall


def test_under_a_cpu_hog_every_rollout_scores_one_or_carries_an_error(image):
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        counts, _ = _eval(image, 16)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    assert counts["silent zeros"] == 0, counts
    assert counts["scoring errors"] <= counts["errored"], counts


def test_without_the_hog_at_c32_no_rollout_errs(image):
    counts, _ = _eval(image, 32)
    assert counts["errored"] == 0 and counts["reward 1.0"] == counts["rollouts"], counts
