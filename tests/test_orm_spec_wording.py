"""The generated specs' English states every rule the grader enforces, and reads unambiguously.

Each test names one class of wording problem found in the stored tasks; on the renderer before
the fix each of them fails.
"""

from __future__ import annotations

import dataclasses
from datetime import date
from decimal import Decimal

from sandbox_env.generate import store
from sandbox_env.generate.columns import column_types
from sandbox_env.generate.render_spec import render_spec
from sandbox_env.generate.sample import candidate, returns_to_origin
from sandbox_env.generate.tree import (
    Agg,
    And,
    Arith,
    Between,
    Cast,
    Cmp,
    ColRef,
    Compound,
    Every,
    Exists,
    FieldRef,
    In,
    Not,
    Or,
    Query,
    SameRow,
    Sub,
    Win,
    canonical,
    tree_hash,
)  # fmt: skip

TITLE = ("title", FieldRef(("title",)))
NAME = ("name", FieldRef(("name",)))
MAX_BIRTH = ("max_birth_date", Agg("max", ("authors",), ("birth_date",)))


def _all(spec: dict) -> str:
    return "\n".join([spec["spec"], *spec["columns"], spec["order"]])


def test_an_ordering_key_that_can_be_none_says_where_none_goes():
    desc = render_spec(Query("Book", (TITLE, MAX_BIRTH), (("max_birth_date", True), ("title", False))))
    assert "by max_birth_date, latest first, None last" in desc["order"]
    asc = render_spec(Query("Book", (TITLE, MAX_BIRTH), (("max_birth_date", False), ("title", False))))
    assert "by max_birth_date, earliest first, None first" in asc["order"]
    plain = render_spec(Query("Book", (TITLE, ("pages", FieldRef(("pages",)))), (("pages", False), ("title", False))))
    assert "None" not in plain["order"]


def test_every_drawn_tree_places_none_for_each_nullable_ordering_key():
    for i in range(150):
        q = candidate(5, i)
        if q is None:
            continue
        nullable = {n for n, _, can in column_types(q) if can}
        order = render_spec(q)["order"]
        for n, desc in q.order:
            if n in nullable:
                assert f"{n}, " in order and ("None last" if desc else "None first") in order, order


def test_a_bound_on_a_computed_value_that_can_be_none_says_such_rows_are_left_out():
    q = Query("Book", (TITLE, MAX_BIRTH), (("max_birth_date", True), ("title", False)),
              having=Cmp(ColRef("max_birth_date"), "lt", date(1974, 6, 6)))  # fmt: skip
    spec = render_spec(q)["spec"]
    assert "1974-06-06 itself excluded" in spec and "a row whose max_birth_date is None is left out" in spec
    counted = Query("Book", (TITLE, ("n", Agg("count", ("sales",), None))), (("n", True), ("title", False)),
                    having=Cmp(ColRef("n"), "gt", 2))  # fmt: skip
    assert "left out" not in render_spec(counted)["spec"]


def test_a_negated_test_on_a_missing_value_says_the_row_is_kept():
    cities = In(FieldRef(("city",)), ("Portland", "Toronto"))
    cols, order = (NAME,), (("name", False),)
    negated = render_spec(Query("Store", cols, order, where=Not(cities)))["spec"]
    assert "a store whose city is missing is kept" in negated and "never matches" not in negated
    plain = render_spec(Query("Store", cols, order, where=cities))["spec"]
    assert "a store whose city is missing never matches" in plain
    excluded = render_spec(Query("Store", cols, order, exclude=cities))["spec"]
    assert "Leave out every store" in excluded and "is kept" in excluded
    not_null = render_spec(Query("Store", cols, order, exclude=Cmp(FieldRef(("is_online",)), "exact", True)))["spec"]
    assert "missing" not in not_null


