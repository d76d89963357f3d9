"""The bookshop schema as the generator sees it: fields with types, relations, and English nouns.

Written from runtime/container/orm_fixture/shop/models.py (a unit test checks that every field named
here exists there with the same nullability). The generator never reads the models through
Django: the evaluator is plain Python, and the image's Django is reached only by verification.

Decisions:
- Types are the evaluator's: `str`, `int`, `dec` (a Decimal with two places), `date`,
  `datetime` (naive, USE_TZ is off), `bool`; computed columns may also be `float` (averages).
- The schema extension (Author.mentor, Contribution as the `through` of Book.contributors,
  Sale.sold_at) is listed here like the rest; only the seeded worlds hold rows for it, and the
  sampler offers a relation or field only where its world has rows (sample.Sampler.rels), so
  draws over the hand-written fixture are the ones they were.
- `CASED` lists the text columns whose data holds case variants of one value (data.py's
  sensitivity rows). Only there does an exact string equality mean something the grader can
  enforce on SQLite (whose LIKE ignores ASCII case, so `contains` is `icontains` there): the
  grammar compares other text columns by membership (`__in`) or by a regular expression,
  whose case rule SQLite does apply.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    name: str
    type: str
    nullable: bool = False
    noun: str = ""  # "price", "founding year"


FIELDS: dict[str, dict[str, Field]] = {
    "Publisher": {
        f.name: f
        for f in (
            Field("name", "str", noun="name"),
            Field("country", "str", noun="country"),
            Field("founded", "int", True, "founding year"),
            Field("is_independent", "bool", noun="independent flag"),
        )
    },
    "Author": {
        f.name: f
        for f in (
            Field("name", "str", noun="name"),
            Field("country", "str", noun="country"),
            Field("birth_date", "date", True, "birth date"),
            Field("email", "str", True, "e-mail"),
        )
    },
    "Genre": {"name": Field("name", "str", noun="name")},
    "Book": {
        f.name: f
        for f in (
            Field("title", "str", noun="title"),
            Field("published", "date", noun="publication date"),
            Field("price", "dec", noun="price"),
            Field("sale_price", "dec", True, "sale price"),
            Field("pages", "int", noun="page count"),
            Field("in_print", "bool", noun="in-print flag"),
        )
    },
    "Store": {
        f.name: f
        for f in (
            Field("name", "str", noun="name"),
            Field("city", "str", True, "city"),
            Field("country", "str", noun="country"),
            Field("opened", "date", noun="opening date"),
            Field("is_online", "bool", noun="online flag"),
        )
    },
    "Sale": {
        f.name: f
        for f in (
            Field("sold_on", "date", noun="sale date"),
            Field("quantity", "int", noun="quantity"),
            Field("unit_price", "dec", noun="unit price"),
            Field("sold_at", "datetime", True, "sale time"),
        )
    },
    "Review": {
        f.name: f
        for f in (
            Field("reviewer", "str", noun="reviewer"),
            Field("rating", "int", noun="rating"),
            Field("verified", "bool", noun="verified flag"),
            Field("created", "date", noun="review date"),
        )
    },
    "Contribution": {"role": Field("role", "str", noun="role")},
}

# forward foreign keys: model -> name -> (target model, nullable)
FK: dict[str, dict[str, tuple[str, bool]]] = {
    "Book": {"publisher": ("Publisher", False), "genre": ("Genre", True)},
    "Sale": {"book": ("Book", False), "store": ("Store", False)},
    "Review": {"book": ("Book", False)},
    "Author": {"mentor": ("Author", True)},
    "Contribution": {"book": ("Book", False), "author": ("Author", False)},
}

# multi-valued relations: model -> name -> (target model, kind, the target's field back to model)
# kind "reverse" (a reverse foreign key) or "m2m"
MULTI: dict[str, dict[str, tuple[str, str, str]]] = {
    "Publisher": {"books": ("Book", "reverse", "publisher")},
    "Genre": {"books": ("Book", "reverse", "genre")},
    "Author": {
        "books": ("Book", "m2m", "authors"),
        "mentees": ("Author", "reverse", "mentor"),
        "contributions": ("Contribution", "reverse", "author"),
        "contributed_books": ("Book", "m2m", "contributors"),
    },
    "Book": {
        "sales": ("Sale", "reverse", "book"),
        "reviews": ("Review", "reverse", "book"),
        "authors": ("Author", "m2m", "books"),
        "contributions": ("Contribution", "reverse", "book"),
        "contributors": ("Author", "m2m", "contributed_books"),
    },
    "Store": {"sales": ("Sale", "reverse", "store")},
}

KEY = {"Publisher": "name", "Author": "name", "Genre": "name", "Book": "title", "Store": "name"}  # unique text keys
SINGULAR = {
    "Publisher": "publisher",
    "Author": "author",
    "Genre": "genre",
    "Book": "book",
    "Store": "store",
    "Sale": "sale",
    "Review": "review",
    "Contribution": "contribution",
}
PLURAL = {k: v + "s" for k, v in SINGULAR.items()}
CASED = {("Publisher", "name"), ("Genre", "name"), ("Store", "name"), ("Store", "country")}


def resolve(model: str, path: tuple[str, ...]) -> tuple[str, Field]:
    """The model that holds the last field of `path` (forward foreign keys only) and that field."""
    for hop in path[:-1]:
        if hop not in FK.get(model, {}):
            raise KeyError(f"{model} has no foreign key {hop!r}")
        model = FK[model][hop][0]
    if path[-1] not in FIELDS[model]:
        raise KeyError(f"{model} has no field {path[-1]!r}")
    return model, FIELDS[model][path[-1]]


def path_nullable(model: str, path: tuple[str, ...]) -> bool:
    """Whether the value at `path` can be missing: a nullable field or a nullable foreign key on the way."""
    for hop in path[:-1]:
        target, nullable = FK[model][hop]
        if nullable:
            return True
        model = target
    return FIELDS[model][path[-1]].nullable


def noun_of(model: str, path: tuple[str, ...]) -> str:
    """English for a path: "price", "publisher's country"."""
    owner, f = resolve(model, path)
    if len(path) == 1:
        return f.noun
    hops = " ".join(f"{h}'s" for h in path[:-1])
    return f"{hops} {f.noun}".replace("_", " ")
