"""Seeded worlds (runtime/container/orm_fixture/world.py) and the fixture seeds as an axis of the generator."""

from __future__ import annotations

from collections import Counter, defaultdict

import pytest

from sandbox_env.generate import store
from sandbox_env.generate.evaluate import evaluate
from sandbox_env.generate.fixture import is_seeded, world
from sandbox_env.generate.sample import candidate
from sandbox_env.generate.tree import Cmp, FieldRef, Query
from sandbox_env.runtime.container.orm_fixture import world as seeded
from sandbox_env.runtime.container.orm_fixture.build import FIRST_SEED


def test_the_same_seed_gives_the_same_world_and_another_seed_another():
    a, b = seeded.rows(101), seeded.rows(101)
    assert a == b
    other = seeded.rows(102)
    assert [r["title"] for r in other["Book"]] != [r["title"] for r in a["Book"]]
    assert other["Sale"] != a["Sale"]


def test_a_seeded_world_has_groups_enough_for_group_by_and_windows():
    rows = seeded.rows(101)
    assert 20 <= len(rows["Publisher"]) < 100 and 10 <= len(rows["Genre"]) < 100 and 10 <= len(rows["Store"]) < 100
    assert 100 <= len(rows["Book"]) < 1000 and len(rows["Sale"]) >= 1000 and len(rows["Review"]) >= 500
    assert {c["role"] for c in rows["Contribution"]} == set(seeded.ROLES)
    assert sum(a["mentor_id"] is not None for a in rows["Author"]) >= 20
    assert all(s["sold_at"].date() == s["sold_on"] for s in rows["Sale"])


def test_every_mentor_is_an_earlier_author_and_every_sale_follows_its_book():
    rows = seeded.rows(103)
    assert all(a["mentor_id"] is None or a["mentor_id"] < a["id"] for a in rows["Author"])
    published = {b["id"]: b["published"] for b in rows["Book"]}
    assert all(s["sold_on"] > published[s["book_id"]] for s in rows["Sale"])


def test_ordering_keys_tie_inside_most_partitions():
    """A window or top-k per publisher ordered by price or pages has ties to break (the stated tiebreak is tested)."""
    books = seeded.rows(101)["Book"]
    for key in ("price", "pages", "published"):
        by_pub: dict[int, Counter] = defaultdict(Counter)
        for b in books:
            by_pub[b["publisher_id"]][b[key]] += 1
        tied = sum(any(n > 1 for n in c.values()) for c in by_pub.values())
        assert tied >= len(by_pub) // 2, (key, tied, len(by_pub))


def test_every_grid_value_has_a_row_in_every_seeded_world():
    """A constant taken from one world's prices or pages sits exactly on a row in every other world."""
    for seed in seeded.SEEDED:
        books = seeded.rows(seed)["Book"]
        assert {b["price"] for b in books} == set(seeded.PRICES), seed
        assert {b["pages"] for b in books} == set(seeded.PAGES), seed
        published = {b["published"] for b in books}
        assert published <= set(seeded.RELEASE_DAYS) and len(published) >= 0.9 * len(seeded.RELEASE_DAYS), seed


@pytest.mark.parametrize("seed", seeded.SEEDED)
def test_a_boundary_row_kills_the_off_by_one_mutant_on_every_seeded_world(seed):
    w = world(seed)
    for value in (seeded.PRICES[5], seeded.PRICES[-4]):
        q = Query("Book", (("title", FieldRef(("title",))),), (("title", False),), where=Cmp(FieldRef(("price",)), "gte", value))
        strict = Query(q.universe, q.cols, q.order, where=Cmp(FieldRef(("price",)), "gt", value))
        assert evaluate(q, w) != evaluate(strict, w)
        on_it = [b["title"] for b in w.rows["Book"] if b["price"] == value]
        assert on_it and {t for (t,) in evaluate(q, w)} - {t for (t,) in evaluate(strict, w)} == set(on_it)


def test_a_reversed_build_is_the_same_world_numbered_the_other_way():
    rows = seeded.rows(104)
    rev = seeded.reversed_ids(rows)
    n_books = len(rows["Book"])
    assert [r["title"] for r in rev["Book"]] == [r["title"] for r in rows["Book"]][::-1]
    assert rev["Book"][0]["id"] == 1 and rows["Book"][-1]["id"] == n_books
    title = {b["id"]: b["title"] for b in rows["Book"]}
    title_rev = {b["id"]: b["title"] for b in rev["Book"]}
    assert sorted((title[s["book_id"]], s["sold_at"]) for s in rows["Sale"]) == sorted(
        (title_rev[s["book_id"]], s["sold_at"]) for s in rev["Sale"]
    )


def test_the_host_world_indexes_the_new_relations():
    w = world(101)
    assert is_seeded(101) and not is_seeded(7) and FIRST_SEED <= min(seeded.SEEDED)
    mentor = next(a for a in w.rows["Author"] if a["mentor_id"] is not None)
    assert mentor in w.multi("Author", w.by_id["Author"][mentor["mentor_id"]], "mentees")
    c = w.rows["Contribution"][0]
    assert c in w.multi("Book", w.by_id["Book"][c["book_id"]], "contributions")
    assert w.has("Author", "mentees") and not world(0).has("Author", "mentees")


def test_the_hand_written_fixture_has_no_rows_for_the_schema_extension():
    """No hand-written task's rows can move: no mentor, no contribution, no sale time in variants 0..7."""
    for v in range(8):
        w = world(v)
        assert w.rows["Contribution"] == []
        assert all(a.get("mentor_id") is None for a in w.rows["Author"])
        assert all(s.get("sold_at") is None for s in w.rows["Sale"])


def test_eval_fixture_seeds_never_appear_in_train():
    train, held = store.fixture_pool("train", True), store.fixture_pool("eval", True)
    assert held == store.EVAL_SEEDS and set(held) <= set(seeded.SEEDED)
    assert train and not set(train) & set(held) and set(train) | set(held) == set(seeded.SEEDED)
    assert store.DRAW_SEED in train
    for r in store.read():
        fixtures = set(map(int, r["variants"]))
        if r["split"] == "train":
            assert not fixtures & set(held), r["task_id"]
        if r["split"] == "eval" and any(map(is_seeded, fixtures)):
            assert fixtures <= set(held), r["task_id"]
    with pytest.raises(ValueError, match="unknown split"):
        store.fixture_pool("test", True)


def test_seeded_draws_reach_the_schema_extension_and_keep_the_hand_fixture_streams():
    names = " ".join(
        str(q) for shape in ("filter", "row_agg", "group") for i in range(80) if (q := candidate(7, i, shape, 101)) is not None
    )
    for part in ("contributions", "'mentor'", "sold_at"):
        assert part in names, part
    assert candidate(7, 3, "filter") == candidate(7, 3, "filter")
    with pytest.raises(ValueError, match="seeded world"):
        candidate(7, 3, "filter", 5)