def test_a_related_rows_condition_names_its_owner_not_its():
    q = Query("Book", (TITLE,), (("title", False),), where=Exists("reviews", Cmp(FieldRef(("rating",)), "gte", 4)))
    spec = render_spec(q)["spec"]
    assert "at least one review for which the review's rating is at least 4" in spec and "which its" not in spec
    agg = ("n", Agg("count", ("books", "reviews"), None, distinct=True, cond=Cmp(FieldRef(("verified",)), "exact", True)))
    col = render_spec(Query("Genre", (NAME, agg), (("n", True), ("name", False))))["columns"][1]
    assert "for which the review's verified flag is true" in col


def test_an_and_of_relation_conditions_or_ors_is_numbered_so_it_cannot_be_rebracketed():
    either = Or((In(FieldRef(("publisher", "country")), ("Brazil", "Nigeria")), Cmp(FieldRef(("in_print",)), "exact", True)))
    review = Exists("reviews", Between(FieldRef(("rating",)), 2, 5))
    spec = render_spec(Query("Book", (TITLE,), (("title", False),), where=And((either, review))))["spec"]
    assert "all of these hold: (1) either (" in spec and "; (2) it has at least one review" in spec
    flat = And((Cmp(FieldRef(("pages",)), "gt", 100), Cmp(FieldRef(("in_print",)), "exact", True)))
    assert "(1)" not in render_spec(Query("Book", (TITLE,), (("title", False),), where=flat))["spec"]


def test_counts_of_distinct_rows_read_as_english():
    cols = (NAME, ("a", Agg("count", ("books", "authors"), None, distinct=True)))
    text = _all(render_spec(Query("Genre", cols, (("a", True), ("name", False)))))
    assert "the number of distinct authors of its books" in text
    one = (TITLE, ("s", Agg("count", ("sales",), None, distinct=True)))
    text = _all(render_spec(Query("Book", one, (("s", True), ("title", False)))))
    assert "the number of its sales (each counted once" in text
    assert "distinct the" not in text and "distinct its" not in text


def test_an_average_over_a_foreign_key_after_a_multi_valued_hop_states_the_fan_out():
    cols = (NAME, ("avg_founded", Agg("avg", ("books", "publisher"), ("founded",))))
    spec = render_spec(Query("Author", cols, (("avg_founded", True), ("name", False))))
    assert "a publisher counts once for each of its books it is reached through" in spec["columns"][1]
    assert "missing founding years are skipped" in spec["columns"][1] and "fan_out" in spec["traps"]


def test_grouping_by_text_says_case_variants_are_different_keys_and_names_keys_by_column():
    q = Query("Book", (("genre__name", FieldRef(("genre", "name"))), ("n", Agg("count", (), None))),
              (("n", True), ("genre__name", False)), group=("genre__name",))  # fmt: skip
    spec = render_spec(q)
    assert "Group them by genre__name (as defined under Each row)" in spec["spec"]
    assert "differ only in letter case are different keys" in spec["spec"]
    assert "missing form one group of their own" in spec["spec"] and "None first" in spec["order"]
    assert spec["title"].startswith("Grouped books:")


def test_a_window_is_over_the_kept_rows_before_the_top_k_cut_and_a_missing_partition_is_one_partition():
    win = Win("rank", ("genre", "name"), ("price",), True)
    q = Query("Book", (TITLE, ("genre__name", FieldRef(("genre", "name"))), ("r", win)),
              (("genre__name", False), ("r", False), ("title", False)),
              where=Cmp(FieldRef(("in_print",)), "exact", True), topk=("r", 2))  # fmt: skip
    spec = render_spec(q)
    rank = spec["columns"][2]
    assert "among the books kept by the conditions above that have the same genre's name" in rank
    assert "missing rank among themselves" in rank and "1 for the highest price" in rank
    assert "ranks are computed before this cut" in spec["spec"]


def test_articles_and_titles_are_whole_words():
    q = Query(
        "Book", (TITLE,), (("title", False),), where=Exists("authors", Cmp(FieldRef(("birth_date",)), "gt", date(1958, 1, 12)))
    )
    assert "an author whose birth date is missing never matches" in render_spec(q)["spec"]
    long = Query("Review", tuple((f"column_number_{i}", FieldRef(("rating",))) for i in range(8)), (("column_number_0", False),))
    title = render_spec(long)["title"]
    assert (
        len(title) <= 80
        and title.endswith(", ...")
        and all(n.startswith("column_number_") for n in title[len("Reviews: ") : -len(", ...")].split(", "))
    )


