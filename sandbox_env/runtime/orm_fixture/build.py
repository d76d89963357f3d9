"""Build the fixture database from nothing, and fingerprint a built one.

    python -m orm_fixture.build PATH            # (re)build PATH, print its digest
    python -m orm_fixture.build --digest PATH   # print the digest of an existing file

The digest covers every row of every table in a fixed order, so two builds (the
image's and a fresh one) can be compared by one line.
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
)


def build_database(path: str) -> None:
    """Create the tables from the models and insert the data, at path (replaced if it exists)."""
    os.environ["ORM_FIXTURE_DB"] = path
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orm_fixture.settings")
    import django

    django.setup()
    from django.db import connection, transaction

    from orm_fixture import data
    from orm_fixture.shop.models import Author, Book, Genre, Publisher, Review, Sale, Store

    if connection.settings_dict["NAME"] != path:
        raise RuntimeError(f"Django is configured for {connection.settings_dict['NAME']}, not {path}")
    connection.close()
    for suffix in ("", "-journal", "-wal", "-shm"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    models = (Publisher, Author, Genre, Book, Store, Sale, Review)
    with connection.schema_editor() as editor:
        for model in models:
            editor.create_model(model)
    with transaction.atomic():
        Publisher.objects.bulk_create(Publisher(**r) for r in data.publishers())
        Author.objects.bulk_create(Author(**r) for r in data.authors())
        Genre.objects.bulk_create(Genre(**r) for r in data.genres())
        Book.objects.bulk_create(Book(**r) for r in data.books())
        through = Book.authors.through
        through.objects.bulk_create(through(book_id=b, author_id=a) for b, a in data.book_authors())
        Store.objects.bulk_create(Store(**r) for r in data.stores())
        Sale.objects.bulk_create(Sale(**r) for r in data.sales())
        Review.objects.bulk_create(Review(**r) for r in data.reviews())
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
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    build_database(argv[0])
    print(digest(argv[0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
