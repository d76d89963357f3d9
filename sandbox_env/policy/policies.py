"""What a scripted policy says next, given the conversation so far.

A policy finds its task by id, never by prompt text: the first user message is the task's
question, whose last line names the task (`Task id: ...`, families/question.py; both front
doors send it unchanged). Prompt text cannot name a task: repair tasks of one base task can
share their whole prompt (docs/tasks.md, "Twin prompts"). The policy then plays the task's
tool calls one per turn (a turn is an assistant message with tool calls) and ends with a
message that calls no tool.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox_env.dataset import load_rows
from sandbox_env.families.question import TASK_ID_LABEL, task_id_in
from sandbox_env.verify import reference_calls


@dataclass
class Step:
    """One assistant turn: a tool call, or a final message when tool is None.

    `raw_arguments`: the call's arguments sent as this text instead of `args` as JSON (a script's
    malformed call, as real models sometimes write them).
    """

    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    raw_arguments: str | None = None


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content or ""


def find_task_id(messages: list[dict[str, Any]]) -> str | None:
    """The task id that the conversation's first user message (the task's question) ends with, if any."""
    for message in messages:
        if message.get("role") == "user":
            return task_id_in(_content_text(message))
    return None


def turns_taken(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))


class Policy:
    name = "policy"

    def __init__(self) -> None:
        self.families = {r["info"]["task_id"]: r["info"]["family"] for r in load_rows()}

    def plan(self, task_id: str) -> list[Step] | None:
        raise NotImplementedError

    def next_step(self, messages: list[dict[str, Any]]) -> Step:
        """The next turn of the conversation `messages`: its task's step after the turns already taken."""
        return self.step(find_task_id(messages), turns_taken(messages))

    def step(self, task_id: str | None, turns: int) -> Step:
        """Step `turns` (0 = the first) of task `task_id`'s plan; past its end, a final message."""
        if task_id is None:
            return Step(
                text=f"[{self.name} policy] the first user message does not end with a `{TASK_ID_LABEL}...` line, "
                "so no task can be played: send the task's question as the dataset holds it."
            )
        if task_id not in self.families:
            return Step(text=f"[{self.name} policy] the installed dataset has no task {task_id!r}.")
        plan = self.plan(task_id)
        if plan is None:
            return Step(text=f"[{self.name} policy] has nothing to play for task {task_id}.")
        return plan[turns] if turns < len(plan) else Step(text="Done.")


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

    def step(self, task_id: str | None, turns: int) -> Step:
        return Step(text="I would rather describe the solution than run anything: use the Django ORM.")


class ScriptPolicy(Policy):
    """Plays a user's file: {task_id: {"calls": [{"tool": ..., "args": {...}}], "final": "...", "empty_replies": N}}.

    A call may give `"raw_arguments": "<text>"` instead of `args`: the arguments sent as that text
    exactly, valid JSON or not (how to send a malformed call).

    `empty_replies` (default 0): the first N times a rollout of the task asks for its first turn,
    the reply is empty (no content, no tool call), as real servers sometimes answer; verifiers
    calls such a reply invalid and its retry plays the rollout again.
    """

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
        self.empty_left: dict[str, int] = {}
        for task_id, entry in data.items():
            calls = entry.get("calls", []) if isinstance(entry, dict) else entry
            steps = []
            for i, c in enumerate(calls):
                if not isinstance(c, dict) or c.get("tool") not in ("bash", "execute_code"):
                    raise ValueError(f"policy script {path}: {task_id} call {i} needs tool bash or execute_code")
                raw = c.get("raw_arguments")
                if raw is not None and not isinstance(raw, str):
                    raise ValueError(f"policy script {path}: {task_id} call {i}: raw_arguments must be a string")
                steps.append(Step(c["tool"], dict(c.get("args") or {}), raw_arguments=raw))
            final = entry.get("final", "Done.") if isinstance(entry, dict) else "Done."
            self.script[task_id] = steps + [Step(text=final)]
            empty = entry.get("empty_replies", 0) if isinstance(entry, dict) else 0
            if not isinstance(empty, int) or isinstance(empty, bool) or empty < 0:
                raise ValueError(f"policy script {path}: {task_id} empty_replies must be a whole number >= 0")
            self.empty_left[task_id] = empty

    def plan(self, task_id: str) -> list[Step] | None:
        return self.script.get(task_id)

    def step(self, task_id: str | None, turns: int) -> Step:
        if turns == 0 and task_id is not None and self.empty_left.get(task_id, 0) > 0:
            self.empty_left[task_id] -= 1
            return Step()  # no content, no tool call
        return super().step(task_id, turns)


def make_policy(name: str, script: Path | None = None) -> Policy:
    if script is not None:
        return ScriptPolicy(script)
    if name == "reference":
        return ReferencePolicy()
    if name == "null":
        return NullPolicy()
    raise ValueError(f"unknown policy {name!r}: use reference, null, or --script FILE")
