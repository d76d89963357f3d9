"""A run's score comes with its 95 % interval, pass@k and avg@k, and a comparison says whether it beats the noise."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from sandbox_env.cli.main import main as cli_main
from sandbox_env.viewer import load_run
from sandbox_env.viewer.scores import at_k, compare, interval, pass_at_k, score_table
from sandbox_env.viewer.summary import family_table

RUNS = Path(__file__).parent / "fixtures" / "v1_runs"


def _rollouts(rewards: dict[str, list[float]], family: str = "orm") -> list[dict]:
    return [
        {"task_id": t, "reward": x, "family": family, "difficulty": "easy", "category": "c"}
        for t, xs in rewards.items()
        for x in xs
    ]


def test_the_interval_holds_the_true_pass_rate_about_as_often_as_it_says():
    """Tasks each solved with a known probability, three rollouts each: the 95 % interval of 60 simulated runs holds
    the true mean in at least 85 % of them (a two-level bootstrap that ignored the rollouts' noise would fall short)."""
    rng = random.Random(7)
    probabilities = [rng.random() for _ in range(40)]
    truth = sum(probabilities) / len(probabilities)
    held = 0
    for _ in range(60):
        run = {f"t{i}": [1.0 if rng.random() < p else 0.0 for _ in range(3)] for i, p in enumerate(probabilities)}
        _, lo, hi = interval(run)
        held += lo <= truth <= hi
    assert held >= 51, f"the interval held the truth in {held} of 60 runs"


def test_the_interval_narrows_with_more_tasks_and_is_a_point_when_every_task_agrees():
    few = interval({f"t{i}": [float(i % 2)] for i in range(20)})
    many = interval({f"t{i}": [float(i % 2)] for i in range(200)})
    assert (many[2] - many[1]) < (few[2] - few[1])
    assert interval({f"t{i}": [1.0, 1.0] for i in range(10)}) == (1.0, 1.0, 1.0)


def test_pass_at_k_is_the_unbiased_estimate_and_avg_at_k_the_mean():
    assert pass_at_k(4, 1, 2) == 0.5 and pass_at_k(4, 0, 2) == 0.0 and pass_at_k(4, 3, 2) == 1.0
    figures = at_k({"a": [1.0, 0.0, 0.0, 0.0], "b": [1.0, 1.0, 1.0, 1.0]})
    assert figures == {"k": 4, "pass@k": 1.0, "avg@k": 0.625}
    assert at_k({"a": [1.0], "b": [1.0, 0.0]}) is None  # one rollout somewhere: no k > 1 every task has


def test_a_difference_larger_than_the_noise_is_called_so_and_a_run_against_itself_is_not():
    good = {f"t{i}": [1.0, 1.0] for i in range(30)}
    bad = {f"t{i}": [0.0, 1.0 if i % 3 == 0 else 0.0] for i in range(30)}
    c = compare(_rollouts(good), _rollouts(bad))
    assert c["beyond_noise"] and c["difference"] > 0 and c["ci_low"] > 0
    same = compare(_rollouts(bad), _rollouts(bad))
    assert same["difference"] == 0.0 and not same["beyond_noise"]
    noisy = compare(_rollouts({"t0": [1.0], "t1": [0.0]}), _rollouts({"t0": [0.0], "t1": [0.0]}))
    assert not noisy["beyond_noise"], noisy  # one task of two flipped: no evidence


def test_the_score_table_groups_by_family_difficulty_and_category():
    rollouts = _rollouts({"a": [1.0], "b": [0.0]}, "orm") + _rollouts({"c": [1.0]}, "django")
    table = score_table(rollouts)
    assert table["overall"]["tasks"] == 3
    assert [r["group"] for r in table["family"]] == ["django", "orm"]
    assert {r["group"] for r in table["difficulty"]} == {"easy"} and {r["group"] for r in table["category"]} == {"c"}


def test_the_family_table_of_eval_and_the_viewer_carries_the_interval():
    rows = family_table(load_run(RUNS / "reference").rollouts)
    assert all(r["ci_low"] <= r["mean_reward"] <= r["ci_high"] for r in rows)


def test_websandbox_report_prints_the_interval_and_compares_two_runs(tmp_path, capsys):
    run, base = tmp_path / "ref", tmp_path / "null"
    shutil.copytree(RUNS / "reference", run)
    shutil.copytree(RUNS / "null", base)
    assert cli_main(["report", str(run), "--compare", str(base)]) == 0
    text = capsys.readouterr().out
    assert "95 % interval" in text and "by family" in text and "difference +1.000" in text
    assert cli_main(["report", str(run), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["overall"]["score"] == 1.0 and {"family", "difficulty", "category"} <= set(data)


def test_a_report_names_the_eval_sets_digest_and_any_change_to_a_task_changes_it(capsys):
    from sandbox_env.dataset import load_rows, set_digest

    assert cli_main(["report", str(RUNS / "reference"), "--json"]) == 0
    tasks = json.loads(capsys.readouterr().out)["tasks"]
    assert tasks["eval_set"].startswith("eval set: ") and "digest " in tasks["eval_set"] and tasks["played"] == 6
    rows = [r for r in load_rows() if r["info"]["split"] == "eval"][:5]
    changed = [dict(rows[0], question=rows[0]["question"] + " "), *rows[1:]]
    assert set_digest(rows) == set_digest(list(reversed(rows))) != set_digest(changed)
