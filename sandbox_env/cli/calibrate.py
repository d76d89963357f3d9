"""`websandbox calibrate RUN [RUN ...] --out FILE`: each task's measured pass rate (avg@k) from saved runs of one model.

Run the model first, several rollouts a task (`vf-eval websandbox -m MODEL -r K`, on the split a
curriculum draws from: `-a '{"split": "train"}'`); this reads the runs (either stack, several runs
of the same model pooled by task id), and writes the sidecar file that `load_environment`, the v1
taskset and `websandbox eval` read as `pass_rates` (sandbox_env/pass_rates.py). Runs of different
models are refused: a pass rate is a task's under one policy.
"""

from __future__ import annotations

from pathlib import Path

from sandbox_env import pass_rates
from sandbox_env.viewer import load_run
from sandbox_env.viewer.scores import task_rewards


def calibrate(runs: list[Path], out: Path) -> str:
    """Write the pass-rate file of `runs`; returns the line that says what was written."""
    pooled: dict[str, list[float]] = {}
    models = set()
    for run_dir in runs:
        run = load_run(run_dir)
        models.add(str(run.meta.get("model") or "unknown"))
        for task, rewards in task_rewards(run.rollouts).items():
            pooled.setdefault(task, []).extend(rewards)
    if len(models) > 1:
        raise ValueError(f"the runs are of several models ({', '.join(sorted(models))}): calibrate one model at a time")
    content = pass_rates.rates_from(pooled, models.pop())
    pass_rates.write(out, content)
    ks = sorted({t["k"] for t in content["tasks"].values()})
    return (
        f"{out}: pass rates of {len(content['tasks'])} tasks under {content['model']} "
        f"(k = {ks[0]}{f' to {ks[-1]}' if len(ks) > 1 else ''} rollouts a task)"
    )


def cmd_calibrate(args) -> int:
    print(calibrate(args.runs, args.out))
    return 0
