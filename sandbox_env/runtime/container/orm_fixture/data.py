"""The fixture's data, as plain Python values: no clock, no randomness.

Publishers, authors, genres, stores and books are written out by hand. Sales and
reviews are derived from their row number by fixed arithmetic, so that there are
enough of them for aggregates to mean something while the file stays short.
Edge cases are on purpose: a publisher and an author without books, a genre
without books, books without a genre, unsold and unreviewed books, nullable
dates, e-mails, years and cities, countries shared by many rows, an online store
with no city, a store with no sales in 2024, multi-author books.

Grading sensitivity (sandbox_env/verify/sensitivity.py) asks more of the data: every
boundary a task states has a row exactly on it, every ordering key a task names decides
between some tied rows, a rank-1 tie exists for the dense-rank task, a Coalesce has a NULL
to replace, and every name a task filters on has a case variant, so that `iexact` for an
exact name is wrong. Those rows come after the original ones (publishers from
"harbor & pine", books from "A Chronicle of Tides", the store "paper lantern", the authors
from "Nora Quinn", EXTRA_SALES, EXTRA_REVIEWS); the derived sales and reviews are computed
over the original books and stores only (N_BASE_BOOKS, N_BASE_STORES), so adding rows never
moves the old ones.
"""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal

# (name, country, founded year or None, is_independent)
PUBLISHERS = [
    ("Harbor & Pine", "UK", 1952, False),
    ("Blue Lantern Press", "USA", 1987, True),
    ("Éditions du Midi", "France", 1931, False),
    ("Northwind Books", "Canada", 2004, True),
    ("Sakura House", "Japan", 1968, False),
    ("Lagos Lighthouse", "Nigeria", 2011, True),
    ("Quarto Verde", "Brazil", None, True),
    ("Grey Owl Publishing", "USA", 1999, False),
    ("Thistle & Quill", "UK", 2015, True),
    ("Meridian Academic", "USA", 1975, False),  # publishes nothing in this data set
    # sensitivity rows: case variants of two names; founded exactly on orm_expr_02's 1970
    ("harbor & pine", "Ireland", 1970, True),
    ("blue lantern press", "Australia", None, False),
]

# (name, country, birth date or None); the e-mail is derived below
AUTHORS = [
    ("Eleanor Vance", "UK", "1961-03-14"),
    ("Thomas Hale", "UK", "1948-11-02"),
    ("Priya Raman", "UK", "1979-07-21"),
    ("Oliver Brandt", "UK", None),
    ("Margaret Lyle", "UK", "1955-01-30"),
    ("Callum Reid", "UK", "1988-09-09"),
    ("James Whitaker", "USA", "1952-05-17"),
    ("Lena Ortiz", "USA", "1983-12-01"),
    ("Marcus Bell", "USA", "1970-02-28"),
    ("Hannah Cole", "USA", None),
    ("Derek Stone", "USA", "1965-08-08"),
    ("Ruth Abernathy", "USA", "1941-04-19"),
    ("Sam Ng", "USA", "1990-10-10"),
    ("Claire Dubois", "France", "1974-06-06"),
    ("Julien Marchand", "France", "1962-09-15"),
    ("Amélie Fournier", "France", "1985-03-03"),
    ("Henri Laurent", "France", None),
    ("Haruki Tanabe", "Japan", "1958-01-12"),
    ("Yuki Mori", "Japan", "1980-11-11"),
    ("Kenji Sato", "Japan", "1969-07-07"),
    ("Aiko Fujita", "Japan", "1992-02-14"),
    ("Chidi Okafor", "Nigeria", "1977-05-25"),
    ("Ngozi Adeyemi", "Nigeria", "1986-08-30"),
    ("Tunde Bello", "Nigeria", None),
    ("Mariana Costa", "Brazil", "1981-04-04"),
    ("Paulo Ferreira", "Brazil", "1966-12-24"),
    ("Beatriz Lima", "Brazil", "1995-09-19"),
    ("Owen MacLeod", "Canada", "1959-10-31"),
    ("Sophie Tremblay", "Canada", "1984-01-08"),
    ("Grant Fisher", "Canada", None),  # has written nothing in this data set
    # sensitivity rows: born exactly on orm_rel_05's 1960-01-01; a birthday shared with Mariana Costa
    ("Nora Quinn", "Ireland", "1960-01-01"),
    ("Ada Brennan", "UK", "1990-05-05"),
    ("Ana Ribeiro", "Brazil", "1981-04-04"),
]

