"""Seeded worlds: a whole bookshop drawn from a fixture seed, big enough for groups and windows to discriminate.

    rows(seed) -> {model name: [row dicts]}, plus "book_authors": [(book id, author id)]

Pure and deterministic (random.Random keyed by the seed, no clock, no Django): build.py inserts
these rows in the container and generate/fixture.py's World reads the very same rows on the host,
so the evaluator and the ORM see one world. Container code imports it as `orm_fixture.world`, the
host as `sandbox_env.runtime.container.orm_fixture.world`: it imports nothing outside this package.

Decisions:
- Fixture seeds are numbers of their own (SEEDED), apart from the hand-written fixture's variants
  0..7 (variants.py), so a fixture seed names one database in the image (orm-v<seed>.sqlite3)
  and one World on the host, and the rows of every stored task keep their meaning.
- Sizes (tens of publishers, genres, stores; a hundred and more authors; hundreds of books;
  thousands of sales): a GROUP BY or a window per partition has many groups with several rows.
- Ties and boundaries by construction: prices, pages, dates and times are drawn from coarse
  grids that every seed shares (not drawn from the seed), so a constant the sampler takes from
  one world's rows has rows exactly on it and on the grid steps beside it in every world, and
  an ordering key repeats inside most partitions (a stated tiebreak decides between rows); a
  publisher publishes on a few release days, so publication dates tie inside publishers.
- A reversed build (`reversed_ids`) numbers every model's rows the other way round: a query whose
  rows depend on insertion order (a tie its spec leaves open) differs between the two builds.
- Case variants (SQLite's LIKE ignores ASCII case): two publishers, two genres and one store
  whose names differ from another's by letter case only, as in the hand-written fixture.
- The schema extension is used here: Author.mentor (an earlier author, so no cycle), Contribution
  rows with a role (the `through` of Book.contributors), Sale.sold_at (a time on the sale's day).
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from decimal import Decimal

SEEDED = (101, 102, 103, 104, 105, 106)  # the fixture seeds the image builds; store.py holds some out for eval
N_PUBLISHERS = 30
N_GENRES = 18
N_STORES = 16
N_AUTHORS = 120
N_BOOKS = 480
N_SALES = 3600
N_REVIEWS = 1400
RELEASES = 8  # a publisher's release days: its books share them (ties on the publication date)
ROLES = ("editor", "translator", "illustrator", "foreword")
SALES_FIRST, SALES_LAST = date(2022, 1, 1), date(2024, 12, 31)

_PUB_A = ("Harbor", "Blue", "North", "Grey", "Quarto", "Saffron", "Iron", "Willow", "Cedar", "Lantern", "Meridian",
          "Tidewater", "Copper", "Juniper", "Falcon", "Orchard")  # fmt: skip
_PUB_B = ("Press", "Books", "House", "Publishing", "Editions", "& Sons")
_GENRES = ("Fantasy", "Science Fiction", "Mystery", "Horror", "Romance", "History", "Poetry", "Biography", "Travel",
           "Cookery", "Thriller", "Philosophy", "Drama", "Satire", "Western", "Memoir")  # fmt: skip
_COUNTRIES = ("UK", "USA", "France", "Canada", "Japan", "Nigeria", "Brazil", "Germany", "India", "Spain")
_CITIES = ("London", "Lyon", "Toronto", "Osaka", "Boston", "Leeds", "Berlin", "Madrid", "Pune", "Recife", "Lagos",
           "Kyoto", "Austin", "Nice", "Porto", "Hamburg")  # fmt: skip
_FIRST = ("Ada", "Ben", "Chloe", "Dev", "Elena", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Keiko", "Luca", "Mira",
          "Nico", "Olga", "Pablo", "Rosa", "Sven", "Tara", "Umar")  # fmt: skip
_LAST = ("Abbott", "Baker", "Costa", "Dubois", "Evans", "Fujita", "Garcia", "Hale", "Ito", "Jensen", "Khan", "Lima",
         "Moreau", "Nakamura", "Okafor", "Patel", "Quinn", "Rossi", "Sato", "Tremblay")  # fmt: skip
_ADJ = ("Amber", "Silver", "Hidden", "Northern", "Broken", "Quiet", "Scarlet", "Golden", "Wandering", "Distant",
        "Hollow", "Burning", "Frozen", "Gentle", "Restless", "Velvet", "Crimson", "Salt", "Paper", "Glass")  # fmt: skip
_NOUN = ("Orchard", "Lighthouse", "Harbour", "Labyrinth", "Garden", "Caravan", "Mirror", "Citadel", "Lantern",
         "Voyage", "Archive", "Cathedral", "Furnace", "Meadow", "Engine", "Compass", "River", "Crown", "Station",
         "Ledger")  # fmt: skip
_REVIEWERS = ("anna_k", "bookworm42", "c.reyes", "dmitri", "elif", "fatima.b", "gus", "hiro_t", "ines", "jo_marsh",
              "kwame", "luis", "mo.z", "nadia", "oskar")  # fmt: skip
PRICES = tuple(Decimal(f"{d}.{c}") for d in range(8, 36, 2) for c in ("00", "50", "99"))  # a coarse price grid
PAGES = tuple(range(120, 700, 20))
HOURS = tuple(range(9, 21))
_GRID = random.Random("websandbox-orm-world-grid")  # the calendars every seed shares (not keyed by the seed)
RELEASE_DAYS = tuple(sorted(_GRID.sample(range(0, 6935, 7), 72)))  # weeks after 2005-01-03, as days
RELEASE_DAYS = tuple(date(2005, 1, 3) + timedelta(days=d) for d in RELEASE_DAYS)
BIRTH_DAYS = tuple(date(y, m, 1) for y in range(1940, 2000, 3) for m in (1, 7))
OPENING_DAYS = tuple(date(y, 3, 1) for y in range(1985, 2022, 4))
MINUTES = (0, 15, 30, 45)


def _day(rng: random.Random, first: date, last: date, step: int = 1) -> date:
    return first + timedelta(days=step * rng.randrange((last - first).days // step + 1))


def _unique(rng: random.Random, n: int, make) -> list[str]:
    out: list[str] = []
    seen: set[str] = set()
    while len(out) < n:
        name = make(rng)
        if name.lower() not in seen:
            seen.add(name.lower())
            out.append(name)
    return out


def _publishers(rng: random.Random) -> list[dict]:
    names = _unique(rng, N_PUBLISHERS - 2, lambda r: f"{r.choice(_PUB_A)} {r.choice(_PUB_B)}")
    names += [names[0].lower(), names[1].upper()]  # case variants
    return [
        dict(id=i + 1, name=n, country=rng.choice(_COUNTRIES),
             founded=None if rng.random() < 0.15 else rng.randrange(1900, 2021, 5), is_independent=rng.random() < 0.4)
        for i, n in enumerate(names)
    ]  # fmt: skip


def _genres(rng: random.Random) -> list[dict]:
    names = rng.sample(_GENRES, N_GENRES - 2)
    names += [names[0].lower(), names[1].upper()]
    return [dict(id=i + 1, name=n) for i, n in enumerate(names)]


def _stores(rng: random.Random) -> list[dict]:
    cities = rng.sample(_CITIES, N_STORES - 2)
    rows = []
    for city in cities:
        rows.append(dict(name=f"{city} Books", city=city, country=rng.choice(_COUNTRIES),
                         opened=rng.choice(OPENING_DAYS), is_online=False))  # fmt: skip
    rows.append(dict(name="Webshelf", city=None, country=rng.choice(_COUNTRIES), opened=date(2020, 1, 6), is_online=True))
    rows.append(dict(name=rows[0]["name"].lower(), city=rng.choice(_CITIES), country=rows[0]["country"].lower(),
                     opened=date(2021, 6, 7), is_online=False))  # fmt: skip
    return [dict(id=i + 1, **r) for i, r in enumerate(rows)]


def _authors(rng: random.Random) -> list[dict]:
    names = _unique(rng, N_AUTHORS, lambda r: f"{r.choice(_FIRST)} {r.choice(_LAST)}")
    rows = []
    for i, name in enumerate(names):
        born = None if rng.random() < 0.12 else rng.choice(BIRTH_DAYS)
        mentor = rng.randrange(1, min(i, 25) + 1) if i >= 5 and rng.random() < 0.45 else None  # an earlier author
        email = None if rng.random() < 0.2 else name.lower().replace(" ", ".") + "@example.org"
        rows.append(dict(id=i + 1, name=name, country=rng.choice(_COUNTRIES), birth_date=born, email=email, mentor_id=mentor))
    return rows


def _books(rng: random.Random, seed: int) -> tuple[list[dict], list[tuple[int, int]]]:
    forms = (lambda a, n: f"The {a} {n}", lambda a, n: f"{a} {n}", lambda a, n: f"The {n} of {a}")
    titles = _unique(rng, N_BOOKS, lambda r: r.choice(forms)(r.choice(_ADJ), r.choice(_NOUN)))
    rows, pairs = [], []
    releases = {p: rng.sample(RELEASE_DAYS, RELEASES) for p in range(N_PUBLISHERS)}
    for i, title in enumerate(titles):
        price = rng.choice(PRICES)
        publisher = rng.randrange(N_PUBLISHERS)
        sale = (price * Decimal(rng.choice((70, 75, 80, 90))) / 100).quantize(Decimal("0.01")) if rng.random() < 0.3 else None
        rows.append(dict(id=i + 1, title=title, isbn=f"977{seed % 1000:03d}{i + 1:07d}",
                         publisher_id=publisher + 1,
                         genre_id=None if rng.random() < 0.08 else rng.randrange(1, N_GENRES + 1),
                         published=rng.choice(releases[publisher]), price=price, sale_price=sale,
                         pages=rng.choice(PAGES), in_print=rng.random() < 0.8))  # fmt: skip
        pairs += [(i + 1, a) for a in sorted(rng.sample(range(1, N_AUTHORS + 1), rng.choice((1, 1, 1, 2, 3))))]
    return rows, pairs


def _contributions(rng: random.Random, books: list[dict]) -> list[dict]:
    seen: set[tuple[int, int, str]] = set()
    rows = []
    for b in books:
        for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
            key = (b["id"], rng.randrange(1, N_AUTHORS + 1), rng.choice(ROLES))
            if key not in seen:
                seen.add(key)
                rows.append(dict(id=len(rows) + 1, book_id=key[0], author_id=key[1], role=key[2]))
    return rows


def _sales(rng: random.Random, books: list[dict]) -> list[dict]:
    weights = [0 if rng.random() < 0.07 else rng.choice((1, 1, 2, 3, 5)) for _ in books]  # some books never sell
    rows = []
    while len(rows) < N_SALES:
        b = rng.choices(books, weights)[0]
        first = max(SALES_FIRST, b["published"] + timedelta(days=1))
        if first > SALES_LAST:
            continue
        sold_on = _day(rng, first, SALES_LAST)
        sold_at = datetime(sold_on.year, sold_on.month, sold_on.day, rng.choice(HOURS), rng.choice(MINUTES))
        price = b["sale_price"] if b["sale_price"] is not None and rng.random() < 0.4 else b["price"]
        rows.append(dict(id=len(rows) + 1, book_id=b["id"], store_id=rng.randrange(1, N_STORES), sold_on=sold_on,
                         quantity=rng.randrange(1, 9), unit_price=price, sold_at=sold_at))  # fmt: skip
    return rows  # the last store (the case variant) sells nothing


def _reviews(rng: random.Random, books: list[dict]) -> list[dict]:
    reviewable = [b for b in books if rng.random() >= 0.1]
    rows = []
    for j in range(N_REVIEWS):
        b = rng.choice(reviewable)
        created = b["published"] + timedelta(days=7 * rng.randrange(3, 150))
        rows.append(dict(id=j + 1, book_id=b["id"], reviewer=rng.choice(_REVIEWERS), rating=rng.randrange(1, 6),
                         verified=rng.random() < 0.75, created=created))  # fmt: skip
    return rows


def rows(seed: int) -> dict[str, list]:
    """Every row of the seeded world `seed` (one of SEEDED, or any int for a private world)."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a fixture seed is a non-negative int, got {seed!r}")
    rng = random.Random(f"websandbox-orm-world-{seed}")
    books, pairs = _books(rng, seed)
    return {
        "Publisher": _publishers(rng),
        "Author": _authors(rng),
        "Genre": _genres(rng),
        "Book": books,
        "Store": _stores(rng),
        "Sale": _sales(rng, books),
        "Review": _reviews(rng, books),
        "Contribution": _contributions(rng, books),
        "book_authors": pairs,
    }


# the foreign-key columns of each table (what reversed_ids renumbers with their targets)
FKS = {
    "Author": {"mentor_id": "Author"},
    "Book": {"publisher_id": "Publisher", "genre_id": "Genre"},
    "Sale": {"book_id": "Book", "store_id": "Store"},
    "Review": {"book_id": "Book"},
    "Contribution": {"book_id": "Book", "author_id": "Author"},
}


def reversed_ids(world: dict[str, list]) -> dict[str, list]:
    """The same world with every model's ids numbered from the other end (foreign keys follow)."""
    n = {m: len(r) for m, r in world.items() if m != "book_authors"}

    def flip(model: str, i: int | None) -> int | None:
        return None if i is None else n[model] + 1 - i

    out: dict[str, list] = {}
    for model, rs in world.items():
        if model == "book_authors":
            out[model] = [(flip("Book", b), flip("Author", a)) for b, a in rs][::-1]
            continue
        fks = FKS.get(model, {})
        out[model] = [{**r, "id": flip(model, r["id"]), **{c: flip(t, r[c]) for c, t in fks.items()}} for r in rs][::-1]
    return out
