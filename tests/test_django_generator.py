"""The django task generator: determinism, the host screen, the oracles, the store; one sample per kind in the image.

Everything but the last test runs without Docker. The last one (`docker`) verifies one
candidate of every feature kind through the real grader, as `websandbox tasks generate_django`
does: reference on several draws, empty, syntax error and junk controls, every mutant killed.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random

import pytest

from sandbox_env.families import django_vary
from sandbox_env.families.django_words import API_WORDS
from sandbox_env.generate import dj_store
from sandbox_env.generate.dj_command import ARGUMENT, Call, command_oracle
from sandbox_env.generate.dj_domain import TEMPLATES, draw_domain
from sandbox_env.generate.dj_features import KINDS, NON_FIELD, budget_oracle, cs_oracle, qs_oracle, view_oracle
from sandbox_env.generate.dj_form import form_oracle
from sandbox_env.generate.dj_task import GRAMMAR, KIND_ORDER, KIND_ORDERS, ScreenError, candidate, screen, signature_of
from sandbox_env.generate.store import split_of
from sandbox_env.verify.dj_mutants import mutants_of


def test_the_same_seed_draws_the_same_candidates_and_another_seed_others():
    first = [candidate(7, i) for i in range(6)]
    assert first == [candidate(7, i) for i in range(6)]
    other = [candidate(8, i) for i in range(6)]
    assert [r["tests"] for r in first] != [r["tests"] for r in other]


def test_a_bad_seed_is_refused_with_a_clear_error():
    with pytest.raises(ValueError, match="seed"):
        candidate(-1, 0)


def test_every_kind_is_drawn_in_turn_and_passes_the_host_screen():
    records = [candidate(3, i, grammar=1) for i in range(36)]  # grammar 2's turn: the grammar test below
    assert [r["node"]["kind"] for r in records[:3]] == list(KIND_ORDERS[1])
    assert {r["template"] for r in records} == {t.key for t in TEMPLATES}
    for r in records:
        screen(r)
        assert not API_WORDS.findall(r["spec"] + r["title"]), r["task_id"]


def test_a_budget_task_is_drawn_only_when_asked_for_and_carries_its_naive_control():
    assert all(candidate(2, i)["node"]["kind"] != "budget" for i in range(12))
    for i in range(6):
        r = candidate(2, i, "budget")
        screen(r)
        assert r["only"] == "budget" and r["naive"] and r["budget_tests"] == r["hidden_budget_tests"]
        row = dj_store.compile_generated_django(r)
        assert row.grading["budget_tests"] == [f"tests/{r['budget_tests'][0]}", f"hidden/{r['budget_tests'][0]}"]
    assert candidate(2, 0, "budget") == candidate(2, 0, "budget") != candidate(2, 1, "budget")


def test_the_budget_oracle_keeps_empty_rows_and_counts_one_status():
    node = {"kind": "budget", "options": {"total": True, "only_flagged": True}, "constants": {"counted": "done"}}
    parents = [{"name": "b", "flag": True}, {"name": "a", "flag": True}, {"name": "c", "flag": False}]
    kids = [
        {"parent": "a", "code": "y", "qty": 4, "status": "done"},
        {"parent": "a", "code": "x", "qty": 6, "status": "DONE"},
        {"parent": "c", "code": "z", "qty": 1, "status": "done"},
    ]
    assert budget_oracle(node, parents, kids) == [
        {"name": "a", "codes": ["x", "y"], "total": [4]},
        {"name": "b", "codes": [], "total": []},
    ]


def test_a_spec_that_names_the_technique_is_screened_out():
    record = candidate(3, 0)
    record["spec"] += "\nUse select_related to keep it to one query.\n"
    with pytest.raises(ScreenError, match="technique"):
        screen(record)


def test_a_reference_equal_to_its_stub_is_screened_out():
    record = candidate(3, 1)
    record["reference"] = {p: record["tree"][p] for p in record["deliverables"]}
    with pytest.raises(ScreenError, match="stub"):
        screen(record)


def test_eval_holds_out_whole_signatures_and_domain_seeds():
    records = [candidate(11, i) for i in range(90)]
    for r in records:
        assert r["signature"] == signature_of(r["node"]) and r["split"] == split_of(r["signature"])
        assert (r["domain_seed"] % 5 == 0) == (r["split"] == "eval"), r["task_id"]
        assert r["template"] == draw_domain(r["domain_seed"]).template.key
    assert {r["split"] for r in records} == {"train", "eval"}


def test_the_signature_has_no_constants_of_the_domain_or_the_rows():
    for r in (candidate(5, i) for i in range(9)):
        sig = r["signature"]
        assert r["template"] not in sig and str(r["domain_seed"]) not in sig
        for value in r["node"]["constants"].values():
            assert not (isinstance(value, str) and value in sig), (sig, value)


def test_hidden_data_is_drawn_again_for_every_grading():
    for r in (candidate(4, i) for i in range(3)):
        row = dj_store.compile_generated_django(r)
        g = row.grading
        assert g["vary"], r["task_id"]
        one, _ = django_vary.drawn_hidden(g, random.Random(1))
        two, _ = django_vary.drawn_hidden(g, random.Random(2))
        assert one != two
        visible = next(iter(r["tests"].values()))
        assert visible != next(iter(r["hidden"].values()))


def test_a_stored_line_compiles_to_a_generated_row_graded_as_a_django_task():
    r = candidate(4, 2)
    row = dj_store.compile_generated_django(r)
    assert (row.family, row.source, row.split, row.signature) == ("django", "generated", r["split"], r["signature"])
    assert row.collect == r["deliverables"] and row.measures["features"] == [r["node"]["kind"]]
    assert len([i for i in row.grading["test_ids"] if i.startswith("hidden/")]) >= len(
        [i for i in row.grading["test_ids"] if i.startswith("tests/")]
    )
    assert "Task id" not in row.prompt and r["spec"].strip() in row.prompt


def test_every_stored_task_compiles_and_redraws():
    for record in dj_store.read():
        row = dj_store.compile_generated_django(record)
        assert row.task_id == record["task_id"]
        again = candidate(record["seed"], record["index"], record.get("only"), dj_store.grammar_of(record))
        assert {k: again[k] for k in ("task_id", "spec", "reference", "tests", "hidden")} == {
            k: record[k] for k in ("task_id", "spec", "reference", "tests", "hidden")
        }


def test_grammar_1_draws_as_before_and_grammar_2_adds_the_form_kind_on_streams_of_its_own():
    old = [candidate(6, i, grammar=1) for i in range(6)]
    assert [r["node"]["kind"] for r in old] == list(KIND_ORDERS[1]) * 2
    assert all("grammar" not in r and dj_store.grammar_of(r) == 1 for r in old)
    new = [candidate(6, i, grammar=2) for i in range(8)]
    assert all(r["grammar"] == 2 == dj_store.grammar_of(r) for r in new)
    assert [r["node"]["kind"] for r in new] == list(KIND_ORDERS[2]) * 2
    assert new[0]["tests"] != old[0]["tests"]  # a grammar-2 candidate is a new draw, not a grammar-1 task again
    assert candidate(6, 0, "budget", grammar=1) != candidate(6, 0, "budget", grammar=2)
    with pytest.raises(ValueError, match="form"):
        candidate(6, 0, "form", grammar=1)
    with pytest.raises(ValueError, match="grammar"):
        candidate(6, 0, grammar=4)


# what grammars 1 and 2 drew for seed 6 (indices 0..7 and one budget), everything but the English: a kind or
# grammar added later must leave it as it is
EARLIER_DRAWS = {1: "f21f8776b0453723", 2: "c4ae60d351255399"}


def test_grammar_3_adds_the_command_kind_and_grammars_1_and_2_draw_as_before():
    for grammar, digest in EARLIER_DRAWS.items():
        records = [candidate(6, i, grammar=grammar) for i in range(8)] + [candidate(6, 0, "budget", grammar=grammar)]
        body = [{k: v for k, v in r.items() if k not in ("spec", "title")} for r in records]
        assert hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16] == digest, grammar
    new = [candidate(6, i) for i in range(10)]
    assert GRAMMAR == 3 and KIND_ORDER == KIND_ORDERS[3] and all(r["grammar"] == 3 for r in new)
    assert [r["node"]["kind"] for r in new] == list(KIND_ORDERS[3]) * 2
    assert new[3]["tests"] != candidate(6, 3, grammar=2)["tests"]  # a grammar-3 form is a new draw
    for grammar in (1, 2):
        with pytest.raises(ValueError, match="command"):
            candidate(6, 0, "command", grammar=grammar)


def test_a_form_task_states_each_rule_as_behaviour_and_draws_its_hidden_data_again():
    records = [candidate(1, i, "form", grammar=2) for i in range(12)]
    assert {rule for r in records for rule in r["node"]["options"]["field_rules"]} == {"flag", "letters", "bound"}
    assert {r["node"]["options"]["capped"] for r in records} == {1, 2}
    for r in records:
        screen(r)
        assert r["category"] == "forms" and r["deliverables"] == [f"{r['template']}/forms.py"]
        spec = r["spec"]
        assert not API_WORDS.findall(spec + r["title"]) and "ValidationError" not in spec
        assert '"__all__"' in spec and "lower-cased" in spec
        for status in r["node"]["constants"]["capped"]:
            assert f'"{status}"' in spec
        assert 'a negative number with the code `"min_value"`' in spec  # Django's own code, before any rule
        if "bound" in r["node"]["options"]["field_rules"]:
            c = r["node"]["constants"]
            assert f"a number of zero or more must also lie from {c['low']} to {c['high']}, both included" in spec
        g = dj_store.compile_generated_django(r).grading
        assert {d["token"] for d in g["vary"]} & {d["token"] for d in r["vary"] if isinstance(d["token"], int)}
        assert django_vary.drawn_hidden(g, random.Random(1))[0] != django_vary.drawn_hidden(g, random.Random(2))[0]


def test_each_typical_form_mistake_is_among_the_mutants():
    records = (candidate(1, i, "form", grammar=2) for i in range(40))
    r = next(r for r in records if len(r["node"]["options"]["field_rules"]) == 3)
    names = [m.name for m in mutants_of(r["reference"], r["deliverables"], ["form"])]
    details = " | ".join(names)
    for expected in (
        "error -> non-field",  # a field's own error made a non-field one
        "non-field error -> status",  # the cross-field error put on a field
        "drop .lower()",  # the normalisation skipped
        "drop status in CAPPED",  # the cross-field rule checked for every status
        "Gt->GtE",  # the capacity off by one
        "Lt->LtE",  # the bound's low end off by one
    ):
        assert expected in details, expected
    assert sum(n.split(":", 1)[1].startswith("raise@") for n in names) == 4  # each rule's error dropped


def test_a_command_task_states_its_arguments_output_and_refusals_and_draws_its_hidden_data_again():
    records = [candidate(1, i, "command") for i in range(16)]
    options = [r["node"]["options"] for r in records]
    assert {o["action"] for o in options} == {"mark", "delete"} and {o["order"] for o in options} == {"code", "qty"}
    assert {f for o in options for f in o["filters"]} == {"status", "min"}
    assert {o["dry_run"] for o in options} == {o["refuse_off"] for o in options} == {True, False}
    for r in records:
        screen(r)
        c, o, spec = r["node"]["constants"], r["node"]["options"], r["spec"]
        assert r["category"] == "commands" and r["deliverables"] == [f"{r['template']}/management/commands/{c['name']}.py"]
        assert not API_WORDS.findall(spec + r["title"])
        assert f"python manage.py {c['name']} " in spec and "`CommandError`" in spec and "non-zero status" in spec
        assert (f"`<n> marked {c['other']}`" if o["action"] == "mark" else "`<n> deleted`") in spec
        assert ("`--dry-run`" in spec) == o["dry_run"] and ("`--status STATUS`" in spec) == ("status" in o["filters"])
        if "min" in o["filters"]:
            assert f"`--min must be from {c['low']} to {c['high']}`" in spec
        g = dj_store.compile_generated_django(r).grading
        assert django_vary.drawn_hidden(g, random.Random(1))[0] != django_vary.drawn_hidden(g, random.Random(2))[0]
        hidden = next(iter(r["hidden"].values()))
        assert 'f"' in hidden  # a quantity in an expected line is a token the host folds after the draw


def test_each_typical_command_mistake_is_among_the_mutants():
    records = (candidate(1, i, "command") for i in range(40))
    r = next(r for r in records if len(r["node"]["options"]["filters"]) == 2 and r["node"]["options"]["dry_run"])
    names = " | ".join(m.name for m in mutants_of(r["reference"], r["deliverables"], ["command"]))
    t = next(t for t in TEMPLATES if t.key == r["template"])
    for expected in (
        "drop if not options['dry_run']",  # a dry run that writes
        f"{t.qty}__gte->{t.qty}__gt",  # the minimum itself left out
        "Lt->LtE",  # the lowest minimum refused
        "raise -> stderr.write",  # a refusal printed instead of raised
        "swap the first two values",  # a wrong output line
        "drop .filter(status=options['status'])",  # a filter ignored
        "add_argument drop choices",  # any status taken
        "POOL drop",  # a status left out
    ):
        assert expected in names, expected


# -- the oracles, on hand-made rows -------------------------------------------------------------


def test_the_figures_oracle_counts_exact_statuses_and_keeps_zero_rows():
    parents = [{"name": "a"}, {"name": "b"}]
    children = [
        {"parent": "a", "qty": 5, "status": "done"},
        {"parent": "a", "qty": 7, "status": "done"},
        {"parent": "a", "qty": 9, "status": "DONE"},
        {"parent": "b", "qty": 3, "status": "booked"},
    ]
    got = qs_oracle(parents, children, ["done"], ["count", "sum", "max"])
    assert got == {"a": {"count": 2, "sum": [5, 7], "max": 7}, "b": {"count": 0, "sum": [], "max": 0}}


def _cs_node(rules, high=300, among=None):
    options = {"rules": rules}
    constants = {"high": high}
    if among:
        constants["among"] = among
    return {"kind": "constraints", "options": options, "constants": constants}


def test_the_constraints_oracle_puts_each_error_where_django_reports_it():
    t = TEMPLATES[0]  # clinic: Ward, Visit, ref, minutes, beds
    node = _cs_node(["range", "unique", "lowercase", "capacity"], among=["booked", "done"])

    def case(**kw):
        base = {"parent": "big", "code": "amber", "qty": 10, "status": "booked", "capacity": 50}
        return {**base, **kw}

    assert cs_oracle(node, t, case(), []) == ({}, False)
    assert cs_oracle(node, t, case(qty=0), []) == ({NON_FIELD: ["minutes_out_of_range"]}, True)
    assert cs_oracle(node, t, case(qty=300, capacity=1000), []) == ({}, False)  # the bound is included
    assert cs_oracle(node, t, case(qty=51), []) == ({NON_FIELD: ["over_beds"]}, False)  # validation only
    assert cs_oracle(node, t, case(code="Amber"), []) == ({"ref": ["ref_not_lowercase"]}, False)
    first = {"parent": "big", "code": "amber", "status": "done"}
    assert cs_oracle(node, t, case(), [first]) == ({NON_FIELD: ["ref_taken"]}, True)
    assert cs_oracle(node, t, case(status="missed"), [first]) == ({}, False)  # outside the statuses: no conflict
    # a field error on the code leaves the unique rule unreported, but the database still refuses
    assert cs_oracle(node, t, case(code="abcdefghijklm"), [{**first, "code": "abcdefghijklm"}]) == (
        {"ref": ["max_length"]},
        True,
    )


def test_the_form_oracle_puts_each_error_where_django_reports_it_and_normalises_the_code():
    t = TEMPLATES[0]  # clinic: Ward (is_open, beds), Visit (ref, minutes, status)
    node = {
        "kind": "form",
        "options": {"field_rules": ["flag", "letters", "bound"], "capped": 2},
        "constants": {"capped": ["done", "missed"], "low": 2, "high": 60},
    }
    parents = {"main": {"flag": True, "capacity": 30}, "off": {"flag": False, "capacity": 30}}

    def case(**kw):
        return form_oracle(node, t, {"parent": "main", "code": "amber", "qty": 10, "status": "done", **kw}, parents)

    assert case(code="  AMBER ") == ({}, {"ward": "main", "ref": "amber", "minutes": 10, "status": "done"})
    assert case(code="   ")[0] == {"ref": ["required"]}
    assert case(code="  abcdefghijkl ")[0] == {}  # twelve once stripped
    assert case(code="abcdefghijklm")[0] == {"ref": ["max_length"]}
    assert case(code="AMB7")[0] == {"ref": ["ref_not_letters"]}
    assert case(qty=2)[0] == {} and case(qty=1)[0] == {"minutes": ["minutes_out_of_range"]}
    assert case(qty=60, status="booked")[0] == {} and case(qty=61)[0] == {"minutes": ["minutes_out_of_range"]}
    assert case(qty=30)[0] == {} and case(qty=31)[0] == {NON_FIELD: ["over_beds"]}
    assert case(qty=31, status="booked")[0] == {}  # the rule covers the capped statuses only
    assert case(qty=31, status="DONE")[0] == {"status": ["invalid_choice"]}  # a failed field skips the rule
    assert case(parent=None, qty=31)[0] == {"ward": ["required"]}
    assert case(parent="gone")[0] == {"ward": ["invalid_choice"]}
    assert case(parent="off")[0] == {"ward": ["ward_closed"]}
    assert case(qty="lots")[0] == {"minutes": ["invalid"]}
    assert case(qty=-1)[0] == case(qty="-7")[0] == {"minutes": ["min_value"]}  # the model's own rule, Django's code
    assert case(qty=0)[0] == {"minutes": ["minutes_out_of_range"]}
    assert case(code="AMB7", qty=31)[0] == {"ref": ["ref_not_letters"], NON_FIELD: ["over_beds"]}


def test_the_command_oracle_lists_changes_and_refuses_as_the_spec_says():
    t = TEMPLATES[0]  # clinic: Ward, Visit (ref, minutes, status: booked, done, missed)
    node = {
        "kind": "command",
        "options": {"action": "mark", "filters": ["status", "min"], "dry_run": True, "refuse_off": True, "order": "qty"},
        "constants": {"pool": ["booked", "done"], "other": "missed", "format": 2, "low": 1, "high": 2000},
    }
    parents = {"alvor": True, "bremin": True, "corvath": False}
    rows = [
        {"parent": "alvor", "code": "dd", "qty": 7, "status": "booked"},
        {"parent": "alvor", "code": "bb", "qty": 3, "status": "done"},
        {"parent": "alvor", "code": "aa", "qty": 9, "status": "missed"},
        {"parent": "alvor", "code": "cc", "qty": 7, "status": "done"},
        {"parent": "bremin", "code": "ee", "qty": 9, "status": "booked"},
    ]

    def run(**kw):
        return command_oracle(node, t, parents, rows, Call(**{"parent": "alvor", **kw}))

    ran = run()
    assert ran.lines(node, t) == ["cc (done, 7)", "dd (booked, 7)", "bb (done, 3)", "3 marked missed"]
    assert [r["status"] for r in ran.after] == ["missed", "missed", "missed", "missed", "booked"]
    assert run(minimum=7).lines(node, t)[-1] == "2 marked missed"  # the minimum itself is kept
    assert run(status="done", minimum=4).lines(node, t) == ["cc (done, 7)", "1 marked missed"]
    dry = run(dry=True)
    assert dry.lines(node, t)[-1] == "3 would be marked missed" and dry.after == rows
    assert run(parent="zennor").refusal == 'no ward named "zennor"'
    assert run(parent="corvath").refusal == 'ward "corvath" is closed'
    assert run(minimum=0).refusal == run(minimum=2001).refusal == "--min must be from 1 to 2000"
    assert run(minimum=2000).lines(node, t) == ["0 marked missed"]
    assert run(status="missed").refusal == ARGUMENT and run(status="missed").after == rows
    purge = {**node, "options": {**node["options"], "action": "delete", "order": "code"}}
    gone = command_oracle(purge, t, parents, rows, Call("alvor", status="done"))
    assert gone.summary == "2 deleted" and [r["code"] for r in gone.after] == ["dd", "aa", "ee"]


def test_the_view_oracle_answers_status_codes_filters_and_order():
    node = {
        "kind": "view",
        "options": {"filters": ["status", "min"], "hide_off": True, "order": "qty"},
        "constants": {"statuses": ["booked", "done", "missed"]},
    }
    p, off = {"name": "a", "flag": True}, {"name": "z", "flag": False}
    kids = [
        {"parent": "a", "code": "x", "qty": 5, "status": "done"},
        {"parent": "a", "code": "y", "qty": 9, "status": "booked"},
        {"parent": "a", "code": "w", "qty": 7, "status": "done"},
    ]
    status, body = view_oracle(node, p, kids, {})
    assert status == 200 and [i["code"] for i in body["items"]] == ["y", "w", "x"]
    assert view_oracle(node, p, kids, {"min": "7"})[1]["count"] == 2  # the minimum itself is kept
    assert view_oracle(node, p, kids, {"status": "DONE"})[0] == 400
    assert view_oracle(node, p, kids, {"min": "-3"})[0] == 400
    assert view_oracle(node, off, kids, {})[0] == 404
    assert view_oracle(node, None, kids, {})[0] == 404


def test_each_kind_renders_a_reference_that_differs_from_its_junk():
    domain = draw_domain(3)
    for name, kind in KINDS.items():
        node = kind.draw(domain, random.Random(name))
        assert kind.reference(domain, node) != kind.junk(domain, node)


# -- in the image ---------------------------------------------------------------------------------


@pytest.mark.docker
async def test_one_candidate_of_every_kind_passes_its_controls_and_kills_one_mutant_of_each_operator(backend, image):
    """The generator path by execution, sampled: every kind's candidate, its controls, and the first mutant of
    each operator (admission grades every mutant: the slow twin below, and `websandbox tasks generate_django`)."""
    await _admit_one_of_every_kind(backend, image, sample=True)


@pytest.mark.docker
@pytest.mark.slow  # quicker sibling: the sampled test above (same candidates, one mutant of each operator)
async def test_one_candidate_of_every_kind_is_admitted_by_execution(backend, image):
    await _admit_one_of_every_kind(backend, image, sample=False)


async def _admit_one_of_every_kind(backend, image, sample: bool) -> None:
    from sandbox_env.grading.reused import ReusedSandboxGrader
    from sandbox_env.stages.generate_django import verify_record
    from sandbox_env.verify.base import VerifyContext

    records = [candidate(1, i, grammar=1) for i in range(3)] + [candidate(1, 2, "budget", grammar=1)]
    records += [candidate(1, 3, grammar=2), candidate(1, 4)]
    assert [r["node"]["kind"] for r in records] == [*KIND_ORDERS[1], "budget", "form", "command"]
    sem = asyncio.Semaphore(3)
    ctx, grader = VerifyContext(backend, image), ReusedSandboxGrader(backend, image)  # as the stage grades mutants
    try:
        results = await asyncio.gather(*(verify_record(r, ctx, grader, sem, sample=sample) for r in records))
    finally:
        await grader.stop()
    for record, (ok, why, recorded) in zip(records, results, strict=True):
        assert ok, (record["task_id"], why)
        assert recorded["killed"] == recorded["mutants"] >= (1 if sample else 3)
        assert recorded["controls"]["reference"] == 1.0 and recorded["controls"]["junk"] == 0.0
    assert records[3]["naive"] and results[3][2]["controls"]["naive"] == 0.0  # right, over budget: fails
