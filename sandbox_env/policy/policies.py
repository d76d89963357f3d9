"""What a scripted policy says next, given the conversation so far.

A policy finds its task by the prompt text (the first user message), then plays its
tool calls one per turn and ends with a message that calls no tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox_env.dataset import load_rows
from sandbox_env.verify import reference_calls


@dataclass
class Step:
    """One assistant turn: a tool call, or a final message when tool is None."""

    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def find_task_id(messages: list[dict[str, Any]], prompts: dict[str, str]) -> str | None:
    for message in messages:
        if message.get("role") == "user":
            return prompts.get(_content_text(message).strip())
    return None


def turns_taken(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))


class Policy:
    name = "policy"

    def __init__(self) -> None:
        self.prompts = {r["question"].strip(): r["info"]["task_id"] for r in load_rows()}
        self.families = {r["info"]["task_id"]: r["info"]["family"] for r in load_rows()}

    def plan(self, task_id: str) -> list[Step] | None:
        raise NotImplementedError

    def next_step(self, messages: list[dict[str, Any]]) -> Step:
        task_id = find_task_id(messages, self.prompts)
        if task_id is None:
            return Step(text=f"[{self.name} policy] no known task matches this conversation.")
        plan = self.plan(task_id)
        if plan is None:
            return Step(text=f"[{self.name} policy] has nothing to play for task {task_id}.")
        n = turns_taken(messages)
        return plan[n] if n < len(plan) else Step(text="Done.")


class ReferencePolicy(Policy):
    """Replays each task's reference solution as bash / execute_code calls."""

    name = "reference"

    def plan(self, task_id: str) -> list[Step] | None:
        family = self.families[task_id]
        calls = reference_calls(family, task_id)
        return [Step(c["tool"], dict(c["args"])) for c in calls]


class NullPolicy(Policy):
    """Answers in prose and never calls a tool."""

    name = "null"

    def next_step(self, messages: list[dict[str, Any]]) -> Step:
        return Step(text="I would rather describe the solution than run anything: use the Django ORM.")


class ScriptPolicy(Policy):
    """Plays a user's file: {task_id: {"calls": [{"tool": ..., "args": {...}}], "final": "..."}}."""

    name = "script"

    def __init__(self, path: Path) -> None:
        super().__init__()
        try:
            data = json.loads(Path(path).read_text())
        except (OSError, ValueError) as exc:
            raise ValueError(f"cannot read policy script {path}: {exc}") from exc
        if not isinstance(data, dict):
            raise ValueError(f"policy script {path} must map task ids to {{'calls': [...], 'final': str}}")
        self.script: dict[str, list[Step]] = {}
        for task_id, entry in data.items():
            calls = entry.get("calls", []) if isinstance(entry, dict) else entry
            steps = []
            for i, c in enumerate(calls):
                if not isinstance(c, dict) or c.get("tool") not in ("bash", "execute_code"):
                    raise ValueError(f"policy script {path}: {task_id} call {i} needs tool bash or execute_code")
                steps.append(Step(c["tool"], dict(c.get("args") or {})))
            final = entry.get("final", "Done.") if isinstance(entry, dict) else "Done."
            self.script[task_id] = steps + [Step(text=final)]

    def plan(self, task_id: str) -> list[Step] | None:
        return self.script.get(task_id)


def make_policy(name: str, script: Path | None = None) -> Policy:
    if script is not None:
        return ScriptPolicy(script)
    if name == "reference":
        return ReferencePolicy()
    if name == "null":
        return NullPolicy()
    raise ValueError(f"unknown policy {name!r}: use reference, null, or --script FILE")
