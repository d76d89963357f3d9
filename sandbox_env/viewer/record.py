"""The plain shapes a loader produces and the page reads: `Run`, and the `Loader` interface.

A `Run` holds plain JSON data (it is embedded in the report as is):
- `rollouts`: one dict a rollout, with the keys below;
- `prompts`: prompt message lists by key (rollouts of one task share one prompt, so a
  run of many rollouts does not carry the same long prompt many times);
- `meta`: what the run says about itself (model, environment arguments, date...);
- `problems`: what the loader skipped or could not read, for the reader to see.

A rollout: `n` (position in the run), `example_id`, `family`, `task_id`, `difficulty`,
`category`, `reward` (float or None), `scoring_error` (the harness fault's text, or
None), `tampered` (bool), `error` (the rollout's own error text, or None: `state["error"]`,
a model API error, a harness fault, a sandbox that never became ready), `error_kind` (its
class names, e.g. `ModelError -> InternalServerError`, or None), `grade`
(`state["grade"]` as saved, or None when the run was made without `-C grade`),
`prompt` (a key into `prompts`), `completion` (messages), `stop` (why it ended),
`metrics` (number by name), `traceback` (the error's traceback where the run saved one,
else None), `turns` (assistant messages in the completion), `tokens` ({"input", "output"}
over the rollout, or None), `seconds` (the rollout's wall time, or None), `timing`
(seconds by phase, or None), `truncated` (a reply was cut at the token limit: True or
False as the run records it, None when it records nothing), `cut_replies` (how many
replies were cut, where the run saves a finish reason per model call, else None),
`replayed_after` (the errors, oldest first, of the earlier attempts verifiers' retry played
this rollout again after — an empty reply, a harness fault — as a classic row records them
in `info`; None where the run format keeps no such record).

A message: `role`, `content` (text), and optionally `tool_calls`
([{"id", "name", "arguments"}], arguments parsed from JSON where they are JSON),
`tool_call_id` (on a tool output), `reasoning` (text), `usage` (on an assistant turn:
any of `input_tokens` (the context sent), `output_tokens`, `seconds` (the model call's
time), `finish_reason`, as far as the run saved them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol


class RunFormatError(ValueError):
    """The directory holds no run that any loader can read."""


@dataclass
class Run:
    format: str
    source: str
    meta: dict[str, Any] = field(default_factory=dict)
    prompts: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    rollouts: list[dict[str, Any]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


class Loader(Protocol):
    """One run format. A reader of verifiers v1 traces is one more class like this."""

    name: str

    def detect(self, path: Path) -> bool:
        """Whether `path` is a run directory of this format."""

    def read(self, path: Path) -> Run:
        """The whole run, tolerant of rows that are partial or of another version."""