def test_a_relation_condition_that_returns_to_the_row_is_degenerate_and_never_drawn():
    back = Exists("sales", Cmp(FieldRef(("store", "is_online")), "exact", True), negate=True)
    assert returns_to_origin(Query("Store", (NAME,), (("name", False),), where=back))
    assert returns_to_origin(Query("Book", (TITLE,), (("title", False),),
                                   where=Every("reviews", Cmp(FieldRef(("book", "price")), "gt", Decimal("15.00")))))  # fmt: skip
    same = SameRow(
        "sales", (Cmp(FieldRef(("store", "is_online")), "exact", False), Cmp(FieldRef(("book", "price")), "lt", Decimal("20.00")))
    )
    assert returns_to_origin(Query("Book", (TITLE,), (("title", False),), where=same))
    sub = Sub("max", "sales", ("quantity",), Cmp(FieldRef(("store", "is_online")), "exact", True))
    assert returns_to_origin(Query("Store", (NAME, ("m", sub)), (("m", True), ("name", False))))
    fine = Exists("sales", Cmp(FieldRef(("store", "is_online")), "exact", True))
    assert not returns_to_origin(Query("Book", (TITLE,), (("title", False),), where=fine))
    drawn = [q for q in (candidate(22, i) for i in range(400)) if q is not None]
    assert drawn and not any(returns_to_origin(q) for q in drawn)


def test_rerender_refreshes_the_english_drops_degenerate_trees_and_keeps_ids_rows_and_references():
    good = Query("Book", (TITLE, MAX_BIRTH), (("max_birth_date", True), ("title", False)))
    bad = Query("Store", (NAME,), (("name", False),), where=Exists("sales", Cmp(FieldRef(("store", "is_online")), "exact", True)))
    m = {"killed_mutants": 5}
    records = [
        {"task_id": store.task_id(tree_hash(q)), "tree": canonical(q), "reference": "REF", "variants": {"0": [["x"]]},
         "spec": "old", "columns": [], "order": "old", "title": "old", "traps": [], "measures": m, "difficulty": "easy"}
        for q in (good, bad)
    ]  # fmt: skip
    kept, dropped = store.rerender(records)
    assert dropped == [records[1]["task_id"]] and len(kept) == 1
    r = kept[0]
    assert r["task_id"] == records[0]["task_id"] and r["reference"] == "REF" and r["variants"] == {"0": [["x"]]}
    assert r["order"] == render_spec(good)["order"] and "None last" in r["order"]
    assert r["measures"]["killed_mutants"] == 5 and r["measures"]["traps"] == len(r["traps"])


def test_the_schema_extension_reads_as_english_not_as_field_names():
    """The sale hour names its range, the through model's rows say what they are, a mentor path reads as a noun."""
    sales = Query(
        "Book",
        (TITLE,),
        (("title", False),),
        where=Exists("sales", Cmp(FieldRef(("sold_at",)), "gte", 14, "hour")),
    )
    text = render_spec(sales)["spec"]
    assert "hour (0 to 23)" in text and "sale time" in text and "14 itself included" in text
    roles = Query("Book", (TITLE,), (("title", False),), where=Exists("contributions", In(FieldRef(("role",)), ("editor",))))
    text = render_spec(roles)["spec"]
    assert "contribution (a book, author and role row)" in text and "role" in text and "contributions__" not in text
    mentors = Query("Author", (NAME,), (("name", False),), where=In(FieldRef(("mentor", "country")), ("UK", "USA")))
    text = render_spec(mentors)["spec"]
    assert "mentor's country" in text and "mentor__" not in text
    mentees = Query("Author", (NAME, ("n_mentees", Agg("count", ("mentees",), None))), (("name", False),))
    assert "mentees (the authors whose mentor it is)" in " ".join(render_spec(mentees)["columns"]) + render_spec(mentees)["spec"]


