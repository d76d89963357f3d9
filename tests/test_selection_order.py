"""The first rows of a selection sample every family and source, so `vf-eval -n N` is not one family's first tasks."""

from __future__ import annotations

from sandbox_env.dataset import load_rows, select_rows


def test_the_first_rows_of_a_selection_take_every_family_and_source_in_turn():
    rows = select_rows(load_rows())
    families = sorted({r["info"]["family"] for r in rows})
    assert [r["info"]["family"] for r in rows[: len(families)]] == families  # one of each family first
    first = rows[:24]
    for family in families:
        sources = {r["info"].get("source", "hand") for r in rows if r["info"]["family"] == family}
        seen = {r["info"].get("source", "hand") for r in first if r["info"]["family"] == family}
        assert seen == sources, (family, seen, sources)


def test_the_order_is_the_same_every_time_and_loses_no_row():
    rows = load_rows()
    once, twice = select_rows(rows), select_rows(list(reversed(rows)))
    assert sorted(r["info"]["task_id"] for r in once) == sorted(r["info"]["task_id"] for r in twice)
    assert [r["info"]["task_id"] for r in once] == [r["info"]["task_id"] for r in select_rows(rows)]
    assert len(once) == len({r["info"]["task_id"] for r in once})
