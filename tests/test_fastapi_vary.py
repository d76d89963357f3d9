"""Values drawn per grading for fastapi checks ([[vary]], sandbox_env/families/fastapi_vary.py), without Docker."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from sandbox_env.families.fastapi import FAMILY
from sandbox_env.families.fastapi_checks import CheckError, normalize_check
from sandbox_env.families.fastapi_vary import VaryError, draw, drawn_checks, normalize, substitute, validate

TASKS = Path(__file__).resolve().parents[1] / "sandbox_env" / "tasks" / "fastapi"


def check(raw: dict) -> dict:
    return normalize_check(raw, "test")


PATCH = check(
    {
        "name": "patch",
        "steps": [
            {
                "method": "PATCH",
                "path": "/items/qux",
                "query": {"q": "Barz"},
                "headers": {"X-Tag": "Barz"},
                "json": {"name": "Barz", "tax": 5, "price": 42.5, "tags": ["Barz-ish"]},
                "expect": {
                    "status": 200,
                    "json": {"name": "Barz", "tax": 5.0, "price": 42.5, "item_id": "qux", "n": 5},
                    "headers": {"x-echo": "Barz"},
                    "json_at": [{"at": ["items", 5], "equals": "Barz"}],
                },
            },
            {"path": "/items/5", "expect": {"status": 5 * 100 + 4, "text_contains": "id 5 of qux"}},
        ],
    }
)
DECLS = normalize(
    [
        {"token": "Barz", "kind": "word"},
        {"token": "qux", "kind": "word"},
        {"token": 5, "kind": "int", "range": [10, 99]},
        {"token": 42.5, "kind": "float", "range": [1, 999], "decimals": 1},
    ],
    "test",
)
VALUES = {"Barz": "Quom", "qux": "zzzyyy", "5": 17, "42.5": 3.7}


def test_every_occurrence_follows_the_draw_in_requests_and_expectations():
    (out,) = substitute([PATCH], DECLS, VALUES)
    req, exp = out["steps"][0]["request"], out["steps"][0]["expect"]
    assert req["path"] == "/items/zzzyyy"
    assert req["query"] == [["q", "Quom"]]
    assert req["headers"] == [["X-Tag", "Quom"]]
    assert req["json"] == {"name": "Quom", "tax": 17, "price": 3.7, "tags": ["Quom-ish"]}
    assert exp["json"] == {"name": "Quom", "tax": 17.0, "price": 3.7, "item_id": "zzzyyy", "n": 17}
    assert exp["headers"] == {"x-echo": "Quom"}
    second = out["steps"][1]
    assert second["request"]["path"] == "/items/17" and second["expect"]["text_contains"] == "id 17 of zzzyyy"


def test_types_follow_the_token_an_int_sent_and_a_float_expected():
    (out,) = substitute([PATCH], DECLS, VALUES)
    sent, expected = out["steps"][0]["request"]["json"]["tax"], out["steps"][0]["expect"]["json"]["tax"]
    assert type(sent) is int and type(expected) is float and sent == expected == 17


def test_status_and_json_at_paths_are_never_substituted():
    (out,) = substitute([PATCH], DECLS, {**VALUES, "5": 99})
    assert out["steps"][0]["expect"]["status"] == 200
    assert out["steps"][0]["expect"]["json_at"] == [{"at": ["items", 5], "equals": "Quom"}]
    assert out["steps"][1]["expect"]["status"] == 504


def test_a_word_keeps_its_case_shape_and_length_and_draws_avoid_every_literal():
    rng = random.Random(7)
    spec = "Items start as foo and bar; prices 10 to 20; tax 17"
    for _ in range(300):
        values = draw(DECLS, [PATCH], spec, rng)
        assert values["Barz"][0].isupper() and values["Barz"][1:].islower() and len(values["Barz"]) == 4
        assert values["qux"].islower() and len(values["qux"]) == 6
        assert 10 <= values["5"] <= 99 and values["5"] not in (5, 17, 20, 10)
        assert values["42.5"] != 42.5 and not float(values["42.5"]).is_integer()
        corpus = (spec + json.dumps(PATCH)).lower()
        assert values["Barz"].lower() not in corpus and values["qux"] not in corpus
        assert values["Barz"].lower() != values["qux"]


def test_a_fresh_draw_every_grading():
    row = FAMILY.compile_task(TASKS / "fastapi_patch_partial")
    rng = random.SystemRandom()
    draws = [json.dumps(drawn_checks(row.grading, row.prompt, rng)[0]) for _ in range(5)]
    assert len(set(draws)) == 5
    assert json.dumps(row.grading["checks"]) not in draws


def test_validation_refuses_unsound_declarations():
    spec = "The store holds Foo."
    with pytest.raises(VaryError, match="sent by no request"):
        validate(normalize([{"token": "nowhere", "kind": "word"}], "t"), [PATCH], spec, "t")
    with pytest.raises(VaryError, match="occurs in the spec"):
        validate(normalize([{"token": "Barz", "kind": "word"}], "t"), [PATCH], "Rename to Barz.", "t")
    with pytest.raises(VaryError, match="inside another literal"):
        bad = check({"name": "c", "method": "POST", "path": "/x", "json": {"a": "ab", "b": "abc"}, "expect": {"status": 200}})
        validate(normalize([{"token": "ab", "kind": "word"}], "t"), [bad], spec, "t")
    with pytest.raises(VaryError, match="range"):
        normalize([{"token": 5, "kind": "int"}], "t")
    with pytest.raises(VaryError, match="kind"):
        normalize([{"token": 5, "kind": "bool"}], "t")


def test_a_task_declaring_an_unsound_token_does_not_compile(tmp_path):
    src = TASKS / "fastapi_patch_partial"
    folder = tmp_path / "fastapi_patch_partial"
    folder.mkdir()
    (folder / "reference.py").write_text((src / "reference.py").read_text())
    toml = (src / "task.toml").read_text().replace('token = "qux"', 'token = "bar"')
    (folder / "task.toml").write_text(toml)
    with pytest.raises(CheckError, match="occurs in the spec"):
        FAMILY.compile_task(folder)


def test_declarations_are_recorded_in_the_grading_data():
    row = FAMILY.compile_task(TASKS / "fastapi_patch_partial")
    assert {d["token"] for d in row.grading["vary"]} >= {"Barz", "qux", 5}
    assert FAMILY.compile_task(TASKS / "fastapi_yield_teardown").grading["vary"] == []
