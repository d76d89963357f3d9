"""Composed fastapi tasks on the host: parts, the composed reference, rewritten checks, the spec (no Docker)."""

from __future__ import annotations

import ast
import itertools
import json

import pytest

from sandbox_env.families.fastapi_checks import passes_for_catch_all
from sandbox_env.generate import compose_logic as logic
from sandbox_env.generate.compose_store import compile_composed
from sandbox_env.stages.compose import parts_available, screen

API_WORDS = ("APIRouter", "Depends", "middleware", "exception_handler", "RequestValidationError", "include_router")


@pytest.fixture(scope="module")
def parts():
    return parts_available()


@pytest.fixture(scope="module")
def records(parts):
    out = []
    for chosen, rng in itertools.islice(logic.draw_combinations(parts, 7), 200):
        try:
            record = logic.compose(chosen, rng)
        except logic.ComposeError:
            continue
        if not screen(record, chosen):
            out.append((record, chosen))
    return out


def test_only_references_that_declare_plain_routes_become_parts(parts):
    ids = {p.task_id for p in parts}
    assert len(ids) >= 20
    for task_id in ("fastapi_custom_exception", "fastapi_http_middleware", "fastapi_lifespan", "fastapi_mounted_subapp"):
        assert task_id not in ids, task_id
    assert logic.part_problem("from fastapi import FastAPI\napp = FastAPI(title='x')\n", {}) is not None
    assert logic.part_problem("from fastapi import FastAPI\napp = FastAPI()\napp.state.x = 1\n", {}).startswith("uses")


def test_every_drawn_rule_set_occurs_and_most_draws_compose(records):
    assert len(records) >= 100
    seen = {tuple(r["rules"]) for r, _ in records}
    assert all(rules for rules in seen)
    for rule in logic.RULES:
        assert any(rule in rules for rules in seen), rule


def test_the_composed_reference_puts_each_part_under_its_prefix_and_every_rule_in_place(records):
    for record, _ in records[:40]:
        tree = ast.parse(record["reference"])
        source = record["reference"]
        assert sum(isinstance(s, ast.Assign) and ast.unparse(s) == "app = FastAPI()" for s in tree.body) == 1
        for i, prefix in enumerate(record["prefixes"]):
            assert f"part_{i + 1} = APIRouter(prefix={prefix!r}" in source
            assert f"app.include_router(part_{i + 1})" in source
        assert ("@app.middleware('http')" in source) == ("stamp" in record["rules"])
        assert ("@app.exception_handler(RequestValidationError)" in source) == ("invalid_400" in record["rules"])
        assert source.count("dependencies=[Depends(require_api_key)]") == ("api_key" in record["rules"])


def test_checks_are_rewritten_for_prefixes_keys_and_the_400_rule(records):
    for record, _ in records[:60]:
        rules = record["rules"]
        for check in record["checks"]:
            assert not passes_for_catch_all(check), check["name"]
            for step in check["steps"]:
                req, exp = step["request"], step["expect"]
                if "stamp" in rules:
                    assert exp["headers"][logic.STAMP_HEADER.lower()] == record["stamp"]
                if "invalid_400" in rules:
                    assert exp.get("status") != 422
                if req["path"] == "/openapi.json":
                    continue
                if check["name"].startswith("part "):
                    n = int(check["name"].split(":")[0].split()[1])
                    assert req["path"].startswith(record["prefixes"][n - 1] + "/")
                    keyed = [v for k, v in req.get("headers", []) if k == logic.KEY_HEADER.lower()]
                    assert keyed == ([record["key"]] if n - 1 == record["keyed"] else [])


def test_the_openapi_paths_a_part_checks_carry_its_prefix(records):
    found = 0
    for record, _ in records:
        for check in record["checks"]:
            n = int(check["name"].split(":")[0].split()[1]) if check["name"].startswith("part ") else 0
            for step in check["steps"]:
                for item in step["expect"].get("json_at", []):
                    if item["at"][:1] == ["paths"] and isinstance(item["at"][1], str):
                        assert item["at"][1].startswith(record["prefixes"][n - 1] + "/")
                        found += 1
    assert found


def test_the_rules_are_stated_as_behaviour_never_as_the_api(records):
    for record, _ in records[:40]:
        rules_text = record["spec"].split("Part 1:")[0]
        for word in API_WORDS:
            assert word not in rules_text, word
        if "stamp" in record["rules"]:
            assert f"`{logic.STAMP_HEADER}: {record['stamp']}`" in rules_text
        if "api_key" in record["rules"]:
            assert f"`{logic.KEY_HEADER}: {record['key']}`" in rules_text and "401" in rules_text
        if "invalid_400" in record["rules"]:
            assert json.dumps(logic.INVALID_BODY) in rules_text and "422" in rules_text