def test_a_self_relations_condition_names_the_related_row_not_the_listed_one():
    """Over Author.mentees, "the author's name" would read as the listed author's own name."""
    q = Query("Author", (NAME,), (("name", False),), where=Every("mentees", In(FieldRef(("country",)), ("UK",))))
    text = render_spec(q)["spec"]
    assert "the mentee's country" in text and "the author's country" not in text


def _compound(op: str, second) -> Query:
    cols = (TITLE, ("sale_price", FieldRef(("sale_price",))))
    return Query("Book", cols, (("title", False),), where=Cmp(FieldRef(("pages",)), "gte", 300),
                 compound=Compound(op, second))  # fmt: skip


def test_a_set_operation_says_which_rows_are_kept_without_naming_the_orm_call():
    cheap = Cmp(FieldRef(("sale_price",)), "lt", Decimal("10.00"))
    union, inter, diff = (render_spec(_compound(op, cheap))["spec"] for op in ("union", "intersection", "difference"))
    assert "together with the books for which" in union and "A book that meets both conditions appears once." in union
    assert "meet both of these conditions: (1)" in inter and "(2) its sale price is below 10.00" in inter
    assert "leaving out every book for which its sale price is below 10.00" in diff
    assert "(a book whose sale price is missing never matches)" in diff  # so such a book is not left out
    for text in (union, inter, diff):
        assert not {"union", "intersection", "difference", "distinct"} & set(text.lower().replace(".", " ").split())
    assert "duplicates" in render_spec(_compound("union", cheap))["traps"]


def test_a_cast_says_the_fraction_is_dropped_and_when_it_is_none():
    price, sale = FieldRef(("price",)), FieldRef(("sale_price",))
    cols = (
        TITLE,
        ("w", Cast(price, "int")),
        ("d", Cast(Arith("-", price, sale), "int")),
        ("t", Cast(FieldRef(("pages",)), "str")),
    )
    lines = render_spec(Query("Book", cols, (("title", False),)))["columns"]
    assert lines[1] == "w: int, the price cut to a whole number, dropping any fraction (7.95 gives 7, 12.00 gives 12)"
    assert lines[2].startswith("d: int or None, the price minus the sale price cut to a whole number, dropping any fraction")
    assert lines[2].endswith("; None when the sale price is missing")
    assert lines[3] == 't: str, the page count written as text, its digits only (312 gives "312"), compared as text'
    assert not any("round" in line for line in lines)


def test_a_row_number_states_its_tiebreak_as_numbering_and_its_top_k_keeps_no_tied_extra_rows():
    pos = Win("row_number", ("genre", "name"), ("price",), True)
    q = Query("Book", (TITLE, ("genre__name", FieldRef(("genre", "name"))), ("pos", pos)), (("pos", False), ("title", False)),
              topk=("pos", 2))  # fmt: skip
    spec = render_spec(q)
    assert spec["columns"][2].endswith(
        "ordered by price (highest first); books with equal prices take consecutive positions in order of title A to Z, "
        "so no two share a position"
    )
    assert "rows tied at the cut still take separate positions, so at most 2 rows per genre's name are kept" in spec["spec"]
    ranked = render_spec(dataclasses.replace(q, cols=(*q.cols[:2], ("pos", dataclasses.replace(pos, fn="rank")))))
    assert "ranks are computed before this cut)." in ranked["spec"] and "separate positions" not in ranked["spec"]


def test_every_orm_prompt_that_orders_by_text_states_the_collation():
    from sandbox_env.dataset import load_rows
    from sandbox_env.families.orm import COLLATION, TEXT_ORDER

    rows = [r for r in load_rows() if r["info"]["family"] == "orm"]
    orders = [line for r in rows for line in r["question"].splitlines() if line.startswith("Order: ")]
    texts = [o for o in orders if any(words in o for words in TEXT_ORDER)]
    assert len(texts) > 1000
    assert all(COLLATION in o for o in texts), [o for o in texts if COLLATION not in o][:3]
