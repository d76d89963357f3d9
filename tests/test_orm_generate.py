"""The orm generator's pure logic: grammar, renderers, evaluator, difficulty, store and determinism."""

from __future__ import annotations

import ast
import dataclasses
import re
from datetime import date
from decimal import Decimal

import pytest

from sandbox_env.dataset import load_rows, select_rows
from sandbox_env.families.orm import FAMILY
from sandbox_env.generate import SHAPE_NAMES, measure, schema, store
from sandbox_env.generate.columns import column_types
from sandbox_env.generate.evaluate import evaluate
from sandbox_env.generate.fixture import world
from sandbox_env.generate.render_orm import render_orm
from sandbox_env.generate.render_spec import render_spec
from sandbox_env.generate.sample import SHAPES, ablations, candidate, screen_variant, tree_mutants
from sandbox_env.generate.tree import (
    Agg,
    Arith,
    Cast,
    Cmp,
    ColRef,
    Compound,
    Exists,
    FieldRef,
    PairFn,
    Query,
    SameRow,
    Text,
    Win,
    canonical,
    from_canonical,
    signature,
    tree_hash,
    walk,
)  # fmt: skip
from sandbox_env.runtime.container.orm_fixture import data
from sandbox_env.verify.mutants import ORM_OPERATORS, generate

MODELS_PY = (schema.__file__.rsplit("/", 2)[0]) + "/runtime/container/orm_fixture/shop/models.py"


def _cands(seed: int = 3, n: int = 60) -> list[Query]:
    return [q for q in (candidate(seed, i) for i in range(n)) if q is not None]


def test_every_schema_field_is_a_model_field_with_the_same_nullability():
    tree = ast.parse(open(MODELS_PY).read())
    fields: dict[tuple[str, str], bool] = {}
    for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
        for stmt in cls.body:
            if isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
                null = any(k.arg == "null" and k.value.value is True for k in stmt.value.keywords)
                fields[(cls.name, stmt.targets[0].id)] = null
    for model, fs in schema.FIELDS.items():
        for name, f in fs.items():
            assert fields[(model, name)] == f.nullable, (model, name)
    for model, fks in schema.FK.items():
        for name, (_, nullable) in fks.items():
            assert fields[(model, name)] == nullable, (model, name)


def test_the_same_seed_gives_the_same_trees_and_another_seed_other_ones():
    a, b = _cands(), _cands()
    assert [canonical(q) for q in a] == [canonical(q) for q in b]
    assert [tree_hash(q) for q in a] == [tree_hash(q) for q in b]
    assert {tree_hash(q) for q in _cands(seed=4)} != {tree_hash(q) for q in a}


def test_a_tree_round_trips_through_its_canonical_form_and_its_signature_ignores_constants():
    for q in _cands():
        assert from_canonical(canonical(q)) == q
    q = Query(
        "Book", (("title", FieldRef(("title",))),), (("title", False),), where=Cmp(FieldRef(("price",)), "gte", Decimal("20.00"))
    )
    r = Query(
        "Book", (("title", FieldRef(("title",))),), (("title", False),), where=Cmp(FieldRef(("price",)), "gte", Decimal("25.00"))
    )
    assert signature(q) == signature(r) and tree_hash(q) != tree_hash(r)


def test_the_evaluator_filters_orders_and_formats_like_the_contract():
    q = Query(
        "Book",
        (("title", FieldRef(("title",))), ("price", FieldRef(("price",))), ("published", FieldRef(("published",)))),
        (("price", True), ("title", False)),
        where=Cmp(FieldRef(("price",)), "gte", Decimal("30.00")),
    )
    rows = evaluate(q, world(0))
    want = sorted(((b[0], Decimal(b[4]), b[3]) for b in data.BOOKS if Decimal(b[4]) >= 30), key=lambda r: r[0])
    want.sort(key=lambda r: r[1], reverse=True)
    assert rows == [[t, format(p, ".2f"), d] for t, p, d in want]
    assert rows[0][1] == "35.00" and rows[0][0] == "A Chronicle of Tides"  # the placed tie, broken by title


