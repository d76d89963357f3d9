"""The fastapi task generator (generate/api_*.py, stages/generate_fastapi.py) on the host, and a sample in the image.

Host: the same seed gives the same candidates; the host screens admit what the generator draws
and refuse what they exist to refuse (an API word in the spec, an uncovered sentence, a check
that gives back a sent value without a drawn one); the oracle answers by the stated rules; a
stored line is what its (seed, index) draws and compiles to a row with its source, split,
signature and measures, and keeps drawing under the grammar it was drawn with; each grammar-2
kind (alias_field, error_shape, conflict_409) and each grammar-3 kind (location_header,
cookie_pref) is stated by the spec, answered by the oracle as stated, and has its typical mistakes
among the reference's mutants; grammar 1 and 2 draw what they drew before grammar 3 existed. Image
(marked docker): one candidate per node kind verified by execution the way the generator admits one.
"""

from __future__ import annotations

import ast
import copy
import hashlib
import itertools
import json

import pytest

from sandbox_env.generate import api_store, api_tree
from sandbox_env.generate.api_checks import NAMES, Oracle, json_key
from sandbox_env.stages.generate_fastapi import screen
from sandbox_env.verify.mutants import FASTAPI_OPERATORS, generate

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
    tree = next(
        t for t in (api_tree.candidate(1, i) for i in range(200)) if t["choice"] and t["auth"] == "none" and not t["unique"]
    )
    o = Oracle(tree)
    text, number, choice = tree["text"], tree["number"], tree["choice"]
    ok = {text["name"]: "x" * text["min"], json_key(tree, "number"): number["le"]}
    if tree["secret"]:
        ok[tree["secret"]["name"]] = "s"
    post = {"method": "POST", "path": f"/{tree['many']}"}
    refused = {"status": 422, **({"json": _shaped(tree, 422, tree["errors"]["invalid"])} if tree.get("errors") else {})}
    assert o.answer({**post, "json": {**ok, text["name"]: "x" * (text["max"] + 1)}}) == refused
    assert o.answer({**post, "json": {**ok, json_key(tree, "number"): number["ge"] - 1}}) == refused
    assert o.answer({**post, "json": {**ok, choice["name"]: "nowhere"}}) == refused
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
        drawn = api_store.candidate_record(record["drawn"]["seed"], record["drawn"]["index"], api_store.grammar_of(record))
        assert {k: v for k, v in record.items() if k != "verified"} == drawn, record["task_id"]
    row = api_store.compile_generated_fastapi(stored[0])
    assert row.source == "generated" and row.family == "fastapi" and row.signature == stored[0]["signature"]
    assert row.split in ("train", "eval") and row.measures["node_kinds"] and row.measures["tier"]
    info = row.to_row()["info"]
    assert {"source", "split", "signature", "measures"} <= set(info)


def test_grammar_1_draws_as_before_and_grammar_2_draws_its_own_stream():
    first = [api_tree.candidate(1, i, grammar=1) for i in range(30)]
    assert all(not {"alias", "errors", "unique", "location", "pref"} & set(t) for t in first)
    assert all("grammar" not in api_store.candidate_record(1, i, grammar=1) for i in range(3))
    second = [api_tree.candidate(1, i, grammar=2) for i in range(30)]
    assert all({"alias", "errors", "unique"} <= set(t) and not {"location", "pref"} & set(t) for t in second)
    assert api_store.grammar_of(api_store.candidate_record(1, 0, grammar=2)) == 2
    assert api_store.grammar_of({"task_id": "old line"}) == 1
    assert [api_tree.task_id(t) for t in first] != [api_tree.task_id(t) for t in second]


# what seed 1's first 30 trees of grammars 1 and 2 were before grammar 3 existed: a new grammar changes no
# draw of an older one. (What a tree renders to may change — the list filter check gained a request — and the
# stored lines are then drawn again and verified again: `generate_fastapi --redraw`; the stored-line test holds
# every line to what its tree renders now.)
GRAMMAR_TREE_DIGESTS = {1: "1287262f3d7ced9c", 2: "c07c2f45ea0ef21f"}


def test_grammar_1_and_2_trees_are_unchanged_by_grammar_3():
    for grammar, digest in GRAMMAR_TREE_DIGESTS.items():
        trees = [api_tree.candidate(1, i, grammar) for i in range(30)]
        assert hashlib.sha256(json.dumps(trees, sort_keys=True).encode()).hexdigest()[:16] == digest, grammar


