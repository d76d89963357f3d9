"""The orm comparator and grade(), on the host: no Docker."""

from __future__ import annotations

import asyncio
import functools
import time

import pytest

from sandbox_env.families.base import TaskRow
from sandbox_env.families.orm import FAMILY
from sandbox_env.families.orm_compare import EVIDENCE_ROWS, compare, decode_result, row_evidence, values_match

EXPECTED = [["Glass Orchard", 3, "27.00", 4.25, True, None], ["Iron Sky Protocol", 2, "29.99", 3.5, False, "x"]]


def tag(rows, outer="list", inner="tuple"):
    """The probe's tagged encoding of rows of plain values."""
    return {outer: [{inner: list(r)} for r in rows]}


def test_the_expected_rows_as_tuples_pass():
    out = compare(tag(EXPECTED), EXPECTED)
    assert out.passed, out.reason
    assert [c["passed"] for c in out.checks] == [True, True, True]


def test_the_right_rows_in_the_wrong_order_fail_and_say_so():
    out = compare(tag(list(reversed(EXPECTED))), EXPECTED)
    assert not out.passed
    assert "wrong order" in out.reason


def test_one_extra_row_fails():
    out = compare(tag([*EXPECTED, EXPECTED[0]]), EXPECTED)
    assert not out.passed
    assert "expected 2 rows, got 3" in out.reason and "extra" in out.reason


def test_one_missing_row_fails():
    out = compare(tag(EXPECTED[:1]), EXPECTED)
    assert not out.passed
    assert "missing" in out.reason


def test_float_noise_of_1e_9_passes():
    noisy = [list(r) for r in EXPECTED]
    noisy[0][3] += 1e-9
    noisy[1][3] -= 1e-9
    assert compare(tag(noisy), EXPECTED).passed


def test_a_float_off_beyond_the_tolerance_fails():
    off = [list(r) for r in EXPECTED]
    off[0][3] = 4.2501
    out = compare(tag(off), EXPECTED)
    assert not out.passed and "column 3" in out.reason


def test_a_string_differing_only_in_case_fails():
    off = [list(r) for r in EXPECTED]
    off[1][0] = "Iron sky protocol"
    out = compare(tag(off), EXPECTED)
    assert not out.passed and "column 0" in out.reason


def test_a_money_string_without_two_decimals_fails():
    off = [list(r) for r in EXPECTED]
    off[0][2] = "27"
    assert not compare(tag(off), EXPECTED).passed


def test_a_list_of_lists_fails_because_the_contract_is_tuples():
    out = compare(tag(EXPECTED, inner="list"), EXPECTED)
    assert not out.passed
    assert "row 0 is a list, not a tuple" in out.reason
    assert out.checks[0] == {"name": "result_shape", "passed": False, "detail": out.reason}


def test_a_tuple_of_tuples_fails():
    out = compare(tag(EXPECTED, outer="tuple"), EXPECTED)
    assert not out.passed and "is a tuple, not a list" in out.reason


def test_a_queryset_fails_with_a_hint():
    tagged = {"other": "django.db.models.query.QuerySet", "repr": "<QuerySet [('Glass Orchard', 3)]>"}
    out = compare(tagged, EXPECTED)
    assert not out.passed
    assert "QuerySet" in out.reason and "not a list of tuples" in out.reason


def test_a_dict_fails():
    out = compare({"other": "builtins.dict", "repr": "{'a': 1}"}, EXPECTED)
    assert not out.passed and "dict" in out.reason


def test_a_missing_result_fails():
    out = compare({"missing": True}, EXPECTED)
    assert not out.passed and "not defined" in out.reason


