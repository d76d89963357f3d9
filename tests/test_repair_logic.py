"""Repair tasks, pure logic: the report, normalisation, the combination rule, split, cap, ids (no container)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from sandbox_env.families.base import TaskRow
from sandbox_env.families.fastapi_checks import evaluate_check, normalize_check
from sandbox_env.generate import repair_logic as logic
from sandbox_env.generate import repair_store
from sandbox_env.stages.compile import compile_all
from sandbox_env.verify.base import task_folder
from sandbox_env.verify.mutants import FASTAPI_OPERATORS, generate

SECRET = "Quixotic-Value-93"


def _check(expect: dict, request: dict | None = None) -> dict:
    return normalize_check({"name": f"answers {SECRET}", **(request or {"path": "/things/7"}), "expect": expect}, "t")


def _resp(status: int, body: object, headers: list | None = None) -> dict:
    text = json.dumps(body)
    return {"status": status, "headers": headers or [["content-type", "application/json"]], "text": text}


@pytest.mark.parametrize(
    "expect, got",
    [
        ({"status": 200, "json": {"name": SECRET}}, _resp(200, {"name": "other"})),
        ({"status": 201}, _resp(200, {})),
        ({"status": 200, "json": {"items": [SECRET, "b"]}}, _resp(200, {"items": ["a"]})),
        ({"status": 200, "json": {"name": SECRET, "n": 1}}, _resp(200, {"n": 1})),
        ({"status": 200, "headers": {"x-tag": SECRET}}, _resp(200, {}, [["x-tag", "no"]])),
        ({"status": 200, "text": SECRET}, {"status": 200, "headers": [], "text": "plain"}),
        ({"status": 200, "text_contains": SECRET}, {"status": 200, "headers": [], "text": "plain"}),
    ],
)
def test_the_fastapi_report_never_holds_a_hidden_checks_expected_value(expect, got):
    check = _check(expect)
    row = evaluate_check(check, [got])
    assert not row["passed"] and SECRET in row["detail"] + row["name"] + json.dumps(expect)
    report = logic.fastapi_report([check], [row], [])
    assert SECRET not in report
    assert "GET /things/7" in report
    assert "expected" not in report.lower()


def test_the_fastapi_report_shows_what_the_app_answered_at_the_first_differing_step():
    steps = [
        {"method": "POST", "path": "/things", "json": {"a": 1}, "expect": {"status": 201}},
        {"path": "/things/1", "expect": {"status": 200, "json": {"a": SECRET}}},
    ]
    check = normalize_check({"name": "create then read", "steps": steps}, "t")
    row = evaluate_check(check, [_resp(201, {}), _resp(200, {"a": "wrong"})])
    report = logic.fastapi_report([check], [row], [])
    assert 'POST /things with json body {"a": 1} ; then GET /things/1' in report
    assert '"wrong"' in report and SECRET not in report


def test_drawn_values_show_as_placeholders_in_the_fastapi_report():
    check = _check({"status": 200, "json": {"q": "Barz"}}, {"path": "/echo", "query": {"q": "Barz"}})
    row = evaluate_check(check, [_resp(200, {"q": "nope"})])
    report = logic.fastapi_report([check], [row], ["Barz"])
    assert "Barz" not in report and "<value 1>" in report and "drawn afresh" in report


def test_the_django_report_names_visible_tests_and_only_counts_hidden_ones():
    rows = [
        {"name": "tests/test_a.py::test_ok", "passed": True, "detail": ""},
        {
            "name": "tests/test_a.py::test_rejects_short",
            "passed": False,
            "detail": 'failed: E   AssertionError: form valid  (File "accounts/forms.py", line 31)',
        },
        {"name": "hidden/test_h.py::test_secret_rule", "passed": False, "detail": f"failed: E assert {SECRET!r}"},
    ]
    report = logic.django_report(rows)
    assert "tests/test_a.py::test_rejects_short" in report and "AssertionError: form valid" in report
    assert "test_secret_rule" not in report and SECRET not in report and "1 hidden test(s)" in report
    assert not re.search(r"line \d+|\.py:\d+", report)


def test_line_numbers_are_scrubbed_from_any_report_text():
    assert logic.scrub("app.py:42: in read_item") == "app.py: in read_item"
    assert logic.scrub("E   observed on the host: line 9: assert 3 <= 2") == "E   observed on the host: assert 3 <= 2"
    assert "42" not in logic.scrub('File "views.py", line 42, in index')


def test_the_orm_report_never_shows_the_whole_expected_answer():
    one = logic.orm_report([["only row", 1]], [["other", 2]])
    assert "only row" not in one and "'other'" in one
    expected = [["a", 1], ["b", 2], ["c", 3]]
    report = logic.orm_report(expected, [["x", 1], ["y", 2], ["z", 3]])
    assert sum(f"{e[0]!r}" in report for e in expected) == 1  # at most half the rows, at most two
    big = [[f"r{i}", i] for i in range(20)]
    report = logic.orm_report(big, [[f"s{i}", i] for i in range(20)])
    assert sum(f"'r{i}'" in report for i in range(20)) <= logic.ORM_EXPECTED_SAMPLE
    assert "20 row positions differ" in report
    assert "Running the cell fails" in logic.orm_report(big, {"error": "FieldError: no such field, line 3"})


def test_broken_and_reference_are_rendered_alike():
    reference = (task_folder("fastapi", "fastapi_bigger_app") / "reference.py").read_text()
    mutant = generate(reference, FASTAPI_OPERATORS)[0]
    ref, broken = logic.normalise(reference), logic.normalise(mutant.source)
    assert ref != reference  # the reference's own formatting (blank lines, quotes) is not what the model sees
    ref_lines, broken_lines = ref.splitlines(), broken.splitlines()
    assert len(ref_lines) == len(broken_lines)
    assert sum(a != b for a, b in zip(ref_lines, broken_lines, strict=True)) == 1  # only the edited line differs
    assert logic.sites(reference, mutant.source) == 1


def test_two_edits_on_one_line_merge_and_overlapping_ones_do_not():
    ref = "result = list(Book.objects.filter(price__gt=5).order_by('title')[:3])"
    a = ref.replace("price__gt=5", "price__gte=5")
    b = ref.replace("'title'", "'-title'")
    merged = logic.merge(ref, a, b)
    assert merged is not None and "price__gte=5" in merged and "'-title'" in merged and logic.sites(ref, merged) == 2
    c = ref.replace("price__gt=5", "price__lt=5")
    assert logic.merge(ref, a, c) is None


def test_a_combination_whose_bugs_mask_or_cancel_is_rejected():
    assert logic.combination_visible([{"c1"}, {"c2"}], {"c1", "c2"})
    assert not logic.combination_visible([{"c1"}, {"c2"}], {"c1"})  # the second bug is masked
    assert not logic.combination_visible([{"c1"}, {"c2"}], set())  # the bugs cancel: the pair passes
    expected = {0: [["a"], ["b"]], 1: [["c"]]}
    single_a = {0: [["a"]], 1: [["d"]]}
    single_b = {0: [["b"], ["a"]], 1: [["e"]]}
    assert logic.orm_combination_visible([single_a, single_b], {0: [["b"]], 1: [["f"]]}, expected)
    assert not logic.orm_combination_visible([single_a, single_b], {0: [["b"]], 1: [["c"]]}, expected)  # right on one
    assert not logic.orm_combination_visible([single_a, single_b], dict(single_a), expected)  # b masked
    assert not logic.orm_combination_visible([single_a, single_b], dict(expected), expected)  # cancelled


def test_selection_dedups_and_caps_per_reference():
    def cand(name: str, src: str, pair: bool = False) -> dict:
        return {"parts": [name, "x"] if pair else [name], "files": {"app.py": src}}

    cands = [cand(f"s{i}", f"x = {i}") for i in range(6)] + [cand("dup", "x = 0"), cand("p", "x = 9", pair=True)]
    chosen = logic.select(cands)
    assert len(chosen) == logic.CAP_PER_REFERENCE
    assert len({json.dumps(c["files"]) for c in chosen}) == len(chosen)
    assert any(len(c["parts"]) == 2 for c in chosen)  # singles and pairs alternate
    taken = {json.dumps({"app.py": "x = 0"}, sort_keys=True)}
    assert all(c["files"]["app.py"] != "x = 0" for c in logic.select(cands, taken=taken))


def test_ids_are_stable_and_follow_the_broken_source():
    a = logic.repair_id("orm_x", {"query.py": "result = [ ]"})
    assert a == logic.repair_id("orm_x", {"query.py": "result = []"})  # formatting does not change it
    assert a != logic.repair_id("orm_x", {"query.py": "result = [1]"})
    assert a != logic.repair_id("orm_y", {"query.py": "result = []"})


def test_a_repair_inherits_its_base_tasks_split():
    base = TaskRow(
        "orm_gen_abc",
        "orm",
        "easy",
        "filtering",
        "prompt",
        grading={"fixture_variants": {"6": []}},
        source="generated",
        split="eval",
        signature="sig",
    )
    rec = {
        "task_id": "orm_gen_abc_fix_1",
        "base_task": "orm_gen_abc",
        "family": "orm",
        "kind": "mutant",
        "files": {"query.py": "result = []"},
        "report": "r",
        "split": "train",
        "difficulty": "easy",
        "measures": {"score": 1},
    }
    row = repair_store.compile_repair(rec, base)
    assert row.split == "eval" and row.source == "repair" and row.base_task == "orm_gen_abc"
    assert row.grading["setup_cell"] == "query.py" and row.files == {"query.py": "result = []"}


def test_the_stored_repairs_keep_every_rule():
    rows = compile_all()
    repairs = [r for r in rows if r.source == "repair"]
    if not repairs:
        pytest.skip("no repair tasks stored")
    by_id = {r.task_id: r for r in rows}
    stored = {r["task_id"]: r for r in repair_store.read()}
    assert Counter(r.base_task for r in repairs).most_common(1)[0][1] <= logic.CAP_PER_REFERENCE
    keys = [json.dumps(r.files, sort_keys=True) for r in repairs]
    assert len(set(keys)) == len(keys)
    for r in repairs:
        rec = stored[r.task_id]
        base = by_id[r.base_task]
        assert r.split == base.split and r.family == base.family
        assert r.grading.get("checks", r.grading.get("test_ids")) == base.grading.get("checks", base.grading.get("test_ids"))
        assert r.task_id == logic.repair_id(r.base_task, rec["files"])
        for src in rec["files"].values():
            assert logic.normalise(src) == src
        for name in rec["parts"]:
            assert name not in rec["report"]
        assert not re.search(r"\w@\d+:\d+|\bline \d+|\.py:\d+", rec["report"])
        assert r.difficulty == logic.difficulty(rec["measures"])
