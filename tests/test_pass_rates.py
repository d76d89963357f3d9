"""Measured pass rates: `websandbox calibrate` writes each task's avg@k; selection sets difficulty and bounds from them."""

from __future__ import annotations

import json
import math
import random
import shutil
from pathlib import Path

import pytest

from sandbox_env import pass_rates
from sandbox_env.cli.main import main as cli_main
from sandbox_env.dataset import load_rows, select_rows

RUNS = Path(__file__).parent / "fixtures" / "v1_runs"


def test_the_written_rates_match_a_known_solve_probability_within_their_binomial_error():
    rng = random.Random(3)
    truth = {f"task{i}": rng.random() for i in range(30)}
    k = 40
    rewards = {t: [1.0 if rng.random() < p else 0.0 for _ in range(k)] for t, p in truth.items()}
    written = pass_rates.rates_from(rewards, "a-policy")["tasks"]
    for t, p in truth.items():
        assert written[t]["k"] == k
        assert abs(written[t]["avg"] - p) <= 3.5 * math.sqrt(p * (1 - p) / k) + 1e-9, (t, p, written[t])


def test_calibrate_writes_a_file_that_names_the_model_and_refuses_runs_of_two_models(tmp_path, capsys):
    out = tmp_path / "rates.json"
    assert cli_main(["calibrate", str(RUNS / "reference"), "--out", str(out)]) == 0
    content = json.loads(out.read_text())
    assert content["model"] == "reference" and content["tasks"] and all(t["avg"] == 1.0 for t in content["tasks"].values())
    assert "pass rates of 6 tasks under reference" in capsys.readouterr().out
    assert cli_main(["calibrate", str(RUNS / "reference"), str(RUNS / "null"), "--out", str(out)]) == 2
    assert "several models (null, reference)" in capsys.readouterr().err


def _rates_file(tmp_path: Path, rates: dict[str, float]) -> str:
    path = tmp_path / "rates.json"
    pass_rates.write(path, {"version": 1, "model": "m", "tasks": {t: {"avg": r, "k": 8} for t, r in rates.items()}})
    return str(path)


def test_a_measured_rate_sets_the_difficulty_and_the_bounds_keep_the_tasks_within_them(tmp_path):
    rows = select_rows(load_rows(), family="orm", split="train")[:3]
    ids = [r["info"]["task_id"] for r in rows]
    path = _rates_file(tmp_path, {ids[0]: 1.0, ids[1]: 0.5})  # ids[2] unmeasured
    got = {r["info"]["task_id"]: r["info"] for r in select_rows(load_rows(), task_ids=ids, pass_rates=path)}
    assert got[ids[0]]["difficulty"] == "easy" and got[ids[0]]["pass_rate"] == 1.0
    assert got[ids[1]]["difficulty"] == "medium" and "structural_difficulty" in got[ids[1]]
    assert "pass_rate" not in got[ids[2]]  # nothing measured: the structural label stays
    kept = select_rows(load_rows(), task_ids=ids, pass_rates=path, max_pass_rate=0.9)
    assert {r["info"]["task_id"] for r in kept} == {ids[1], ids[2]}  # always solved: skipped; unmeasured: kept


def test_bounds_without_a_file_and_a_file_that_is_not_one_are_refused_in_one_line(tmp_path):
    with pytest.raises(ValueError, match="need pass_rates"):
        select_rows(load_rows(), min_pass_rate=0.2)
    bad = tmp_path / "x.json"
    bad.write_text("{}")
    with pytest.raises(ValueError, match="not a pass-rate file"):
        select_rows(load_rows(), pass_rates=str(bad))
    with pytest.raises(ValueError, match="websandbox calibrate"):
        select_rows(load_rows(), pass_rates=str(tmp_path / "missing.json"))


def test_the_reference_run_calibrates_every_task_it_played_as_easy(tmp_path):
    run = tmp_path / "ref"
    shutil.copytree(RUNS / "reference", run)
    out = tmp_path / "rates.json"
    cli_main(["calibrate", str(run), "--out", str(out)])
    ids = list(json.loads(out.read_text())["tasks"])
    rows = select_rows(load_rows(), task_ids=ids, pass_rates=str(out))
    assert {r["info"]["difficulty"] for r in rows} == {"easy"}
