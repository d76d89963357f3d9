"""`websandbox report RUN`: a saved run's score with its 95 % interval, overall and per family, difficulty and
category, pass@k and avg@k when tasks have several rollouts, and with `--compare BASE` whether the difference to
another run is larger than the noise of both (viewer/scores.py says how each figure is estimated).

Plain text for people, `--json` for scripts (the same figures, nothing else on stdout). The run's own record
of itself (model, sampling arguments, environment arguments) is printed beside the figures, with what its
tasks are against the installed dataset: the eval set's size and digest (its version: any change to any of
its tasks changes it), how many of its tasks the run played, and the digest of the run's own tasks, so a
reported number says what produced it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from sandbox_env.dataset import load_rows, set_digest, split_summary
from sandbox_env.viewer import load_run
from sandbox_env.viewer.scores import ci_text, compare, score_table

GROUPS = ("family", "difficulty", "category")
META_KEYS = ("model", "env_id", "env_args", "sampling_args", "num_examples", "rollouts_per_example", "date", "version")


def report_data(run_dir: Path, base_dir: Path | None = None) -> dict[str, Any]:
    run = load_run(run_dir)
    out: dict[str, Any] = {
        "run": str(run_dir),
        "meta": {k: run.meta[k] for k in META_KEYS if k in run.meta},
        **score_table(run.rollouts, GROUPS),
    }
    out["tasks"] = task_set(run.rollouts)
    if base_dir is not None:
        out["compare"] = {"base": str(base_dir), **compare(run.rollouts, load_run(base_dir).rollouts)}
    return out


def task_set(rollouts: list[dict[str, Any]]) -> dict[str, Any]:
    """What the run's tasks are, against the installed dataset: the eval set's summary (its digest names its
    version), how many of its tasks the run played, and the digest of the run's own tasks as installed."""
    rows = load_rows()
    played = {r["task_id"] for r in rollouts if r.get("task_id")}
    eval_ids = {r["info"]["task_id"] for r in rows if r["info"].get("split") == "eval" and r["info"]["family"] != "smoke"}
    mine = [r for r in rows if r["info"]["task_id"] in played]
    return {
        "eval_set": split_summary(rows),
        "played_of_eval": len(played & eval_ids),
        "eval_tasks": len(eval_ids),
        "played": len(played),
        "played_installed": len(mine),
        "played_digest": set_digest(mine),
    }


def _row_text(row: dict[str, Any]) -> str:
    text = f"{row['group']:<24} {ci_text(row):<28} tasks {row['tasks']:>5}  rollouts {row['rollouts']:>5}"
    if "k" in row:
        text += f"  pass@{row['k']} {row['pass@k']:.3f}  avg@{row['k']} {row['avg@k']:.3f}"
    return text


def report_text(data: dict[str, Any]) -> str:
    lines = [f"run {data['run']}"]
    lines += [f"  {k}: {json.dumps(v) if not isinstance(v, str) else v}" for k, v in data["meta"].items()]
    t = data["tasks"]
    lines += [
        f"  installed {t['eval_set']}",
        f"  this run: {t['played']} tasks ({t['played_of_eval']} of the eval set's {t['eval_tasks']}), "
        f"{t['played_installed']} of them installed here, digest {t['played_digest']}",
    ]
    lines += ["", "score (mean over tasks) [95 % interval]", _row_text(data["overall"])]
    for key in GROUPS:
        lines += ["", f"by {key}"] + [_row_text(r) for r in data[key]]
    if "compare" in data:
        c = data["compare"]
        lines += ["", f"against {c['base']}: {c['common_tasks']} tasks in both ({c['only_run']} in this run only, "
                  f"{c['only_base']} in the base only)"]  # fmt: skip
        if c["difference"] is None:
            lines.append("  no common task: nothing to compare")
        else:
            verdict = "larger than the noise of both runs" if c["beyond_noise"] else "within the noise: no difference shown"
            lines.append(f"  difference {c['difference']:+.3f} [{c['ci_low']:+.3f}, {c['ci_high']:+.3f}]: {verdict}")
    return "\n".join(lines)


def cmd_report(args) -> int:
    from sandbox_env.viewer.runs import newest_run, search_roots

    run_dir = args.run_dir or newest_run(search_roots(Path.cwd()))
    data = report_data(run_dir, args.compare)
    print(json.dumps(data, indent=2) if args.json else report_text(data))
    return 0
