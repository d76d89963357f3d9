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


def run_vf_eval(config: dict[str, Any], log_file: Path | None = None) -> tuple[int, Path]:
    """Run v1's `vf-eval` on the config; returns (exit code, run directory)."""
    import tomli_w

    from sandbox_env.cli.supervise import Supervised
    from sandbox_env.cli.v1_cli import v1_eval_command, v1_eval_description, v1_eval_script_name

    run_dir = Path(config["output_dir"]) / config["run"]["name"]
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    config_file = run_dir.parent / f".{config['run']['name']}.toml"
    config_file.write_text(tomli_w.dumps(config))
    cmd = v1_eval_command("@", str(config_file), "--no-rich")
    env = {**os.environ, POLICY_KEY_VAR: os.environ.get(POLICY_KEY_VAR, "local-policy")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"  # uv for the harness
    print(f"$ {v1_eval_script_name() or 'vf-eval'} @ {config_file} --no-rich  # {v1_eval_description()}", flush=True)
    out = open(log_file, "w") if log_file else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        # stdout carries every trace as JSON (the run's own file has them); logs go to stderr.
        # Supervised: signals reach vf-eval's whole group, which never outlives this process.
        code = Supervised(cmd, cwd=Path.cwd(), env=env, stdout=out).run()
    finally:
        if log_file:
            out.close()
        config_file.unlink(missing_ok=True)
    return code, run_dir


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
        return run_vf_eval(config)
    finally:
        server.should_exit = True


def print_table_v1(rows: list[dict[str, Any]], title: str) -> None:
    """The classic `websandbox eval` table, "mean, finished" and errored kinds included."""
    from sandbox_env.cli.eval_report import print_table

    print_table(rows, title)
