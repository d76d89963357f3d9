"""The hand-written tasks' alternative correct answers (`alt_*`), checked on the host: no Docker.

`build_tasks.py --verify` grades every alt through the real path and fails when one scores
below 1.0, and grades a repair task's base alts under the repair row (stages/repair.py); these
tests keep the set from shrinking unnoticed and keep each alt a real second route: a copy of
the reference (or of another alt) proves nothing about the grader's tolerance of another way
of writing the answer.
"""

from __future__ import annotations

import ast

import pytest

from sandbox_env.stages.compile import compile_all
from sandbox_env.verify.answers import alt_names, answers
from sandbox_env.verify.base import task_folder, task_folders

MINIMUM = {"orm": 20, "fastapi": 20, "django": 20}  # django also: every hand-written task has one


def _shape(source: str) -> str:
    """The code without comments, docstrings' layout or formatting: two equal shapes are one route."""
    return ast.dump(ast.parse(source))


def _reference(family: str, folder) -> dict[str, str]:
    if family == "django":
        base = folder / "reference"
        return {p.relative_to(base).as_posix(): p.read_text() for p in sorted(base.rglob("*.py"))}
    return {"reference.py": (folder / "reference.py").read_text()}


@pytest.fixture(scope="module")
def repairs() -> list:
    return [r for r in compile_all() if r.source == "repair"]


@pytest.mark.parametrize("family", ["orm", "fastapi", "django"])
def test_at_least_twenty_tasks_of_the_family_have_an_alt_answer(family, repairs):
    """Hand-written tasks with an alt, and repair tasks whose base has one (graded under the repair row)."""
    with_alts = [f.name for f in task_folders(family) if answers(family, f)]
    with_alts += [r.task_id for r in repairs if r.family == family and r.measures["alts"]]
    assert len(with_alts) >= MINIMUM[family], (family, len(with_alts))


def test_every_repair_row_names_its_base_tasks_alts(repairs):
    """measures["alts"] is the base folder's alt_* answers at compile time (none for a generated base)."""
    assert repairs, "no repair tasks stored"
    for r in repairs:
        assert r.measures["alts"] == alt_names(r.family, task_folder(r.family, r.base_task)), r.task_id
        assert r.measures["alts"] == sorted(answers(r.family, task_folder(r.family, r.base_task))), r.task_id
    for family in ("orm", "fastapi", "django"):
        assert any(r.measures["alts"] for r in repairs if r.family == family), family


def test_every_django_task_has_an_alt_answer_writing_every_deliverable():
    import tomllib

    for folder in task_folders("django"):
        alts = answers("django", folder)
        assert alts, f"{folder.name}: no alt_*/ folder"
        deliverables = set(tomllib.loads((folder / "task.toml").read_text())["deliverables"])
        for name, files in alts.items():
            assert set(files) == deliverables, (folder.name, name, sorted(files))


def _answer_shape(answer: str | dict[str, str]) -> tuple:
    files = answer if isinstance(answer, dict) else {"app": answer}
    return tuple(sorted((path, _shape(text)) for path, text in files.items()))


@pytest.mark.parametrize("family", ["orm", "fastapi", "django"])
def test_every_alt_is_a_route_of_its_own(family):
    for folder in task_folders(family):
        reference = _reference(family, folder)
        seen = {_answer_shape(reference if family == "django" else reference["reference.py"])}
        for name, answer in answers(family, folder).items():
            shape = _answer_shape(answer)
            assert shape not in seen, f"{folder.name}/{name} repeats the reference or another alt"
            seen.add(shape)


def test_a_copy_of_the_reference_counts_as_no_route_of_its_own():
    source = "result = list(Book.objects.values_list('title'))\n"
    reformatted = '# the same, laid out otherwise\nresult = list(\n    Book.objects.values_list("title")\n)\n'
    assert _answer_shape(source) == _answer_shape(reformatted)
    assert _answer_shape(source) != _answer_shape(source.replace("title", "isbn"))


def _tagged(rows: list[tuple]) -> dict:
    return {"list": [{"tuple": list(r)} for r in rows]}


def test_an_orm_alt_that_misses_one_drawn_variant_is_reported():
    from sandbox_env.verify.orm import alt_variant_problems

    frozen = {"0": [["a", 1]], "2": [["b", 2]], "5": [["c", 3], ["d", 0.5]]}
    right = {2: {"alt_x": _tagged([("b", 2)])}, 5: {"alt_x": _tagged([("c", 3), ("d", 0.5 + 1e-12)])}}
    assert alt_variant_problems(frozen, right, ["alt_x"]) == []  # float noise within the grader's tolerance
    wrong = {2: {"alt_x": _tagged([("b", 2)])}, 5: {"alt_x": _tagged([("d", 0.5), ("c", 3)])}}
    assert [p.split(":")[0] for p in alt_variant_problems(frozen, wrong, ["alt_x"])] == ["alt_x on variant 5"]
    failed = {2: {"alt_x": {"failed": "Traceback ..."}}, 5: {}}
    assert len(alt_variant_problems(frozen, failed, ["alt_x"])) == 2  # a crash and a variant never run