def test_the_evaluator_counts_related_rows_and_reads_a_missing_sum_as_none_or_zero():
    w = world(0)
    count = Query("Publisher", (("name", FieldRef(("name",))), ("n", Agg("count", ("books",), None))), (("name", False),))
    got = dict(map(tuple, evaluate(count, w)))
    assert got["Meridian Academic"] == 0 and got["Harbor & Pine"] == sum(b[1] == 0 for b in data.BOOKS)
    total = Agg("sum", ("books", "sales"), ("quantity",))
    q = Query("Publisher", (("name", FieldRef(("name",))), ("q", total)), (("name", False),))
    assert dict(map(tuple, evaluate(q, w)))["Meridian Academic"] is None
    q0 = Query(
        "Publisher",
        (("name", FieldRef(("name",))), ("q", Agg("sum", ("books", "sales"), ("quantity",), coalesce=True))),
        (("name", False),),
    )
    assert dict(map(tuple, evaluate(q0, w)))["Meridian Academic"] == 0


def test_exists_same_row_and_ranks_follow_their_definitions():
    w = world(0)
    key = (("title", FieldRef(("title",))),)
    unsold = evaluate(Query("Book", key, (("title", False),), where=Exists("sales", None, negate=True)), w)
    assert sorted(r[0] for r in unsold) == sorted(data.BOOKS[i][0] for i in data.UNSOLD) + sorted(
        b[0] for b in data.BOOKS[data.N_BASE_BOOKS :] if not any(s[0] == data.BOOKS.index(b) for s in data.EXTRA_SALES)
    ) or len(unsold) >= len(data.UNSOLD)
    same = SameRow("sales", (Cmp(FieldRef(("quantity",)), "gte", 7), Cmp(FieldRef(("store", "is_online")), "exact", True)))
    rows = evaluate(Query("Book", key, (("title", False),), where=same), w)
    online = {s["id"] for s in w.rows["Store"] if s["is_online"]}
    want = {w.by_id["Book"][s["book_id"]]["title"] for s in w.rows["Sale"] if s["quantity"] >= 7 and s["store_id"] in online}
    assert {r[0] for r in rows} == want
    rank = Query("Book", (*key, ("r", Win("dense_rank", ("genre", "name"), ("price",), True))), (("r", False), ("title", False)))
    ranks = {r[0]: r[1] for r in evaluate(rank, w)}
    assert ranks["A Chronicle of Tides"] == ranks["Red River Ledger"] == 1  # the placed History tie at the top


def _books_by_genre(w, genre: str) -> list[dict]:
    """The books of one genre in price order, highest first, equal prices by title: a window's sequence."""
    gid = next(g["id"] for g in w.rows["Genre"] if g["name"] == genre)
    books = sorted((b for b in w.rows["Book"] if b["genre_id"] == gid), key=lambda b: b["title"])
    return sorted(books, key=lambda b: b["price"], reverse=True)


@pytest.mark.parametrize("size", [2, 3, 4, 7])
def test_positions_tiles_first_values_and_moving_sums_follow_their_definitions(size):
    w = world(0)
    key = (("title", FieldRef(("title",))),)
    part = ("genre", "name")

    def window(fn: str, **kw) -> dict[str, object]:
        q = Query("Book", (*key, ("x", Win(fn, part, ("price",), True, **kw))), (("title", False),))
        return dict(map(tuple, evaluate(q, w)))

    seq = _books_by_genre(w, "History")
    titles = [b["title"] for b in seq]
    position, tile = window("row_number"), window("ntile", size=size)
    first, moving = window("first_value", arg=("pages",)), window("moving_sum", arg=("pages",), size=size)
    assert [position[t] for t in titles] == list(range(1, len(titles) + 1))
    tiles = [tile[t] for t in titles]
    sizes = [tiles.count(k) for k in range(1, min(size, len(titles)) + 1)]
    assert tiles == sorted(tiles) and max(sizes) - min(sizes) <= 1 and sizes == sorted(sizes, reverse=True)
    assert {first[t] for t in titles} == {seq[0]["pages"]}
    pages = [b["pages"] for b in seq]
    assert [moving[t] for t in titles] == [sum(pages[max(0, i - size + 1) : i + 1]) for i in range(len(pages))]


