"""The fastapi composed tier, checked on the host: no Docker.

A composed task combines single-feature tasks over one domain, with one or two app-wide
features whose effect on the components is what it grades. `build_tasks.py --verify` grades
its reference, controls and `wrong_*` answers for real; these tests keep the tier's shape:
the check cap is the tier's own, the structure lands in the row's measures, each task keeps
wrong answers that drop an app-wide feature or confine it to one router (the interaction a
policy is most tempted to skip), and its spec says what a client sends and gets back, never
which FastAPI call to write nor a string of FastAPI's own documentation examples.
"""

from __future__ import annotations

import re
import shutil
import tomllib
from pathlib import Path

import pytest

from sandbox_env.families.fastapi import CHECK_CAPS, FAMILY
from sandbox_env.families.fastapi_checks import CheckError
from sandbox_env.families.fastapi_words import API_WORDS, DOCS_STRINGS  # the rule, shared with the generator
from sandbox_env.verify.base import task_folders

COMPOSED = [f for f in task_folders("fastapi") if "composed" in tomllib.loads((f / "task.toml").read_text())]


def test_the_tier_has_at_least_six_tasks_all_hard_with_their_structure_in_measures():
    assert len(COMPOSED) >= 6, [f.name for f in COMPOSED]
    for folder in COMPOSED:
        row = FAMILY.compile_task(folder)
        assert row.difficulty == "hard", folder.name
        m = row.measures
        assert m["tier"] == "composed" and 3 <= len(m["components"]) <= 5 and 1 <= len(m["app_wide"]) <= 2, folder.name
        assert 1 <= m["interaction_checks"] <= m["checks"] <= CHECK_CAPS["composed"], folder.name
        assert m["checks"] > CHECK_CAPS["single"] or m["interaction_checks"] >= 3, folder.name


@pytest.mark.parametrize("folder", COMPOSED, ids=lambda f: f.name)
def test_a_composed_spec_states_behaviour_not_the_api_nor_the_docs_examples(folder):
    spec = tomllib.loads((folder / "task.toml").read_text())["spec"]
    assert not API_WORDS.findall(spec), (folder.name, API_WORDS.findall(spec))
    assert not DOCS_STRINGS.findall(spec), (folder.name, DOCS_STRINGS.findall(spec))


@pytest.mark.parametrize("folder", COMPOSED, ids=lambda f: f.name)
def test_a_composed_task_keeps_two_interaction_wrong_answers(folder):
    wrongs = sorted(p.name for p in folder.glob("wrong_*.py"))
    assert len(wrongs) >= 2, (folder.name, wrongs)


def _copy_with(tmp_path: Path, folder: Path, edit) -> Path:
    target = tmp_path / folder.name
    shutil.copytree(folder, target)
    toml = target / "task.toml"
    toml.write_text(edit(toml.read_text()))
    return target


def test_the_check_cap_is_the_tiers_own(tmp_path):
    folder = next(f for f in COMPOSED if len(FAMILY.compile_task(f).grading["checks"]) > CHECK_CAPS["single"])
    # the same task without its [composed] table is a single task, with too many checks for one
    single = _copy_with(tmp_path, folder, lambda t: re.sub(r"\[composed\].*?\n\]\n", "", t, flags=re.S))
    assert "[composed]" not in (single / "task.toml").read_text()
    with pytest.raises(CheckError, match="single task needs 2 to 6 checks"):
        FAMILY.compile_task(single)


def test_a_composed_task_past_its_cap_not_hard_or_naming_no_check_is_refused(tmp_path):
    folder = COMPOSED[0]
    text = (folder / "task.toml").read_text()
    first = text.index("[[checks]]")
    end = text.index("[[checks]]", first + 1)
    block = text[first:end]
    extra = "".join(block.replace('name = "', f'name = "copy {i} of ', 1) for i in range(CHECK_CAPS["composed"]))
    past = tmp_path / "past"
    past.mkdir()
    crowded = _copy_with(past, folder, lambda t: t.replace(block, block + extra, 1))
    with pytest.raises(CheckError, match="composed task needs 2 to 14 checks"):
        FAMILY.compile_task(crowded)
    easy = tmp_path / "easy"
    easy.mkdir()
    with pytest.raises(CheckError, match="a composed task is hard"):
        FAMILY.compile_task(_copy_with(easy, folder, lambda t: t.replace('difficulty = "hard"', 'difficulty = "medium"', 1)))
    unnamed = tmp_path / "unnamed"
    unnamed.mkdir()
    unknown = 'interaction_checks = [\n  "no such check",\n'
    with pytest.raises(CheckError, match="interaction_checks must name checks"):
        FAMILY.compile_task(_copy_with(unnamed, folder, lambda t: t.replace("interaction_checks = [\n", unknown, 1)))