def test_grammar_3_is_the_newest_and_each_of_its_trees_has_a_grammar_3_kind_and_at_most_one_grammar_2_kind():
    newest = api_store.candidate_record(1, 0)
    assert newest["grammar"] == api_tree.GRAMMAR == 3 and newest == api_store.candidate_record(1, 0, grammar=3)
    third = [api_tree.candidate(1, i, grammar=3) for i in range(60)]
    assert all({"location", "pref"} <= set(t) for t in third)
    assert all(set(api_tree.kinds(t)) & set(api_tree.GRAMMAR_3_KINDS) for t in third)
    assert all(len(set(api_tree.kinds(t)) & set(api_tree.GRAMMAR_2_KINDS)) <= 1 for t in third)
    assert all("list_query" in t["ops"] for t in third if t["pref"])
    with pytest.raises(ValueError):
        api_tree.candidate(1, 0, grammar=4)


def _tree_with(kind: str, grammar: int = api_tree.GRAMMAR, **wanted) -> dict:
    """The first tree of seed 1 under a grammar with this kind and these top-level values."""
    return next(
        t
        for t in (api_tree.candidate(1, i, grammar) for i in range(300))
        if kind in api_tree.kinds(t) and all(t[k] == v for k, v in wanted.items())
    )


def _shaped(tree: dict, status: int, message: str) -> dict:
    shape = tree["errors"]
    return {shape["outer"]: {"status": status, shape["message"]: message}}


def _valid_body(tree: dict, text: str = "Abcde") -> dict:
    body = {tree["text"]["name"]: text, json_key(tree, "number"): tree["number"]["ge"]}
    return {**body, tree["secret"]["name"]: "s"} if tree["secret"] else body


def test_an_aliased_field_is_taken_and_answered_only_under_its_stated_key():
    tree = _tree_with("alias_field", 2, auth="none", errors=None, unique=None)
    camel, snake = tree["alias"]["json"], tree["number"]["name"]
    assert camel != snake and f"`{camel}`" in record_spec(tree) and f"`{snake}` is not a name" in record_spec(tree)
    o, post = Oracle(tree), {"method": "POST", "path": f"/{tree['many']}"}
    with_snake = {**{k: v for k, v in _valid_body(tree).items() if k != camel}, snake: tree["number"]["ge"]}
    assert o.answer({**post, "json": with_snake}) == {"status": 422}
    made = o.answer({**post, "json": _valid_body(tree)})
    assert made["status"] == 201 and made["json"][camel] == tree["number"]["ge"] and snake not in made["json"]


def test_every_error_answer_has_the_stated_shape():
    tree = _tree_with("error_shape", 2, auth="writes", unique=None)
    shape = tree["errors"]
    assert f"`{shape['outer']}`" in record_spec(tree) and f"`{shape['invalid']}`" in record_spec(tree)
    o, post = Oracle(tree), {"method": "POST", "path": f"/{tree['many']}"}
    key = {tree["key"]["header"]: tree["key"]["value"]}
    assert o.answer({**post, "json": {}}) == {"status": 401, "json": _shaped(tree, 401, "missing key")}
    assert o.answer({**post, "json": {}, "headers": key}) == {"status": 422, "json": _shaped(tree, 422, shape["invalid"])}
    if api_tree.id_routes(tree):
        method = {"get_by_id": "GET", "patch_partial": "PATCH", "delete_204": "DELETE"}[api_tree.id_routes(tree)[0]]
        missing = o.answer({"method": method, "path": f"/{tree['many']}/99", "json": {}, "headers": key})
        assert missing["status"] == 404 and missing["json"] == _shaped(tree, 404, f"{tree['one']} 99 not found")


def test_a_held_text_is_refused_with_409_and_letter_case_matters():
    tree = _tree_with("conflict_409", 2, auth="none", errors=None)
    assert "409" in record_spec(tree) and "letter case matters" in record_spec(tree)
    o, post = Oracle(tree), {"method": "POST", "path": f"/{tree['many']}"}
    assert o.answer({**post, "json": _valid_body(tree, "Abcde")})["status"] == 201
    assert o.answer({**post, "json": _valid_body(tree, "Abcde")}) == {"status": 409, "json": {"detail": tree["unique"]["detail"]}}
    assert o.answer({**post, "json": _valid_body(tree, "abcde")})["json"]["id"] == 2  # the refused create took no id
    assert sorted(o.rows) == [1, 2]


