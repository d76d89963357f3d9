"""The user's whole path: the real vf-eval (a subprocess) against scripted policies on loopback.

The reference policy must score 1.0 on every task of every family, the null policy
0.0 everywhere, the saved results must load with verifiers' own loader, and no
container may be left behind.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import httpx
import pytest
from verifiers.utils.path_utils import is_valid_eval_results_path
from verifiers.utils.save_utils import load_outputs

from sandbox_env.cli.eval_report import family_table
from sandbox_env.cli.main import run_eval, start_policy_server
from sandbox_env.dataset import load_rows
from sandbox_env.sandbox.docker import run_containers
from sandbox_env.sandbox.runs import new_run_id

pytestmark = pytest.mark.docker


def _families() -> set[str]:
    return {r["info"]["family"] for r in load_rows()} - {"smoke"}


# generated tasks per family and split in these runs (each generator's own tests and verification play more of them)
GENERATED_SAMPLE = {"orm": 6, "fastapi": 2, "django": 2}
REPAIR_SAMPLE = 3  # repair tasks per family in these runs (test_repair_docker.py plays more paths)
COMPOSED_SAMPLE = 3  # hand-written composed tasks in these runs (build_tasks.py --verify grades every one)
GENERATED_COMPOSED_SAMPLE = 2  # generated composed fastapi tasks (stages.compose admitted each by execution)
# every hand-written reference is played per family (test_orm_docker, test_fastapi_docker, test_django_docker);
# through vf-eval here: every HAND_EVERY-th of each family's, in id order
HAND_EVERY = 3


def _tier(row: dict) -> str:
    return json.loads(row["info"].get("measures") or "{}").get("tier", "")


def _rows() -> list[dict]:
    """A third of the hand-written tasks but smoke and the composed tier, and fixed samples of the composed,
    generated and repair tasks (all of them would take an hour)."""
    rows = [r for r in load_rows() if r["info"]["family"] != "smoke"]
    hand = [r for r in rows if r["info"].get("source", "hand") == "hand"]
    composed = sorted((r for r in hand if _tier(r) == "composed"), key=lambda r: r["info"]["task_id"])
    hand = [r for r in hand if _tier(r) != "composed"]
    hand = [
        r
        for family in ("orm", "fastapi", "django")
        for r in sorted((r for r in hand if r["info"]["family"] == family), key=lambda r: r["info"]["task_id"])[::HAND_EVERY]
    ]
    sample = composed[:: max(1, len(composed) // COMPOSED_SAMPLE)][:COMPOSED_SAMPLE]
    for (family, per_split), split in itertools.product(GENERATED_SAMPLE.items(), ("train", "eval")):
        gen = sorted((r for r in rows if r["info"].get("source") == "generated" and r["info"]["split"] == split
                      and r["info"]["family"] == family), key=lambda r: r["info"]["task_id"])  # fmt: skip
        sample += gen[:: max(1, len(gen) // per_split)][:per_split]
    for family in ("orm", "fastapi", "django"):  # repair tasks: a fixed sample of each family's
        rep = sorted((r for r in rows if r["info"].get("source") == "repair" and r["info"]["family"] == family),
                     key=lambda r: r["info"]["task_id"])  # fmt: skip
        sample += rep[:: max(1, len(rep) // REPAIR_SAMPLE)][:REPAIR_SAMPLE]
    made = sorted((r for r in rows if r["info"].get("source") == "composed"), key=lambda r: r["info"]["task_id"])
    sample += made[:: max(1, len(made) // GENERATED_COMPOSED_SAMPLE)][:GENERATED_COMPOSED_SAMPLE]
    return hand + sample


def _run(policy: str, image: str) -> Path:
    run_id = new_run_id()
    env_args = {"image": image, "task_ids": [r["info"]["task_id"] for r in _rows()]}
    code, run = run_eval(policy=policy, concurrency=4, env_args=env_args, run_id=run_id)
    assert code == 0 and run is not None, f"vf-eval exited with {code}"
    assert is_valid_eval_results_path(run)
    assert run_containers(run_id) == []  # the vf-eval worker has exited: nothing of its run remains
    return run


def test_reference_policy_scores_one_on_every_task_and_leaves_no_container(image):
    run = _run("reference", image)
    outputs = load_outputs(run)
    expected = {r["info"]["task_id"] for r in _rows()}
    by_task = {o["info"]["task_id"]: o for o in outputs}
    assert set(by_task) == expected
    wrong = {t: (o["reward"], (o.get("grade") or {}).get("reason")) for t, o in by_task.items() if o["reward"] != 1.0}
    assert wrong == {}
    table = {r["family"]: r for r in family_table(run)}
    assert set(table) == _families() | {"all"}
    assert all(r["scoring_errors"] == 0 and r["tampered"] == 0 and r["errored"] == 0 for r in table.values())


def test_null_policy_scores_zero_everywhere(image):
    run = _run("null", image)
    outputs = load_outputs(run)
    assert len(outputs) == len(_rows())
    repairs = [o for o in outputs if o["info"].get("source") == "repair"]
    assert {o["reward"] for o in outputs if o not in repairs} == {0.0}
    # a repair task's null is its broken deliverable left as set up: below 1.0 (fastapi gives partial credit)
    assert all(o["reward"] < 1.0 for o in repairs)
    if repairs:
        print(f"null policy over {len(repairs)} repair tasks: mean {sum(o['reward'] for o in repairs) / len(repairs):.3f}")
    assert all(not (o.get("grade") or {}).get("scoring_error") for o in repairs)


def test_policy_server_answers_bad_requests_with_status_and_error_body(tmp_path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"smoke_sum": {"calls": [{"tool": "bash", "args": {"command": "ls"}}]}}))
    server, url = start_policy_server("reference", script, "127.0.0.1", 0)
    try:
        r = httpx.post(f"{url}/chat/completions", content=b"{not json")
        assert r.status_code == 400 and "not valid JSON" in r.json()["error"]["message"]
        r = httpx.post(f"{url}/chat/completions", json={"messages": []})
        assert r.status_code == 400 and "model" in r.json()["error"]["message"]
        r = httpx.post(
            f"{url}/chat/completions", json={"model": "m", "messages": [{"role": "user", "content": "x"}], "stream": True}
        )
        events = [line.removeprefix("data: ") for line in r.text.splitlines() if line.startswith("data: ")]
        assert r.headers["content-type"].startswith("text/event-stream") and events[-1] == "[DONE]"
        assert json.loads(events[0])["choices"][0]["delta"]["role"] == "assistant"
        assert httpx.get(f"{url}/nope").status_code == 404
        assert httpx.get(f"{url}/chat/completions").status_code == 405
        prompt = next(r["question"] for r in load_rows() if r["info"]["task_id"] == "smoke_sum")
        tools = [{"type": "function", "function": {"name": "bash", "parameters": {}}}]
        body = {"model": "m", "messages": [{"role": "user", "content": prompt}], "tools": tools}
        r = httpx.post(f"{url}/chat/completions", json=body)
        call = r.json()["choices"][0]["message"]["tool_calls"][0]["function"]
        assert r.status_code == 200 and call == {"name": "bash", "arguments": '{"command": "ls"}'}
    finally:
        server.should_exit = True


def _process_tree(root: int) -> set[int]:
    import os

    pids, changed = {root}, True
    while changed:
        changed = False
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) in pids:
                continue
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    ppid = int(fh.read().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if ppid in pids:
                pids.add(int(entry))
                changed = True
    return pids


def test_sigterm_to_vf_eval_mid_run_leaves_no_container(image, tmp_path):
    import os
    import signal
    import subprocess
    import time

    from sandbox_env.cli.main import POLICY_KEY_VAR
    from sandbox_env.sandbox.docker import docker_client
    from sandbox_env.sandbox.docker.labels import LABEL, LABEL_PID

    slow = {"calls": [{"tool": "bash", "args": {"command": "sleep 30"}}]}
    script = tmp_path / "slow.json"
    script.write_text(json.dumps({"smoke_sum": slow, "smoke_hello": slow}))
    server, url = start_policy_server("reference", script, "127.0.0.1", 0)
    api = docker_client().api

    def containers_of(pids: set[int]) -> list[dict]:
        every = api.containers(all=True, filters={"label": LABEL})
        return [c for c in every if int(c["Labels"].get(LABEL_PID, 0)) in pids]

    import sys
    from pathlib import Path

    vf_eval = str(Path(sys.executable).with_name("vf-eval"))
    cmd = [
        vf_eval,
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
        "2",
        "-c",
        "4",
        "--disable-tui",
        "-a",
        json.dumps({"family": "smoke", "image": image}),
    ]
    proc = subprocess.Popen(cmd, env={**os.environ, POLICY_KEY_VAR: "x"}, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline, pids = time.monotonic() + 300, {proc.pid}  # a loaded machine starts vf-eval slowly
        while time.monotonic() < deadline and len(containers_of(pids)) < 4:
            pids |= _process_tree(proc.pid)
            time.sleep(0.3)
        assert len(containers_of(pids)) >= 4, "the rollouts never started"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert containers_of(pids) == []
    finally:
        server.should_exit = True
        if proc.poll() is None:
            proc.kill()
