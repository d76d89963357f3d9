"""Finding runs, the runs list, the rollout table's export and the server that follows a run, without a browser.

An outputs tree is built in a temporary folder from the fixture runs (tests/fixtures/view_run/,
a classic run, and tests/fixtures/v1_runs/, described in test_viewer.py and test_viewer_v1.py),
placed where each tool saves: vf-eval 0.3.x in a checkout (`environments/websandbox/outputs/evals/
<env>--<model>/<id>`) and outside one (`outputs/evals/...`), `websandbox eval` on verifiers 0.4
(`outputs/v1/<run>`), plain `vf-eval websandbox` of 0.4 (`outputs/<run>`) and its replay
(`outputs/<name>--replay/<uuid>`).
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import shutil
import time
from pathlib import Path

import httpx
import pytest

from sandbox_env.cli.main import main as cli_main
from sandbox_env.viewer import load_run, render_html
from sandbox_env.viewer import runs as runs_module
from sandbox_env.viewer.export import COLUMNS, table_row, to_csv, to_jsonl
from sandbox_env.viewer.index import list_text, summarize
from sandbox_env.viewer.runs import find_runs, newest_run, run_id, search_roots
from sandbox_env.viewer.serve import Site
from tests.viewer_kit import on_loopback

FIXTURES = Path(__file__).parent / "fixtures"
CLASSIC, V1_RUNS = FIXTURES / "view_run", FIXTURES / "v1_runs"
PLACES = {  # where each tool saves, relative to the folder it ran in: (fixture, place)
    "classic in a checkout": (CLASSIC, "environments/websandbox/outputs/evals/websandbox--script/1a2b3c4d"),
    "classic": (CLASSIC, "outputs/evals/websandbox--script/5e6f7a8b"),
    "websandbox eval, v1": (V1_RUNS / "reference", "outputs/v1/websandbox--reference--b742341b"),
    "plain vf-eval, v1": (V1_RUNS / "null", "outputs/websandbox--null--default--40202110"),
    "replay, v1": (V1_RUNS / "smoke", "outputs/websandbox--smoke--replay/0f1e2d3c"),
}


@pytest.fixture
def outputs(tmp_path, monkeypatch) -> Path:
    """A folder holding a run in every place, each written a minute after the one before, and this
    checkout's own runs out of sight (search_roots adds a checkout's outputs)."""
    monkeypatch.setattr(runs_module, "REPO_ROOT", tmp_path / "not-a-checkout")
    for i, (fixture, place) in enumerate(PLACES.values()):
        shutil.copytree(fixture, tmp_path / place)
        for name in ("results.jsonl", "traces.jsonl"):
            if (tmp_path / place / name).is_file():
                os.utime(tmp_path / place / name, (time.time() - 600 + 60 * i,) * 2)
    (tmp_path / "outputs" / "notes" / "logs").mkdir(parents=True)  # no run file: not a run
    hidden = tmp_path / "outputs" / ".trash" / "old"
    shutil.copytree(V1_RUNS / "smoke", hidden)  # a hidden folder is not searched
    (tmp_path / "outputs" / "linked").symlink_to(tmp_path / PLACES["classic"][1], target_is_directory=True)
    return tmp_path


def _places(root: Path, *names: str) -> list[Path]:
    return [(root / PLACES[n][1]).resolve() for n in names]


def test_every_place_a_run_is_saved_is_found_newest_first(outputs):
    found = find_runs(search_roots(outputs))
    assert found == _places(outputs, *reversed(PLACES))
    assert newest_run(search_roots(outputs)) == _places(outputs, "replay, v1")[0]


def test_a_plain_vf_eval_run_of_v1_is_the_newest_when_it_was_written_last(outputs):
    plain = outputs / PLACES["plain vf-eval, v1"][1] / "traces.jsonl"
    os.utime(plain, (time.time() + 60,) * 2)
    assert newest_run(search_roots(outputs)) == plain.parent.resolve()


def test_a_run_found_by_two_roots_is_listed_once(outputs):
    roots = [outputs / "outputs", outputs / "outputs" / "v1", outputs / "outputs" / "evals"]
    found = find_runs(roots)
    assert len(found) == len(set(found)) == 4


def test_a_summary_has_the_model_size_mean_and_errored_of_either_stack(outputs):
    classic = summarize(outputs / PLACES["classic"][1])
    assert (classic["format"], classic["model"], classic["rollouts"], classic["errored"]) == ("classic", "script", 8, 1)
    assert classic["mean_reward"] == pytest.approx(0.21875) and classic["problems"] == 1
    smoke = summarize(outputs / PLACES["replay, v1"][1])
    assert (smoke["format"], smoke["model"], smoke["rollouts"], smoke["errored"]) == ("v1", "reference", 2, 1)
    reference = summarize(outputs / PLACES["websandbox eval, v1"][1])
    assert (reference["mean_reward"], reference["errored"], reference["unreadable"]) == (1.0, 0, None)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", reference["date"])
    assert reference["id"] == run_id(outputs / PLACES["websandbox eval, v1"][1])


def test_list_prints_one_aligned_line_a_run_newest_first(outputs, monkeypatch, capsys):
    monkeypatch.chdir(outputs)
    assert cli_main(["view", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["written", "model", "format", "rollouts", "mean", "errored", "run"]
    assert len(lines) == 1 + len(PLACES)
    assert [line.split()[-1] for line in lines[1:]] == [PLACES[n][1] for n in reversed(PLACES)]
    by_path = {line.split()[-1]: line.split()[2:-1] for line in lines[1:]}
    assert by_path[PLACES["plain vf-eval, v1"][1]] == ["null", "v1", "6", "0.000", "0"]
    assert by_path[PLACES["classic"][1]] == ["script", "classic", "8", "0.219", "1"]
    column = lines[0].index(" run") + 1  # every path starts under the head of its column
    assert [line[column:] for line in lines[1:]] == [PLACES[n][1] for n in reversed(PLACES)]


def test_list_text_marks_a_run_it_could_not_read():
    line = {
        "date": "2026-01-01 10:00",
        "model": None,
        "format": "?",
        "rollouts": 0,
        "mean_reward": None,
        "errored": 0,
        "path": "/x/run",
        "unreadable": "traces.jsonl is a folder",
    }
    second = list_text([line], Path("/x")).splitlines()[1]
    assert second.split()[:7] == ["2026-01-01", "10:00", "?", "?", "0", "-", "0"]
    assert second.endswith("run  (unreadable: traces.jsonl is a folder)")


def test_list_of_a_folder_searches_it_and_an_empty_one_says_how_to_make_a_run(outputs, tmp_path, capsys):
    assert cli_main(["view", "--list", str(outputs / "outputs" / "v1")]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2
    empty = tmp_path / "empty"
    empty.mkdir()
    assert cli_main(["view", "--list", str(empty)]) == 2
    assert "websandbox eval" in capsys.readouterr().err
    assert cli_main(["view", "--list", "--export", "csv"]) == 2
    assert "--list only prints the runs" in capsys.readouterr().err


def test_export_csv_has_a_header_and_one_record_a_rollout(tmp_path, capsys):
    assert cli_main(["view", str(CLASSIC), "--export", "csv"]) == 0
    records = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert records[0] == list(COLUMNS) and len(records) == 1 + 8
    rows = {r[3]: dict(zip(COLUMNS, r, strict=True)) for r in records[1:]}
    assert (rows["orm_adv_02"]["reward"], rows["orm_adv_02"]["tampered"], rows["orm_adv_02"]["error"]) == ("1", "false", "")
    assert rows["dj02"]["tampered"] == "true" and rows["fastapi_cookies"]["reward"] == "0.75"
    assert rows["orm_agg_03"]["error_kind"] == "ModelError -> InternalServerError" and rows["orm_agg_03"]["reward"] == "0"
    assert rows["fastapi_enum_path"]["reason"].startswith("scoring error: the grading container exited")


def test_export_jsonl_writes_one_object_a_rollout_to_the_file_given(tmp_path, capsys):
    out = tmp_path / "table" / "run.jsonl"
    assert cli_main(["view", str(V1_RUNS / "smoke"), "--export", "jsonl", "--out", str(out)]) == 0
    said = capsys.readouterr()
    assert said.out == "" and f"wrote {out}" in said.err
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [list(r) for r in rows] == [list(COLUMNS)] * 2
    assert rows[0]["error_kind"] == "SandboxError" and rows[0]["reward"] == 0.0 and rows[1]["stop"] == "max_total_tokens"
    assert rows[1]["input_tokens"] > 0 and rows[0]["truncated"] in (True, False, None)


def test_export_writes_model_text_that_a_spreadsheet_would_run_as_text(tmp_path):
    row = {"example_id": 0, "reward": 0.5, "error": '=HYPERLINK("http://x","y"), -1', "info": {"task_id": "@t", "family": "orm"}}
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    rollouts = load_run(tmp_path).rollouts
    record = next(csv.DictReader(io.StringIO(to_csv(rollouts))))
    assert record["error"] == '\'=HYPERLINK("http://x","y"), -1' and record["task_id"] == "'@t" and record["reward"] == "0.5"
    assert json.loads(to_jsonl(rollouts))["error"] == row["error"], "JSONL keeps the text as it is"
    assert table_row(rollouts[0])["error_kind"] == "error"


def test_export_takes_no_server_or_comparison(capsys):
    assert cli_main(["view", str(CLASSIC), "--export", "csv", "--serve"]) == 2
    assert "--export writes one run's table" in capsys.readouterr().err


def _embedded(html: str) -> dict:
    return json.loads(re.search(r'<script type="application/json" id="run-data">(.*?)</script>', html, re.S).group(1))


def _csp(html: str) -> str:
    return re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)


def test_a_served_run_is_read_again_when_its_file_grows(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(CLASSIC, run)
    with on_loopback(Site([tmp_path / "outputs"], run)) as url:
        page = httpx.get(url + "/").text
        live = _embedded(page)["live"]
        assert live["url"] == "/run.json" and live["index"] == "/runs" and live["every"] > 0
        assert httpx.get(url + "/run.json", params={"since": live["version"]}).status_code == 204
        first = json.loads((run / "results.jsonl").read_text().splitlines()[0])
        with (run / "results.jsonl").open("a") as f:
            f.write(json.dumps(first | {"example_id": 99, "info": {"task_id": "orm_new", "family": "orm"}}) + "\n")
        fresh = httpx.get(url + "/run.json", params={"since": live["version"]})
        assert fresh.status_code == 200 and fresh.headers["content-type"] == "application/json"
        body = fresh.json()
        assert body["version"] != live["version"] and len(body["data"]["rollouts"]) == 9
        assert body["data"]["rollouts"][-1]["task_id"] == "orm_new" and body["data"]["families"][-1]["rollouts"] == 9
        assert httpx.get(url + "/run.json", params={"since": body["version"]}).status_code == 204


def test_only_a_served_page_may_ask_its_own_server_for_data_and_a_written_one_nothing(tmp_path):
    run = tmp_path / "run"
    shutil.copytree(CLASSIC, run)
    written = _csp(render_html(load_run(run)))
    assert "connect-src" not in written and "default-src 'none'" in written
    with on_loopback(Site([tmp_path / "outputs"], run)) as url:
        served = _csp(httpx.get(url + "/").text)
    assert served == written + "; connect-src 'self'"


def test_the_index_lists_every_run_and_opens_each_by_its_id_only(outputs):
    with on_loopback(Site(search_roots(outputs))) as url:
        index = httpx.get(url + "/")
        assert index.status_code == 200 and "connect-src 'self'" in _csp(index.text)
        lines = _embedded(index.text)["runs"]
        assert [line["path"] for line in lines] == [str(p) for p in _places(outputs, *reversed(PLACES))]
        assert httpx.get(url + "/runs").text == index.text
        listed = httpx.get(url + "/runs.json").json()
        assert httpx.get(url + "/runs.json", params={"since": listed["version"]}).status_code == 204
        null = next(line for line in lines if line["model"] == "null")
        page = httpx.get(url + null["url"])
        assert page.status_code == 200 and _embedded(page.text)["live"]["url"] == f"/run/{null['id']}/run.json"
        assert len(httpx.get(url + null["url"] + "run.json").json()["data"]["rollouts"]) == 6
        assert httpx.get(url + "/run/0123456789ab/").status_code == 404
        assert httpx.get(url + "/run.json").status_code == 404, "no run is shown at /"


def test_a_request_for_another_host_name_is_refused(tmp_path):
    with on_loopback(Site([tmp_path])) as url:
        assert httpx.get(url + "/runs").status_code == 200
        assert httpx.get(url.replace("127.0.0.1", "localhost") + "/runs").status_code == 200
        rebound = httpx.get(url + "/runs", headers={"Host": "attacker.example:80"})
        assert rebound.status_code == 403 and "loopback" in rebound.text


def test_serve_of_a_folder_without_a_run_fails_before_serving(tmp_path, capsys):
    assert cli_main(["view", str(tmp_path), "--serve"]) == 2
    assert "results.jsonl" in capsys.readouterr().err