def test_an_unreadable_result_fails():
    assert not compare({"unreadable": "value too large to probe"}, EXPECTED).passed


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ({"other": "decimal.Decimal", "repr": "Decimal('27.00')"}, "Decimal"),
        ({"other": "datetime.date", "repr": "datetime.date(2021, 2, 16)"}, "date"),
        ({"other": "float", "repr": "nan"}, "float"),
        ({"tuple": [1]}, "tuple"),
    ],
)
def test_a_value_that_is_not_plain_fails_naming_its_type(value, kind):
    rows = tag(EXPECTED)
    rows["list"][0]["tuple"][2] = value
    out = compare(rows, EXPECTED)
    assert not out.passed
    assert "row 0 column 2" in out.reason and kind in out.reason


def test_a_named_tuple_row_is_not_a_tuple():
    rows = {"list": [{"other": "django.db.models.query.Row", "repr": "Row(title='Glass Orchard')"}]}
    rows_decoded, why = decode_result(rows)
    assert rows_decoded is None and "Row" in why


def test_an_empty_list_against_expected_rows_fails():
    out = compare({"list": []}, EXPECTED)
    assert not out.passed and "got 0" in out.reason


def test_a_row_of_the_wrong_width_fails():
    out = compare(tag([r[:-1] for r in EXPECTED]), EXPECTED)
    assert not out.passed and "has 5 values, expected 6" in out.reason


def test_int_and_float_of_the_same_value_match_but_ints_compare_exactly():
    assert values_match(3, 3.0) and values_match(3.0, 3)
    assert not values_match(1_000_000, 1_000_001)
    assert values_match(0.1 + 0.2, 0.3)


def test_bool_is_not_int():
    assert not values_match(True, 1)
    assert not values_match(1, True)
    assert not values_match(0, False)
    assert values_match(False, False)


def test_none_matches_only_none():
    assert values_match(None, None)
    assert not values_match(None, 0)
    assert not values_match("", None)


def test_a_number_and_its_string_do_not_match():
    assert not values_match(3, "3")
    assert not values_match("27.00", 27.0)


def _task(expected):
    return TaskRow("orm_test", "orm", "easy", "filtering", "prompt", grading={"expected": expected})


def test_grade_scores_one_only_for_the_exact_rows_and_reports_checks():
    good = asyncio.run(FAMILY.grade({"result": tag(EXPECTED)}, _task(EXPECTED), None))
    bad = asyncio.run(FAMILY.grade({"result": tag(EXPECTED, inner="list")}, _task(EXPECTED), None))
    assert (good.score, good.metrics["checks_passed"]) == (1.0, 1.0)
    assert bad.score == 0.0 and bad.scoring_error is None
    assert "tuple" in bad.reason and bad.metrics["checks_passed"] == 0.0
    assert {c["name"] for c in bad.checks} == {"result_shape", "row_count", "rows_in_order"}


def test_grade_without_a_probe_is_a_harness_fault():
    grade = asyncio.run(FAMILY.grade({}, _task(EXPECTED), None))
    assert grade.score == 0.0 and grade.scoring_error


def test_grading_a_large_answer_takes_well_under_a_third_of_a_cpu_second():
    expected = [[f"title {i}", i, f"{i}.50", i / 7, i % 2 == 0, None] for i in range(2000)]
    shuffled = tag(expected[::-1])
    asyncio.run(FAMILY.grade({"result": tag(expected[:2])}, _task(expected[:2]), None))  # lazy imports paid first
    # this thread's CPU time: a busy machine does not change it, and threads other tests left in
    # the process (an engine's event stream, a reaper) do not count toward it
    t0 = time.thread_time()
    for tagged in (tag(expected), shuffled):
        asyncio.run(FAMILY.grade({"result": tagged}, _task(expected), None))
    assert time.thread_time() - t0 < 0.3


