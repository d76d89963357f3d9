"""An OpenAI-compatible chat-completions endpoint that plays a scripted policy (non-streaming).

`fail_after=N` makes it a broken provider on purpose: it answers the first N requests of
every rollout and then HTTP 500, the way a real server fails a conversation it cannot
take (llama-cpp-python rejects the assistant message resent with `content: None` beside
its tool calls). A request's place in its rollout is read from the conversation it
carries (one assistant message a turn taken), so no state is kept between requests. The
500 carries `x-should-retry: false`, which the OpenAI client honours: a real server's 500
is retried (verifiers 0.3.1 allows ten retries, about a minute of backoff) before the
rollout ends with the same error, and a test need not wait for that.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from sandbox_env.policy.policies import Policy


class ChatRequest(BaseModel):
    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    stream: bool = False

    model_config = {"extra": "allow"}


def _error(status: int, message: str, kind: str = "invalid_request_error", headers: dict | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": status}}, status_code=status, headers=headers)


def request_number(messages: list[dict[str, Any]]) -> int:
    """Which request of its rollout this is: 1 + the assistant turns the conversation already holds."""
    return 1 + sum(1 for m in messages if m.get("role") == "assistant")


def create_app(policy: Policy, fail_after: int | None = None) -> Starlette:
    """The endpoint for `policy`; with `fail_after=N`, request N+1 of every rollout gets HTTP 500."""

    async def chat(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the request body is not valid JSON")
        try:
            req = ChatRequest.model_validate(body)
        except ValidationError as exc:
            return _error(400, f"invalid chat completion request: {exc.errors(include_url=False)}")
        if req.stream:
            return _error(400, "streaming is not supported by this server: send stream=false")
        if not req.messages:
            return _error(400, "messages must not be empty")
        if fail_after is not None and request_number(req.messages) > fail_after:
            return _error(500, f"this server fails every request after the first {fail_after} of a rollout "
                               "(--fail-after)", "server_error", {"x-should-retry": "false"})  # fmt: skip
        offered = {t.get("function", {}).get("name") for t in req.tools or []}
        step = policy.next_step(req.messages)
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
        finish = "stop"
        if step.tool is not None:
            if step.tool not in offered:
                return _error(400, f"the policy wants tool {step.tool!r}, but the request offers {sorted(offered)}")
            message["tool_calls"] = [{
                "id": f"call_{uuid.uuid4().hex[:16]}",
                "type": "function",
                "function": {"name": step.tool, "arguments": json.dumps(step.args)},
            }]  # fmt: skip
            finish = "tool_calls"
        completion_tokens = max(1, len(json.dumps(message)) // 4)
        prompt_tokens = max(1, len(json.dumps(req.messages)) // 4)
        return JSONResponse({
            "id": f"chatcmpl-{uuid.uuid4().hex}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model,
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })  # fmt: skip

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": policy.name, "object": "model", "owned_by": "websandbox"}]})

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return _error(404, f"no route {request.url.path}: use POST /v1/chat/completions", "not_found")

    async def not_allowed(request: Request, exc: Exception) -> JSONResponse:
        return _error(405, f"method {request.method} is not allowed on {request.url.path}")

    app = Starlette(routes=[
        Route("/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/models", models, methods=["GET"]),
    ])  # fmt: skip
    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_allowed)
    return app
