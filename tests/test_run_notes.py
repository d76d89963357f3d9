"""`websandbox eval` and the viewer say when no rollout called a tool and when replies were cut at the token limit.

Pure logic over saved runs: the real runs of tests/fixtures/ (v1 runs of the reference and null
policies, described in test_viewer_v1.py; the classic fixture run of test_viewer.py), copied and
changed the way a server that drops the tools, or a token limit, would have changed them. Both
stacks' summaries go through eval_report.report, the viewer through render.page_data (what the
page script reads; test_viewer_browser.py shows the sentences in Chromium).
"""

from __future__ import annotations

import io
import json
import shutil
import time
from pathlib import Path

from sandbox_env.cli.eval_live import LiveCounts
from sandbox_env.cli.eval_report import report
from sandbox_env.cli.eval_runs import RunLocation
from sandbox_env.viewer import load_run
from sandbox_env.viewer.notes import CHECK_SERVER, run_notes
from sandbox_env.viewer.render import page_data

FIXTURES = Path(__file__).parent / "fixtures"
V1 = FIXTURES / "v1_runs"
CLASSIC = FIXTURES / "view_run"


def _v1_copy(name: str, dest: Path, model: str | None = None) -> Path:
    run = shutil.copytree(V1 / name, dest)
    if model is not None:  # the same transcripts, as if a model server named `model` had answered
        resolved = run / "configs" / "resolved" / "eval.json"
        config = json.loads(resolved.read_text())
        config["model"] = model
        resolved.write_text(json.dumps(config))
        given = run / "configs" / "eval.toml"
        given.write_text(given.read_text().replace('model = "null"', f'model = "{model}"'))
    return run


def _edit_traces(run: Path, change) -> None:
    path = run / "traces.jsonl"
    episodes = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    for i, episode in enumerate(episodes):
        for trace in episode["traces"]:
            change(i, trace)
    path.write_text("".join(json.dumps(e) + "\n" for e in episodes))


def _rows(path: Path) -> list[dict]:
    """The fixture's rows (it also holds a cut line, blank and non-object lines, which the loader skips)."""
    rows = []
    for line in path.read_text().splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            continue
        if isinstance(row, dict):
            rows.append(row)
    return rows


