"""Fixture variants: the hand-written data plus rows drawn from a seed, so that an answer key cannot be replayed.

Variant 0 is the fixture as data.py writes it (every frozen expected.json is its rows).
Variant k (1 <= k < VARIANTS) adds the rows `extra_rows(k)` draws from a fixed seed:
books with titles no base row has, under the original publishers, genres and authors,
and sales and reviews of new and original books. So the rows a query returns differ from
variant to variant, while everything a task's spec names keeps its meaning.

What the draws keep, so that the facts data.py arranges on purpose still hold:
  - no book, sale or review touches a sensitivity row (publishers, books, stores and
    authors after the originals): their ties and boundaries stay as placed;
  - the publisher with no books (Meridian Academic) gets none; unsold books stay unsold,
    unreviewed books unreviewed; Kinokawa Books has no sale in 2024; the case-variant
    store has no sale at all;
  - every sale is after its book's publication, every review too.

The rollout's variant is drawn on the host (families/orm.py); which tasks admit which
variants is decided by verification (verify/orm.py: the reference's rows on two builds
of the variant whose drawn rows are inserted in opposite orders must agree, and every
wrong answer must still be wrong), never assumed.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from decimal import Decimal

from . import data

VARIANTS = 8  # variant 0 (the hand-written fixture) and seven drawn ones
N_BOOKS = 12
N_SALES = 40
N_REVIEWS = 25

_ADJECTIVES = (
    "Amber", "Silver", "Hidden", "Northern", "Broken", "Quiet", "Scarlet", "Golden", "Wandering", "Distant",
    "Hollow", "Burning", "Frozen", "Gentle", "Restless", "Velvet",
)  # fmt: skip
_NOUNS = (
    "Orchard", "Lighthouse", "Meridian", "Harbour", "Labyrinth", "Garden", "Caravan", "Mirror", "Citadel", "Lantern",
    "Voyage", "Archive", "Cathedral", "Furnace", "Meadow", "Engine",
)  # fmt: skip
_PLACES = ("Kestrel Bay", "Old Vienna", "the Steppe", "Saltmarsh", "the Andes", "Ravenna", "the Fens", "Tangier")

_BASE = data.BOOKS[: data.N_BASE_BOOKS]
# publishers, authors and genres that have books among the original rows, and no sensitivity row:
# the one without books stays without, and the case variants keep their placed ties
PUBLISHERS = sorted({b[1] for b in _BASE})
AUTHORS = sorted({a for b in _BASE for a in b[8]})
GENRES = sorted({b[2] for b in _BASE if b[2] is not None})


def _titles(rng: random.Random, n: int) -> list[str]:
    taken = {b[0].lower() for b in data.BOOKS}
    out: list[str] = []
    while len(out) < n:
        a, b = rng.choice(_ADJECTIVES), rng.choice(_NOUNS)
        title = rng.choice((f"The {a} {b}", f"{a} {b}", f"The {b} of {rng.choice(_PLACES)}"))
        if title.lower() not in taken:
            taken.add(title.lower())
            out.append(title)
    return out


def _day(rng: random.Random, first: date, last: date) -> date:
    return first + timedelta(days=rng.randrange((last - first).days + 1))


def _book(rng: random.Random, title: str) -> tuple:
    price = (Decimal(rng.randrange(800, 4000, 50)) / 100).quantize(Decimal("0.01"))
    sale = (price * Decimal(rng.randrange(70, 91)) / 100).quantize(Decimal("0.01")) if rng.random() < 0.3 else None
    genre = rng.choice(GENRES) if rng.random() < 0.9 else None
    authors = rng.sample(AUTHORS, rng.choice((1, 1, 2)))
    published = _day(rng, date(2005, 1, 1), date(2024, 10, 31))
    return (
        title,
        rng.choice(PUBLISHERS),
        genre,
        published,
        price,
        sale,
        rng.randrange(120, 640, 2),
        rng.random() < 0.8,
        authors,
    )


def extra_rows(variant: int) -> dict[str, list]:
    """The rows variant `variant` adds to data.py's, as plain values (none for variant 0).

    Books are (title, publisher index, genre name or None, published, price, sale price or
    None, pages, in print, author indexes); sales (book index, store index, sold on,
    quantity, unit price); reviews (book index, reviewer, rating, verified, created). A book
    index at or past len(data.BOOKS) names one of the drawn books, in order.
    """
    if not 0 <= variant < VARIANTS:
        raise ValueError(f"variant must be in 0..{VARIANTS - 1}, got {variant}")
    if variant == 0:
        return {"books": [], "sales": [], "reviews": []}
    rng = random.Random(f"websandbox-orm-fixture-variant-{variant}")
    books = [_book(rng, t) for t in _titles(rng, N_BOOKS)]
    published = {i: date.fromisoformat(b[3]) for i, b in enumerate(_BASE)}
    published.update({len(data.BOOKS) + i: b[3] for i, b in enumerate(books)})
    prices = {i: (Decimal(b[4]), None if b[5] is None else Decimal(b[5])) for i, b in enumerate(_BASE)}
    prices.update({len(data.BOOKS) + i: (b[4], b[5]) for i, b in enumerate(books)})
    sellable = [i for i in published if i not in data.UNSOLD]
    reviewable = [i for i in published if i not in data.UNREVIEWED]
    sales = []
    while len(sales) < N_SALES:
        b = rng.choice(sellable)
        store = rng.randrange(data.N_BASE_STORES)
        sold_on = _day(rng, max(data.SALES_START, published[b] + timedelta(days=1)), date(2024, 12, 31))
        if sold_on <= published[b] or (store == data.NO_2024_STORE and sold_on.year == 2024):
            continue
        price, sale = prices[b]
        unit_price = sale if sale is not None and rng.random() < 0.4 else price
        sales.append((b, store, sold_on, rng.randrange(1, 8), unit_price))
    reviews = []
    for _ in range(N_REVIEWS):
        b = rng.choice(reviewable)
        created = published[b] + timedelta(days=rng.randrange(20, 900))
        reviews.append((b, rng.choice(data.REVIEWERS), rng.randrange(1, 6), rng.random() < 0.75, created))
    return {"books": books, "sales": sales, "reviews": reviews}
