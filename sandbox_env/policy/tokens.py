"""Token ids and logprobs for the scripted policy, shaped as vLLM returns them.

A trainer reads, per turn, the prompt's token ids, the completion's token ids and
their logprobs. The scripted policy has no model, so it tokenizes a canonical
rendering of the conversation byte by byte (one token a UTF-8 byte): every
message renders to `<|role|>` + a JSON payload + `<|end|>`, the generation prompt
is `<|assistant|>`, and a completion is the assistant's payload + `<|end|>`.
Rendering is a pure function of each message's own fields, so a client that sends
the conversation back unchanged sees each turn's prompt extend the previous
turn's prompt and completion: the prefix invariant RL trainers rely on. Logprobs
are deterministic negative numbers, a function of the token and its position.

vLLM's shape (`return_token_ids`): `prompt_token_ids` on the response, `token_ids`
on the choice, and `logprobs.content[i].logprob` per completion token.
"""

from __future__ import annotations

import json
from typing import Any

END = "<|end|>\n"


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content or ""


def _payload(message: dict[str, Any]) -> str:
    body: dict[str, Any] = {"content": _text(message.get("content"))}
    calls = message.get("tool_calls") or []
    if calls:
        body["tool_calls"] = [
            {
                "id": c.get("id"),
                "name": (c.get("function") or {}).get("name"),
                "arguments": (c.get("function") or {}).get("arguments"),
            }
            for c in calls
        ]
    if message.get("tool_call_id"):
        body["tool_call_id"] = message["tool_call_id"]
    return json.dumps(body, sort_keys=True, ensure_ascii=False)


def render_prompt(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> str:
    head = ""
    if tools:
        names = sorted((t.get("function") or {}).get("name") or "" for t in tools)
        head = "<|tools|>" + json.dumps(names) + END
    body = "".join(f"<|{m.get('role')}|>" + _payload(m) + END for m in messages)
    return head + body + "<|assistant|>"


def render_completion(message: dict[str, Any]) -> str:
    return _payload(message) + END


def encode(text: str) -> list[int]:
    return list(text.encode("utf-8"))


def logprob(token: int, position: int) -> float:
    return -(((token * 31 + position * 17) % 97) + 1) / 100.0


def token_fields(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None, message: dict[str, Any]
) -> tuple[list[int], list[int], dict[str, Any]]:
    """(prompt_token_ids, completion token_ids, the choice's logprobs object)."""
    prompt_ids = encode(render_prompt(messages, tools))
    completion_ids = encode(render_completion(message))
    content = [
        {"token": f"token_id:{t}", "logprob": logprob(t, i), "bytes": [t], "top_logprobs": []}
        for i, t in enumerate(completion_ids)
    ]
    return prompt_ids, completion_ids, {"content": content}