GENRES = [
    "Fantasy",
    "Science Fiction",
    "Mystery",
    "Horror",
    "Romance",
    "History",
    "Poetry",
    "Biography",
    "fantasy",
    "science fiction",
]  # the last two: case variants, so `iexact` is not `exact`

# (title, publisher index, genre or None, published, price, sale price or None, pages, in print, author indexes)
BOOKS = [
    ("The Night Ferry", 0, "Mystery", "2016-04-12", "18.99", None, 312, True, [0]),
    ("Salt and Iron", 0, "Fantasy", "2019-09-03", "24.50", "19.99", 488, True, [1, 5]),
    ("Glass Orchard", 1, "Science Fiction", "2021-02-16", "27.00", None, 356, True, [7]),
    ("Midnight in Lisbon", 2, "Romance", "2018-06-21", "15.00", "12.00", 264, True, [13]),
    ("Knight of Ashes", 0, "Fantasy", "2012-11-08", "12.99", None, 540, False, [1]),
    ("The Cartographer's Daughter", 3, "History", "2020-10-01", "32.00", None, 402, True, [27, 28]),
    ("Paper Moons", 4, "Romance", "2017-03-15", "14.50", None, 198, True, [18]),
    ("Iron Sky Protocol", 7, "Science Fiction", "2022-12-05", "29.99", "22.49", 610, True, [8, 12]),
    ("A Thousand Nights", 5, "Fantasy", "2021-07-19", "21.00", None, 450, True, [21]),
    ("The Quiet Harbour", 8, "Mystery", "2023-01-24", "16.99", None, 288, True, [2]),
    # 510 pages (was 512) so that Blue Lantern's, and the USA's, page total stays as it was when
    # "Starfall Academy" moved to 400 (orm_agg_04)
    ("Red River Ledger", 1, "History", "2009-05-30", "35.00", "28.00", 510, False, [11]),
    ("Verses from the Tide", 6, None, "2015-08-14", "9.99", None, 96, True, [24]),
    ("Cold Case Atlas", 7, "Mystery", "2020-11-11", "19.50", None, 344, True, [10]),
    ("The Lighthouse Keeper's Code", 5, "Mystery", "2019-12-02", "17.25", "13.80", 276, True, [22, 21]),
    # exactly 400 pages (was 398): orm_filter_03's upper end has a row on it, so a half-open
    # 300 <= pages < 400 is wrong
    ("Starfall Academy", 1, "Science Fiction", "2018-08-08", "22.00", None, 400, True, [12]),
    ("Whispers Under Kyoto", 4, "Horror", "2016-10-31", "18.00", None, 230, False, [19]),
    ("The Long Winter Road", 3, "History", "2014-01-20", "28.50", None, 620, True, [27]),
    ("Orchids for the Dead", 2, "Mystery", "2022-03-09", "20.00", "16.00", 310, True, [14, 15]),
    ("Dune Sailors", 6, "Science Fiction", "2020-05-05", "23.75", None, 415, True, [25]),
    ("The Clockwork Heir", 0, "Fantasy", "2023-06-30", "26.99", None, 505, True, [0, 3]),
    ("Saints of the Delta", 5, "History", "2017-11-17", "30.00", None, 380, True, [23]),
    ("Low Tide, High Night", 8, "Horror", "2021-10-13", "15.99", "11.99", 222, True, [5]),
    ("Letters to Montmartre", 2, "Romance", "2011-02-14", "11.50", None, 240, False, [13, 16]),
    ("Beyond the Ninth Gate", 7, "Horror", "2019-10-25", "19.99", None, 333, True, [6]),
    ("The Fox and the Lantern", 1, "Fantasy", "2015-12-01", "13.00", None, 180, True, [9]),
    ("Neon Monsoon", 4, "Science Fiction", "2023-09-14", "27.00", None, 372, True, [20, 18]),
    ("An Atlas of Small Wars", 3, "History", "2022-04-22", "34.00", "27.20", 560, True, [28]),
    ("The Drowned Choir", 0, "Horror", "2010-10-29", "10.99", None, 256, False, [4]),
    ("Sunday at the Bazaar", 5, "Romance", "2022-02-11", "16.00", None, 212, True, [22]),
    ("Code of the Red Wolf", 7, "Mystery", "2016-07-07", "17.99", None, 298, True, [10, 8]),
    ("Hollow Crown Rising", 1, "Fantasy", "2024-03-19", "28.00", None, 530, True, [7, 9]),
    ("Mango Season", 6, "Romance", "2018-01-26", "12.00", "9.60", 186, True, [26]),
    ("The Silent Observatory", 2, "Science Fiction", "2013-09-09", "21.50", None, 344, False, [14]),
    ("Bones of the Sahel", 5, "Biography", "2020-06-12", "24.00", None, 300, True, [23, 21]),
    ("Murder at Kensal Rise", 8, "Mystery", "2024-05-02", "18.50", None, 320, True, [2, 5]),
    ("The Iron Chancellor", 3, "Biography", "2008-03-03", "27.50", None, 470, False, [16]),
    ("Seven Nights in Osaka", 4, "Romance", "2019-04-04", "14.00", None, 204, True, [17]),
    ("The Archivist", 7, "Science Fiction", "2014-11-20", "20.50", "15.00", 388, True, [6]),
    ("Ember and Frost", 0, "Fantasy", "2021-01-15", "22.99", None, 460, True, [3]),
    ("Rivers of Copper", 6, "History", "2023-03-03", "29.00", None, 436, True, [25, 24]),
    ("The Good Neighbour", 8, None, "2022-08-18", "13.99", None, 150, True, [4]),
    ("Ghosts of Harrow Lane", 0, "Horror", "2018-10-05", "16.50", "12.50", 268, True, [5]),
    ("Polar Night Station", 3, "Science Fiction", "2019-02-22", "23.00", None, 350, True, [28]),
    ("The Tea Merchant's Ledger", 4, "History", "2012-05-18", "26.00", None, 410, False, [17, 19]),
    ("Small Gods of Lagos", 5, "Fantasy", "2023-11-30", "20.00", None, 390, True, [22]),
    ("The Mapmaker's War", 1, "History", "2020-09-09", "31.50", None, 590, True, [11, 6]),
    ("Cinder Road", 7, "Fantasy", "2017-05-12", "18.00", None, 344, True, [8]),
    ("A Study in Ochre", 2, "Mystery", "2015-03-27", "16.00", None, 256, True, [15]),
    ("The Last Tram to Porto", 6, "Mystery", "2021-12-12", "17.00", "13.60", 240, True, [24]),
    ("Diaries of a Quiet Man", 8, "Biography", "2016-06-16", "22.50", None, 280, False, [1]),
    ("Starlight Bakery", 1, "Romance", "2022-10-10", "12.99", None, 220, True, [9, 7]),
    ("Pale Fire Station", 4, "Horror", "2020-01-31", "19.00", None, 290, True, [20]),
    ("The Forgotten Coast", 3, None, "2011-07-07", "15.50", None, 330, False, [27]),
    ("Queen of Harbours", 0, "History", "2019-05-20", "27.99", "21.99", 480, True, [4, 0]),
    ("Signal in the Static", 7, "Science Fiction", "2024-08-01", "24.99", None, 366, True, [12, 10]),
    ("Night Market Recipes", 4, None, "2018-12-12", "21.00", None, 160, True, [18]),
    ("Under the Baobab", 5, "Biography", "2015-09-01", "19.50", None, 250, True, [21]),
    ("The Winter Palace Affair", 2, "Mystery", "2024-01-10", "22.00", None, 350, True, [13, 14]),
    ("Paths of the Condor", 6, "Biography", "2012-12-21", "18.75", None, 310, False, [26, 25]),
    ("The Brass Compass", 8, "Fantasy", "2020-12-24", "19.99", None, 372, True, [3]),
    # sensitivity rows (see the module docstring), each with the tasks whose mutants it kills
    # a History price tie at the top, title before "Red River Ledger" (orm_adv_03, orm_expr_03, orm_adv_10)
    ("A Chronicle of Tides", 3, "History", "2021-05-05", "35.00", None, 430, True, [27]),
    # Science Fiction at exactly 25.00; published exactly 2020-01-01 by a 7-book publisher (orm_filter_06, orm_adv_07)
    ("Orbital Quarantine", 7, "Science Fiction", "2020-01-01", "25.00", None, 300, True, [12]),
    # exactly 200 pages, in print (orm_filter_06)
    ("Two Hundred Steps", 4, "Romance", "2021-03-03", "11.00", None, 200, True, [17]),
    # published exactly 2019-01-01 under 20.00, a same-day pair out of title order (orm_filter_01)
    ("Winter Solstice Stories", 2, "Mystery", "2019-01-01", "15.00", None, 280, True, [15]),
    ("Almanac of First Light", 5, "Romance", "2019-01-01", "12.50", None, 230, True, [22]),
    # makes the Biography average exactly 22.50, the price of "Diaries of a Quiet Man" (orm_adv_10)
    ("The Ferryman's Memoir", 8, "Biography", "2017-07-07", "22.75", None, 300, True, [2]),
    # sale price exactly 78% of the price; markdown 5.50 ties "The Archivist"; effective 19.50 ties
    # "Under the Baobab" (orm_expr_01, orm_expr_05, orm_adv_04)
    ("Harvest of Salt", 6, "Mystery", "2022-06-06", "25.00", "19.50", 320, True, [25]),
    # the same date as Harbor & Pine's latest book, title first (orm_adv_01, orm_rel_02)
    ("Between Two Tides", 0, "Mystery", "2023-06-30", "18.00", None, 290, True, [2]),
    # the same date as "Cold Case Atlas", title first (orm_filter_08)
    ("Autumn Ledger", 8, "Mystery", "2020-11-11", "17.50", None, 260, True, [5]),
    # books of the case-variant publishers: pages tie between their countries (orm_agg_04)
    ("The Quiet Republic", 10, "History", "2020-03-03", "21.00", None, 300, True, [30]),
    ("Echoes of the Pier", 11, None, "2022-02-02", "14.00", None, 300, True, [23]),
    # books in the case-variant genres (orm_filter_09, orm_rel_03, orm_filter_06)
    ("Dragons of the Fen", 8, "fantasy", "2022-09-09", "16.00", None, 340, True, [31]),
    ("Comet Harvest", 3, "science fiction", "2023-02-02", "26.00", None, 380, True, [28]),
]
N_BASE_BOOKS = 60  # sales and reviews are derived over these only