MALFORMED_PROBES = {
    "a list tag holding a number": {"list": 5},
    "a tuple tag holding an object": {"list": [{"tuple": {"a": 1}}]},
    "a bare JSON array as a row": {"list": [[1, 2]]},
    "a bare JSON array as a value": {"list": [{"tuple": [1, [2]]}]},
    "a tag with an extra key": {"list": [], "tuple": []},
    "an unknown tag": {"set": [1, 2]},
    "an other tag without text": {"other": 5, "repr": None},
    "a missing tag that is not true": {"missing": "yes"},
    "an unreadable tag without text": {"unreadable": 7},
    "infinity": {"list": [{"tuple": [float("inf")]}]},
    "not a number": {"list": [{"tuple": [float("nan")]}]},
    "a python tuple": {"list": [{"tuple": (1, 2)}]},
    "nesting far too deep": {"list": [functools.reduce(lambda inner, _: {"list": [inner]}, range(200), 1)]},
    "too many values": {"list": [{"tuple": [1] * 10}] * 20_000},
    "a top-level number": 5,
    "a top-level string": "rows",
    "a top-level None": None,
}


@pytest.mark.parametrize("name", sorted(MALFORMED_PROBES))
def test_a_malformed_probe_is_the_submissions_zero_as_tampering_never_a_harness_fault(name):
    tagged = MALFORMED_PROBES[name]
    grade = asyncio.run(FAMILY.grade({"result": tagged}, _task(EXPECTED), None))
    assert grade.score == 0.0 and grade.scoring_error is None
    if isinstance(tagged, dict):  # a bare scalar is valid grammar: simply not a list of tuples
        assert grade.tampered and grade.metrics["tampered"] == 1.0, grade.reason
        assert "malformed" in grade.reason
    else:
        assert not grade.tampered and "not a list of tuples" in grade.reason


def test_an_honest_probe_of_a_non_plain_value_is_wrong_but_not_tampering():
    tagged = {"list": [{"tuple": [{"other": "decimal.Decimal", "repr": "Decimal('27.00')"}]}]}
    grade = asyncio.run(FAMILY.grade({"result": tagged}, _task(EXPECTED), None))
    assert grade.score == 0.0 and not grade.tampered and grade.scoring_error is None
    assert "Decimal" in grade.reason


def test_the_grade_keeps_expected_and_received_rows_with_the_first_differing_cell():
    got = [EXPECTED[0], ["Iron Sky Protocol", 2, "29.99", 3.75, False, "x"]]
    grade = asyncio.run(FAMILY.grade({"result": tag(got)}, _task(EXPECTED), None))
    rows = next(c for c in grade.checks if c["name"] == "rows_in_order")["rows"]
    assert rows["first"] == {"row": 1, "col": 3}
    assert rows["expected"] == EXPECTED and rows["received"] == got
    assert (rows["offset"], rows["expected_count"], rows["received_count"]) == (0, 2, 2)


def test_row_evidence_marks_a_whole_row_when_widths_or_counts_differ():
    assert row_evidence(tag([EXPECTED[0], EXPECTED[1][:5]]), EXPECTED)["first"] == {"row": 1, "col": None}
    assert row_evidence(tag(EXPECTED[:1]), EXPECTED)["first"] == {"row": 1, "col": None}
    assert row_evidence(tag(EXPECTED), EXPECTED)["first"] is None


def test_row_evidence_uses_the_comparison_tolerance():
    noisy = [[*EXPECTED[0][:3], EXPECTED[0][3] + 1e-12, *EXPECTED[0][4:]], EXPECTED[1]]
    assert row_evidence(tag(noisy), EXPECTED)["first"] is None


def test_row_evidence_of_a_long_answer_is_a_window_around_the_first_difference():
    expected = [[i, f"row {i}"] for i in range(500)]
    got = [list(r) for r in expected]
    got[300][1] = "changed"
    ev = row_evidence(tag(got), expected)
    assert ev["first"] == {"row": 300, "col": 1}
    assert len(ev["expected"]) == len(ev["received"]) == EVIDENCE_ROWS
    assert ev["offset"] <= 300 < ev["offset"] + EVIDENCE_ROWS
    assert ev["received"][300 - ev["offset"]] == [300, "changed"]


def test_row_evidence_is_none_when_the_result_is_not_rows():
    assert row_evidence({"missing": True}, EXPECTED) is None
    assert row_evidence(tag(EXPECTED, inner="list"), EXPECTED) is None