def test_each_grammar_2_kind_has_its_typical_mistake_among_the_mutants():
    expected = {"alias_field": "alias_loose@", "error_shape": "handler@", "conflict_409": "case@"}
    for kind, operator in expected.items():
        record = api_store.record_of(_tree_with(kind, 2), "mutants")
        names = [m.name for m in generate(record["reference"], FASTAPI_OPERATORS)]
        assert any(n.startswith(operator) for n in names), (kind, names)


def _list(tree: dict, **cookies) -> dict:
    return {"method": "GET", "path": f"/{tree['many']}", "query": {"limit": tree["limit"]["max"]}, "cookies": cookies}


def test_a_create_answers_the_new_records_path_in_its_location_header():
    tree = _tree_with("location_header", auth="none", errors=None, unique=None)
    many = tree["many"]
    assert f"`Location: /{many}/{{id}}`" in record_spec(tree) and f"`Location: /{many}/7`" in record_spec(tree)
    o, post = Oracle(tree), {"method": "POST", "path": f"/{many}"}
    assert o.answer({**post, "json": _valid_body(tree)})["headers"] == {"location": f"/{many}/1"}
    assert o.answer({**post, "json": {}}) == {"status": 422}  # a refused create carries none
    assert o.answer({**post, "json": _valid_body(tree, "Fghij")})["headers"] == {"location": f"/{many}/2"}


def test_the_list_follows_the_preference_cookie_its_default_and_the_cookie_the_route_sets():
    tree = _tree_with("cookie_pref", auth="none", errors=None, unique=None, location=None)
    pref, many = tree["pref"], tree["many"]
    oldest, newest = pref["values"]
    spec = record_spec(tree)
    assert all(f"`{w}`" in spec for w in (pref["cookie"], oldest, newest, f"PUT {pref['route']}", "Path=/"))
    assert f"without that cookie it is `{pref['default']}`" in spec and "Set-Cookie" in spec
    o, post = Oracle(tree), {"method": "POST", "path": f"/{many}"}
    for text in ("Abcde", "Fghij", "Klmno"):
        o.answer({**post, "json": _valid_body(tree, text)})
    ids = lambda answer: [r["id"] for r in answer["json"]]  # noqa: E731
    assert ids(o.answer(_list(tree))) == ([3, 2, 1] if pref["default"] == newest else [1, 2, 3])
    assert ids(o.answer(_list(tree, **{pref["cookie"]: newest}))) == [3, 2, 1]
    assert ids(o.answer(_list(tree, **{pref["cookie"]: oldest}))) == [1, 2, 3]
    assert o.answer(_list(tree, **{pref["cookie"]: newest.upper()})) == {"status": 422}
    put = {"method": "PUT", "path": pref["route"]}
    assert o.answer({**put, "json": {"value": "sideways"}}) == {"status": 422}
    other = next(w for w in pref["values"] if w != pref["default"])
    made = o.answer({**put, "json": {"value": other}})
    assert made["status"] == 200 and made["header_contains"] == {"set-cookie": [f"{pref['cookie']}={other}", "Path=/"]}
    assert ids(o.answer(_list(tree))) == ([3, 2, 1] if other == newest else [1, 2, 3])  # the cookie set is sent
    assert ids(o.answer(_list(tree, **{pref["cookie"]: pref["default"]}))) != ids(o.answer(_list(tree)))


def test_each_grammar_3_kind_has_its_typical_mistakes_among_the_mutants():
    expected = {
        "location_header": ["location@* no Location header", "location@* without the id", "name@* 'Location'->"],
        "cookie_pref": ["set_cookie@* drop", "literal_param@* takes any text", "literal_param@* default", "name@* cookie"],
    }
    for kind, mistakes in expected.items():
        record = api_store.record_of(_tree_with(kind), "mutants")
        names = [m.name for m in generate(record["reference"], FASTAPI_OPERATORS)]
        for mistake in mistakes:
            operator, detail = mistake.split("*")
            assert any(n.startswith(operator) and detail in n for n in names), (kind, mistake, names)


