"""The scripted policy's server as a broken provider: `--fail-after N` answers HTTP 500 after N requests of a rollout."""

from __future__ import annotations

import httpx

from sandbox_env.cli.main import start_policy_server
from sandbox_env.dataset import load_rows

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("bash", "execute_code")]


def _prompt(task_id: str) -> str:
    return next(r["question"] for r in load_rows() if r["info"]["task_id"] == task_id)


def test_fail_after_one_answers_the_first_request_of_each_rollout_and_fails_the_second():
    server, url = start_policy_server("reference", None, "127.0.0.1", 0, fail_after=1)
    try:
        first = [{"role": "user", "content": _prompt("orm_adv_01")}]
        r = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": first, "tools": TOOLS})
        assert r.status_code == 200
        reply = r.json()["choices"][0]["message"]
        assert reply["tool_calls"], "the reference policy's first turn is a tool call"
        call_id = reply["tool_calls"][0]["id"]
        second = [*first, reply, {"role": "tool", "tool_call_id": call_id, "content": "ok"}]
        r = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": second, "tools": TOOLS})
        assert r.status_code == 500 and "--fail-after" in r.json()["error"]["message"]
        assert r.headers["x-should-retry"] == "false"  # the client gives up at once instead of backing off
        other = [{"role": "user", "content": _prompt("orm_agg_01")}]  # a new rollout starts over
        r = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": other, "tools": TOOLS})
        assert r.status_code == 200
    finally:
        server.should_exit = True


def test_without_fail_after_every_turn_is_answered():
    server, url = start_policy_server("reference", None, "127.0.0.1", 0)
    try:
        messages = [{"role": "user", "content": _prompt("orm_adv_01")}]
        for _ in range(3):
            r = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": messages, "tools": TOOLS})
            assert r.status_code == 200
            reply = r.json()["choices"][0]["message"]
            messages.append(reply)
            for call in reply.get("tool_calls") or []:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    finally:
        server.should_exit = True
