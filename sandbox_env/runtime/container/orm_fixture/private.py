"""Grading worlds: an image's fixture world plus rows drawn from a key that the host draws per grading.

    build_private_world(path, base, key)   # a copy of the image's database of `base`, plus the drawn rows

The orm family runs a rollout's cells again over such worlds (families/orm_replay.py): no file
holds their rows and no rollout has seen them, so an answer typed in, recognised or looked up
does not match them. What is drawn keeps a task's meaning: every row of the base world stays as
it is (everything a spec names still exists, with the same values), and the new rows are new
publishers, authors, genres, stores and books under new names, with sales and reviews of old and
new books, every value taken from the base world's own values (its countries, founding years,
birth dates, publication days, prices, pages, sale dates and times, reviewers), so a constant a
spec takes from the world keeps rows on it and ties arise as they do in the world. Columns the
base world leaves empty stay empty (the hand-written fixture has no mentor, contribution or sale
time). New sales come after their book's publication, reviews too.

Pure but for the build itself (random.Random keyed by the key; no clock).
"""

from __future__ import annotations

import os
import random
import shutil
from datetime import date, datetime, timedelta

NEW = {"Publisher": 3, "Author": 8, "Genre": 2, "Store": 2, "Book": 16, "Sale": 160, "Review": 60, "Contribution": 12}
_PUBLISHER_NAMES = ("Kestrel", "Alder", "Morrow", "Pinecone", "Thistle", "Brindle", "Larkspur", "Osprey", "Vantage", "Wren",
                    "Aardvark", "Zephyr")  # fmt: skip
_PUBLISHER_KINDS = ("Press", "Books", "House", "Editions")
_FIRST = ("Aino", "Bram", "Cyra", "Dario", "Esme", "Femi", "Gil", "Hana", "Ivo", "Juno", "Kofi", "Lena", "Aaron", "Zora")
_LAST = ("Aalto", "Berg", "Cruz", "Dahl", "Eze", "Frost", "Gallo", "Holm", "Ivers", "Janssen", "Kaur", "Lund", "Abbas", "Zubiri")
_GENRES = ("Folklore", "Essays", "Nature Writing", "Graphic Novel", "Crime", "Adventure", "Mythology", "Humour", "Allegory",
           "Zoology")  # fmt: skip
_CITIES = ("Bergen", "Cork", "Dakar", "Graz", "Hanoi", "Malmo", "Oaxaca", "Perth", "Quito", "Tartu", "Aachen", "Zurich")
_WORDS = ("Ember", "Willow", "Harrow", "Tundra", "Quill", "Solace", "Drift", "Beacon", "Thicket", "Marrow", "Vesper", "Cinder",
          "Abacus", "Zenith")  # fmt: skip


def _fresh(rng: random.Random, taken: set[str], make) -> str:
    for _ in range(10_000):
        name = make()
        if name.lower() not in taken:
            taken.add(name.lower())
            return name
    raise ValueError("no fresh name is left to draw")


def _values(rows: list[dict], field: str) -> list:
    return sorted({r[field] for r in rows if r.get(field) is not None}, key=repr)


_EXTREMES = [0.0]  # the share of values drawn from either end of the base's range (set by new_rows' strength)


