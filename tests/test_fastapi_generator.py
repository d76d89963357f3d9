"""The fastapi task generator (generate/api_*.py, verify/api_generate.py) on the host, and a sample in the image.

Host: the same seed gives the same candidates; the host screens admit what the generator draws
and refuse what they exist to refuse (an API word in the spec, an uncovered sentence, a check
that gives back a sent value without a drawn one); the oracle answers by the stated rules; a
stored line is what its (seed, index) draws and compiles to a row with its source, split,
signature and measures. Image (marked docker): one candidate per node kind verified by
execution the way the generator admits one.
"""

from __future__ import annotations

import ast
import copy

import pytest

from sandbox_env.generate import api_store, api_tree
from sandbox_env.generate.api_checks import NAMES, Oracle
from sandbox_env.verify.api_generate import screen

SAMPLE = 40


def _records(seed: int = 1, n: int = SAMPLE) -> list[dict]:
    return [api_store.candidate_record(seed, i) for i in range(n)]


def test_the_same_seed_gives_the_same_candidates_and_another_seed_others():
    assert _records(7, 12) == _records(7, 12)
    assert [r["task_id"] for r in _records(7, 12)] != [r["task_id"] for r in _records(8, 12)]


def test_every_drawn_candidate_passes_the_host_screens():
    problems = {r["task_id"]: screen(r) for r in _records(1, 300)}
    assert not {k: v for k, v in problems.items() if v}


def test_the_stream_draws_every_node_kind_several_domains_and_both_tiers():
    records = _records(1, 120)
    kinds = {k for r in records for k in r["measures"]["node_kinds"]}
    assert kinds == set(api_tree.KINDS)
    assert len({r["tree"]["domain"] for r in records}) >= 5
    assert {r["measures"]["tier"] for r in records} == {"single", "cross_cutting"}
    assert all(r["difficulty"] == "hard" for r in records if r["measures"]["tier"] == "cross_cutting")
    assert {r["split"] for r in records} == {"train", "eval"}


def test_a_spec_naming_the_framework_is_refused():
    record = copy.deepcopy(_records(1, 1)[0])
    record["spec"] = record["spec"].replace("A service keeps", "A service (use Depends and BaseModel) keeps", 1)
    assert any("Depends" in p for p in screen(record))


def test_a_spec_sentence_no_check_covers_is_refused():
    record = copy.deepcopy(_records(1, 1)[0])
    record["coverage"] = record["coverage"][1:]
    assert any("not covered" in p for p in screen(record))


def test_a_check_that_gives_back_what_it_sends_without_a_drawn_value_is_refused():
    record = copy.deepcopy(_records(1, 1)[0])
    record["vary"] = []
    assert any("drawn value" in p for p in screen(record))


def test_every_check_whose_answer_echoes_its_input_draws_a_token():
    from sandbox_env.families.fastapi_vary import echoes, sends_a_token

    for r in _records():
        for c in r["checks"]:
            assert not echoes(c, r["spec"]) or sends_a_token(c, r["vary"]), (r["task_id"], c["name"])


def test_the_oracle_applies_the_stated_field_rules_and_ids():
    tree = next(t for t in (api_tree.candidate(1, i) for i in range(200)) if t["choice"] and t["auth"] == "none")
    o = Oracle(tree)
    text, number, choice = tree["text"], tree["number"], tree["choice"]
    ok = {text["name"]: "x" * text["min"], number["name"]: number["le"]}
    if tree["secret"]:
        ok[tree["secret"]["name"]] = "s"
    post = {"method": "POST", "path": f"/{tree['many']}"}
    assert o.answer({**post, "json": {**ok, text["name"]: "x" * (text["max"] + 1)}}) == {"status": 422}
    assert o.answer({**post, "json": {**ok, number["name"]: number["ge"] - 1}}) == {"status": 422}
    assert o.answer({**post, "json": {**ok, choice["name"]: "nowhere"}}) == {"status": 422}
    first = o.answer({**post, "json": ok})
    assert first["status"] == 201 and first["json"]["id"] == 1 and first["json"][choice["name"]] == choice["default"]
    assert tree["secret"] is None or tree["secret"]["name"] not in first["json"]
    assert o.answer({**post, "json": ok})["json"]["id"] == 2


def test_the_reference_parses_and_serves_app_and_every_check_has_a_known_name():
    for r in _records(1, 20):
        tree = ast.parse(r["reference"])
        assert any(isinstance(s, ast.Assign) and s.targets[0].id == "app" for s in tree.body if isinstance(s, ast.Assign))
        assert {c["name"] for c in r["checks"]} <= set(NAMES.values())


def test_a_stored_line_is_what_its_seed_and_index_draw_and_compiles_to_a_generated_row():
    stored = api_store.read()
    if not stored:
        pytest.skip("no generated fastapi tasks stored")
    for record in stored:
        drawn = api_store.candidate_record(record["drawn"]["seed"], record["drawn"]["index"])
        assert {k: v for k, v in record.items() if k != "verified"} == drawn, record["task_id"]
    row = api_store.compile_generated_fastapi(stored[0])
    assert row.source == "generated" and row.family == "fastapi" and row.signature == stored[0]["signature"]
    assert row.split in ("train", "eval") and row.measures["node_kinds"] and row.measures["tier"]
    info = row.to_row()["info"]
    assert {"source", "split", "signature", "measures"} <= set(info)


def _one_per_kind(seed: int = 1) -> list[dict]:
    """Few candidates that together have every node kind (greedy cover over the seed's first candidates)."""
    pool, left, out = _records(seed, 120), set(api_tree.KINDS), []
    while left:
        best = max(pool, key=lambda r: (len(left & set(r["measures"]["node_kinds"])), -r["drawn"]["index"]))
        assert left & set(best["measures"]["node_kinds"]), f"no candidate has {left}"
        out.append(best)
        left -= set(best["measures"]["node_kinds"])
    return out


@pytest.mark.docker
async def test_one_candidate_per_node_kind_is_admitted_by_execution(image):
    from sandbox_env.grading.runs import Grader
    from sandbox_env.sandbox.registry import make_backend
    from sandbox_env.verify.api_generate import verify_record

    backend = make_backend()
    try:
        grader = Grader(backend, image)
        for record in _one_per_kind():
            ok, why, measured = await verify_record(record, grader, concurrency=2)
            assert ok, (record["task_id"], record["measures"]["node_kinds"], why)
            assert measured["mutants_killed"] > 0
    finally:
        backend.teardown()
