"""The run viewer without a browser: reading runs, the family table, the HTML it writes, the server.

The fixture run (tests/fixtures/view_run/) is a real `websandbox eval --script` run of five
tasks (one orm pass, two orm row mismatches, a fastapi partial score, a failing django
suite) with the task data trimmed from `info`, plus three rows written to the shape vf-eval 0.3.1 saves:
a fastapi harness fault, a django rollout that plants a conftest.py (tampered, with markup
in its transcript), an orm rollout saved without a grade whose model call failed, and one
line cut short by a crash.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import threading
import time
from pathlib import Path

import httpx
import pytest

from sandbox_env.cli.main import main as cli_main
from sandbox_env.viewer import RunFormatError, load_run, render_html
from sandbox_env.viewer.classic import message
from sandbox_env.viewer.record import Run
from sandbox_env.viewer.runs import newest_run
from sandbox_env.viewer.serve import Site, make_server
from sandbox_env.viewer.summary import errored_cell, family_table

FIXTURE = Path(__file__).parent / "fixtures" / "view_run"


def _by_task(run: Run) -> dict[str, dict]:
    return {r["task_id"]: r for r in run.rollouts}


def _embedded(html: str) -> dict:
    block = re.search(r'<script type="application/json" id="run-data">(.*?)</script>', html, re.S)
    assert block, "the report has no data block"
    return json.loads(block.group(1))


def test_every_object_line_is_read_and_the_cut_line_is_reported():
    run = load_run(FIXTURE)
    assert len(run.rollouts) == 8
    assert [r["n"] for r in run.rollouts] == list(range(8))
    assert len(run.problems) == 1 and "line 6" in run.problems[0] and "not JSON" in run.problems[0]
    assert run.meta["model"] == "script" and run.meta["env_id"] == "websandbox"


def test_rows_match_what_verifiers_own_loader_reads():
    from verifiers.utils.save_utils import load_outputs

    theirs = load_outputs(FIXTURE)
    ours = load_run(FIXTURE).rollouts
    assert [(o["example_id"], o["reward"]) for o in theirs] == [(r["example_id"], r["reward"]) for r in ours]


def test_a_rollout_carries_family_task_reward_flags_grade_and_transcript():
    rollouts = _by_task(load_run(FIXTURE))
    orm = rollouts["orm_adv_01"]
    assert (orm["family"], orm["reward"], orm["scoring_error"], orm["tampered"], orm["error"]) == ("orm", 0.0, None, False, None)
    assert orm["grade"]["checks"][-1]["rows"]["first"] == {"row": 0, "col": 1}
    call = orm["completion"][0]["tool_calls"][0]
    assert call["name"] == "execute_code" and call["arguments"] == {"code": "Book.objects.count()"}
    assert orm["completion"][1] == {"role": "tool", "content": "60", "tool_call_id": call["id"]}
    assert orm["completion"][-1]["content"] == "I left result as a list of tuples."
    assert rollouts["fastapi_enum_path"]["scoring_error"].startswith("the grading container exited")
    assert rollouts["dj02"]["tampered"] is True


def test_a_row_saved_without_a_grade_keeps_its_transcript_error_and_metric_flags():
    row = _by_task(load_run(FIXTURE))["orm_agg_03"]
    assert row["grade"] is None
    assert row["error"] == "ModelError() -> InternalServerError('Error code: 502 - the provider answered 502 Bad Gateway')"
    assert row["error_kind"] == "ModelError -> InternalServerError"
    assert row["completion"][0]["tool_calls"] == [
        {"id": "call_bb02", "name": "execute_code", "arguments": {"code": "Sale.objects.aggregate(Sum('quantity'))"}}
    ]
    assert row["stop"] == "has_error"


def test_metric_flags_stand_in_for_a_missing_grade(tmp_path):
    rows = [
        {"example_id": 0, "reward": 0.0, "scoring_error": 1.0, "tampered": 0.0, "info": {"family": "orm"}},
        {"example_id": 1, "reward": 0.0, "metrics": {"tampered": 1.0}, "info": json.dumps({"family": "django"})},
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n[1, 2]\n")
    run = load_run(tmp_path)
    first, second = run.rollouts
    assert first["scoring_error"] and not first["tampered"]
    assert second["tampered"] and second["family"] == "django"
    assert any("metadata.json" in p for p in run.problems) and any("a list, not an object" in p for p in run.problems)


def test_messages_read_alike_from_strings_dicts_and_content_parts():
    saved = json.dumps({"id": "c1", "name": "bash", "arguments": json.dumps({"command": "ls"})})
    flat = message({"role": "assistant", "tool_calls": [saved]})
    fn = {"name": "bash", "arguments": '{"command": "ls"}'}
    openai = message({"role": "assistant", "tool_calls": [{"id": "c1", "function": fn}]})
    call = {"id": "c1", "name": "bash", "arguments": {"command": "ls"}}
    assert flat == openai == {"role": "assistant", "content": "", "tool_calls": [call]}
    parts = [{"type": "text", "text": "a"}, {"type": "image_url"}, {"type": "text", "text": "b"}]
    assert message({"role": "user", "content": parts})["content"] == "a[image_url]b"
    not_json = message({"role": "assistant", "tool_calls": [{"name": "bash", "arguments": "not json"}]})
    assert not_json["tool_calls"][0]["arguments"] == "not json"


def test_rollouts_of_one_task_share_one_stored_prompt():
    run = load_run(FIXTURE)
    assert len(run.prompts) < len(run.rollouts)
    assert all(r["prompt"] in run.prompts for r in run.rollouts)
    by_task = _by_task(run)
    assert run.prompts[by_task["orm_adv_01"]["prompt"]][0]["role"] == "system"


def test_family_table_counts_rollouts_rewards_and_every_kind_of_failure():
    table = {r["family"]: r for r in family_table(load_run(FIXTURE).rollouts)}
    assert set(table) == {"all", "django", "fastapi", "orm"}
    orm = table["orm"]
    assert (orm["rollouts"], orm["perfect"], orm["mean_reward"], orm["errored"]) == (4, 1, 0.25, 1)
    assert orm["mean_finished"] == 1 / 3 and orm["error_kinds"] == {"ModelError -> InternalServerError": 1}
    assert table["django"]["mean_finished"] == table["django"]["mean_reward"] and table["django"]["errored"] == 0
    assert (table["fastapi"]["scoring_errors"], table["fastapi"]["mean_reward"]) == (1, 0.375)
    assert table["django"]["tampered"] == 1
    assert table["all"]["rollouts"] == 8 and table["all"]["scoring_errors"] == 1


def test_errors_are_counted_by_kind_commonest_first_and_none_finished_has_no_mean():
    def rollout(error):
        return {
            "family": "orm",
            "reward": 0.0,
            "scoring_error": None,
            "tampered": False,
            "error": error,
            "error_kind": error and error.split(":")[0],
        }

    rows = family_table([rollout("SandboxError: gone"), rollout("ModelError: 500"), rollout("ModelError: 500")])
    assert rows[0]["error_kinds"] == {"ModelError": 2, "SandboxError": 1} and rows[0]["mean_finished"] is None
    assert errored_cell(rows[0]) == "3 (ModelError 2, SandboxError 1)"
    assert errored_cell(family_table([rollout(None)])[0]) == "0"


def test_an_error_saved_as_text_is_kinded_by_its_leading_class_name(tmp_path):
    rows = [
        {"example_id": 0, "reward": 0.0, "error": "SandboxError: the sandbox never became ready"},
        {"example_id": 1, "reward": 0.0, "error": "the provider hung up"},
    ]
    (tmp_path / "results.jsonl").write_text("\n".join(map(json.dumps, rows)) + "\n")
    first, second = load_run(tmp_path).rollouts
    assert (first["error_kind"], second["error_kind"]) == ("SandboxError", "error")


def test_the_report_embeds_the_run_so_transcript_text_cannot_close_its_block():
    html = render_html(load_run(FIXTURE))
    assert html.count("</script>") == 2  # the data block and the viewer's script, nothing from the run
    assert "<img src=x" not in html
    data = _embedded(html)
    assert len(data["rollouts"]) == 8 and data["families"][-1]["family"] == "all"
    tool_output = _by_task(Run(**{k: data[k] for k in Run.__dataclass_fields__}))["dj02"]["completion"][1]["content"]
    assert tool_output.startswith("</script><script>window.pwned = 1</script><img src=x")


def test_the_report_loads_nothing_and_runs_only_its_own_script():
    html = render_html(load_run(FIXTURE))
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src 'none'" in csp
    script = re.search(r"<script>(.*?)</script>", html, re.S).group(1)
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert f"script-src 'sha256-{digest}'" in csp
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)


def test_a_reward_that_is_not_finite_is_written_as_null(tmp_path):
    (tmp_path / "results.jsonl").write_text('{"example_id": 0, "reward": NaN, "metrics": {"score": Infinity}}\n')
    data = _embedded(render_html(load_run(tmp_path)))
    assert data["rollouts"][0]["reward"] is None and data["rollouts"][0]["metrics"]["score"] is None


def test_newest_run_is_the_one_written_last(tmp_path):
    old, new = tmp_path / "websandbox--m" / "a", tmp_path / "websandbox--m" / "b"
    for i, d in enumerate((old, new)):
        d.mkdir(parents=True)
        (d / "results.jsonl").write_text("{}\n")
        os.utime(d / "results.jsonl", (time.time() - 100 + i * 50,) * 2)
    (tmp_path / "websandbox--m" / "c").mkdir()  # no results: not a run
    assert newest_run([tmp_path]) == new


def test_no_run_anywhere_says_how_to_make_one(tmp_path):
    with pytest.raises(FileNotFoundError, match="websandbox eval"):
        newest_run([tmp_path])
    with pytest.raises(RunFormatError, match="results.jsonl"):
        load_run(tmp_path)


def test_the_server_binds_loopback_and_serves_only_its_pages(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    (run / "secret.txt").write_text("not for the network")
    server = make_server(Site([tmp_path / "outputs"], run))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        host, port = server.server_address
        assert host == "127.0.0.1"
        page = httpx.get(f"http://127.0.0.1:{port}/")
        assert page.status_code == 200 and page.headers["content-type"] == "text/html; charset=utf-8"
        assert len(_embedded(page.text)["rollouts"]) == 8
        for path in ("/secret.txt", "/../secret.txt", "/run/../secret.txt", "/results.jsonl"):
            assert httpx.get(f"http://127.0.0.1:{port}{path}").status_code == 404, path
    finally:
        server.shutdown()
        server.server_close()


def test_view_command_writes_the_report_of_a_run_folder(tmp_path, capsys):
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run)
    assert cli_main(["view", str(run), "--no-open"]) == 0
    assert (run / "report.html").is_file()
    assert "8 rollouts" in capsys.readouterr().out
    out = tmp_path / "elsewhere" / "r.html"
    assert cli_main(["view", str(run), "--out", str(out), "--no-open"]) == 0
    assert _embedded(out.read_text())["source"] == str(run)


def test_view_command_on_a_folder_without_a_run_says_what_a_run_is(tmp_path, capsys):
    assert cli_main(["view", str(tmp_path), "--no-open"]) == 2
    assert "results.jsonl" in capsys.readouterr().err