def test_greatest_least_and_nullif_follow_sqlites_rules_for_missing_and_equal_values():
    w = world(0)
    key = (("title", FieldRef(("title",))),)
    price, sale = FieldRef(("price",)), FieldRef(("sale_price",))

    def column(fn: str, first: FieldRef, second: FieldRef) -> dict[str, object]:
        q = Query("Book", (*key, ("x", PairFn(fn, first, second))), (("title", False),))
        return dict(map(tuple, evaluate(q, w)))

    hi, lo, cut = column("greatest", price, sale), column("least", sale, price), column("nullif", sale, price)
    books = w.rows["Book"]
    missing = [b for b in books if b["sale_price"] is None]
    same = [b for b in books if b["sale_price"] == b["price"]]
    below = [b for b in books if b["sale_price"] is not None and b["sale_price"] < b["price"]]
    assert missing and below
    assert all(hi[b["title"]] is None and lo[b["title"]] is None and cut[b["title"]] is None for b in missing)
    assert all(cut[b["title"]] is None for b in same)
    for b in below:
        assert (hi[b["title"]], lo[b["title"]]) == (format(b["price"], ".2f"), format(b["sale_price"], ".2f"))
        assert cut[b["title"]] == format(b["sale_price"], ".2f")


def test_pair_functions_render_their_django_names_and_say_what_a_missing_value_gives():
    price, sale = FieldRef(("price",)), FieldRef(("sale_price",))
    for fn, name, words in (
        ("greatest", "Greatest", "larger of the price and the sale price; None when either"),
        ("least", "Least", "smaller of the price and the sale price; None when either"),
        ("nullif", "NullIf", "the price, except None where it equals the sale price"),
    ):
        q = Query("Book", (("title", FieldRef(("title",))), ("x", PairFn(fn, price, sale))), (("title", False),))
        assert f'{name}("price", "sale_price")' in render_orm(q)
        assert words in render_spec(q)["columns"][-1]
        assert from_canonical(canonical(q)) == q


def test_new_window_kinds_render_frames_and_imports_and_keep_old_trees_hashes():
    q = Query(
        "Book",
        (("title", FieldRef(("title",))), ("m", Win("moving_sum", None, ("price",), False, ("pages",), 3))),
        (("title", False),),
    )
    code = render_orm(q)
    assert "frame=RowRange(start=-2, end=0)" in code and "from django.db.models import RowRange" in code
    title = ("title", FieldRef(("title",)))
    tile = Query("Book", (title, ("t", Win("ntile", None, ("price",), True, size=4))), (("title", False),))
    assert "Ntile(4)" in render_orm(tile) and "from django.db.models.functions import Ntile" in render_orm(tile)
    assert "4 consecutive groups" in render_spec(tile)["columns"][-1]
    old = Query("Book", (("title", FieldRef(("title",))), ("r", Win("rank", None, ("price",), True))), (("title", False),))
    assert "size" not in str(canonical(old)) and from_canonical(canonical(q)) == q
    two = Win("moving_sum", None, ("price",), False, ("pages",), 2)
    assert signature(q) == signature(Query(q.universe, (q.cols[0], ("m", two)), q.order))


