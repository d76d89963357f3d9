"""The viewer's own reader of v1 runs agrees with verifiers v1's (`read_episodes`) on real runs.

The viewer reads `traces.jsonl` as plain JSON (sandbox_env/viewer/v1.py, no verifiers
import); here, where verifiers 0.4 is installed, both readers load the fixture runs of
tests/fixtures/v1_runs/ and must agree on every trace's task, reward, ok, stop condition,
transcript and token counts.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_env.cli.eval_v1 import load_run as read_episodes
from sandbox_env.viewer import load_run

RUNS = Path(__file__).resolve().parents[1] / "fixtures" / "v1_runs"


@pytest.mark.parametrize("name", ["reference", "null", "smoke"])
def test_the_viewer_reads_each_trace_as_verifiers_v1_does(name):
    theirs = [t for episode in read_episodes(RUNS / name) for t in episode.traces]
    run = load_run(RUNS / name)
    ours = run.rollouts
    assert [t.task.data.model_extra["task_id"] for t in theirs] == [r["task_id"] for r in ours]
    assert [t.reward for t in theirs] == [r["reward"] for r in ours]
    assert [t.ok for t in theirs] == [r["error"] is None for r in ours]
    assert [t.stop_condition for t in theirs] == [r["stop"] for r in ours]
    assert [t.num_turns for t in theirs] == [r["turns"] for r in ours]
    assert [(t.num_input_tokens, t.num_output_tokens) for t in theirs] == [
        (r["tokens"]["input"], r["tokens"]["output"]) for r in ours
    ]
    for trace, record in zip(theirs, ours, strict=True):
        messages = trace.messages
        assert len(messages) == len(run.prompts[record["prompt"]]) + len(record["completion"])
        tool_ids = [c.id for m in messages for c in (getattr(m, "tool_calls", None) or [])]
        assert tool_ids == [c["id"] for m in record["completion"] for c in m.get("tool_calls", [])]
