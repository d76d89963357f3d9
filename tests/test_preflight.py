"""`websandbox check-server`: the preflight passes a server that works and names the fix for one that does not.

The working server is the project's own scripted policy (the reference plays smoke_hello
with a bash call); the broken ones are small servers written here that fail the way real
ones were seen to fail (a default tool_choice of none, no tool support, HTTP 500 on
`content: null` or on `reasoning_content: null`, max_completion_tokens ignored).
"""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sandbox_env.cli.main import main
from sandbox_env.cli.preflight import check_server
from sandbox_env.policy.launch import start_policy_server

CALL = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "true"}'}}


def _reply(message: dict[str, Any], tokens: int = 3) -> JSONResponse:
    return JSONResponse({"choices": [{"message": {"role": "assistant", **message}}], "usage": {"completion_tokens": tokens}})


def _server(answer) -> tuple[uvicorn.Server, str]:
    async def chat(request: Request) -> JSONResponse:
        return answer(await request.json())

    config = uvicorn.Config(Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])]), port=0, log_level="error")
    server = uvicorn.Server(config)
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}/v1"


def _follow_up(body: dict[str, Any]) -> bool:
    return any(m.get("role") == "tool" for m in body["messages"])


def _strict_llama(body: dict[str, Any]) -> JSONResponse:
    """HTTP 500 on `reasoning_content: null` (llama-server), else a working server."""
    if any("reasoning_content" in m and m["reasoning_content"] is None for m in body["messages"]):
        return JSONResponse({"error": {"message": "type must be string, but is null"}}, status_code=500)
    if _follow_up(body):
        return _reply({"content": "done"})
    return _reply({"content": None, "tool_calls": [CALL]}, tokens=min(body.get("max_completion_tokens", 3), 3))


def _tool_choice_none(body: dict[str, Any]) -> JSONResponse:
    if body.get("tool_choice") == "auto" and not _follow_up(body):
        return _reply({"content": None, "tool_calls": [CALL]})
    return _reply({"content": "I would write the file."})


def _ignores_limits(body: dict[str, Any]) -> JSONResponse:
    if _follow_up(body):
        return _reply({"content": "done"}, tokens=400)
    return _reply({"content": None, "tool_calls": [CALL]}, tokens=400)


@pytest.fixture
def serve():
    servers = []

    def start(answer):
        server, url = _server(answer)
        servers.append(server)
        return url

    yield start
    for server in servers:
        server.should_exit = True


def test_the_projects_own_reference_policy_calls_tools_and_takes_both_stacks_follow_ups():
    server, url = start_policy_server("reference", None, "127.0.0.1", 0)
    try:
        findings = check_server(url, "reference")
    finally:
        server.should_exit = True
    assert [f.ok for f in findings] == [True, False, True, True], [f.line() for f in findings]
    assert "ignores max_completion_tokens" in findings[1].what  # a scripted policy answers in full, whatever asked


def test_a_server_that_works_passes_every_check(serve, capsys):
    url = serve(lambda body: _reply({"content": "done"}) if _follow_up(body) else _reply({"content": None, "tool_calls": [CALL]}))
    assert main(["check-server", "-b", url, "-m", "m"]) == 0
    assert "will work with websandbox" in capsys.readouterr().out


def test_a_server_that_refuses_null_reasoning_content_fails_only_the_classic_stack(serve):
    findings = check_server(serve(_strict_llama), "m")
    assert [f.ok for f in findings] == [True, True, True, False]
    assert "classic" in findings[3].what and "reasoning_content" in findings[3].fix


def test_a_default_tool_choice_of_none_is_named_with_the_setting_that_fixes_it(serve):
    findings = check_server(serve(_tool_choice_none), "m")
    assert not findings[0].ok and '"tool_choice": "auto"' in findings[0].fix


def test_a_model_that_never_calls_a_tool_is_said_to_score_zero(serve):
    findings = check_server(serve(lambda body: _reply({"content": "prose"})), "m")
    assert not findings[0].ok and "every score would be 0" in findings[0].what


def test_calls_written_as_text_are_recognised_and_the_parser_to_set_is_named(serve):
    """Qwen2.5-Coder on llama-server wrote its call as a JSON block in the text; the server left tool_calls empty."""
    text = 'I will run it.\n```json\n{"name": "bash", "arguments": {"command": "ls /workspace"}}\n```'
    findings = check_server(serve(lambda body: _reply({"content": text})), "m")
    assert not findings[0].ok and "writes its tool calls as text (bash" in findings[0].what
    assert "--tool-call-parser" in findings[0].fix and "--jinja" in findings[0].fix
    tagged = check_server(serve(lambda body: _reply({"content": "<tool_call>\nbash ls\n</tool_call>"})), "m")
    assert "a <tool_call> block" in tagged[0].what


def test_a_server_that_ignores_max_completion_tokens_is_told_to_take_max_tokens(serve, capsys):
    url = serve(_ignores_limits)
    assert main(["check-server", "-b", url, "-m", "m"]) == 1
    out = capsys.readouterr().out
    assert "ignores max_completion_tokens" in out and "max_tokens" in out
