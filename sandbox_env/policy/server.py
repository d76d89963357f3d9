"""An OpenAI-compatible chat-completions endpoint that plays a scripted policy.

Answers whole responses, or Server-Sent Events when the request asks `stream`
(verifiers v1's harnesses always stream; its eval client relays the stream).
With `tokens=True` a whole response also carries token ids and logprobs shaped as
vLLM returns them (policy/tokens.py), which the classic trainer path reads.

With `tokenizer_dir` (policy/chat_tokenizer.py) it also serves vLLM's token-in,
token-out `POST /inference/v1/generate`, which verifiers v1's training client
(renderer + engine) calls: the prompt arrives as token ids, the policy reads the task
id (the last line of the first user turn) and the turns taken back from them, and its
reply goes out as completion token ids with logprobs, rendered with the same chat
template the client uses.

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
from starlette.responses import JSONResponse, StreamingResponse
from starlette.routing import Route

from sandbox_env.families.question import task_id_in
from sandbox_env.policy.policies import Policy
from sandbox_env.policy.tokens import logprob, token_fields


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


def _sse(chunks: list[dict[str, Any]]):
    async def events():
        for chunk in chunks:
            yield f"data: {json.dumps(chunk)}\n\n".encode()
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _stream_chunks(
    head: dict[str, Any], message: dict[str, Any], finish: str, usage: dict[str, Any], include_usage: bool
) -> list[dict[str, Any]]:
    """The response as chat.completion.chunk events: role and content, tool calls, finish, usage."""
    base = {**head, "object": "chat.completion.chunk"}
    delta: dict[str, Any] = {"role": "assistant", "content": message.get("content") or ""}
    chunks = [{**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}]
    for i, call in enumerate(message.get("tool_calls") or []):
        tool_delta = {"tool_calls": [{"index": i, **call}]}
        chunks.append({**base, "choices": [{"index": 0, "delta": tool_delta, "finish_reason": None}]})
    chunks.append({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]})
    if include_usage:
        chunks.append({**base, "choices": [], "usage": usage})
    return chunks


# how the chat template (policy/chat_tokenizer.py) opens and ends a turn
_USER_TURN = "<|im_start|>user\n"
_ASSISTANT_TURN = "<|im_start|>assistant\n"
_END_TURN = "<|im_end|>"


def _turns(text: str, opener: str) -> list[str]:
    """The bodies of the turns that `opener` opens in the rendered `text`, in order (the last may be unfinished)."""
    return [part.split(_END_TURN, 1)[0] for part in text.split(opener)[1:]]


class _Generator:
    """`/inference/v1/generate` for a scripted policy, over the local chat tokenizer."""

    def __init__(self, policy: Policy, tokenizer_dir: str) -> None:
        from transformers import AutoTokenizer

        self.policy = policy
        self.tok = AutoTokenizer.from_pretrained(tokenizer_dir)

    @staticmethod
    def _task_and_turns(text: str) -> tuple[str | None, int]:
        """The rendered conversation's task id (its first user turn's last line) and the tool turns taken.

        The first user turn of the chat template holds the task's question; later user turns
        are tool responses. A turn taken is an assistant turn that holds a `<tool_call>` (one
        in a tool's output is not).
        """
        question = _turns(text, _USER_TURN)
        if not question:
            return None, 0
        return task_id_in(question[0]), sum("<tool_call>" in turn for turn in _turns(text, _ASSISTANT_TURN))

    def _completion_text(self, message: dict[str, Any]) -> str:
        user = [{"role": "user", "content": "x"}]
        head = self.tok.apply_chat_template(user, tokenize=False, add_generation_prompt=True)
        full = self.tok.apply_chat_template([*user, message], tokenize=False)
        body = full[len(head) :]
        return body[: body.rindex("<|im_end|>") + len("<|im_end|>")]

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt_ids = list(body.get("token_ids") or [])
        step = self.policy.step(*self._task_and_turns(self.tok.decode(prompt_ids)))
        message: dict[str, Any] = {"role": "assistant", "content": step.text or ""}
        if step.tool is not None:
            message["tool_calls"] = [{"type": "function", "function": {"name": step.tool, "arguments": step.args}}]
        ids = self.tok.encode(self._completion_text(message), add_special_tokens=False)
        content = [{"logprob": logprob(t, i), "token": f"token_id:{t}"} for i, t in enumerate(ids)]
        choice = {"index": 0, "token_ids": ids, "logprobs": {"content": content}, "finish_reason": "stop"}
        return {"request_id": f"gen-{uuid.uuid4().hex}", "prompt_token_ids": prompt_ids, "choices": [choice]}


def _arguments(step) -> str:
    """A tool call's arguments as sent: the step's raw text when it gives one (malformed on purpose), else its JSON."""
    return step.raw_arguments if step.raw_arguments is not None else json.dumps(step.args)


def create_app(
    policy: Policy, fail_after: int | None = None, tokens: bool = False, tokenizer_dir: str | None = None
) -> Starlette:
    """The endpoint for `policy`; with `fail_after=N`, request N+1 of every rollout gets HTTP 500."""

    async def chat(request: Request) -> JSONResponse | StreamingResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "the request body is not valid JSON")
        try:
            req = ChatRequest.model_validate(body)
        except ValidationError as exc:
            return _error(400, f"invalid chat completion request: {exc.errors(include_url=False)}")
        if not req.messages:
            return _error(400, "messages must not be empty")
        if fail_after is not None and request_number(req.messages) > fail_after:
            return _error(
                500,
                f"this server fails every request after the first {fail_after} of a rollout (--fail-after)",
                "server_error",
                {"x-should-retry": "false"},
            )
        offered = {t.get("function", {}).get("name") for t in req.tools or []}
        step = policy.next_step(req.messages)
        message: dict[str, Any] = {"role": "assistant", "content": step.text or None}
        finish = "stop"
        if step.tool is not None:
            if step.tool not in offered:
                return _error(400, f"the policy wants tool {step.tool!r}, but the request offers {sorted(offered)}")
            message["tool_calls"] = [
                {
                    "id": f"call_{uuid.uuid4().hex[:16]}",
                    "type": "function",
                    "function": {"name": step.tool, "arguments": _arguments(step)},
                }
            ]
            finish = "tool_calls"
        prompt_ids, completion_ids, logprobs = token_fields(req.messages, req.tools, message)
        usage = {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(completion_ids),
            "total_tokens": len(prompt_ids) + len(completion_ids),
        }
        head = {"id": f"chatcmpl-{uuid.uuid4().hex}", "created": int(time.time()), "model": req.model}
        if req.stream:
            include_usage = bool((getattr(req, "stream_options", None) or {}).get("include_usage"))
            return _sse(_stream_chunks(head, message, finish, usage, include_usage))
        choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        body: dict[str, Any] = {**head, "object": "chat.completion", "choices": [choice], "usage": usage}
        if tokens:
            choice["logprobs"] = logprobs
            choice["token_ids"] = completion_ids
            body["prompt_token_ids"] = prompt_ids
        return JSONResponse(body)

    async def models(request: Request) -> JSONResponse:
        return JSONResponse({"object": "list", "data": [{"id": policy.name, "object": "model", "owned_by": "websandbox"}]})

    async def not_found(request: Request, exc: Exception) -> JSONResponse:
        return _error(404, f"no route {request.url.path}: use POST /v1/chat/completions", "not_found")

    async def not_allowed(request: Request, exc: Exception) -> JSONResponse:
        return _error(405, f"method {request.method} is not allowed on {request.url.path}")

    routes = [Route("/v1/chat/completions", chat, methods=["POST"]), Route("/v1/models", models, methods=["GET"])]
    if tokenizer_dir is not None:
        generator = _Generator(policy, tokenizer_dir)

        async def generate(request: Request) -> JSONResponse:
            try:
                body = await request.json()
            except ValueError:
                return _error(400, "the request body is not valid JSON")
            if not isinstance(body.get("token_ids"), list):
                return _error(400, "token_ids (a list of prompt token ids) is required")
            return JSONResponse(generator(body))

        routes.append(Route("/inference/v1/generate", generate, methods=["POST"]))
    app = Starlette(routes=routes)
    app.add_exception_handler(404, not_found)
    app.add_exception_handler(405, not_allowed)
    return app
