"""The fastapi family's host-side logic, without Docker: expectations, canaries, task sources, fault attribution."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from sandbox_env.families.fastapi import CHECK_CAPS, FAMILY
from sandbox_env.families.fastapi_checks import (
    MISSING,
    CheckError,
    at_diff,
    diff,
    evaluate_check,
    expectation_problems,
    judge_canaries,
    lay_out,
    make_canaries,
    navigate,
    normalize_check,
    normalize_request,
    parse_sse,
    passes_for_catch_all,
    witness_problems,
)
from sandbox_env.grading.grader import ReportError
from sandbox_env.sandbox import ExecResult
from sandbox_env.verify.fastapi import TIER_MINIMUMS, VERIFIER

TASKS = Path(__file__).resolve().parents[1] / "sandbox_env" / "tasks" / "fastapi"


def resp(status=200, body=None, headers=(), text=None, from_app=True):
    """A recorded response; from_app=False is one the app never sent (made up in the client)."""
    text = json.dumps(body) if text is None else text
    witness = {"app_calls": 1, "app_status": status} if from_app else {"app_calls": 0, "app_status": None}
    return {"status": status, "headers": [list(h) for h in headers], "text": text, **witness}


def fake(status=200, body=None):
    return resp(status, {} if body is None else body, from_app=False)


# -- values ------------------------------------------------------------------------------------


def test_diff_exact_reports_the_first_difference_with_its_path():
    assert diff({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "x"}]}) is None
    assert "$.a[1].b" in diff({"a": [1, {"b": "x"}]}, {"a": [1, {"b": "y"}]})
    assert "unexpected key" in diff({"a": 1}, {"a": 1, "b": 2})
    assert "missing" in diff({"a": 1, "c": 2}, {"a": 1})


def test_diff_subset_ignores_extra_keys_but_not_list_length():
    assert diff({"a": 1}, {"a": 1, "b": 2}, subset=True) is None
    assert diff({"l": [{"x": 1}]}, {"l": [{"x": 1, "y": 2}]}, subset=True) is None
    assert "item" in diff({"l": [1]}, {"l": [1, 2]}, subset=True)


def test_diff_keeps_booleans_apart_from_numbers_but_not_ints_from_floats():
    assert diff(1, True) is not None
    assert diff(True, 1) is not None
    assert diff(0, False) is not None
    assert diff(2, 2.0) is None
    assert diff("2", 2) is not None
    assert diff(None, None) is None


def test_markers():
    assert diff({"$any": True}, "anything") is None
    assert diff({"$any": True}, MISSING) is not None
    assert diff({"$type": "integer"}, 3) is None
    assert diff({"$type": "integer"}, True) is not None
    assert diff({"$regex": r"\d+\.\d+"}, "0.0012") is None
    assert diff({"$regex": r"\d+"}, "12a") is not None
    assert diff({"$unordered": ["a", "b"]}, ["b", "a"]) is None
    assert diff({"$unordered": ["a", "b"]}, ["a", "a"]) is not None
    assert diff({"$range": [0, 1]}, 0.5) is None
    assert diff({"$range": [0, 1]}, 2) is not None
    assert diff({"k": {"$absent": True}}, {"other": 1}, subset=True) is None
    assert diff({"k": {"$absent": True}}, {"k": None}, subset=True) is not None


def test_a_ref_object_is_compared_as_data_not_as_a_marker():
    assert diff({"$ref": "#/x"}, {"$ref": "#/x"}) is None
    assert diff({"$ref": "#/x"}, {"$ref": "#/y"}) is not None


def test_navigate_follows_refs_and_selects_list_items():
    doc = {
        "paths": {
            "/a/{id}": {
                "get": {
                    "parameters": [{"name": "q", "in": "query"}, {"name": "id", "in": "path"}],
                    "body": {"$ref": "#/components/schemas/Item"},
                }
            }
        },
        "components": {"schemas": {"Item": {"title": "Item", "properties": {"tags": {"type": "array"}}}}},
    }
    value, _ = navigate(doc, ["paths", "/a/{id}", "get", "parameters", {"name": "id"}, "in"])
    assert value == "path"
    value, _ = navigate(doc, ["paths", "/a/{id}", "get", "body", "properties", "tags", "type"])
    assert value == "array"
    value, _ = navigate(doc, ["paths", "/a/{id}", "get", "body"])
    assert value["title"] == "Item"
    assert navigate(doc, ["paths", "/b"])[0] is MISSING
    assert navigate(doc, ["paths", "/a/{id}", "get", "parameters", 5])[0] is MISSING


def test_json_at_operations():
    doc = {"a": {"b": [1, 2, {"c": "xyz"}]}, "d": {"k1": 1, "k2": 2}}
    assert at_diff(doc, {"at": ["a", "b"], "len": 3}) is None
    assert at_diff(doc, {"at": ["a", "b"], "contains": {"c": "xyz"}}) is None
    assert at_diff(doc, {"at": ["a", "b", 2, "c"], "contains": "y"}) is None
    assert at_diff(doc, {"at": ["d"], "keys": ["k2", "k1"]}) is None
    assert at_diff(doc, {"at": ["d"], "keys": ["k1"]}) is not None
    assert at_diff(doc, {"at": ["e"], "exists": False}) is None
    assert at_diff(doc, {"at": ["d"], "exists": False}) is not None
    assert at_diff(doc, {"at": ["d"], "has": {"k1": 1}}) is None
    assert at_diff(doc, {"at": ["d"], "equals": {"k1": 1}}) is not None


# -- responses -----------------------------------------------------------------------------------


def test_parse_sse_follows_the_event_stream_format():
    text = ': ping\n\nevent: tick\ndata: {"n": 1}\nid: 1\nretry: 2000\n\ndata: a\ndata: b\n\r\nevent: end\ndata:done\n\n'
    assert parse_sse(text) == [
        {"event": "tick", "data": '{"n": 1}', "id": "1", "retry": 2000},
        {"data": "a\nb"},
        {"event": "end", "data": "done"},
    ]


def test_expectation_problems_name_every_failed_expectation():
    r = resp(404, {"detail": "Not Found"}, [("content-type", "application/json"), ("x-a", "1")])
    assert expectation_problems({"status": 404, "json": {"detail": "Not Found"}, "headers": {"x-a": "1"}}, r) == []
    problems = expectation_problems({"status": 200, "json": {"detail": "x"}, "headers_absent": ["x-a"]}, r)
    assert len(problems) == 3
    assert "status: expected 200, got 404" in problems[0]


def test_body_must_be_json_for_json_expectations_and_empty_for_empty():
    assert "not JSON" in expectation_problems({"json": {}}, resp(text="hello"))[0]
    assert expectation_problems({"empty": True}, resp(204, text="")) == []
    assert expectation_problems({"empty": True}, resp(204, text="null")) != []


def test_header_contains_needs_every_part_in_one_value():
    r = resp(headers=[("set-cookie", "a=1; HttpOnly"), ("set-cookie", "b=2")])
    assert expectation_problems({"header_contains": {"set-cookie": ["a=1", "HttpOnly"]}}, r) == []
    assert expectation_problems({"header_contains": {"set-cookie": ["b=2", "HttpOnly"]}}, r) != []


def test_sse_expectation_compares_parsed_events():
    r = resp(text='event: tick\ndata: {"n": 1}\nid: 1\n\nevent: end\ndata: done\n\n')
    good = [{"event": "tick", "data_json": {"n": 1}, "id": "1"}, {"event": "end", "data": "done"}]
    assert expectation_problems({"sse": good}, r) == []
    assert expectation_problems({"sse": good[:1]}, r) != []
    assert expectation_problems({"sse": [{"data_json": {"n": 2}}, good[1]]}, r) != []


def test_a_check_passes_only_when_every_step_holds():
    check = normalize_check(
        {
            "name": "c",
            "steps": [
                {"path": "/a", "expect": {"status": 201}},
                {"path": "/b", "expect": {"status": 200, "json": {"ok": True}}},
            ],
        },
        "t",
    )
    assert evaluate_check(check, [resp(201, {}), resp(200, {"ok": True})])["passed"]
    failed = evaluate_check(check, [resp(201, {}), resp(200, {"ok": False})])
    assert not failed["passed"] and "step 2 (GET /b)" in failed["detail"]
    missing = evaluate_check(check, [resp(201, {})], "the app's lifespan failed: RuntimeError: boom")
    assert not missing["passed"] and "boom" in missing["detail"]
    error = evaluate_check(check, [{"error": "Traceback...\nValueError: bad"}])
    assert not error["passed"] and "ValueError: bad" in error["detail"]


# -- task sources --------------------------------------------------------------------------------


def test_requests_normalise_repeats_cookies_and_null():
    req = normalize_request(
        {"method": "post", "path": "/x", "query": {"t": ["a", "b"], "on": True}, "cookies": {"s": "1"}, "json": {"v": "$null"}},
        "t",
    )
    assert req["method"] == "POST"
    assert req["query"] == [["t", "a"], ["t", "b"], ["on", "true"]]
    assert req["headers"] == [["cookie", "s=1"]]
    assert req["json"] == {"v": None}


@pytest.mark.parametrize(
    "raw",
    [
        {"name": "n", "path": "x", "expect": {"status": 200}},
        {"name": "n", "path": "/x", "expect": {}},
        {"name": "n", "path": "/x", "expect": {"stauts": 200}},
        {"name": "n", "path": "/x", "bogus": 1, "expect": {"status": 200}},
        {"name": "n", "path": "/x", "json": {}, "content": "x", "expect": {"status": 200}},
        {"name": "n", "path": "/x", "expect": {"json_at": [{"at": ["a"], "equals": 1, "has": {}}]}},
    ],
)
def test_malformed_checks_are_rejected(raw):
    with pytest.raises(CheckError):
        normalize_check(raw, "t")


def test_a_check_that_a_catch_all_app_would_pass_is_flagged():
    assert passes_for_catch_all(normalize_check({"name": "n", "path": "/x", "expect": {"status": 200}}, "t"))
    assert passes_for_catch_all(normalize_check({"name": "n", "path": "/x", "expect": {"json": {}}}, "t"))
    assert not passes_for_catch_all(normalize_check({"name": "n", "path": "/x", "expect": {"status": 201}}, "t"))


def test_compile_refuses_a_task_whose_check_a_catch_all_passes(tmp_path):
    folder = tmp_path / "fastapi_weak"
    folder.mkdir()
    (folder / "reference.py").write_text("app = None\n")
    (folder / "task.toml").write_text(
        'id = "fastapi_weak"\ndifficulty = "easy"\ncategory = "x"\nspec = "s"\n'
        '[[checks]]\nname = "a"\npath = "/a"\nexpect = { status = 200 }\n'
        '[[checks]]\nname = "b"\npath = "/b"\nexpect = { status = 404 }\n'
    )
    with pytest.raises(CheckError, match="would pass"):
        FAMILY.compile_task(folder)


def test_every_task_compiles_within_the_family_minimums():
    rows = [FAMILY.compile_task(p) for p in sorted(TASKS.iterdir()) if (p / "task.toml").is_file()]
    assert len(rows) >= 34
    assert sum(len(r.grading["checks"]) for r in rows) >= 113
    for tier, minimum in TIER_MINIMUMS.items():
        assert sum(r.difficulty == tier for r in rows) >= minimum, tier
    openapi_checks = sum(
        any(s["request"]["path"] == "/openapi.json" for s in c["steps"]) for r in rows for c in r.grading["checks"]
    )
    assert openapi_checks >= 25
    for row in rows:
        tier = row.measures.get("tier", "single")
        assert 2 <= len(row.grading["checks"]) <= CHECK_CAPS[tier], row.task_id
        assert "/workspace/app.py" in row.prompt and "`app`" in row.prompt


def test_reference_calls_write_the_reference_with_one_quoted_heredoc():
    calls = VERIFIER.reference_calls(TASKS / "fastapi_path_order")
    assert len(calls) == 1 and calls[0]["tool"] == "bash"
    command = calls[0]["args"]["command"]
    assert "cat > '/workspace/app.py' <<'WEBSANDBOX_EOF'\n" in command
    assert (TASKS / "fastapi_path_order" / "reference.py").read_text().strip() in command
    assert command.rstrip().endswith("python -c 'import app'")


# -- canaries --------------------------------------------------------------------------------------


def test_canaries_are_random_and_laid_among_the_steps_in_order():
    rng = random.Random(7)
    canaries = make_canaries(rng)
    assert [c["kind"] for c in canaries] == ["unknown_path", "unknown_path", "openapi"]
    assert make_canaries(random.Random(8))[0]["request"]["path"] != canaries[0]["request"]["path"]
    checks = [{"steps": [{}, {}, {}]}, {"steps": [{}]}, {"steps": [{}, {}]}]
    layout = lay_out(checks, len(canaries), rng)
    tags = [t for session in layout for t in session]
    assert sorted(t[1] for t in tags if t[0] == "canary") == [0, 1, 2]
    for session in layout:
        steps = [t for t in session if t[0] == "step"]
        assert steps == sorted(steps) and len({t[1] for t in steps}) == 1
    assert make_canaries(rng, catch_all=True)[0]["kind"] == "openapi"


def _doc(*paths):
    return resp(200, {"openapi": "3.1.0", "paths": {p: {} for p in paths}})


def _judge(responses, check_openapi=()):
    canaries = make_canaries(random.Random(1))
    return judge_canaries(canaries, responses, "/openapi.json", list(check_openapi))


def test_honest_answers_pass_the_canaries():
    assert _judge([resp(404, {"detail": "Not Found"}), resp(404, {"detail": "Not Found"}), _doc("/items/")]) == []
    # custom 404 bodies, disabled or broken schemas, and failed sessions are honest too
    assert _judge([resp(404, {"error": "nope"}), resp(401, {}), resp(404, {"detail": "Not Found"})]) == []
    assert _judge([resp(404, {}), None, resp(500, text="Internal Server Error")]) == []


def test_a_faked_200_everywhere_trips_the_canaries():
    problems = _judge([fake(), fake(), fake()])
    assert len(problems) == 3


def test_a_catch_all_route_in_the_schema_explains_a_200():
    assert _judge([fake(), fake(), _doc("/{path}")]) == []
    assert len(_judge([fake(), fake(), _doc("/items/{id}")])) == 2


def test_a_200_for_an_unknown_path_that_the_app_itself_sent_is_not_tampering():
    assert _judge([resp(200, {"error": "Not Found"}), resp(200, {}), _doc("/items/{id}")]) == []


def test_the_witness_tells_answers_the_app_sent_from_made_up_ones():
    assert witness_problems([("GET /a", resp(404, {})), ("GET /b", None), ("GET /c", {"error": "x"})]) == []
    crashed = {"status": 500, "headers": [], "text": "Internal Server Error", "app_calls": 1, "app_status": None}
    assert witness_problems([("GET /a", crashed)]) == []
    assert "after 0 calls into the app" in witness_problems([("GET /a", fake())])[0]
    altered = dict(resp(404, {}), status=200)
    assert "but the app sent 404" in witness_problems([("GET /a", altered)])[0]
    unrecorded = {"status": 200, "headers": [], "text": "{}"}
    assert "no record" in witness_problems([("GET /a", unrecorded)])[0]


def test_schema_answers_that_disagree_within_a_run_trip_the_canaries():
    assert _judge([resp(404), resp(404), _doc("/a")], [_doc("/a")]) == []
    assert _judge([resp(404), resp(404), _doc("/a")], [_doc("/a", "/b")]) != []


# -- fault attribution (grade with a fake grader) ---------------------------------------------------


class FakeGrader:
    timeout = 90

    def __init__(self, report=None, result=None, error=None):
        self.report, self.result, self.error = report, result or ExecResult("", "", 0), error
        self.request = None

    async def run_program(self, program, request, files, timeout=None):
        self.request = request
        if self.error:
            raise self.error
        report = self.report(request) if callable(self.report) else self.report
        return self.result, report


def _task():
    return FAMILY.compile_task(TASKS / "fastapi_status_204")


async def test_no_report_at_all_is_a_scoring_error():
    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), FakeGrader(error=ReportError("no report")))
    assert grade.score == 0.0 and grade.scoring_error


async def test_dying_while_importing_or_serving_is_the_submissions_failure():
    for stage, imported in (("importing", 0.0), ("serving", 1.0)):
        grader = FakeGrader({"stage": stage}, ExecResult("", "", 3))
        grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), grader)
        assert grade.score == 0.0 and grade.scoring_error is None and not grade.tampered
        assert grade.metrics["module_imported"] == imported and "exit code 3" in grade.reason
    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), FakeGrader({"stage": "started"}))
    assert grade.scoring_error


async def test_import_errors_and_stalls_are_reported_with_their_reason():
    report = {"stage": "done", "imported": False, "import_error": "Traceback\nSyntaxError: invalid syntax"}
    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), FakeGrader(report))
    assert grade.score == 0.0 and "SyntaxError" in grade.reason and grade.metrics["module_imported"] == 0.0
    assert all("SyntaxError" in c["detail"] for c in grade.checks)
    report = {"stage": "done", "imported": True, "has_app": True, "stalled": {"what": "GET /x", "limit": 10}}
    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), FakeGrader(report))
    assert grade.score == 0.0 and "GET /x did not finish within 10 s" in grade.reason
    grade = await FAMILY.grade({"files": {}}, _task(), FakeGrader(error=AssertionError("not called")))
    assert grade.score == 0.0 and "does not exist" in grade.reason


def _answer_all(answer):
    def report(request):
        sessions = [{"error": None, "responses": [answer(r) for r in session]} for session in request["sessions"]]
        return {"stage": "done", "imported": True, "has_app": True, "sessions": sessions, "integrity": []}

    return report


async def test_a_faked_client_scores_zero_as_tampered():
    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), FakeGrader(_answer_all(lambda r: fake())))
    assert grade.score == 0.0 and grade.tampered and grade.metrics["tampered"] == 1.0
    assert "came back after 0 calls into the app" in grade.reason


async def test_integrity_problems_from_the_driver_are_tampering():
    def report(request):
        rep = _answer_all(lambda r: resp(404, {"detail": "Not Found"}))(request)
        rep["integrity"] = ["httpx.Client.send"]
        return rep

    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), FakeGrader(report))
    assert grade.tampered and "httpx.Client.send" in grade.reason


async def test_requests_sent_carry_no_expectation():
    grader = FakeGrader(_answer_all(lambda r: resp(404, {"detail": "Note not found"})))
    grade = await FAMILY.grade({"files": {"app.py": "x"}}, _task(), grader)
    sent = json.dumps(grader.request)
    assert "expect" not in sent and "Note not found" not in sent
    assert grade.score == 0.25 and not grade.tampered  # only "deleting a missing note is a 404" holds


def test_the_documents_canary_is_the_same_request_as_a_checks_read_of_the_document():
    check = normalize_check({"name": "doc", "steps": [{"path": "/openapi.json", "expect": {"status": 200}}]}, "t")
    for seed in range(20):
        (canary,) = [c for c in make_canaries(random.Random(seed)) if c["kind"] == "openapi"]
        assert canary["request"] == check["steps"][0]["request"]
    custom = [c for c in make_canaries(random.Random(0), "/api/schema") if c["kind"] == "openapi"]
    assert custom[0]["request"] == {"method": "GET", "path": "/api/schema"}
