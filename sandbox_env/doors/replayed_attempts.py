"""Which earlier attempts a classic rollout replays, so that a replay leaves a trace in the run.

verifiers 0.3.x plays a rollout again when its attempt ends on an error its retry catches
(`maybe_retry` under `vf-eval --max-retries`, default 3): a model response it calls invalid
(`vf.InvalidModelResponseError`: an empty reply — no content, no tool call, no reasoning) or
a harness fault (`vf.InfraError`). Only the last attempt reaches `results.jsonl`, so a rollout
replayed after an empty reply looked like one that never had one. This module keeps the
earlier attempts' errors and hands them to the attempt that replays them: the door writes
them into the rollout's `info["replayed_after"]` (saved with every row) and counts them in the
weight-0 metric `replayed_after_errors`; the viewer shows them on the rollout.

How an attempt finds its predecessors: verifiers' retry awaits every attempt of a rollout
(or of a group, which is replayed whole) in one asyncio task, and each rollout's own loop
runs in a task made from that task's context. The rubric's cleanup (after scoring) runs in
the retrying task itself — the env's own cleanup does not: for a group it runs in each
rollout's task — so what it records in a context variable there is in the context of every
later attempt of that rollout or group, and of nothing else: `vf-eval` gives every rollout
or group a task of its own. An errored attempt that no retry follows (`--max-retries 0`, or the
retries used up) records nothing anyone reads: it is itself the saved row, errored.

Records name the example and the task they came from; an attempt takes only those of its own
example and task, so a context shared by unrelated rollouts (one caller's task running
several in turn) cannot lend one rollout another's history.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

import verifiers as vf

from sandbox_env.text import described_error

REPLAYED_ERRORS = (vf.InvalidModelResponseError, vf.InfraError)  # what verifiers' retry replays (maybe_retry)

_EARLIER: ContextVar[tuple[dict[str, Any], ...]] = ContextVar("websandbox_earlier_attempts", default=())


def _identity(state: Any) -> tuple[Any, Any]:
    info = state.get("info") or {}
    return state.get("example_id"), info.get("task_id") if isinstance(info, dict) else None


async def note_attempt_end(state: Any) -> None:
    """Record the attempt's error when it is one verifiers' retry replays (a rubric cleanup handler)."""
    error = state.get("error")
    if not isinstance(error, REPLAYED_ERRORS):
        return
    example_id, task_id = _identity(state)
    _EARLIER.set((*_EARLIER.get(), {"example_id": example_id, "task_id": task_id, "error": described_error(error)}))


def replayed_after(state: Any) -> list[str]:
    """The errors of the earlier attempts this attempt replays, oldest first, as `Kind: message` lines."""
    me = _identity(state)
    return [r["error"] for r in _EARLIER.get() if (r["example_id"], r["task_id"]) == me]
