"""Every rule a generated orm spec states is tested by the data of every variant its task ships with.

The mistakes are generate/traps.py's (one per kind of stated rule); these tests need no container:
the evaluator is the independent oracle the variants were admitted by.
"""

from __future__ import annotations

import collections

from sandbox_env.generate import store
from sandbox_env.generate.evaluate import evaluate
from sandbox_env.generate.fixture import world
from sandbox_env.generate.render_spec import render_spec
from sandbox_env.generate.sample import unseparated_trap
from sandbox_env.generate.traps import trap_mistakes
from sandbox_env.generate.tree import Every, FieldRef, Query, Text, from_canonical, walk
from sandbox_env.stages.generate_orm import host_problems, mutants_of


def test_every_stored_variant_tells_each_stated_rules_mistake_from_the_reference():
    records = store.read()
    problems = {task: why for task, why in host_problems(records).items() if why}
    assert not problems, f"{len(problems)} stored tasks ship a variant that does not test a stated rule: {list(problems)[:5]}"


def test_each_kind_of_stated_rule_has_a_mistake_on_the_stored_tasks_that_state_it():
    kinds = collections.Counter(kind for r in store.read() for kind in {k for k, _ in trap_mistakes(from_canonical(r["tree"]))})
    assert {"vacuous", "null", "case", "bound", "fan_out"} <= set(kinds), kinds


def _first(pred) -> Query:
    return next(q for q in (from_canonical(r["tree"]) for r in store.read()) if pred(q))


def test_a_vacuous_every_is_mistaken_for_has_at_least_one_and_every():
    q = _first(lambda q: any(isinstance(n, Every) for n in walk(q.where)))
    assert "vacuous" in render_spec(q)["traps"]
    mistakes = [m for kind, m in trap_mistakes(q) if kind == "vacuous"]
    assert mistakes
    for v in (int(k) for k in next(r for r in store.read() if from_canonical(r["tree"]) == q)["variants"]):
        assert all(evaluate(m, world(v)) != evaluate(q, world(v)) for m in mistakes)


def test_a_letter_case_rule_is_mistaken_both_ways_and_each_mistake_runs_in_the_image_as_a_mutant():
    q = _first(lambda q: any(isinstance(n, Text) for n in walk(q.where)))
    kinds = [kind for kind, _ in trap_mistakes(q)]
    assert "case" in kinds
    record = next(r for r in store.read() if from_canonical(r["tree"]) == q)
    cells = mutants_of(record["reference"], q)
    assert any(name.startswith("trap:case#") for name in cells), sorted(cells)


def test_a_variant_on_which_a_stated_rules_mistake_gives_the_expected_rows_is_refused_naming_the_rule():
    q = _first(lambda q: any(isinstance(n, Every) for n in walk(q.where)))
    w = world(0)
    mistaken = next(m for kind, m in trap_mistakes(q) if kind == "vacuous")
    assert unseparated_trap(q, w, evaluate(mistaken, w)) == "vacuous"
    assert unseparated_trap(q, w, [["rows no mistake gives"]]) is None


def test_a_missing_value_is_mistaken_for_a_match_on_a_field_that_can_be_missing_only():
    q = _first(lambda q: q.where is not None and any(k == "null" for k, _ in trap_mistakes(q)))
    for kind, m in trap_mistakes(q):
        if kind == "null" and m.where != q.where:
            assert any(isinstance(n, FieldRef) for n in walk(m.where))
