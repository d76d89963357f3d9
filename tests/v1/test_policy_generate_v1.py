"""The scripted policy's `/inference/v1/generate` (v1's training client) plays each task's own plan, found by task id.

The client renders the conversation with the model's chat template and sends token ids; the
policy reads the task id back from the first user turn's last line (families/question.py).
Two repair tasks that share their prompt (docs/tasks.md, "Twin prompts") get a plan each.
"""

from __future__ import annotations

import json
from collections import defaultdict

import httpx
import pytest
from transformers import AutoTokenizer

from sandbox_env.dataset import load_rows
from sandbox_env.policy.chat_tokenizer import build_tokenizer
from sandbox_env.policy.launch import start_policy_server

TOOLS = [{"type": "function", "function": {"name": n, "parameters": {}}} for n in ("bash", "execute_code")]


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory):
    return build_tokenizer(tmp_path_factory.mktemp("tokenizer"))


def _twins() -> list[dict]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for row in load_rows():
        groups[row["info"]["prompt"].strip()].append(row)
    return next(g for g in groups.values() if len(g) > 1)[:2]


def test_twin_prompt_tasks_get_their_own_plans_from_token_ids(tmp_path, tokenizer_dir):
    twins = _twins()
    ids = [row["info"]["task_id"] for row in twins]
    script = tmp_path / "twins.json"
    script.write_text(json.dumps({i: {"calls": [{"tool": "bash", "args": {"command": f"echo {i}"}}]} for i in ids}))
    server, url = start_policy_server("reference", script, "127.0.0.1", 0, tokenizer_dir=tokenizer_dir)
    tok = AutoTokenizer.from_pretrained(str(tokenizer_dir))
    try:
        for row, task_id in zip(twins, ids, strict=True):
            messages = [{"role": "system", "content": "s"}, {"role": "user", "content": row["question"]}]
            prompt = tok.apply_chat_template(messages, tools=TOOLS, add_generation_prompt=True, tokenize=False)
            token_ids = tok.encode(prompt, add_special_tokens=False)
            r = httpx.post(url.removesuffix("/v1") + "/inference/v1/generate", json={"token_ids": token_ids})
            assert r.status_code == 200, r.text
            completion = tok.decode(r.json()["choices"][0]["token_ids"])
            assert f'"command": "echo {task_id}"' in completion, completion
    finally:
        server.should_exit = True
