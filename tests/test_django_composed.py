"""The django composed tier, checked on the host: no Docker.

A composed django task is one project over one invented domain that combines features of
several single tasks (models, forms, views, counters kept on every change, transactions, a
query budget), with one or two features that change the others. `build_tasks.py --verify
--mutants` grades its reference, controls, `wrong_*`, `alt_*` and mutants for real; these
tests keep the tier's shape: the [composed] table lands in the row's measures, the task is
hard, its interaction tests are real tests of it (hidden ones among them), it keeps wrong
answers that drop a cross-cutting feature or confine it to one component, an alt that writes
every deliverable, and its spec says what a call, a form or a request gives, never which
Django machinery produces it.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from sandbox_env.families.django import FAMILY, HIDDEN_DIR, TESTS_DIR
from sandbox_env.families.django_words import API_WORDS  # the words a spec must not use
from sandbox_env.verify.answers import answers
from sandbox_env.verify.base import task_folders
from sandbox_env.verify.coverage import task_coverage_problems

SINGLE = [f for f in task_folders("django") if "composed" not in tomllib.loads((f / "task.toml").read_text())]
COMPOSED = [f for f in task_folders("django") if f not in SINGLE]


def _toml(folder: Path) -> dict:
    return tomllib.loads((folder / "task.toml").read_text())


def test_the_tier_has_at_least_three_hard_tasks_with_their_structure_in_measures():
    assert len(COMPOSED) >= 3, [f.name for f in COMPOSED]
    singles = {f.name for f in SINGLE}
    for folder in COMPOSED:
        row = FAMILY.compile_task(folder)
        assert row.difficulty == "hard" and folder.name.startswith("composed_"), folder.name
        m = row.measures
        assert m["tier"] == "composed" and 3 <= len(m["components"]) <= 5 and 1 <= len(m["app_wide"]) <= 2, folder.name
        assert set(m["components"]) <= singles, folder.name
        assert m["checks"] == len(row.grading["test_ids"]) and 3 <= m["interaction_checks"] <= m["checks"], folder.name


def test_a_single_task_has_no_tier():
    for folder in SINGLE:
        assert FAMILY.compile_task(folder).measures == {}, folder.name


@pytest.mark.parametrize("folder", COMPOSED, ids=lambda f: f.name)
def test_interaction_tests_are_visible_and_hidden_tests_of_the_task(folder):
    named = _toml(folder)["composed"]["interaction_checks"]
    assert any(n.startswith(f"{TESTS_DIR}/") for n in named), folder.name
    assert any(n.startswith(f"{HIDDEN_DIR}/") for n in named), folder.name  # not only tests a policy has read


@pytest.mark.parametrize("folder", COMPOSED, ids=lambda f: f.name)
def test_a_composed_spec_states_behaviour_not_the_api(folder):
    meta = _toml(folder)
    found = API_WORDS.findall(meta["spec"]) + API_WORDS.findall(meta["title"])
    assert not found, (folder.name, found)


@pytest.mark.parametrize("folder", COMPOSED, ids=lambda f: f.name)
def test_a_composed_task_keeps_two_wrong_answers_an_alt_and_its_naive_control(folder):
    meta = _toml(folder)
    deliverables = set(meta["deliverables"])
    wrongs = answers("django", folder, "wrong")
    assert len(wrongs) >= 2, (folder.name, sorted(wrongs))
    for name, files in wrongs.items():
        assert files and set(files) <= deliverables, (folder.name, name)
    alts = answers("django", folder)
    assert alts and all(set(files) == deliverables for files in alts.values()), folder.name
    assert (folder / "naive").is_dir() == bool(meta.get("budget_tests")), folder.name


def _copy_with(tmp_path: Path, folder: Path, edit) -> Path:
    target = tmp_path / folder.name
    shutil.copytree(folder, target)
    for single in SINGLE:  # the components it names sit beside it
        (tmp_path / single.name).mkdir()
        shutil.copy(single / "task.toml", tmp_path / single.name / "task.toml")
    toml = target / "task.toml"
    toml.write_text(edit(toml.read_text()))
    return target


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (lambda t: t.replace('difficulty = "hard"', 'difficulty = "medium"', 1), "a composed task is hard"),
        (
            lambda t: t.replace("interaction_checks = [\n", 'interaction_checks = [\n    "tests/nope.py::test_x",\n', 1),
            "interaction_checks must name checks",
        ),
        (lambda t: re.sub(r"components = \[[^\]]*\]", 'components = ["dj01", "dj02"]', t, count=1), "combines 3 to 5 components"),
        (
            lambda t: re.sub(r"components = \[([^\]]*)\]", r'components = [\1, "dj99"]', t, count=1),
            "must be single tasks of the family",
        ),
        (lambda t: t.replace("[composed]\n", "[composed]\nlevel = 3\n", 1), r"\[composed\] needs exactly"),
    ],
    ids=["not hard", "unknown interaction test", "too few components", "unknown component", "unknown key"],
)
def test_a_malformed_composed_table_is_refused(tmp_path, edit, why):
    fewest = min(COMPOSED, key=lambda f: len(_toml(f)["composed"]["components"]))  # room for one more
    folder = _copy_with(tmp_path, fewest, edit)
    with pytest.raises(ValueError, match=why):
        FAMILY.compile_task(folder)


@pytest.mark.parametrize("folder", COMPOSED, ids=lambda f: f.name)
def test_every_sentence_of_a_composed_spec_maps_to_tests_of_the_task(folder):
    assert "spec_coverage" in _toml(folder), folder.name
    assert task_coverage_problems("django", folder, FAMILY.compile_task(folder)) == [], folder.name