def _pick(rng: random.Random, rows: list[dict], field: str, none_share: float = 0.0):
    """A value of `field` the base rows hold (None where none does, or at the base's own rate); with a strength
    above 1, often one at either end of their range, so new rows reach the first and last places of an order."""
    values = _values(rows, field)
    if not values:
        return None
    if none_share and rng.random() < none_share:
        return None
    if rng.random() < _EXTREMES[0]:
        end = max(1, len(values) // 10)
        return rng.choice(values[:end] + values[-end:])
    return rng.choice(values)


def _none_share(rows: list[dict], field: str) -> float:
    return sum(r.get(field) is None for r in rows) / len(rows) if rows else 0.0


def new_rows(world: dict[str, list], key: str, strength: int = 1) -> dict[str, list]:
    """The rows a grading world adds to `world` (ids after the base's), per model, plus "book_authors".

    `strength` multiplies how many are drawn and, above 1, draws half of the values from either end
    of the base's ranges: a task whose rows a few new ones leave alone (the first rows of an order)
    gets a world that moves them.
    """
    rng = random.Random(f"websandbox-orm-private-{key}")
    _EXTREMES[0] = 0.5 if strength > 1 else 0.0
    n = {model: count * strength for model, count in NEW.items()}
    new: dict[str, list] = {m: [] for m in world}
    nxt = {m: max((r["id"] for r in rows), default=0) + 1 for m, rows in world.items() if m != "book_authors"}

    def add(model: str, **fields) -> dict:
        row = {"id": nxt[model], **fields}
        nxt[model] += 1
        new[model].append(row)
        return row

    pubs, authors, genres, stores = world["Publisher"], world["Author"], world["Genre"], world["Store"]
    taken = {r["name"].lower() for r in pubs}
    for _ in range(n["Publisher"]):
        name = _fresh(rng, taken, lambda: f"{rng.choice(_PUBLISHER_NAMES)} {rng.choice(_PUBLISHER_KINDS)}")
        add("Publisher", name=name, country=_pick(rng, pubs, "country"),
            founded=_pick(rng, pubs, "founded", _none_share(pubs, "founded")), is_independent=rng.random() < 0.4)  # fmt: skip
    taken = {r["name"].lower() for r in authors}
    mentors = [r["id"] for r in authors]
    with_mentor = any(r.get("mentor_id") for r in authors)
    for _ in range(n["Author"]):
        name = _fresh(rng, taken, lambda: f"{rng.choice(_FIRST)} {rng.choice(_LAST)}")
        email = None if rng.random() < _none_share(authors, "email") else name.lower().replace(" ", ".") + "@example.org"
        row = add("Author", name=name, country=_pick(rng, authors, "country"),
                  birth_date=_pick(rng, authors, "birth_date", _none_share(authors, "birth_date")), email=email)  # fmt: skip
        if with_mentor:
            row["mentor_id"] = rng.choice(mentors) if rng.random() < 0.4 else None
    taken = {r["name"].lower() for r in genres}
    for _ in range(n["Genre"]):
        add("Genre", name=_fresh(rng, taken, lambda: rng.choice(_GENRES)))
    taken = {r["name"].lower() for r in stores}
    for _ in range(n["Store"]):
        city = rng.choice(_CITIES)
        add("Store", name=_fresh(rng, taken, lambda: f"{rng.choice(_CITIES)} Books"), city=city,
            country=_pick(rng, [s for s in stores if not s["is_online"]], "country"),
            opened=_pick(rng, stores, "opened"), is_online=False)  # fmt: skip
    _add_books(rng, world, new, add, n)
    _add_sales_and_reviews(rng, world, new, add, n)
    return new


def _add_books(rng: random.Random, world: dict[str, list], new: dict[str, list], add, n: dict[str, int]) -> None:
    books = world["Book"]
    taken = {b["title"].lower() for b in books}
    publishers = [r["id"] for r in world["Publisher"] + new["Publisher"]]
    genres = [r["id"] for r in world["Genre"] + new["Genre"]]
    authors = [r["id"] for r in world["Author"] + new["Author"]]
    days = _values(books, "published")
    isbn = max(int(b["isbn"]) for b in books)
    for _ in range(n["Book"]):
        title = _fresh(rng, taken, lambda: rng.choice(("The {} {}", "{} {}", "The {} of {}")).format(*rng.sample(_WORDS, 2)))
        price = _pick(rng, books, "price")
        sale = _pick(rng, books, "sale_price") if rng.random() < 1 - _none_share(books, "sale_price") else None
        if sale is not None and sale >= price:
            sale = None
        isbn += 1
        row = add("Book", title=title, isbn=f"{isbn:013d}", publisher_id=rng.choice(publishers),
                  genre_id=None if rng.random() < _none_share(books, "genre_id") else rng.choice(genres),
                  published=rng.choice(days), price=price, sale_price=sale, pages=_pick(rng, books, "pages"),
                  in_print=rng.random() < 0.8)  # fmt: skip
        for author in rng.sample(authors, rng.choice((1, 1, 2))):
            new["book_authors"].append((row["id"], author))
    if world["Contribution"]:
        roles = _values(world["Contribution"], "role")
        every = [b["id"] for b in books + new["Book"]]
        seen = {(c["book_id"], c["author_id"], c["role"]) for c in world["Contribution"]}
        for _ in range(n["Contribution"]):
            triple = (rng.choice(every), rng.choice(authors), rng.choice(roles))
            if triple not in seen:
                seen.add(triple)
                add("Contribution", book_id=triple[0], author_id=triple[1], role=triple[2])


def _add_sales_and_reviews(rng: random.Random, world: dict[str, list], new: dict[str, list], add, n: dict[str, int]) -> None:
    books = world["Book"] + new["Book"]
    sales, reviews = world["Sale"], world["Review"]
    stores = [s["id"] for s in world["Store"] + new["Store"]]
    days = _values(sales, "sold_on")
    times = sorted({(t.hour, t.minute) for t in (s.get("sold_at") for s in sales) if t is not None})
    reviewers = _values(reviews, "reviewer")
    while len(new["Sale"]) < n["Sale"]:
        book = rng.choice(books)
        sold_on = rng.choice(days)
        if sold_on <= _day(book["published"]):
            continue
        price = book["sale_price"] if book["sale_price"] is not None and rng.random() < 0.4 else book["price"]
        row = add("Sale", book_id=book["id"], store_id=rng.choice(stores), sold_on=sold_on,
                  quantity=_pick(rng, sales, "quantity"), unit_price=price)  # fmt: skip
        if times:  # the hand-written fixture has no sale times: its new sales have none either
            hour, minute = rng.choice(times)
            day = _day(sold_on)
            row["sold_at"] = datetime(day.year, day.month, day.day, hour, minute)
    for _ in range(n["Review"]):
        book = rng.choice(books)
        created = _day(book["published"]) + timedelta(days=7 * rng.randrange(3, 150))
        add("Review", book_id=book["id"], reviewer=rng.choice(reviewers), rating=rng.randrange(1, 6),
            verified=rng.random() < 0.75, created=created)  # fmt: skip


def _day(value) -> date:
    return value if isinstance(value, date) else date.fromisoformat(str(value))


def build_private_world(path: str, base: int, key: str, source: str, strength: int = 1) -> None:
    """A copy of the image's database `source` (the world `base`) at `path`, plus the rows drawn from `key`."""
    from orm_fixture.build import world_rows

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "orm_fixture.settings")
    os.environ["ORM_FIXTURE_DB"] = path
    import django

    django.setup()
    from django.db import connection, transaction

    from orm_fixture.shop.models import Author, Book, Contribution, Genre, Publisher, Review, Sale, Store

    connection.close()
    shutil.copyfile(source, path)
    connection.settings_dict["NAME"] = path
    rows = new_rows(world_rows(base), key, strength)
    with transaction.atomic():
        for model in (Publisher, Author, Genre, Store, Book, Sale, Review, Contribution):
            model.objects.bulk_create(model(**r) for r in rows[model.__name__])
        through = Book.authors.through
        through.objects.bulk_create(through(book_id=b, author_id=a) for b, a in rows["book_authors"])
    connection.close()