# (name, city or None, country, opened, is_online)
STORES = [
    ("Paper Lantern", "London", "UK", "1998-04-01", False),
    ("Rue des Livres", "Lyon", "France", "2005-09-15", False),
    ("Maple Leaf Books", "Toronto", "Canada", "2012-06-01", False),
    ("Kinokawa Books", "Osaka", "Japan", "1989-11-20", False),  # no sales in 2024
    ("Corner Shelf", "Boston", "USA", "2016-03-12", False),
    ("Webshelf", None, "USA", "2021-01-05", True),
    # sensitivity row: case variants of a store name and a country; no sales in 2023 (orm_adv_09,
    # orm_rel_04, orm_adv_06)
    ("paper lantern", "Portland", "usa", "2024-02-01", False),
]
N_BASE_STORES = 6  # derived sales go to these only

# (book index, store index, sold_on, quantity, unit price): sales beyond the derived ones
EXTRA_SALES = [
    (32, 6, "2024-03-10", 2, "21.50"),  # "The Silent Observatory" at the "usa" store (orm_rel_04)
    (0, 0, "2023-06-15", 2, "18.99"),  # UK's 2023 units tie France's (orm_agg_07)
    (4, 1, "2023-05-01", 1, "14.49"),  # above list price on the same day as another such sale (orm_expr_06)
]
# (book index, reviewer, rating, verified, created): reviews beyond the derived ones
EXTRA_REVIEWS = [
    (0, "luis", 5, False, "2017-02-02"),  # a second unverified 5 on one book (orm_rel_06)
]