def test_the_reference_is_python_uses_no_like_lookup_and_the_spec_states_its_rules():
    for q in _cands(n=120):
        code = render_orm(q)
        ast.parse(code)
        assert "result = [" in code and not re.search(r"__(i?contains|i?startswith)=", code)
        spec = render_spec(q)
        text = spec["spec"] + " ".join(spec["columns"]) + spec["order"]
        for node in walk(q):
            if isinstance(node, Cmp) and node.op in ("gte", "lte"):
                assert "itself included" in text
            if isinstance(node, Cmp) and node.op in ("gt", "lt"):
                assert "itself excluded" in text
            if isinstance(node, Text):
                assert "letter case" in text
            if isinstance(node, SameRow):
                assert "one and the same" in text and "appears once" in text
        assert "ties by" in spec["order"] or len(q.order) == 1


def test_prescreen_rejects_trivial_queries_and_ablations_remove_one_part_each():
    everything = Query("Genre", (("name", FieldRef(("name",))),), (("name", False),))
    assert screen_variant(everything, 0)[0] is None
    q = Query(
        "Book",
        (("title", FieldRef(("title",))), ("pages", FieldRef(("pages",)))),
        (("pages", True), ("title", False)),
        where=Cmp(FieldRef(("pages",)), "gte", 500),
        having=Cmp(ColRef("pages"), "lte", 600),
        limit=5,
    )
    assert len(ablations(q)) == 3
    assert any(m.where == Cmp(FieldRef(("pages",)), "gt", 500) for m in tree_mutants(q))


def test_difficulty_follows_the_written_thresholds():
    assert measure.difficulty({"score": measure.EASY_BELOW - 1}) == "easy"
    assert measure.difficulty({"score": measure.EASY_BELOW}) == "medium"
    assert measure.difficulty({"score": measure.HARD_FROM}) == "hard"
    q = Query(
        "Book",
        (("title", FieldRef(("title",))),),
        (("title", False),),
        where=Exists("authors", Cmp(FieldRef(("country",)), "exact", "UK")),
    )
    m = measure.measures(q, ["case"], killed=8)
    assert m["relations"] == 2 and m["predicates"] == 1 and m["traps"] == 1 and m["killed_mutants"] == 8


def test_the_split_is_a_function_of_the_signature_and_holds_out_about_one_in_five():
    sigs = [f"{i:012x}" for i in range(2000)]
    evals = [s for s in sigs if store.split_of(s) == "eval"]
    assert [store.split_of(s) for s in sigs] == [store.split_of(s) for s in sigs]
    assert 300 < len(evals) < 500


