"""The fixture of one variant as plain Python rows: what the independent evaluator reads.

Decision: the evaluator computes expected rows from data.py and variants.extra_rows in plain
Python, not with SQL over the image's database. SQL written from the tree would share the
engine's semantics with the ORM (SQLite's LIKE that ignores ASCII case, its NULL ordering,
its decimal arithmetic): a reference that is wrong in the same way as the SQL would pass.
Python's semantics are written down here once, on purpose (NULL is missing, text compares
by code point, a regular expression is Python's `re` as Django registers it for SQLite), so
a disagreement between the reference and the evaluator is a finding, not a coincidence.
The rows are the ones build.py inserts (same ids for the forward build; the reversed build
only renumbers rows, and no generated query reads an id). A seeded world (a fixture seed, at or
above build.FIRST_SEED) is runtime/container/orm_fixture/world.py's rows: one module, imported here and by
build.py in the container, so both read one world.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.runtime.container.orm_fixture import data, variants
from sandbox_env.runtime.container.orm_fixture import world as seeded
from sandbox_env.runtime.container.orm_fixture.build import FIRST_SEED

VARIANTS = variants.VARIANTS
SEEDED = seeded.SEEDED  # fixture seeds of the seeded worlds the image holds (runtime/container/orm_fixture/world.py)


@dataclass
class World:
    """Rows per model (dicts with `id`), foreign keys as ids, and the relations indexed both ways."""

    variant: int
    rows: dict[str, list[dict[str, Any]]]
    by_id: dict[str, dict[int, dict[str, Any]]] = field(default_factory=dict)
    book_authors: list[tuple[int, int]] = field(default_factory=list)
    _multi: dict[tuple[str, str], dict[int, list[dict[str, Any]]]] = field(default_factory=dict)

    def fk(self, model: str, row: dict[str, Any], name: str, target: str) -> dict[str, Any] | None:
        ref = row.get(f"{name}_id")
        return None if ref is None else self.by_id[target][ref]

    def multi(self, model: str, row: dict[str, Any], name: str) -> list[dict[str, Any]]:
        return self._multi[(model, name)].get(row["id"], [])

    def has(self, model: str, name: str) -> bool:
        """Whether the relation `name` of `model` links any rows here (the hand-written fixture has no mentors)."""
        return bool(self._multi.get((model, name)))


def _index(world: World) -> None:
    world.by_id = {m: {r["id"]: r for r in rows} for m, rows in world.rows.items()}
    idx: dict[tuple[str, str], dict[int, list]] = defaultdict(lambda: defaultdict(list))
    for b in world.rows["Book"]:
        idx[("Publisher", "books")][b["publisher_id"]].append(b)
        if b["genre_id"] is not None:
            idx[("Genre", "books")][b["genre_id"]].append(b)
    for s in world.rows["Sale"]:
        idx[("Book", "sales")][s["book_id"]].append(s)
        idx[("Store", "sales")][s["store_id"]].append(s)
    for r in world.rows["Review"]:
        idx[("Book", "reviews")][r["book_id"]].append(r)
    for book_id, author_id in world.book_authors:
        idx[("Book", "authors")][book_id].append(world.by_id["Author"][author_id])
        idx[("Author", "books")][author_id].append(world.by_id["Book"][book_id])
    for c in world.rows.get("Contribution", []):
        idx[("Book", "contributions")][c["book_id"]].append(c)
        idx[("Author", "contributions")][c["author_id"]].append(c)
        idx[("Book", "contributors")][c["book_id"]].append(world.by_id["Author"][c["author_id"]])  # one per row
        idx[("Author", "contributed_books")][c["author_id"]].append(world.by_id["Book"][c["book_id"]])
    for a in world.rows["Author"]:
        if a.get("mentor_id") is not None:
            idx[("Author", "mentees")][a["mentor_id"]].append(a)
    world._multi = {k: dict(v) for k, v in idx.items()}
    for key in (
        ("Publisher", "books"),
        ("Genre", "books"),
        ("Book", "sales"),
        ("Store", "sales"),
        ("Book", "reviews"),
        ("Book", "authors"),
        ("Author", "books"),
        ("Book", "contributions"),
        ("Author", "contributions"),
        ("Book", "contributors"),
        ("Author", "contributed_books"),
        ("Author", "mentees"),
    ):
        world._multi.setdefault(key, {})


def is_seeded(variant: int) -> bool:
    """Whether `variant` names a seeded world (a fixture seed) rather than a variant of the hand-written fixture."""
    return variant >= FIRST_SEED


@functools.cache
def world(variant: int) -> World:
    """The rows of fixture `variant`: 0 data.py as written, 1..7 plus variants.extra_rows, a fixture seed its world."""
    if is_seeded(variant):
        rows = seeded.rows(variant)
        pairs = rows.pop("book_authors")
        w = World(variant, rows, book_authors=pairs)
        _index(w)
        return w
    extra = variants.extra_rows(variant)
    books, pairs, sales, reviews = data.books(), data.book_authors(), data.sales(), data.reviews()
    genre_ids = {name: i + 1 for i, name in enumerate(data.GENRES)}
    for i, (title, pub, genre, published, price, sale, pages, in_print, authors) in enumerate(extra["books"]):
        bid = len(data.BOOKS) + 1 + i
        books.append(
            dict(id=bid, title=title, isbn=f"979{variant:02d}{bid:07d}", publisher_id=pub + 1,
                 genre_id=None if genre is None else genre_ids[genre], published=published, price=price,
                 sale_price=sale, pages=pages, in_print=in_print)
        )  # fmt: skip
        pairs += [(bid, a + 1) for a in authors]
    book_id = {i: i + 1 for i in range(len(data.BOOKS) + len(extra["books"]))}
    for b, store, sold_on, quantity, unit_price in extra["sales"]:
        sales.append(dict(id=len(sales) + 1, book_id=book_id[b], store_id=store + 1, sold_on=sold_on,
                          quantity=quantity, unit_price=unit_price))  # fmt: skip
    for b, reviewer, rating, verified, created in extra["reviews"]:
        reviews.append(dict(id=len(reviews) + 1, book_id=book_id[b], reviewer=reviewer, rating=rating,
                            verified=verified, created=created))  # fmt: skip
    w = World(
        variant,
        {
            "Publisher": data.publishers(),
            "Author": data.authors(),
            "Genre": data.genres(),
            "Book": books,
            "Store": data.stores(),
            "Sale": sales,
            "Review": reviews,
            "Contribution": [],
        },
        book_authors=pairs,
    )
    _index(w)
    return w