REVIEWERS = [
    "anna_k",
    "bookworm42",
    "c.reyes",
    "dmitri",
    "elif",
    "fatima.b",
    "gus",
    "hiro_t",
    "ines",
    "jo_marsh",
    "kwame",
    "luis",
]

N_SALES = 260
N_REVIEWS = 150
UNSOLD = {11, 27, 32, 35, 52, 57}  # book indexes that never sell
UNREVIEWED = {11, 16, 24, 35, 40, 43, 52, 55, 58}  # book indexes that get no review
NO_2024_STORE = 3  # Kinokawa Books
SALES_START = date(2023, 1, 1)


def _d(text: str | None) -> date | None:
    return None if text is None else date.fromisoformat(text)


def publishers() -> list[dict]:
    return [dict(id=i + 1, name=n, country=c, founded=f, is_independent=ind) for i, (n, c, f, ind) in enumerate(PUBLISHERS)]


def authors() -> list[dict]:
    rows = []
    for i, (name, country, born) in enumerate(AUTHORS):
        email = None if i % 4 == 3 else name.lower().replace(" ", ".") + "@example.org"
        rows.append(dict(id=i + 1, name=name, country=country, birth_date=_d(born), email=email))
    return rows


def genres() -> list[dict]:
    return [dict(id=i + 1, name=n) for i, n in enumerate(GENRES)]


