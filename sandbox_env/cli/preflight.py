"""A preflight for model servers: will this OpenAI-compatible server work with websandbox, and if not, why.

`websandbox check-server -b URL -m MODEL` sends what each verifiers stack sends during a
rollout, on a real task's prompt (smoke_hello: write a file with bash), and says in plain
words what works and what to set:

1. a request with the two tools (`bash`, `execute_code`) and no `tool_choice` (verifiers
   sends none, so the server's default applies): the reply must hold `tool_calls`. When
   it does not, the same request with `tool_choice: "auto"` tells a default of `none`
   (send it: `-S '{"tool_choice": "auto"}'`) from a model or chat template without tool
   support (llama-server drops `tools` silently when its template has none);
2. `max_completion_tokens` (what `-t N` becomes): a reply longer than asked means the
   server ignores it (send `max_tokens` through `extra_body`);
3. the conversation sent back, as each stack sends it: the assistant message with
   `content: null` beside its `tool_calls` (classic verifiers 0.3.x also sends
   `"reasoning_content": null`, which llama-server answers with HTTP 500), then a
   `role: "tool"` message with its `tool_call_id`. A server that refuses it fails every
   rollout at its second request.

Nothing here needs Docker or the runtime image; every request is one plain POST with httpx.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import httpx

from sandbox_env.constants import TOOL_NAMES
from sandbox_env.dataset import load_rows
from sandbox_env.doors.system_prompt import SYSTEM_PROMPT

PROBE_TASK = "smoke_hello"
TOKEN_PROBE = 8  # max_completion_tokens of the length probe
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "bash",
            "description": "Run a bash command in /workspace of the sandbox and return its output and exit code.",
            "parameters": {
                "type": "object",
                "properties": {"command": {"type": "string", "description": "the shell command to run (bash -c)."}},
                "required": ["command"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "execute_code",
            "description": "Run Python code in a persistent session in the sandbox; variables are kept between calls.",
            "parameters": {
                "type": "object",
                "properties": {"code": {"type": "string", "description": "Python source."}},
                "required": ["code"],
            },
        },
    },
]


@dataclass
class Finding:
    """One thing the preflight found: whether it works, what it saw, what to set if not."""

    ok: bool
    what: str
    fix: str = ""

    def line(self) -> str:
        mark = "ok  " if self.ok else "FAIL"
        return f"[{mark}] {self.what}" + (f"\n       fix: {self.fix}" if self.fix else "")


class Probe:
    """Requests to one server, as verifiers sends them."""

    def __init__(self, base_url: str, model: str, api_key: str, timeout: float = 120.0) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.headers = {"Authorization": f"Bearer {api_key}"}
        self.timeout = timeout

    def post(self, messages: list[dict[str, Any]], **extra: Any) -> tuple[int, dict[str, Any] | str]:
        body = {"model": self.model, "messages": messages, "tools": TOOLS, **extra}
        try:
            resp = httpx.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
        except httpx.HTTPError as exc:
            return 0, f"no answer from {self.url}: {exc}"
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, resp.text[:300]


def _message(reply: dict[str, Any] | str) -> dict[str, Any] | None:
    if not isinstance(reply, dict):
        return None
    choices = reply.get("choices") or []
    return (choices[0].get("message") or {}) if choices and isinstance(choices[0], dict) else None


def _said(status: int, reply: dict[str, Any] | str) -> str:
    if isinstance(reply, dict):
        error = reply.get("error")
        text = error.get("message") if isinstance(error, dict) else json.dumps(reply)[:300]
    else:
        text = reply
    return f"HTTP {status}: {text}" if status else str(text)


def _first_messages() -> list[dict[str, Any]]:
    prompt = next(r["question"] for r in load_rows() if r["info"]["task_id"] == PROBE_TASK)
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": prompt}]


def calls_in_text(content: Any) -> list[str]:
    """The tools a reply's text names as calls (a JSON object with "name" and "arguments", or a `<tool_call>` block):
    a model that writes its calls as text, which the server did not parse into `tool_calls`."""
    if not isinstance(content, str):
        return []
    names = []
    decoder = json.JSONDecoder()
    for start in [i for i, ch in enumerate(content) if ch == "{"]:
        try:
            value, _ = decoder.raw_decode(content, start)
        except ValueError:
            continue
        if isinstance(value, dict) and value.get("name") in TOOL_NAMES and ("arguments" in value or "parameters" in value):
            names.append(value["name"])
    if not names and "<tool_call>" in content:
        names.append("a <tool_call> block")
    return names


def check_tool_calls(probe: Probe) -> tuple[list[Finding], dict[str, Any] | None]:
    """Step 1: a request with tools and no tool_choice must be answered with tool calls."""
    messages = _first_messages()
    status, reply = probe.post(messages)
    message = _message(reply)
    if status != 200 or message is None:
        return [Finding(False, f"a request with tools was refused ({_said(status, reply)})", "check -b, -m and the key")], None
    if message.get("tool_calls"):
        return [Finding(True, "answers a request with tools with tool calls (its default tool_choice is auto)")], message
    status, reply = probe.post(messages, tool_choice="auto")
    auto = _message(reply) if status == 200 else None
    written = calls_in_text(message.get("content")) or calls_in_text((auto or {}).get("content"))
    if written and not (auto and auto.get("tool_calls")):
        return [
            Finding(
                False,
                f"the model writes its tool calls as text ({', '.join(sorted(set(written)))} in the reply's content), and "
                "the server does not turn them into tool_calls: nothing runs (every score would be 0)",
                "serve it with a chat template and tool-call parser that emit tool_calls (vLLM: --enable-auto-tool-choice "
                "--tool-call-parser NAME for the model's format, e.g. hermes for Qwen; llama-server: --jinja with a "
                "template whose call format it parses, --chat-template-file)",
            )
        ], None
    if auto and auto.get("tool_calls"):
        return [
            Finding(
                False,
                "answers without a tool call unless asked: its default tool_choice is not auto",
                """send it with every request: vf-eval ... -S '{"tool_choice": "auto"}'""",
            )
        ], auto
    return [
        Finding(
            False,
            "never calls a tool, even with tool_choice auto: the model or its chat template has no tool support "
            "(every score would be 0)",
            "serve a model whose chat template supports tools (llama-server: --jinja, and /props says supports_tools)",
        )
    ], None


def check_token_limit(probe: Probe) -> Finding:
    """Step 2: `max_completion_tokens` (what -t becomes) is honoured."""
    messages = [{"role": "user", "content": "Count from 1 to 200, separated by spaces."}]
    status, reply = probe.post(messages, max_completion_tokens=TOKEN_PROBE)
    if status != 200 or not isinstance(reply, dict):
        return Finding(False, f"refuses max_completion_tokens ({_said(status, reply)})", _MAX_TOKENS_FIX)
    used = (reply.get("usage") or {}).get("completion_tokens")
    if used is None:
        return Finding(True, "accepts max_completion_tokens (it reports no usage, so whether it honours it is unknown)")
    if used > TOKEN_PROBE:
        return Finding(False, f"ignores max_completion_tokens (asked {TOKEN_PROBE}, got {used} tokens)", _MAX_TOKENS_FIX)
    return Finding(True, f"honours max_completion_tokens ({used} of {TOKEN_PROBE} tokens)")


_MAX_TOKENS_FIX = """send max_tokens yourself: vf-eval ... -S '{"extra_body": {"max_tokens": N}}'"""


def check_follow_up(probe: Probe, message: dict[str, Any], stack: str) -> Finding:
    """Step 3: the conversation sent back after a tool call, as `stack` ("classic" or "v1") sends it."""
    calls = message["tool_calls"][:1]
    assistant: dict[str, Any] = {"role": "assistant", "content": None, "tool_calls": calls}
    if stack == "classic":
        assistant["reasoning_content"] = None
    tool = {"role": "tool", "tool_call_id": calls[0].get("id", "call_0"), "content": "[exit code 0]"}
    status, reply = probe.post([*_first_messages(), assistant, tool])
    name = "classic (verifiers 0.3.x)" if stack == "classic" else "v1 (verifiers 0.4.x)"
    if status == 200 and _message(reply) is not None:
        return Finding(True, f"{name}: accepts the conversation sent back after a tool call")
    fix = "use a server that accepts `content: null` beside `tool_calls` and `role: tool` messages"
    if stack == "classic":
        fix += "; llama-server refuses `reasoning_content: null` (the v1 stack does not send it: use verifiers 0.4)"
    return Finding(False, f"{name}: refuses the conversation sent back after a tool call ({_said(status, reply)})", fix)


def check_server(base_url: str, model: str, api_key: str | None = None, timeout: float = 120.0) -> list[Finding]:
    """Every finding, in the order a rollout meets them."""
    probe = Probe(base_url, model, api_key or "none", timeout)
    findings, message = check_tool_calls(probe)
    findings.append(check_token_limit(probe))
    if message is None:
        findings.append(Finding(False, "the conversation sent back after a tool call was not tried: no tool call came"))
        return findings
    findings += [check_follow_up(probe, message, stack) for stack in ("v1", "classic")]
    return findings


def api_key_from(var: str | None) -> str | None:
    """The key held in environment variable `var` (as vf-eval's -k names it)."""
    if var is None:
        return None
    if var not in os.environ:
        raise ValueError(f"-k {var}: no such environment variable (name the variable that holds the key)")
    return os.environ[var]
