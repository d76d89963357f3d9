"""A rollout verifiers' retry plays again says so in the saved run and in the viewer (classic stack).

The scripted policy answers the first request of a task's first attempt with an empty reply (no
content, no tool call: what real servers sometimes send); verifiers calls it invalid and its
retry plays the rollout — or its whole group — again. Only the last attempt is saved, so the
rollout's row must carry the earlier attempt's error (`info["replayed_after"]`, the weight-0
metric `replayed_after_errors`), the viewer's record must show it, and the run's notes count it.
"""

from __future__ import annotations

import json

import pytest
from verifiers.types import ClientConfig

from sandbox_env.cli.main import POLICY_KEY_VAR, run_eval, start_policy_server
from sandbox_env.dataset import load_rows
from sandbox_env.policy.policies import ScriptPolicy
from sandbox_env.sandbox.docker import run_containers
from sandbox_env.sandbox.runs import new_run_id
from sandbox_env.viewer.load import load_run
from sandbox_env.viewer.notes import replay_note

HELLO = [{"tool": "bash", "args": {"command": "printf 'hello, sandbox\\n' > /workspace/hello.txt"}}]
SUM = [{"tool": "execute_code", "args": {"code": "open('/workspace/sum.txt', 'w').write(str(sum(range(1, 101))))"}}]


def _script(tmp_path, empty_replies: int = 1):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"smoke_hello": {"calls": HELLO, "empty_replies": empty_replies}, "smoke_sum": {"calls": SUM}}))
    return path


def test_a_script_sends_as_many_empty_first_replies_as_it_says_then_plays(tmp_path):
    policy = ScriptPolicy(_script(tmp_path, empty_replies=2))
    first = [policy.step("smoke_hello", 0) for _ in range(3)]
    assert [(s.tool, s.text) for s in first[:2]] == [(None, ""), (None, "")]
    assert first[2].tool == "bash" and policy.step("smoke_sum", 0).tool == "execute_code"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"smoke_hello": {"calls": HELLO, "empty_replies": -1}}))
    with pytest.raises(ValueError, match="empty_replies must be a whole number"):
        ScriptPolicy(bad)


def test_the_run_note_counts_replays_and_empty_replies():
    rows = [{"replayed_after": ["EmptyModelResponseError: Model returned no content"]}, {"replayed_after": []}, {}]
    note = replay_note(rows)
    assert note.startswith("1 of 3 rollouts were played again after 1 errored attempt, 1 of them an empty reply")
    assert replay_note([{"replayed_after": []}, {"replayed_after": None}]) is None


@pytest.mark.docker
def test_a_group_replayed_after_an_empty_reply_says_so_in_every_row_and_the_viewer(image, tmp_path):
    """vf-eval's default path: the group of two rollouts is played again whole; both rows say why."""
    run_id = new_run_id()
    env_args = {"image": image, "family": "smoke", "task_ids": ["smoke_hello", "smoke_sum"]}
    code, run = run_eval(script=_script(tmp_path), rollouts=2, env_args=env_args, run_id=run_id,
                         extra=["--max-retries", "2"])  # fmt: skip
    assert code == 0 and run is not None
    assert run_containers(run_id) == []
    loaded = load_run(run)
    by_task = {}
    for r in loaded.rollouts:
        by_task.setdefault(r["task_id"], []).append(r)
    hello, plain = by_task["smoke_hello"], by_task["smoke_sum"]
    assert len(hello) == 2 and all(r["reward"] == 1.0 and r["error"] is None for r in hello)
    for r in hello:
        assert len(r["replayed_after"]) == 1 and r["replayed_after"][0].startswith("EmptyModelResponseError"), r
        assert r["metrics"]["replayed_after_errors"] == 1.0
    assert all(r["replayed_after"] == [] and r["metrics"]["replayed_after_errors"] == 0.0 for r in plain)
    assert "2 of 4 rollouts were played again" in replay_note(loaded.rollouts)


@pytest.mark.docker
async def test_a_single_rollout_replayed_after_an_empty_reply_says_so(image, tmp_path, monkeypatch):
    """The independent path (run_rollout under verifiers' retry), in process."""
    import websandbox

    env = websandbox.load_environment(family="smoke", image=image, pool_size=0)
    server, url = start_policy_server("reference", _script(tmp_path), "127.0.0.1", 0)
    monkeypatch.setenv(POLICY_KEY_VAR, "local")
    try:
        row = next(r for r in env.get_eval_dataset() if r["info"]["task_id"] == "smoke_hello")
        client = ClientConfig(api_base_url=url, api_key_var=POLICY_KEY_VAR, max_retries=0)
        out = await env.run_rollout(row, client, "script", {}, max_retries=2)
    finally:
        server.should_exit = True
        env.backend.teardown()
    assert out["reward"] == 1.0 and not out.get("error")
    assert [e.split(":")[0] for e in out["info"]["replayed_after"]] == ["EmptyModelResponseError"]
    assert out["metrics"]["replayed_after_errors"] == 1.0
    assert [r for r in load_rows() if r["info"]["task_id"] == "smoke_hello"][0]["info"].get("replayed_after") is None
