"""The scripted policy's server: each task's own plan, found by task id; and as a broken provider
(`--fail-after N` answers HTTP 500 after N requests of a rollout)."""

from __future__ import annotations

import json
from collections import defaultdict

import httpx
import jinja2

from sandbox_env.cli.main import start_policy_server
from sandbox_env.dataset import load_rows
from sandbox_env.policy.chat_tokenizer import CHAT_TEMPLATE
from sandbox_env.policy.policies import ScriptPolicy
from sandbox_env.policy.server import _Generator

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


def _twin_pair() -> tuple[dict, dict]:
    """Two rows with one prompt (repair tasks of one base task: docs/tasks.md, "Twin prompts")."""
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in load_rows():
        groups[row["info"]["prompt"].strip()].append(row)
    first, second, *_ = next(g for g in groups.values() if len(g) > 1)
    return first, second


def _twin_script(tmp_path, first: dict, second: dict):
    """A policy script that plays different plans on the two twins."""
    plans = {
        row["info"]["task_id"]: {
            "calls": [{"tool": "bash", "args": {"command": f"echo plan of {row['info']['task_id']}"}}],
            "final": f"done with {row['info']['task_id']}",
        }
        for row in (first, second)
    }
    script = tmp_path / "twins.json"
    script.write_text(json.dumps(plans))
    return script


def _play(url: str, question: str) -> list[dict]:
    """Every reply of one rollout over HTTP, each tool call answered `ok`, until a reply calls no tool."""
    messages, replies = [{"role": "system", "content": "s"}, {"role": "user", "content": question}], []
    for _ in range(5):
        r = httpx.post(f"{url}/chat/completions", json={"model": "m", "messages": messages, "tools": TOOLS})
        assert r.status_code == 200, r.text
        reply = r.json()["choices"][0]["message"]
        replies.append(reply)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return replies
        for call in reply["tool_calls"]:
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})
    raise AssertionError("the policy never ended the rollout")


def test_twin_prompt_tasks_are_each_played_by_their_own_plan(tmp_path):
    first, second = _twin_pair()
    assert first["info"]["prompt"] == second["info"]["prompt"] and first["question"] != second["question"]
    server, url = start_policy_server("reference", _twin_script(tmp_path, first, second), "127.0.0.1", 0)
    try:
        for row in (first, second, first):  # one server, each rollout its own task
            task_id = row["info"]["task_id"]
            call, final = _play(url, row["question"])
            assert json.loads(call["tool_calls"][0]["function"]["arguments"]) == {"command": f"echo plan of {task_id}"}
            assert final["content"] == f"done with {task_id}"
    finally:
        server.should_exit = True


def test_a_conversation_without_a_task_id_line_gets_no_task_s_plan():
    server, url = start_policy_server("reference", None, "127.0.0.1", 0)
    try:
        prompt = next(r["info"]["prompt"] for r in load_rows() if r["info"]["task_id"] == "orm_adv_01")
        (reply,) = _play(url, prompt)  # the prompt text alone names no task
        assert "Task id: ..." in reply["content"] and "question as the dataset holds it" in reply["content"]
        (reply,) = _play(url, prompt + "\n\nTask id: orm_nope_99")
        assert "no task 'orm_nope_99'" in reply["content"]
    finally:
        server.should_exit = True


def test_the_generate_endpoint_reads_the_task_id_from_the_rendered_conversation(tmp_path):
    # verifiers v1's training client sends the conversation rendered with the chat template
    # (policy/chat_tokenizer.py); the endpoint reads the task id and the turns taken back from it.
    first, second = _twin_pair()
    policy = ScriptPolicy(_twin_script(tmp_path, first, second))
    template = jinja2.Environment().from_string(CHAT_TEMPLATE)
    for row in (first, second):
        task_id = row["info"]["task_id"]
        messages = [{"role": "system", "content": "s"}, {"role": "user", "content": row["question"]}]
        text = template.render(messages=messages, tools=TOOLS, add_generation_prompt=True)
        assert _Generator._task_and_turns(text) == (task_id, 0)
        assert policy.step(*_Generator._task_and_turns(text)).args == {"command": f"echo plan of {task_id}"}
        call = {"function": {"name": "bash", "arguments": {"command": "cat notes.txt"}}}
        messages += [{"role": "assistant", "tool_calls": [call]}, {"role": "tool", "content": "a <tool_call> here"}]
        text = template.render(messages=messages, tools=TOOLS, add_generation_prompt=True)
        assert _Generator._task_and_turns(text) == (task_id, 1)  # a <tool_call> in a tool's output is no turn
        assert policy.step(*_Generator._task_and_turns(text)).text == f"done with {task_id}"