def books() -> list[dict]:
    rows = []
    for i, (title, pub, genre, published, price, sale, pages, in_print, _) in enumerate(BOOKS):
        rows.append(
            dict(
                id=i + 1,
                title=title,
                isbn=f"978{(i + 1) * 104729 % 10**10:010d}",
                publisher_id=pub + 1,
                genre_id=None if genre is None else GENRES.index(genre) + 1,
                published=_d(published),
                price=Decimal(price),
                sale_price=None if sale is None else Decimal(sale),
                pages=pages,
                in_print=in_print,
            )
        )
    return rows


def book_authors() -> list[tuple[int, int]]:
    """(book id, author id) pairs of the many-to-many relation."""
    return [(i + 1, a + 1) for i, row in enumerate(BOOKS) for a in row[8]]


def stores() -> list[dict]:
    return [
        dict(id=i + 1, name=n, city=city, country=c, opened=_d(o), is_online=online)
        for i, (n, city, c, o, online) in enumerate(STORES)
    ]


def sales() -> list[dict]:
    sellable = [i for i in range(N_BASE_BOOKS) if i not in UNSOLD]
    rows = []
    for i in range(N_SALES):
        b = sellable[(i * 17 + 3) % len(sellable)]
        title, _, _, published, price, sale, *_ = BOOKS[b]
        pub_date = date.fromisoformat(published)
        store = (i * 5 + i // 7) % N_BASE_STORES
        sold_on = SALES_START + timedelta(days=(i * 37) % 731)
        if sold_on <= pub_date:
            sold_on = pub_date + timedelta(days=(i * 11) % 60 + 1)
        if store == NO_2024_STORE and sold_on.year == 2024:
            earlier = sold_on - timedelta(days=366)
            if earlier > pub_date:
                sold_on = earlier
            else:
                store = NO_2024_STORE + 1
        if sale is not None and i % 3 == 0:
            unit_price = Decimal(sale)
        elif i % 23 == 0:
            unit_price = Decimal(price) + Decimal("1.50")
        else:
            unit_price = Decimal(price)
        rows.append(
            dict(id=i + 1, book_id=b + 1, store_id=store + 1, sold_on=sold_on, quantity=1 + (i * 13) % 7, unit_price=unit_price)
        )
    for b, store, sold_on, quantity, unit_price in EXTRA_SALES:
        rows.append(
            dict(
                id=len(rows) + 1,
                book_id=b + 1,
                store_id=store + 1,
                sold_on=date.fromisoformat(sold_on),
                quantity=quantity,
                unit_price=Decimal(unit_price),
            )
        )
    return rows


def reviews() -> list[dict]:
    reviewed = [i for i in range(N_BASE_BOOKS) if i not in UNREVIEWED]
    rows = []
    for j in range(N_REVIEWS):
        b = reviewed[(j * 11 + 5) % len(reviewed)]
        published = date.fromisoformat(BOOKS[b][3])
        rows.append(
            dict(
                id=j + 1,
                book_id=b + 1,
                reviewer=REVIEWERS[(j * 5 + j // 12) % len(REVIEWERS)],
                rating=1 + (j * 7 + j // 3) % 5,
                verified=j % 4 != 0,
                created=published + timedelta(days=20 + (j * 53) % 900),
            )
        )
    for b, reviewer, rating, verified, created in EXTRA_REVIEWS:
        rows.append(
            dict(
                id=len(rows) + 1,
                book_id=b + 1,
                reviewer=reviewer,
                rating=rating,
                verified=verified,
                created=date.fromisoformat(created),
            )
        )
    return rows