def _edit_rows(src: Path, dest: Path, change) -> Path:
    shutil.copytree(src, dest)
    rows = _rows(dest / "results.jsonl")
    for i, row in enumerate(rows):
        change(i, row)
    (dest / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return dest


def test_a_v1_run_whose_model_never_called_a_tool_says_the_server_probably_dropped_them(tmp_path, capsys):
    run = _v1_copy("null", tmp_path / "run", model="some-model")
    assert report(run, "t") == 0  # the rollouts finished and were graded: a line, not a failed run
    err = capsys.readouterr().err
    assert "no rollout called a tool (6 of 6 rollouts got a reply, none with a tool call)" in err
    assert "dropped them" in err and CHECK_SERVER in err
    assert any("no rollout called a tool" in n for n in page_data(load_run(run))["notes"])


def test_the_null_policy_which_never_calls_a_tool_by_design_gets_no_such_line(capsys):
    assert report(V1 / "null", "t") == 0
    assert "called a tool" not in capsys.readouterr().err
    assert page_data(load_run(V1 / "null"))["notes"] == []


def test_a_run_in_which_one_rollout_called_a_tool_gets_no_line(tmp_path, capsys):
    assert report(V1 / "reference", "t") == 0
    assert capsys.readouterr().err == ""
    report(V1 / "smoke", "t")  # one of its two rollouts errored: the error line only
    assert "called a tool" not in capsys.readouterr().err

    def strip_all_but_first(i: int, row: dict) -> None:
        if i:
            row["completion"] = [m for m in row["completion"] if m.get("role") == "assistant" and not m.get("tool_calls")]

    run = _edit_rows(CLASSIC, tmp_path / "one-called", strip_all_but_first)
    rollouts = load_run(run).rollouts
    assert sum(1 for r in rollouts if any(m.get("tool_calls") for m in r["completion"])) == 1
    assert run_notes(rollouts, load_run(run).meta) == []


def test_a_classic_run_without_tool_calls_gets_the_line_and_rollouts_without_a_reply_do_not_count(tmp_path, capsys):
    def prose_only(i: int, row: dict) -> None:
        row["completion"] = [{"role": "assistant", "content": "I would describe it instead."}] if i < 5 else []

    run = _edit_rows(CLASSIC, tmp_path / "prose", prose_only)
    report(run, "t")
    err = capsys.readouterr().err
    assert "no rollout called a tool (5 of 8 rollouts got a reply, none with a tool call)" in err

    def never_replied(i: int, row: dict) -> None:
        row["completion"] = []
        row["error"] = {"error": "ModelError", "error_chain_str": "ModelError", "error_chain_repr": "ModelError('down')"}

    run = _edit_rows(CLASSIC, tmp_path / "down", never_replied)
    report(run, "t")
    err = capsys.readouterr().err
    assert "called a tool" not in err and "8 of 8 rollouts ended with an error" in err  # the error line says it


def test_a_v1_run_with_replies_cut_at_the_token_limit_counts_rollouts_and_replies(tmp_path, capsys):
    run = _v1_copy("reference", tmp_path / "cut")

    def cut(i: int, trace: dict) -> None:  # rollout 0: two replies cut; rollout 3: one
        calls = [c for c in trace.get("calls", []) if isinstance(c, dict)]
        for c in calls[: {0: 2, 3: 1}.get(i, 0)]:
            c["finish_reason"] = "length"

    _edit_traces(run, cut)
    loaded = load_run(run)
    assert [(r["truncated"], r["cut_replies"]) for r in loaded.rollouts][:4] == [(True, 2), (False, 0), (False, 0), (True, 1)]
    assert report(run, "t") == 0
    err = capsys.readouterr().err
    assert '2 of 6 rollouts had a reply cut at the token limit (finish_reason "length", 3 replies in all)' in err
    assert "called a tool" not in err  # the reference policy called its tools
    notes = page_data(loaded)["notes"]
    assert len(notes) == 1 and notes[0].startswith("2 of 6 rollouts had a reply cut at the token limit")


def test_a_v1_run_that_saved_no_finish_reason_says_nothing_about_cuts(tmp_path):
    run = _v1_copy("reference", tmp_path / "no-reasons")
    _edit_traces(run, lambda i, trace: [c.pop("finish_reason", None) for c in trace.get("calls", [])])
    loaded = load_run(run)
    assert {(r["truncated"], r["cut_replies"]) for r in loaded.rollouts} == {(None, None)}
    assert run_notes(loaded.rollouts, loaded.meta) == []


def test_a_classic_run_with_truncated_rollouts_counts_them(tmp_path, capsys):
    def truncate(i: int, row: dict) -> None:
        row["is_truncated"] = i in (1, 4, 6)

    run = _edit_rows(CLASSIC, tmp_path / "trunc", truncate)
    report(run, "t")
    err = capsys.readouterr().err
    assert '3 of 8 rollouts had a reply cut at the token limit (finish_reason "length" or is_truncated)' in err
    assert [r["truncated"] for r in load_run(run).rollouts] == [i in (1, 4, 6) for i in range(8)]
    assert run_notes(load_run(CLASSIC).rollouts) == []  # the fixture saved no is_truncated: nothing to say


def test_live_counts_show_tool_calls_and_cuts_as_rollouts_finish(tmp_path):
    runs = tmp_path / "evals" / "websandbox--reference"
    where = RunLocation(runs_dir=runs)
    where.snapshot(time.time())
    out = io.StringIO()
    live = LiveCounts(where, out=out)
    run = runs / "abcd1234"
    run.mkdir(parents=True)
    rows = _rows(CLASSIC / "results.jsonl")[:2]
    rows[1]["is_truncated"] = True
    (run / "results.jsonl").write_text(json.dumps(rows[0]) + "\n")
    assert live.poll() == 1
    with (run / "results.jsonl").open("a") as f:
        f.write(json.dumps(rows[1]) + "\n")
    assert live.poll() == 1
    first, second = [line for line in out.getvalue().splitlines() if line]
    assert "· tool calls 1 ·" in first and "cut at the token limit" not in first
    assert "· tool calls 3 · cut at the token limit 1 ·" in second
