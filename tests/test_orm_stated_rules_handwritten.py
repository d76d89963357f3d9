"""Every rule a hand-written orm spec states has a mutant of its reference that makes the mistake (no Docker).

The hand-written tasks' rules are sentences, not a tree (the generated tasks' are generate/traps.py's), so
each kind of rule is recognised by its wording here and must be met by a mutant of the kind that breaks
it. What makes that a guarantee and not a list: every mutant must lose on the hand-written fixture or be
declared equivalent (tests/test_orm_sensitivity.py), and a drawn fixture variant is admitted only where
every mutant and every wrong_*.py answer gives other rows than the reference (verify/orm.py's
`admit_variant`; the `fixture_variants` control re-checks the frozen variants). So a stated rule is
tested on every variant a rollout can draw.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sandbox_env.verify.sensitivity import declared_equivalents, orm_mutants

ROOT = Path(__file__).resolve().parents[1]
TASKS = sorted(p for p in (ROOT / "sandbox_env" / "tasks" / "orm").iterdir() if (p / "task.toml").is_file())

# kind of rule: (the wording that states it, the mutants that break it: operator and a pattern of the detail)
RULES: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "a missing value is left out": (
        r"without an? [a-z ]+ (are|is) left out|is known|each [a-z]+ that has at least one",
        [("keep_missing", ""), ("missing_matches", ""), ("lookup", r"__(gt|gte)->")],
    ),
    "a missing value is kept": (
        r"no [a-z]+ at all",
        [("exclude_missing", ""), ("none_group", ""), ("lookup", r"isnull=True->False")],
    ),
    "None where there is nothing": (r"None if none", [("none_as_zero", "")]),
    "0 where there is nothing": (r"not None|Use 0 where", [("coalesce", "")]),
    "a bound is inclusive or exclusive": (
        r"both ends included|or more|or after|under \d|below \d|at least \d|fewer than|before \d",
        [("lookup", r"__(gt|gte|lt|lte)->"), ("range_ends", "")],
    ),
    "letter case": (r"letter case", [("lookup", r"(contains|exact|startswith)->"), ("case_sensitive", "")]),
    "a related row counts once": (r"appears once|counts once", [("distinct", ""), ("count_distinct", "")]),
    "one related row meets every condition": (r"same [a-z]+ must meet", [("filter_split", "")]),
    "a tie is broken as stated": (r"A to Z", [("order", "drop tiebreak|key")]),
}


def spec_of(folder: Path) -> str:
    text = (folder / "task.toml").read_text()
    return " ".join(re.search(r'spec = """(.*?)"""', text, re.S).group(1).split())


def stated(folder: Path) -> list[str]:
    """The kinds of rule the task's spec states. "appears once" binds only a reference that can repeat a row
    (one with `distinct`): a filter over one table's own columns cannot."""
    spec, reference = spec_of(folder), (folder / "reference.py").read_text()
    kinds = [kind for kind, (wording, _) in RULES.items() if re.search(wording, spec)]
    if "a related row counts once" in kinds and "distinct" not in reference:
        kinds.remove("a related row counts once")
    return kinds


def breakers(folder: Path, kind: str) -> list[str]:
    """Names of the reference's mutants (not declared equivalent) that break a rule of this kind."""
    skip = declared_equivalents(folder)
    wanted = RULES[kind][1]
    return [
        m.name
        for m in orm_mutants(folder)
        if m.name not in skip and any(m.operator == op and re.search(pattern, m.name) for op, pattern in wanted)
    ]


@pytest.mark.parametrize("folder", TASKS, ids=lambda p: p.name)
def test_every_rule_a_hand_written_spec_states_has_a_mutant_that_breaks_it(folder):
    missing = [kind for kind in stated(folder) if not breakers(folder, kind)]
    assert not missing, f"{folder.name} states {missing} and no mutant of its reference breaks it"


def test_the_rules_are_recognised_on_the_tasks_that_state_them():
    by_task = {f.name: stated(f) for f in TASKS}
    assert "a missing value is kept" in by_task["orm_filter_09"]
    assert "a missing value is left out" in by_task["orm_adv_10"]
    assert "None where there is nothing" in by_task["orm_agg_08"]
    assert "0 where there is nothing" in by_task["orm_adv_06"]
    assert "a bound is inclusive or exclusive" in by_task["orm_filter_03"]
    assert "letter case" in by_task["orm_filter_04"]
    assert "one related row meets every condition" in by_task["orm_rel_06"]
    assert sum(bool(kinds) for kinds in by_task.values()) >= 25


def test_a_reference_that_loses_its_missing_value_rule_has_no_breaker_and_fails(tmp_path):
    folder = tmp_path / "orm_x"
    folder.mkdir()
    (folder / "task.toml").write_text('id = "orm_x"\nspec = """\nBooks without a genre are left out.\n"""\n')
    (folder / "reference.py").write_text('result = list(Book.objects.values_list("title"))\n')
    assert stated(folder) == ["a missing value is left out"]
    assert not breakers(folder, "a missing value is left out")
