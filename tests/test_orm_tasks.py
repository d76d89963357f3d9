"""The orm task sources and the prompt, checked on the host: no Docker."""

from __future__ import annotations

import ast
import json
from collections import Counter
from pathlib import Path

import pytest

from sandbox_env.constants import TASKS_DIR
from sandbox_env.families.base import TaskRow
from sandbox_env.families.orm import CATEGORIES, DB_NAMES, FAMILY, MODELS, SCHEMA, session_preamble
from sandbox_env.families.orm_compare import compare
from sandbox_env.verify.orm import VERIFIER

ROOT = Path(__file__).resolve().parents[1]
TASKS = sorted(p for p in (TASKS_DIR / "orm").iterdir() if (p / "task.toml").is_file())
MODELS_PY = ROOT / "sandbox_env" / "runtime" / "container" / "orm_fixture" / "shop" / "models.py"


@pytest.fixture(scope="module")
def rows() -> list[TaskRow]:
    return [FAMILY.compile_task(folder) for folder in TASKS]


def test_every_category_has_at_least_its_minimum_of_tasks(rows):
    counts = Counter(r.category for r in rows)
    for category, minimum in CATEGORIES.items():
        assert counts[category] >= minimum, (category, counts[category])
    assert set(counts) == set(CATEGORIES)


def test_difficulties_are_spread(rows):
    counts = Counter(r.difficulty for r in rows)
    assert all(counts[d] >= 8 for d in ("easy", "medium", "hard")), counts


def test_every_prompt_states_columns_order_schema_and_deliverable(rows):
    for r in rows:
        assert "\nEach row: (" in r.prompt and "\nOrder: " in r.prompt, r.task_id
        assert "`result`" in r.prompt and "execute_code" in r.prompt and "Publisher" in r.prompt
        assert json.dumps(r.grading["expected"]) not in r.prompt  # the answer key is not in the prompt


def test_the_expected_rows_are_non_empty_plain_and_pass_their_own_comparison(rows):
    for r in rows:
        expected = r.grading["expected"]
        assert expected, r.task_id
        assert all(type(v) in (type(None), bool, int, float, str) for row in expected for v in row), r.task_id
        tagged = {"list": [{"tuple": row} for row in expected]}
        assert compare(tagged, expected).passed, r.task_id


def test_the_dataset_row_round_trips(rows):
    for r in rows:
        assert TaskRow.from_info(r.to_row()["info"]) == r


def test_every_task_has_a_reference_cell_that_assigns_result():
    for folder in TASKS:
        calls = VERIFIER.reference_calls(folder)
        assert len(calls) == 1 and calls[0]["tool"] == "execute_code"
        tree = ast.parse(calls[0]["args"]["code"])
        targets = [t.id for node in tree.body if isinstance(node, ast.Assign) for t in node.targets if isinstance(t, ast.Name)]
        assert "result" in targets, folder.name


def test_the_required_wrong_kinds_exist():
    names = {name for folder in TASKS for name in VERIFIER.wrong_calls(folder)}
    assert {"wrong_order", "wrong_no_distinct", "wrong_queryset", "wrong_lists"} <= names


def test_the_schema_text_names_every_model_and_field():
    tree = ast.parse(MODELS_PY.read_text())
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        assert cls.name in MODELS and f"\n{cls.name} " in "\n" + SCHEMA, cls.name
        fields = [t.id for node in cls.body if isinstance(node, ast.Assign) for t in node.targets]
        for field in fields:
            assert f"{field} (" in SCHEMA, f"{cls.name}.{field} is not described in the prompt's schema"


def test_the_preamble_imports_the_names_the_design_promises():
    preamble = session_preamble()
    for name in ("Q", "F", "Count", "Sum", "Avg", "Max"):
        assert name in DB_NAMES
    for name in MODELS:
        assert name in preamble
    assert "/opt/websandbox/orm.sqlite3" in preamble and "/opt/websandbox/orm.sqlite3" not in session_preamble(False)