def test_every_stored_task_re_renders_and_its_rows_are_the_evaluators():
    records = store.read()
    if not records:
        pytest.skip("no generated tasks stored")
    for r in records[:: max(1, len(records) // 150)]:
        q = from_canonical(r["tree"])
        assert store.task_id(tree_hash(q)) == r["task_id"] and signature(q) == r["signature"]
        assert render_orm(q) == r["reference"]
        assert {k: render_spec(q)[k] for k in ("spec", "columns", "order")} == {k: r[k] for k in ("spec", "columns", "order")}
        for v, rows in r["variants"].items():
            got = evaluate(q, world(int(v)))
            assert len(got) == len(rows) and all(
                (a == b) or (isinstance(a, float) and abs(a - b) <= 1e-9 * max(1, abs(a)))
                for x, y in zip(got, rows, strict=True)
                for a, b in zip(x, y, strict=True)
            ), r["task_id"]
        assert (r["split"] == "eval") == (store.split_of(r["signature"]) == "eval")
        seeded = "draw_fixture" in r
        assert set(map(int, r["variants"])) <= set(store.fixture_pool(r["split"], seeded)), r["task_id"]


def test_the_stored_set_keeps_at_most_three_tasks_per_signature_and_no_duplicate_rows():
    records = store.read()
    if not records:
        pytest.skip("no generated tasks stored")
    per: dict[str, int] = {}
    for r in records:
        per[r["signature"]] = per.get(r["signature"], 0) + 1
    assert max(per.values()) <= 3
    assert len({r["tree_hash"] for r in records}) == len(records)


def test_generated_rows_compile_with_source_split_signature_and_measures_and_the_split_filter_works():
    records = store.read()
    if not records:
        pytest.skip("no generated tasks stored")
    row = FAMILY.compile_generated(records[0])
    assert row.source == "generated" and row.signature == records[0]["signature"] and row.measures["score"] >= 0
    assert row.fixture_seeds == sorted(map(int, records[0]["variants"]))
    info = row.to_row()["info"]
    assert {"source", "split", "signature", "fixture_seeds", "measures"} <= set(info)
    rows = load_rows()
    evals = select_rows(rows, split="eval")
    # eval holds generated tasks of held-out signatures and the repairs of those tasks (repair_store.py)
    assert evals and all(r["info"]["source"] in ("generated", "repair") and r["info"]["split"] == "eval" for r in evals)
    train = select_rows(rows, split="train")
    assert not {r["info"]["signature"] for r in train} & {r["info"]["signature"] for r in evals}
    assert len(select_rows(rows, split="all")) == len(select_rows(rows))
    with pytest.raises(ValueError, match="unknown split 'test'; known: train, eval, all"):
        select_rows(rows, split="test")


def test_dates_in_trees_are_dates():
    q = Query(
        "Book",
        (("title", FieldRef(("title",))),),
        (("title", False),),
        where=Cmp(FieldRef(("published",)), "gte", date(2020, 1, 1)),
    )
    assert "date(2020, 1, 1)" in render_orm(q)


def test_a_merged_batch_adds_only_new_tasks_and_keeps_three_per_signature():
    old = store.read()[:5]
    twin = {**old[0], "task_id": "orm_gen_other"}  # the same expected rows under another id
    crowd = [{**old[1], "task_id": f"orm_gen_s{i}", "variants": {"0": [[i]]}} for i in range(5)]
    merged = store.merge(old, [old[2], twin, *crowd], 3)
    assert merged[: len(old)] == old
    ids = [r["task_id"] for r in merged]
    assert "orm_gen_other" not in ids and ids.count(old[2]["task_id"]) == 1
    assert sum(r["signature"] == old[1]["signature"] for r in merged) == 3
    assert ids[len(old) :] == ["orm_gen_s0", "orm_gen_s1"][: 3 - sum(r["signature"] == old[1]["signature"] for r in old)]


def test_a_named_shape_draws_only_that_shape_from_its_own_stream():
    windows = [candidate(22, i, "window") for i in range(40)]
    assert all(any(isinstance(n, Win) for n in walk(q)) for q in windows if q is not None)
    assert [tree_hash(q) for q in windows if q] != [tree_hash(q) for q in (candidate(22, i) for i in range(40)) if q]
    with pytest.raises(ValueError, match="the shapes are"):
        candidate(22, 0, "windows")


def _setop(op: str, all_: bool = False, limit: int | None = None) -> Query:
    cols = (("title", FieldRef(("title",))), ("price", FieldRef(("price",))))
    return Query("Book", cols, (("price", True), ("title", False)), where=Cmp(FieldRef(("price",)), "gte", Decimal("30.00")),
                 limit=limit, compound=Compound(op, Cmp(FieldRef(("pages",)), "lt", 300), all_))  # fmt: skip


def test_set_operations_keep_distinct_rows_over_the_columns_and_order_and_cut_after_combining():
    w = world(101)
    pricey = {b["title"] for b in w.rows["Book"] if b["price"] >= 30}
    short = {b["title"] for b in w.rows["Book"] if b["pages"] < 300}
    assert pricey & short and pricey - short
    union, union_all = evaluate(_setop("union"), w), evaluate(_setop("union", True), w)
    assert {r[0] for r in union} == pricey | short and len(union) == len(pricey | short)  # a row on both sides once
    assert len(union_all) == len(pricey) + len(short)  # UNION ALL keeps the duplicates
    assert {r[0] for r in evaluate(_setop("intersection"), w)} == pricey & short
    assert {r[0] for r in evaluate(_setop("difference"), w)} == pricey - short
    assert evaluate(_setop("union", limit=3), w) == union[:3]
    assert union == sorted(sorted(union, key=lambda r: r[0]), key=lambda r: Decimal(r[1]), reverse=True)


def test_a_cast_cuts_toward_zero_keeps_none_and_writes_an_integers_digits():
    w = world(101)
    price, sale = FieldRef(("price",)), FieldRef(("sale_price",))
    cols = (("title", FieldRef(("title",))), ("p", Cast(price, "int")), ("d", Cast(Arith("-", price, sale), "int")),
            ("t", Cast(FieldRef(("pages",)), "str")))  # fmt: skip
    rows = {r[0]: r[1:] for r in evaluate(Query("Book", cols, (("title", False),)), w)}
    for b in w.rows["Book"]:
        p, d, t = rows[b["title"]]
        assert p == int(b["price"]) and p <= b["price"] < p + 1 and t == str(b["pages"])
        assert d is None if b["sale_price"] is None else d == int(b["price"] - b["sale_price"])
    assert int(Decimal("-1.50")) == -1  # what the evaluator relies on: toward zero, as SQLite's CAST(-1.5 AS INTEGER)
    assert column_types(Query("Book", cols, (("title", False),)))[1:] == [("p", "int", False), ("d", "int", True),
                                                                        ("t", "str", False)]  # fmt: skip


def test_setop_and_cast_trees_round_trip_render_and_leave_old_canonical_forms_alone():
    q = _setop("union")
    assert from_canonical(canonical(q)) == q and "compound" in canonical(q)
    assert "compound" not in canonical(dataclasses.replace(q, compound=None))  # every stored tree keeps its form
    code = render_orm(q)
    assert "first.union(second)" in code and '.order_by("-price", "title")' in code
    compile(code, "<setop>", "exec")
    names = {m.name.split(" ", 1)[1] for m in generate(code, ORM_OPERATORS)}
    assert {"union->intersection", "union->difference", "union->union(all=True)"} <= names
    swapped = {m.compound for m in tree_mutants(q) if m.compound.where == q.compound.where}
    assert swapped - {q.compound} == {
        Compound("intersection", q.compound.where), Compound("difference", q.compound.where),
        Compound("union", q.compound.where, True)}  # fmt: skip
    assert signature(q) != signature(_setop("intersection"))
    for shape, needle in (("setop", "first."), ("cast", "Cast(")):
        drawn = [x for x in (candidate(22, i, shape, 101) for i in range(30)) if x is not None]
        assert drawn and all(from_canonical(canonical(x)) == x for x in drawn)
        for x in drawn:
            code = render_orm(x)
            assert needle in code
            compile(code, shape, "exec")
            render_spec(x)
        assert any(screen_variant(x, 102)[0] is not None for x in drawn)


def test_setop_cast_and_row_number_are_drawn_only_when_named():
    assert {"setop", "cast", "row_number"} <= set(SHAPE_NAMES)
    assert not {"setop", "cast", "row_number"} & set(SHAPES)  # the mixed stream's draws stay those the stored tasks came from
    mixed = [candidate(22, i) for i in range(200)]
    assert not any(q.compound or any(isinstance(n, Cast) for n in walk(q)) for q in mixed if q is not None)


def _row_numbers(k: int) -> Query:
    """Each genre's k highest-priced long books, numbered: world 101 ties on price at the second place of one genre."""
    pos = Win("row_number", ("genre", "name"), ("price",), True)
    cols = (("title", FieldRef(("title",))), ("genre__name", FieldRef(("genre", "name"))), ("price", FieldRef(("price",))))
    return Query("Book", (*cols, ("pos", pos)), (("pos", False), ("title", False)),
                 where=Cmp(FieldRef(("pages",)), "gte", 600), topk=("pos", k))  # fmt: skip


def test_a_row_numbers_preview_is_a_rank_without_the_tiebreak_which_keeps_rows_tied_at_the_cut():
    q = _row_numbers(2)
    assert 'order_by=[F("price").desc(), F("title").asc()]' in render_orm(q)  # the unique key closes the order
    ranks = [m for m in tree_mutants(q) if any(isinstance(n, Win) and n.fn != "row_number" for n in walk(m))]
    assert sorted(n.fn for m in ranks for n in walk(m) if isinstance(n, Win)) == ["dense_rank", "rank"]
    w = world(101)
    rows = evaluate(q, w)
    assert all(len(evaluate(m, w)) > len(rows) for m in ranks)  # ties share a place, so the top-k keeps more rows
    assert screen_variant(q, 101) == (rows, "ok")
    code = render_orm(q)
    mutants = {m.name.split(" ", 1)[1] for m in generate(code, ORM_OPERATORS)}
    assert {"RowNumber->Rank, drop tiebreak F('title').asc()", "RowNumber->DenseRank, drop tiebreak F('title').asc()"} <= mutants
    assert "RowNumber->Rank" not in mutants  # the bare swap, equivalent over a closed order, is never made


def test_the_row_number_shape_draws_row_numbers_cut_to_a_top_k_and_some_pass_the_prescreen():
    drawn = [q for q in (candidate(22, i, "row_number", 101) for i in range(40)) if q is not None]
    assert drawn and all(q.topk is not None and dict(q.cols)[q.topk[0]].fn == "row_number" for q in drawn)
    passing = [q for q in drawn if screen_variant(q, 102)[0] is not None or screen_variant(q, 103)[0] is not None]
    assert passing


def test_two_conditions_on_one_lookup_render_as_valid_python_with_the_second_in_a_q():
    from sandbox_env.generate.tree import And

    title = FieldRef(("title",))
    where = And((Text(title, "icontains", "the"), Text(title, "icontains", "of"), Text(title, "iprefix", "a")))
    q = Query("Book", (("title", title),), (("title", False),), where=where)
    code = render_orm(q)
    ast.parse(code)  # a repeated keyword would be a SyntaxError
    assert code.count("Q(title__iregex=") == 2, code  # both text kinds render as iregex: one keyword, two Qs


def _one_candidate(rows):
    return {"screened": {0: rows, 1: rows}, "mutants": {"order drop tiebreak": "...", "lookup gte": "..."}}


def test_a_mutant_that_gives_the_rows_on_either_insertion_order_is_a_survivor():
    from sandbox_env.stages.generate_orm import admit

    rows = [["a", 1], ["b", 1], ["c", 2]]
    other = [["b", 1], ["a", 1], ["c", 2]]
    results = {
        (v, build): {"0/ref": rows, "0/m/order drop tiebreak": other, "0/m/lookup gte": {"error": "x"}}
        for v in (0, 1)
        for build in (False, True)
    }
    ok, why = admit(0, _one_candidate(rows), results)
    assert sorted(ok) == [0, 1] and not why
    results[(1, True)]["0/m/order drop tiebreak"] = rows  # ties met in the other order give the reference's rows
    ok, why = admit(0, _one_candidate(rows), results)
    assert sorted(ok) == [0]
    assert why == {1: "mutant survives: order drop tiebreak (on the reversed build)"}


def test_pruning_keeps_the_variants_that_still_admit_a_task_and_removes_one_left_with_too_few():
    from sandbox_env.stages.generate_orm import pruned

    records = [
        {"task_id": "t1", "split": "train", "variants": {"0": [], "1": [], "2": []}},
        {"task_id": "t2", "split": "train", "variants": {"0": [], "1": []}},
        {"task_id": "t3", "split": "eval", "variants": {"6": [], "7": []}},
        {"task_id": "t4", "split": "train", "variants": {"0": [], "1": []}},
    ]
    problems = {"t1": {2: "mutant survives"}, "t2": {1: "mutant survives"}, "t3": {6: "mutant survives"}, "t4": {}}
    kept, removed = pruned(records, problems)
    assert removed == ["t2"]
    assert {r["task_id"]: sorted(r["variants"]) for r in kept} == {"t1": ["0", "1"], "t3": ["7"], "t4": ["0", "1"]}