def test_the_grammar_3_operators_mutate_only_the_constructs_of_their_kinds():
    own = {"location_header": {"location"}, "cookie_pref": {"set_cookie", "literal_param"}}
    for record in _records(1, 10) + [api_store.candidate_record(1, i, 2) for i in range(10)]:
        operators = {m.operator for m in generate(record["reference"], FASTAPI_OPERATORS)}
        wanted = {op for kind in record["measures"]["node_kinds"] for op in own.get(kind, ())}
        assert operators & {"location", "set_cookie", "literal_param"} == wanted, record["task_id"]


def test_a_list_cut_at_its_limit_before_its_filter_is_a_mutant_and_a_check_asks_what_tells_it_apart():
    """The spec says the limit counts the records the filter keeps: every list task makes the mistake of
    cutting first (`limit_first`), and its filter check asks for one name at limit 1, a name no order puts
    first, so a cut taken first answers an empty list where the oracle answers that one record."""
    seen = 0
    for grammar in api_tree.GRAMMARS:
        for record in [api_store.candidate_record(1, i, grammar) for i in range(12)]:
            has_list = "list_query" in record["measures"]["node_kinds"]
            names = [m.name for m in generate(record["reference"], FASTAPI_OPERATORS)]
            assert any(n.startswith("limit_first") for n in names) == has_list, record["task_id"]
            if not has_list:
                continue
            seen += 1
            (check,) = [c for c in record["checks"] if c["name"] == NAMES["list_filter"]]
            asks = [s["request"] for s in check["steps"] if s["request"]["method"] == "GET"]  # queries: [name, value] pairs
            one = [q for q in asks if ["limit", "1"] in q["query"] and len(q["query"]) == 2]
            assert one and one[0]["query"][0][1] != "abcdef", check  # a drawn name, at limit 1
            assert asks[-1]["query"] == [[one[0]["query"][0][0], "abcdef"]]  # then the case twin of a stored text
    assert seen >= 5


def record_spec(tree: dict) -> str:
    return api_store.record_of(tree, "spec")["spec"]


def _one_per_kind(seed: int = 1) -> list[dict]:
    """Two candidates that together have every node kind at the fewest mutants (each mutant is a grading),
    over the seed's first candidates of grammars 2 and 3 (a grammar-3 tree keeps one grammar-2 kind at
    most); a greedy cover if no two do."""
    pool = [api_store.candidate_record(seed, i, grammar) for grammar in (2, 3) for i in range(120)]
    every = set(api_tree.KINDS)
    kinds = {r["task_id"]: set(r["measures"]["node_kinds"]) for r in pool}
    pairs = [(a, b) for a, b in itertools.combinations(pool, 2) if kinds[a["task_id"]] | kinds[b["task_id"]] == every]
    paired = {r["task_id"]: r for pair in pairs for r in pair}
    cost = {i: len(generate(r["reference"], FASTAPI_OPERATORS)) for i, r in paired.items()}
    if pairs:
        return list(min(pairs, key=lambda p: cost[p[0]["task_id"]] + cost[p[1]["task_id"]]))
    left, out = set(every), []
    while left:
        best = max(pool, key=lambda r: (len(left & kinds[r["task_id"]]), -r["drawn"]["index"]))
        assert left & kinds[best["task_id"]], f"no candidate has {left}"
        out.append(best)
        left -= kinds[best["task_id"]]
    return out


async def _admit_one_per_kind(image, sample: bool) -> None:
    from sandbox_env.grading.grader import Grader
    from sandbox_env.sandbox.registry import make_backend
    from sandbox_env.stages.generate_fastapi import verify_record

    backend = make_backend()
    try:
        grader = Grader(backend, image)
        for record in _one_per_kind():
            ok, why, measured = await verify_record(record, grader, concurrency=2, sample=sample)
            assert ok, (record["task_id"], record["measures"]["node_kinds"], why)
            assert measured["mutants_killed"] > 0
    finally:
        backend.teardown()


@pytest.mark.docker
async def test_one_candidate_per_node_kind_passes_its_controls_and_kills_one_mutant_of_each_operator(image):
    """The generator path by execution, sampled: every node kind's candidate, its reference on three draws, the
    controls, and the first mutant of each operator (admission grades every mutant: the slow twin below, and
    `websandbox tasks generate_fastapi` for every stored task)."""
    await _admit_one_per_kind(image, sample=True)


@pytest.mark.docker
@pytest.mark.slow  # quicker sibling: the sampled test above (same candidates, one mutant of each operator)
async def test_one_candidate_per_node_kind_is_admitted_by_execution(image):
    await _admit_one_per_kind(image, sample=False)
