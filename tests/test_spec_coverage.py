"""Spec coverage: requirement sentences of a spec, and the mapping of each to the checks that test it."""

from __future__ import annotations

from pathlib import Path

from sandbox_env.families.fastapi import FAMILY
from sandbox_env.verify.coverage import coverage_problems, requirement_units, task_coverage_problems

ROOT = Path(__file__).resolve().parents[1]
SPEC = """
The store holds two items.

Endpoints:
- `GET /items/{id}` answers the item,
  or 404 for an unknown id.
- `POST /items` adds one (e.g. `{"name": "x"}`). It answers 201.

```python
ITEMS = {}
```
"""


def test_bullets_are_units_and_paragraphs_are_cut_into_sentences_without_headings():
    units = requirement_units(SPEC)
    assert units == [
        "The store holds two items.",
        "`GET /items/{id}` answers the item, or 404 for an unknown id.",
        '`POST /items` adds one (e.g. `{"name": "x"}`). It answers 201. ITEMS = {}',
    ]


def test_an_uncovered_sentence_an_unknown_check_and_a_stray_entry_are_each_reported():
    entries = [
        {"says": "The store holds", "checks": ["listing"]},
        {"says": "`GET /items/{id}`", "checks": ["nope"]},
        {"says": "Nothing like this", "checks": ["listing"]},
    ]
    problems = coverage_problems(SPEC, entries, {"listing"})
    assert any("not a check of the task" in p and "nope" in p for p in problems)
    assert any("starts no requirement sentence" in p for p in problems)
    assert any(p.startswith("not covered") and "POST /items" in p for p in problems)
    assert not any(p.startswith("not covered") and "GET /items" in p for p in problems)


def test_every_fastapi_task_maps_every_requirement_sentence_to_a_check():
    for folder in sorted((ROOT / "sandbox_env" / "tasks" / "fastapi").iterdir()):
        if (folder / "task.toml").is_file():
            assert task_coverage_problems("fastapi", folder, FAMILY.compile_task(folder)) == [], folder.name
