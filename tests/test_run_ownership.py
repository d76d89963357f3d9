"""A run knows its own: the results folder its vf-eval reported, and containers gc may not touch while it lives."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from sandbox_env.cli.eval_runs import RunLocation
from sandbox_env.sandbox.docker import docker_client, leaked_containers, run_containers
from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID, LABEL_RUN
from sandbox_env.sandbox.locks import RUNTIME_DIR_VAR
from sandbox_env.sandbox.runs import RUN_ID_VAR, new_run_id


def test_the_results_folder_is_the_one_vf_eval_reported_not_the_newest_on_disk(tmp_path):
    runs = tmp_path / "outputs" / "evals" / "websandbox--reference"
    mine, other = runs / "aaaa1111", runs / "zzzz9999"
    where = RunLocation(runs_dir=runs, cwd=tmp_path)
    where.snapshot(0.0)
    for run in (mine, other):
        run.mkdir(parents=True)
    where.see(
        "2026-11-30 13:06:03 - verifiers.legacy.envs.environment.WebSandboxEnv - INFO - "
        "Saving results to outputs/evals/websandbox--reference/aaaa1111"
    )
    assert where.find() is None  # nothing saved yet
    (other / "results.jsonl").write_text("{}\n")  # another run of the same model, going on at once, writes later
    (mine / "results.jsonl").write_text("{}\n")
    (other / "results.jsonl").touch()
    assert where.find() == mine
    where.see("Processing 2 groups (2 total rollouts): 100%")
    assert where.find() == mine


RUN_HOLDER = """
import time
from sandbox_env.sandbox.runs import current_run_id, hold_run
hold_run(current_run_id())
print("held", flush=True)
time.sleep(600)
"""


@pytest.mark.docker
def test_gc_leaves_a_live_runs_containers_alone_and_removes_them_once_it_is_over(image, tmp_path, monkeypatch):
    monkeypatch.setenv(RUNTIME_DIR_VAR, str(tmp_path))
    run_id = new_run_id()
    holder = subprocess.Popen(
        [sys.executable, "-c", RUN_HOLDER], stdout=subprocess.PIPE, text=True, env={**os.environ, RUN_ID_VAR: run_id}
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    # a container of the run whose owner this host cannot see (another pid namespace, or a dead worker)
    api = docker_client().api
    cid = api.create_container(image, command=["true"], labels={LABEL: "1", LABEL_RUN: run_id, LABEL_PID: "0"})["Id"]
    try:
        assert cid not in _what_gc_would_remove()
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
        assert cid in _what_gc_would_remove()
    finally:
        if holder.poll() is None:
            holder.kill()
        api.remove_container(cid, force=True)
    assert run_containers(run_id) == []


def _what_gc_would_remove() -> set[str]:
    """gc's own selection, read only: the engine is shared, so this test removes nothing it did not make."""
    return {c["Id"] for c in leaked_containers()}
