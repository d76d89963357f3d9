"""The main job on the v1 stack: the real v1 `vf-eval websandbox` against a scripted policy.

Mirrors `websandbox eval` on the classic stack. The run is described by a TOML
config (`vf-eval websandbox @ config.toml`) so that list-valued filters and task
knobs reach the taskset exactly; it saves under the current folder, as the classic
`vf-eval` does: `environments/websandbox/outputs/v1/<run name>/` in a checkout (where
that folder exists), else `outputs/v1/<run name>/` (`traces.jsonl`, `configs/`,
`logs/`), which v1's own reader (`verifiers.v1.utils.trace_store.read_episodes`)
loads. Never inside the installed package. `--no-push`: nothing leaves the machine.

The finished run is reported as on classic (cli/eval_report.py): the same family table, read by
the viewer's v1 reader (viewer/v1.py), with "mean, finished" (the mean over rollouts that did
not error), the server notes (viewer/notes.py: no rollout called a tool; replies cut at the
token limit, counted from each model call's `finish_reason`), the error line, and the exit
status of a run that mostly errored.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from sandbox_env.constants import ENV_ID
from sandbox_env.dataset import taskset_spec

POLICY_KEY_VAR = "WEBSANDBOX_POLICY_KEY"


def output_dir(base: Path | None = None) -> Path:
    """Where v1 runs made from `base` (default: the current folder) are saved."""
    base = Path.cwd() if base is None else base
    env_folder = base / "environments" / ENV_ID
    return (env_folder / "outputs" / "v1") if env_folder.is_dir() else (base / "outputs" / "v1")


def eval_config(
    model: str,
    base_url: str,
    run_name: str,
    concurrency: int,
    num_examples: int,
    rollouts: int,
    env_args: dict[str, Any] | None = None,
    agent: dict[str, Any] | None = None,
    train_tokenizer: Path | None = None,
) -> dict[str, Any]:
    """The v1 EvalConfig as data: `env_args` holds taskset filters and task knobs by their classic names,
    `agent` overrides of the agent seat (v1's `--env.agent.*`: max_turns, max_total_tokens, ...).

    With `train_tokenizer` the run uses v1's training client (`--client.type train`, as prime-rl
    does): prompts are rendered to token ids with that tokenizer's chat template and sent to the
    engine's `/inference/v1/generate`, so every turn carries token ids and logprobs.
    """
    taskset = taskset_spec(env_args)
    config: dict[str, Any] = {
        "env": {"taskset": taskset, **({"agent": agent} if agent else {})},
        "model": model,
        "client": {"type": "eval", "base_url": base_url, "api_key_var": POLICY_KEY_VAR}
        if train_tokenizer is None
        else {
            "type": "train",
            "base_url": base_url,
            "api_key_var": POLICY_KEY_VAR,
            "renderer": {"name": "default", "tool_parser": "qwen3"},
            "renderer_model_name": str(train_tokenizer),
        },
        "run": {"name": run_name},
        "output_dir": str(output_dir()),
        "num_rollouts": rollouts,
        "max_concurrent": concurrency,
        "push": False,
    }
    if num_examples >= 0:
        config["select"] = {"limit": num_examples}
    return config


def run_vf_eval(config: dict[str, Any], log_file: Path | None = None, total: int | None = None) -> tuple[int, Path]:
    """Run v1's `vf-eval` on the config; returns (exit code, run directory).

    While it runs, a line each time rollouts finish (cli/eval_live.py): done/`total`, errored, scoring
    errors, the mean so far and the time left.
    """
    import tomli_w

    run_dir = Path(config["output_dir"]) / config["run"]["name"]
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    config_file = run_dir.parent / f".{config['run']['name']}.toml"
    config_file.write_text(tomli_w.dumps(config))
    try:
        return _run_v1_eval(["@", str(config_file), "--no-rich"], run_dir, log_file, total), run_dir
    finally:
        config_file.unlink(missing_ok=True)


def _run_v1_eval(args: list[str], run_dir: Path, log_file: Path | None, total: int | None) -> int:
    """v1's eval on `args`, supervised, with the live counts of `run_dir`; its exit code."""
    from sandbox_env.cli.eval_live import KnownRun, LiveCounts, v1_records
    from sandbox_env.cli.supervise import Supervised
    from sandbox_env.cli.v1_cli import v1_eval_command, v1_eval_description, v1_eval_script_name
    from sandbox_env.viewer.v1 import TRACES

    cmd = v1_eval_command(*args)
    env = {**os.environ, POLICY_KEY_VAR: os.environ.get(POLICY_KEY_VAR, "local-policy")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    print(f"$ {v1_eval_script_name() or 'vf-eval'} {' '.join(args)}  # {v1_eval_description()}", flush=True)
    out = open(log_file, "w") if log_file else subprocess.DEVNULL  # noqa: SIM115 - closed below
    counts = LiveCounts(KnownRun(run_dir), results=TRACES, records=v1_records, total=total).start()
    try:
        # stdout carries every trace as JSON (the run's own file has them); logs go to stderr.
        # Supervised: signals reach vf-eval's whole group, which never outlives this process.
        return Supervised(cmd, cwd=Path.cwd(), env=env, stdout=out).run()
    finally:
        counts.stop()
        if log_file:
            out.close()


SAVED_CONFIG = Path("configs") / "resolved" / "eval.json"  # where v1 keeps the config a run was made with


def newest_v1_run(base: Path | None = None) -> Path | None:
    """The newest run under this folder's v1 outputs that v1 can resume (it saved its config)."""
    runs = [p for p in output_dir(base).glob("*") if (p / SAVED_CONFIG).is_file()]
    return max(runs, key=lambda p: (p / SAVED_CONFIG).stat().st_mtime, default=None)


def resume_eval_v1(run_dir: Path | None, policy: str = "reference", script: Path | None = None) -> tuple[int, Path]:
    """v1's own `--resume` of `run_dir` (default: the newest run here): its missing and errored rollouts run again.

    v1 resumes only under the exact config the run was made with, so the scripted policy is served
    again at the address that config names, and the policy must be the run's own.
    """
    from urllib.parse import urlsplit

    from sandbox_env.policy.launch import start_policy_server

    run_dir = run_dir or newest_v1_run()
    if run_dir is None or not (run_dir / SAVED_CONFIG).is_file():
        where = run_dir or output_dir()
        raise ValueError(f"--resume: no v1 run to go on with at {where} (a run folder holds {SAVED_CONFIG})")
    saved = json.loads((run_dir / SAVED_CONFIG).read_text())
    model = "script" if script else policy
    if saved.get("model") != model:
        hint = "--script FILE" if saved.get("model") == "script" else f"--policy {saved.get('model')}"
        raise ValueError(f"--resume {run_dir}: the run was made with the {saved.get('model')} policy; give {hint}")
    address = urlsplit(saved["client"]["base_url"])
    try:
        server, _ = start_policy_server(policy, script, address.hostname or "127.0.0.1", address.port or 0)
    except (OSError, RuntimeError) as exc:  # the address is taken: no other would match the saved config
        raise ValueError(f"--resume: the run's policy address {address.netloc} cannot be served again: {exc}") from None
    try:
        return _run_v1_eval(["@", str(run_dir / SAVED_CONFIG), "--resume", "--no-rich"], run_dir, None, None), run_dir
    finally:
        server.should_exit = True


def load_run(run_dir: Path) -> list[Any]:
    """The saved episodes, read with v1's own reader (no websandbox import needed to read them)."""
    import verifiers.v1 as vf
    from verifiers.v1.utils.trace_store import read_episodes

    return read_episodes(run_dir, vf.Trace[vf.WireTaskData])


def family_table_v1(run_dir: Path) -> list[dict[str, Any]]:
    """Per-family rows of a saved v1 run, the classic table's columns (viewer/summary.py lists the keys):
    the viewer's v1 reader makes the same records from `traces.jsonl`, so both stacks count alike."""
    from sandbox_env.cli.eval_report import family_table

    return family_table(run_dir)


def run_eval_v1(
    policy: str = "reference",
    script: Path | None = None,
    concurrency: int = 4,
    num_examples: int = -1,
    rollouts: int = 1,
    env_args: dict | None = None,
    agent: dict | None = None,
    train_tokenizer: Path | None = None,
) -> tuple[int, Path]:
    """Serve the policy on loopback and run v1's vf-eval against it; returns (exit code, run dir).

    `train_tokenizer` (policy/chat_tokenizer.py): the training client and the engine endpoint.
    """
    from sandbox_env.policy.launch import start_policy_server
    from sandbox_env.rollout.image import ensure_image

    ensure_image()
    server, url = start_policy_server(policy, script, "127.0.0.1", 0, tokenizer_dir=train_tokenizer)
    model = "script" if script else policy
    name = f"websandbox--{model}--{uuid.uuid4().hex[:8]}"
    try:
        config = eval_config(model, url, name, concurrency, num_examples, rollouts, env_args, agent, train_tokenizer)
        return run_vf_eval(config, total=planned_rollouts(env_args, num_examples, rollouts))
    finally:
        server.should_exit = True


def planned_rollouts(env_args: dict | None, num_examples: int, rollouts: int) -> int | None:
    """How many rollouts the run makes: the tasks its filters select (at most `num_examples`), times `rollouts`."""
    from sandbox_env.dataset import DEFAULT_SPLIT, load_rows, select_rows

    args = env_args or {}
    try:
        rows = select_rows(
            load_rows(),
            family=args.get("family"),
            difficulty=args.get("difficulty"),
            category=args.get("category"),
            task_ids=args.get("task_ids"),
            split=args.get("split") or DEFAULT_SPLIT,
            pass_rates=args.get("pass_rates"),
            min_pass_rate=args.get("min_pass_rate"),
            max_pass_rate=args.get("max_pass_rate"),
        )
    except ValueError:  # refused before the run (cli/eval_checks.py); no count rather than a wrong one
        return None
    tasks = len(rows) if num_examples < 0 else min(num_examples, len(rows))
    return tasks * max(1, rollouts)
