"""Build the fixture database from nothing, and fingerprint a built one.

    python -m orm_fixture.build PATH [--variant K] [--reversed]   # (re)build PATH, print its digest
    python -m orm_fixture.build --digest PATH                     # print the digest of an existing file

K is a variant of the hand-written fixture (0..7, variants.py) or a fixture seed of a seeded
world (world.py's SEEDED, or any seed of 100 and up for a private world): the whole world is
drawn from the seed, and `--reversed` numbers every model's rows the other way round.

The digest covers every row of every table in a fixed order, so two builds (the
image's and a fresh one) can be compared by one line. `--variant K` adds the rows that
variant K draws (variants.py); `--reversed` inserts those drawn rows in the opposite
order, so their primary keys differ: a query whose rows depend on that order (a tie its
spec leaves open) gives different rows on the two builds, which verification refuses.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import sys

TABLES = (
    "shop_publisher",
    "shop_author",
    "shop_genre",
    "shop_book",
    "shop_book_authors",
    "shop_store",
    "shop_sale",
    "shop_review",
    "shop_contribution",
)
FIRST_SEED = 100  # a --variant at or above it is a fixture seed of a seeded world (world.py)


def _with_variant(variant: int, reverse: bool) -> dict[str, list]:
    """data.py's rows as model field dicts, with the rows of `variant` appended (in reverse when asked)."""
    from orm_fixture import data, variants

    extra = variants.extra_rows(variant)
    books, pairs, sales, reviews = data.books(), data.book_authors(), data.sales(), data.reviews()
    drawn = list(range(len(extra["books"])))
    order = drawn[::-1] if reverse else drawn
    book_id = {len(data.BOOKS) + i: len(data.BOOKS) + 1 + order.index(i) for i in drawn}
    book_id.update({i: i + 1 for i in range(len(data.BOOKS))})
    genre_ids = {name: i + 1 for i, name in enumerate(data.GENRES)}
    for i in order:
        title, pub, genre, published, price, sale, pages, in_print, authors = extra["books"][i]
        bid = book_id[len(data.BOOKS) + i]
        books.append(
            dict(
                id=bid,
                title=title,
                isbn=f"979{variant:02d}{bid:07d}",
                publisher_id=pub + 1,
                genre_id=None if genre is None else genre_ids[genre],
                published=published,
                price=price,
                sale_price=sale,
                pages=pages,
                in_print=in_print,
            )
        )
        pairs += [(bid, a + 1) for a in authors]
    for b, store, sold_on, quantity, unit_price in extra["sales"][:: -1 if reverse else 1]:
        sales.append(dict(id=len(sales) + 1, book_id=book_id[b], store_id=store + 1, sold_on=sold_on, quantity=quantity,
                          unit_price=unit_price))  # fmt: skip
    for b, reviewer, rating, verified, created in extra["reviews"][:: -1 if reverse else 1]:
        reviews.append(dict(id=len(reviews) + 1, book_id=book_id[b], reviewer=reviewer, rating=rating, verified=verified,
                            created=created))  # fmt: skip
    return {"books": books, "book_authors": pairs, "sales": sales, "reviews": reviews}


def _seeded(seed: int, reverse: bool) -> dict[str, list]:
    from orm_fixture import world

    rows = world.rows(seed)
    return world.reversed_ids(rows) if reverse else rows


def _hand_written(variant: int, reverse: bool) -> dict[str, list]:
    from orm_fixture import data

    rows = _with_variant(variant, reverse)
    return {
        "Publisher": data.publishers(),
        "Author": data.authors(),
        "Genre": data.genres(),
        "Book": sorted(rows["books"], key=lambda r: r["id"]),
        "Store": data.stores(),
        "Sale": rows["sales"],
        "Review": rows["reviews"],
        "Contribution": [],
        "book_authors": rows["book_authors"],
    }


def world_rows(variant: int, reverse: bool = False) -> dict[str, list]:
    """Every row of the world `variant` names, as model field dicts (plus "book_authors" pairs)."""
    return _seeded(variant, reverse) if variant >= FIRST_SEED else _hand_written(variant, reverse)


def build_database(path: str, variant: int = 0, reverse: bool = False) -> None:
    """Create the tables from the models and insert the data of `variant`, at path (replaced if it exists)."""
    os.environ["ORM_FIXTURE_DB"] = path
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orm_fixture.settings")
    import django

    django.setup()
    from django.db import connection, transaction

    from orm_fixture.shop.models import Author, Book, Contribution, Genre, Publisher, Review, Sale, Store

    connection.close()
    connection.settings_dict["NAME"] = path  # a second build in one process (the image's variants) writes its own file
    for suffix in ("", "-journal", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    models = (Publisher, Author, Genre, Book, Store, Sale, Review, Contribution)
    with connection.schema_editor() as editor:
        for model in models:
            editor.create_model(model)
    rows = world_rows(variant, reverse)
    with transaction.atomic():  # foreign keys are checked at commit: a mentor may come later in a reversed build
        for model in models:
            model.objects.bulk_create((model(**r) for r in rows[model.__name__]), batch_size=2000)
        through = Book.authors.through
        through.objects.bulk_create((through(book_id=b, author_id=a) for b, a in rows["book_authors"]), batch_size=2000)
    connection.close()


def digest(path: str) -> str:
    """sha256 over every row of every fixture table, ordered by primary key."""
    h = hashlib.sha256()
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        for table in TABLES:
            h.update(table.encode() + b"\0")
            for row in con.execute(f'SELECT * FROM "{table}" ORDER BY 1, 2'):  # noqa: S608 - fixed names
                h.update(repr(row).encode() + b"\n")
    finally:
        con.close()
    return h.hexdigest()


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "--digest":
        print(digest(argv[1]))
        return 0
    reverse = "--reversed" in argv
    argv = [a for a in argv if a != "--reversed"]
    variant = 0
    if len(argv) == 3 and argv[1] == "--variant" and argv[2].isdigit():
        variant, argv = int(argv[2]), argv[:1]
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    build_database(argv[0], variant, reverse)
    print(digest(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