def test_each_rule_has_interaction_checks_and_wrong_answers_that_break_it(records):
    for record, chosen in records[:30]:
        names = [c["name"] for c in record["checks"]]
        wrong = logic.wrong_answers(record, chosen)
        for rule in record["rules"]:
            assert f"without_{rule}" in wrong and wrong[f"without_{rule}"] != record["reference"]
        if "api_key" in record["rules"]:
            assert sum(n.startswith("rule:") and "key" in n for n in names) == 3
            assert "api_key_on_every_part" in wrong
        if "stamp" in record["rules"]:
            assert any("unknown path" in n for n in names) and "stamp_on_one_part" in wrong
        for source in wrong.values():
            compile(source, "wrong", "exec")


def test_composition_is_deterministic_and_ids_are_stable(parts):
    def first(seed):
        for chosen, rng in logic.draw_combinations(parts, seed):
            try:
                return logic.compose(chosen, rng)
            except logic.ComposeError:
                continue

    assert first(3) == first(3)
    assert first(3)["task_id"] != first(4)["task_id"]


def test_colliding_names_are_suffixed_or_the_combination_refused():
    src = "from fastapi import FastAPI\napp = FastAPI()\nITEMS = {}\n@app.get('/a')\ndef read():\n    return ITEMS\n"
    a = logic.ComposableTask("a", src, "A.", [], [], [], names=logic.defined_names(src))
    b = logic.ComposableTask("b", src.replace("/a", "/b"), "B.", [], [], [], names=logic.defined_names(src))
    first, second = logic.without_collisions([a, b])
    assert first.source == a.source and "ITEMS_p2" in second.source and "def read_p2" in second.source
    spelled = logic.ComposableTask("c", src, "The store ITEMS is a dict.", [], [], [], names=logic.defined_names(src))
    with pytest.raises(logic.ComposeError):
        logic.without_collisions([a, spelled])


def test_a_composed_row_is_a_hard_fastapi_task_with_its_structure_in_info(records):
    record, _ = records[0]
    row = compile_composed(record)
    assert row.family == "fastapi" and row.difficulty == "hard" and row.source == "composed"
    assert row.measures["components"] == record["parts"] and row.measures["app_wide"] == record["rules"]
    assert row.measures["tier"] == "composed" and row.measures["interaction_checks"] >= 1
    assert len(row.grading["checks"]) <= logic.MAX_CHECKS
    assert "/workspace/app.py" in row.prompt


def test_every_stored_composed_task_is_what_its_parts_compose_to_and_screens_clean(parts):
    from sandbox_env.generate import compose_store

    by_id = {p.task_id: p for p in parts}
    stored = compose_store.read()
    assert stored, "no composed task is stored: python -m sandbox_env.stages.compose"
    for record in stored:
        chosen = [by_id[i] for i in record["parts"]]
        assert logic.record_source(record, chosen) == record["reference"], record["task_id"]
        assert logic.record_text(record, chosen) == (record["spec"], record["coverage"]), (
            f"{record['task_id']}: run python -m sandbox_env.stages.compose --respec"
        )
        assert screen(record, chosen) == [], record["task_id"]
        assert record["verified"]["mutants_killed"] > 0 and record["verified"]["catch_all"] <= 0.02


def test_a_part_whose_checks_pin_an_openapi_parameter_list_is_never_the_keyed_one(parts):
    pinned = {p.task_id for p in parts if logic.pins_parameter_lists(p)}
    assert "fastapi_dependency_cache" in pinned  # `len = 1` on a whole parameter list
    by_name = logic.ComposableTask(
        "n", "", "", [_openapi_check({"at": ["paths", "/a", "get", "parameters", {"name": "q"}], "exists": True})], [], []
    )
    assert not logic.pins_parameter_lists(by_name)
    for item in (
        {"at": ["paths", "/a", "get", "parameters"], "len": 1},
        {"at": ["paths", "/a", "get", "parameters", 0], "has": {}},
    ):
        assert logic.pins_parameter_lists(logic.ComposableTask("p", "", "", [_openapi_check(item)], [], []))
    keyed = 0
    for chosen, rng in itertools.islice(logic.draw_combinations(parts, 7), 400):
        try:
            record = logic.compose(chosen, rng)
        except logic.ComposeError:
            continue
        if record["keyed"] >= 0:
            keyed += 1
            assert record["parts"][record["keyed"]] not in pinned, record["task_id"]
    assert keyed > 0


def _openapi_check(item: dict) -> dict:
    return {"name": "doc", "steps": [{"request": {"path": "/openapi.json"}, "expect": {"status": 200, "json_at": [item]}}]}
