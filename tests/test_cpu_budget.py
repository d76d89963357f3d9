"""CPU a run does not need is not spent: no container started and never used, no heavy import nobody uses."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from sandbox_env.cli.main import POLICY_KEY_VAR, start_policy_server
from sandbox_env.sandbox.docker import docker_client


def test_reading_task_rows_and_serving_the_policy_leave_the_datasets_library_unimported():
    code = (
        "import sys\n"
        "from sandbox_env.policy.policies import make_policy\n"
        "from sandbox_env.policy.server import create_app\n"
        "create_app(make_policy('reference'))\n"
        "print(sorted(m for m in ('datasets', 'pandas', 'pyarrow') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_our_own_command_lines_run_folder_is_found_where_vf_evals_parser_puts_it(tmp_path):
    from sandbox_env.cli.eval_runs import locate, own_location
    from sandbox_env.cli.main import vf_eval_command

    for checkout in (False, True):
        if checkout:
            (tmp_path / "environments" / "websandbox").mkdir(parents=True)
        for model, resume in (("reference", None), ("script", True), ("null", "runs/abc")):
            cmd = vf_eval_command("http://x/v1", model, 2, -1, 1, {"family": "orm"}, resume=resume)
            theirs, ours = locate(cmd[1:], tmp_path), own_location(model, tmp_path, resume)
            assert (ours.runs_dir, ours.resume_path) == (theirs.runs_dir, theirs.resume_path)


def _created(client_id: str, since: float) -> list[str]:
    """Names of the containers the backend `client_id` created since `since` (the engine's own event log)."""
    events = docker_client().events(
        since=since,
        until=time.time() + 1,
        decode=True,
        filters={"type": "container", "event": "create", "label": f"websandbox.client={client_id}"},
    )
    return [e["Actor"]["Attributes"]["name"] for e in events]


@pytest.mark.docker
async def test_a_one_task_run_with_the_defaults_starts_only_the_containers_it_uses(image, monkeypatch):
    import websandbox

    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    env = websandbox.load_environment(task_ids=["smoke_sum"], image=image)
    server, url = start_policy_server("reference", None, "127.0.0.1", 0)
    since = time.time() - 1
    try:
        from verifiers.types import ClientConfig

        row = env.get_eval_dataset()[0]
        state = await env.rollout(row, ClientConfig(api_base_url=url, api_key_var=POLICY_KEY_VAR), "reference")
    finally:
        server.should_exit = True
        env.backend.teardown()
    assert state["grade"]["score"] == 1.0, state["grade"]
    created = _created(env.backend.client_id, since)
    assert len(created) == 2, f"one rollout and one grading container, got {created}"  # nothing warmed for nobody


@pytest.mark.docker
def test_sigterm_to_vf_eval_running_the_env_in_its_own_process_leaves_no_container(image, tmp_path):
    """`websandbox eval` runs vf-eval with --disable-env-server: the env's own SIGTERM teardown must hold there too."""
    import json
    import os
    import signal
    from pathlib import Path

    from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID

    slow = {"calls": [{"tool": "bash", "args": {"command": "sleep 30"}}]}
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"smoke_sum": slow, "smoke_hello": slow}))
    server, url = start_policy_server("reference", script, "127.0.0.1", 0)
    api = docker_client().api
    cmd = [
        str(Path(sys.executable).with_name("vf-eval")),
        "websandbox",
        "-m",
        "script",
        "-b",
        url,
        "-k",
        POLICY_KEY_VAR,
        "-n",
        "-1",
        "-r",
        "1",
        "-c",
        "2",
        "--disable-tui",
        "--disable-env-server",
        "-a",
        json.dumps({"family": "smoke", "image": image}),
    ]
    proc = subprocess.Popen(cmd, env={**os.environ, POLICY_KEY_VAR: "x"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def owned() -> list[dict]:
        every = api.containers(all=True, filters={"label": LABEL})
        return [c for c in every if c["Labels"].get(LABEL_PID) == str(proc.pid)]  # one process: no workers

    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline and len(owned()) < 2:
            time.sleep(0.3)
        assert len(owned()) >= 2, "the rollouts never started"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert owned() == []
    finally:
        server.should_exit = True
        if proc.poll() is None:
            proc.kill()
