"""The report channel's host side: only a frame carrying this run's nonce counts."""

from __future__ import annotations

import json

import pytest

from sandbox_env.families.base import Grade, TaskRow
from sandbox_env.grading.grader import ReportError, make_nonce, read_report
from sandbox_env.sandbox import ExecResult


def _framed(nonce: str, report: dict) -> str:
    return f"\n{nonce}\n{json.dumps(report)}\n{nonce}\n"


def test_a_report_framed_with_the_runs_nonce_is_read():
    nonce = make_nonce()
    out = "noise printed by the app\n" + _framed(nonce, {"ok": 1})
    assert read_report(ExecResult(out, "", 0), nonce) == {"ok": 1}


def test_a_report_framed_with_another_nonce_is_not_accepted():
    nonce, forged = make_nonce(), make_nonce()
    with pytest.raises(ReportError, match="no report"):
        read_report(ExecResult(_framed(forged, {"score": 1.0}), "", 0), nonce)


def test_an_unframed_json_report_is_not_accepted():
    with pytest.raises(ReportError, match="no report \\(exit code 0\\)"):
        read_report(ExecResult('{"passed": 10, "failed": 0}\n', "", 0), make_nonce())


def test_a_corrupted_frame_is_a_report_error():
    nonce = make_nonce()
    with pytest.raises(ReportError, match="not valid JSON"):
        read_report(ExecResult(f"\n{nonce}\n{{broken\n{nonce}\n", "", 0), nonce)


def test_a_timed_out_run_says_so():
    with pytest.raises(ReportError, match="timed out"):
        read_report(ExecResult("", "", -9, timed_out=True), make_nonce())


def test_nonces_are_unpredictable():
    assert len({make_nonce() for _ in range(100)}) == 100


def test_task_rows_survive_the_dataset_round_trip():
    row = TaskRow("t1", "fastapi", "easy", "bodies", "do it", {"app.py": ""}, ["app.py"], {"checks": [{"x": 1}]})
    assert TaskRow.from_info(row.to_row()["info"]) == row


def test_a_harness_fault_scores_zero_and_names_the_fault():
    g = Grade.harness_fault("container gone")
    assert g.score == 0.0 and g.scoring_error == "container gone" and "container gone" in g.reason
