"""Sampling trees from a seed, with constants taken from the data.

One candidate per (seed, index): `candidate(seed, i)` draws a shape (filter, per-row
aggregate, grouped, subquery, window) and then its parts from the grammar's breadth. Variety
comes from which fields, relations, predicate kinds, aggregates and expressions are drawn;
constants come last and from the data: a bound is the value of a row that the other
predicates keep (so the row sits exactly on it and `gt` vs `gte` tells), a HAVING bound is the
aggregate of an existing group, a text is a piece of an existing value.

Shapes drawn only when named (`candidate(seed, i, "setop")`), never in the mixed stream, whose
draws (SHAPES) stay those the stored tasks came from: `setop` (the union, intersection or
difference of two filtered querysets of one model over the same columns, the universe's unique
key among them so that the compound's DISTINCT never merges two rows and the ordering closes on
it; the second filter's first condition takes its constant from rows the first keeps half the
time, so that a union has rows both sides hold and the `all=True` mutant has duplicates to show;
the key closes the order Z to A, because SQLite's compound DISTINCT hands ties over in ascending
order of the selected columns, the key first, so an A to Z tiebreak lets the dropped-tiebreak
mutant survive wherever rows tie: 15 of 40 seed-22 candidates were lost that way in the image)
and `cast` (a book's or publisher's rows with a Cast column: a price, sale price or discount cut
to a whole number, or an integer as text; ordered by it, so its ties are closed by the key, and
often bounded on it).

`prescreen(tree)` is the cheap part of verification, in Python over every variant: rows
exist, 2 to 40 of them, under 75 % of the universe, the first ordering key ties somewhere (or
the tiebreak would be untestable), and every ablation (one predicate, the exclude, the having,
the top-N or the top-k removed) gives other rows, and so does every mutation the ORM mutants
make (`tree_mutants`, the evaluator's preview of verify/mutants.py) and every mistake of a rule
the spec states (traps.py: a variant that does not test a stated rule does not serve the task). A row number's preview is a
rank or dense rank over the window's order without its tiebreak (mutants.op_rank: the swap alone
would be equivalent), so a row-number candidate passes only on a world whose rows tie inside a
partition among the rows it numbers, where ties sharing a number change the positions or let
more rows through the top-k.
"""

from __future__ import annotations

import dataclasses
import random
from decimal import Decimal
from typing import Any

from sandbox_env.generate import SHAPE_NAMES, schema
from sandbox_env.generate.evaluate import Evaluator, evaluate, value_at
from sandbox_env.generate.fixture import VARIANTS, is_seeded, world
from sandbox_env.generate.traps import trap_mistakes
from sandbox_env.generate.tree import (
    Agg,
    And,
    Arith,
    Between,
    Bucket,
    Cast,
    Cmp,
    CoalesceE,
    ColRef,
    Compound,
    Concat,
    Every,
    Exists,
    FieldRef,
    In,
    IsNull,
    Not,
    Or,
    PairFn,
    Part,
    Query,
    SameRow,
    StrFn,
    Sub,
    Text,
    Trunc,
    Win,
    walk,
)

SHAPES = ("filter", "filter", "row_agg", "row_agg", "group", "group", "subquery", "window")
NUMERIC = ("int", "dec", "date")

# fields a predicate may compare, per universe (paths over forward foreign keys)
PRED_FIELDS = {
    "Book": [
        ("price",),
        ("sale_price",),
        ("pages",),
        ("published",),
        ("in_print",),
        ("title",),
        ("publisher", "founded"),
        ("publisher", "country"),
        ("publisher", "name"),
        ("genre", "name"),
        ("publisher", "is_independent"),
    ],
    "Publisher": [("founded",), ("country",), ("is_independent",), ("name",)],
    "Genre": [("name",)],
    "Author": [("birth_date",), ("country",), ("email",), ("name",)],
    "Store": [("opened",), ("city",), ("country",), ("is_online",), ("name",)],
    "Sale": [
        ("quantity",),
        ("unit_price",),
        ("sold_on",),
        ("store", "name"),
        ("store", "country"),
        ("book", "pages"),
        ("book", "price"),
        ("store", "is_online"),
    ],
    "Review": [("rating",), ("verified",), ("created",), ("reviewer",), ("book", "price"), ("book", "pages")],
}
# per-row output columns besides the key
OUT_FIELDS = {
    "Book": [
        ("price",),
        ("sale_price",),
        ("pages",),
        ("published",),
        ("in_print",),
        ("publisher", "name"),
        ("genre", "name"),
        ("publisher", "country"),
    ],
    "Publisher": [("country",), ("founded",), ("is_independent",)],
    "Author": [("country",), ("birth_date",), ("email",)],
    "Store": [("city",), ("country",), ("opened",), ("is_online",)],
}
ROW_UNIVERSES = ("Book", "Book", "Book", "Publisher", "Author", "Store")
# what the schema extension adds where a seeded world has rows for it: the self-reference, the
# `through` model's role (a condition on Book.contributions / Author.contributions), the sale time
SEEDED_PRED_FIELDS = {
    "Author": [("mentor", "country"), ("mentor", "birth_date")],
    "Sale": [("sold_at",)],
    "Contribution": [("role",), ("author", "country"), ("book", "price")],
}
SEEDED_OUT_FIELDS = {"Author": [("mentor", "name")]}
SAME_ROW_TARGETS = ("Sale", "Review", "Book", "Contribution")
# Book.contributors / Author.contributed_books join through one Contribution row per role, so an
# author with two roles on a book counts twice: the sampler reaches the through model by
# `contributions` (whose rows are what is counted) and never draws these two
NOT_DRAWN = frozenset({"contributors", "contributed_books"})


def dunder(path: tuple[str, ...]) -> str:
    return "__".join(path)


class Sampler:
    def __init__(self, rng: random.Random, fixture: int = 0) -> None:
        self.rng = rng
        self.w = world(fixture)
        self.ev = Evaluator(self.w)
        self.seeded = is_seeded(fixture)

    def rels(self, model: str) -> list[str]:
        """The multi-valued relations of `model` that have rows in this world (sorted, as draws index them)."""
        return sorted(r for r in schema.MULTI.get(model, {}) if r not in NOT_DRAWN and self.w.has(model, r))

    def pred_fields(self, model: str) -> list[tuple[str, ...]]:
        return PRED_FIELDS.get(model, []) + (SEEDED_PRED_FIELDS.get(model, []) if self.seeded else [])

    def out_fields(self, model: str) -> list[tuple[str, ...]]:
        return OUT_FIELDS[model] + (SEEDED_OUT_FIELDS.get(model, []) if self.seeded else [])

    def kept(self, model: str, preds: list[Any]) -> list[dict]:
        return [r for r in self.w.rows[model] if all(self.ev.pred(p, (model, r)) for p in preds)]

    # -- predicates -------------------------------------------------------------------------
    def atom(self, model: str, others: list[Any], allow_rel: bool = True) -> Any | None:
        rng = self.rng
        kinds = ["field", "field", "field"]
        if allow_rel and self.rels(model):
            kinds += ["exists", "exists", "every", "same_row"]
        kind = rng.choice(kinds)
        rows = self.kept(model, others)
        if not rows:
            return None
        if kind == "field":
            path = rng.choice(self.pred_fields(model))
            return self.field_atom(model, path, rows)
        rel = rng.choice(self.rels(model))
        target = schema.MULTI[model][rel][0]
        related_rows = [i for r in rows for i in self.w.multi(model, r, rel)]
        if not related_rows:
            return None
        back = schema.MULTI[model][rel][2]
        fields = [
            p
            for p in self.pred_fields(target)
            if (len(p) == 1 or target in ("Sale", "Review", "Contribution")) and p[0] != back  # never back to the row
        ]
        if kind == "same_row" and target in SAME_ROW_TARGETS:
            f1, f2 = rng.sample(fields, 2)
            c1 = self.field_atom(target, f1, related_rows)
            if c1 is None:
                return None
            rest = [i for i in related_rows if self.ev.pred(c1, (target, i))]
            c2 = self.field_atom(target, f2, rest) if rest else None
            return None if c2 is None else SameRow(rel, (c1, c2))
        cond = self.field_atom(target, rng.choice(fields), related_rows)
        if cond is None:
            return None
        if kind == "every":
            return Every(rel, cond)
        return Exists(rel, cond if rng.random() < 0.85 else None, negate=rng.random() < 0.35)

    def field_atom(self, model: str, path: tuple[str, ...], rows: list[dict]) -> Any | None:
        rng = self.rng
        owner, f = schema.resolve(model, path)
        values = [v for v in (value_at(self.w, model, r, path) for r in rows) if v is not None]
        target = FieldRef(path)
        if f.nullable and rng.random() < 0.3 or not values:
            return IsNull(target, rng.random() < 0.5) if f.nullable or schema.path_nullable(model, path) else None
        if f.type == "datetime":  # the sale time: compared by its hour (ExtractHour), a grid of whole hours
            hours = sorted({v.hour for v in values})
            return Cmp(target, rng.choice(("exact", "gte", "lte", "gt", "lt")), rng.choice(hours), "hour")
        if f.type in NUMERIC:
            r = rng.random()
            if f.type == "date" and r < 0.3:
                part = rng.choice(("year", "month", "quarter", "week_day"))
                parts = sorted(
                    {
                        v.year
                        if part == "year"
                        else v.month
                        if part == "month"
                        else (v.month - 1) // 3 + 1
                        if part == "quarter"
                        else v.isoweekday() % 7 + 1
                        for v in values
                    }
                )
                op = "exact" if part == "week_day" else rng.choice(("exact", "gte", "lte", "gt", "lt"))
                return Cmp(target, op, rng.choice(parts), part)
            if r < 0.45 and len(set(values)) > 2:
                lo, hi = sorted(rng.sample(sorted(set(values)), 2))
                return Between(target, lo, hi)
            return Cmp(target, rng.choice(("gt", "gte", "lt", "lte")), rng.choice(values))
        if f.type == "bool":
            return Cmp(target, "exact", rng.choice(values))
        # text
        if (owner, f.name) in schema.CASED:
            return Text(target, rng.choice(("exact", "iexact")), rng.choice(values))
        distinct = sorted(set(values))
        if f.name in ("country", "city", "reviewer", "role") and len(distinct) >= 2:
            return In(target, tuple(sorted(rng.sample(distinct, min(len(distinct) - 1, rng.choice((1, 2, 3)))))))
        v = rng.choice(values)
        words = v.split()
        if rng.random() < 0.5:
            piece = words[0] if len(words) > 1 else v[:3]
            return Text(target, rng.choice(("prefix", "iprefix")), piece if rng.random() < 0.6 else piece.lower())
        piece = rng.choice(words) if len(words) > 1 else v[1:4]
        piece = piece.strip("'.,") or v[:2]
        return Text(target, rng.choice(("contains", "icontains")), piece.lower() if rng.random() < 0.5 else piece)

    def where(self, model: str, n: int, allow_rel: bool = True, given: tuple[Any, ...] = ()) -> Any | None:
        """n conditions (constants from the rows `given` and the conditions drawn so far keep), joined."""
        atoms: list[Any] = []
        for _ in range(n * 3):
            if len(atoms) >= n:
                break
            a = self.atom(model, [*given, *atoms], allow_rel)
            if a is not None:
                atoms.append(a)
        if not atoms:
            return None
        r = self.rng.random()
        if any(isinstance(a, SameRow) for a in atoms):
            r = 1.0  # one filter() call over the relation: no OR or NOT around it
        if len(atoms) >= 2 and r < 0.25:
            return Or(tuple(atoms[:2])) if len(atoms) == 2 else And((Or(tuple(atoms[:2])), *atoms[2:]))
        if r < 0.35:
            atoms[-1] = Not(atoms[-1])
        return atoms[0] if len(atoms) == 1 else And(tuple(atoms))

    # -- shapes -----------------------------------------------------------------------------
    def order(self, cols: list[tuple[str, Any]], key_names: list[str], primary: str | None = None) -> tuple:
        rng = self.rng
        primary = primary or rng.choice([n for n, _ in cols if n not in key_names] or key_names)
        keys = [(primary, rng.random() < 0.6)]
        keys += [(k, rng.random() < 0.5) for k in key_names if k != primary]
        return tuple(keys)

    def computed_col(self, model: str) -> tuple[str, Any] | None:
        rng = self.rng
        options: list[tuple[str, Any]] = []
        if model == "Book":
            options += [
                ("year_published", Part("year", FieldRef(("published",)))),
                ("quarter_published", Part("quarter", FieldRef(("published",)))),
                ("weekday_published", Part("week_day", FieldRef(("published",)))),
                ("month_published", Trunc("month", FieldRef(("published",)))),
                ("title_length", StrFn("length", FieldRef(("title",)))),
                ("title_upper", StrFn("upper", FieldRef(("title",)))),
                ("label", Concat(FieldRef(("title",)), " / ", FieldRef(("publisher", "name")))),
                ("effective_price", CoalesceE(FieldRef(("sale_price",)), FieldRef(("price",)))),
                ("higher_price", PairFn("greatest", FieldRef(("price",)), FieldRef(("sale_price",)))),
                ("lower_price", PairFn("least", FieldRef(("sale_price",)), FieldRef(("price",)))),
                ("cut_sale_price", PairFn("nullif", FieldRef(("sale_price",)), FieldRef(("price",)))),
                ("length_band", self.bucket(model, ("pages",), ("short", "medium", "long"))),
                ("price_band", self.bucket(model, ("price",), ("budget", "standard", "premium"))),
            ]
        if model == "Author":
            options += [
                ("name_lower", StrFn("lower", FieldRef(("name",)))),
                ("born_year", Part("year", FieldRef(("birth_date",)))),
            ]
        if model == "Publisher":
            options += [
                ("name_length", StrFn("length", FieldRef(("name",)))),
                ("label", Concat(FieldRef(("name",)), " - ", FieldRef(("country",)))),
            ]
        if model == "Store":
            options += [("opened_year", Part("year", FieldRef(("opened",)))), ("name_upper", StrFn("upper", FieldRef(("name",))))]
        return rng.choice(options) if options else None

    def bucket(self, model: str, path: tuple[str, ...], labels: tuple[str, ...]) -> Bucket:
        values = sorted({value_at(self.w, model, r, path) for r in self.w.rows[model]} - {None})
        n = len(values)
        cuts = tuple(sorted({values[n // 3 + self.rng.randrange(-2, 3)], values[2 * n // 3 + self.rng.randrange(-2, 3)]}))
        return Bucket(FieldRef(path), cuts, labels[: len(cuts) + 1])

    def key_and_fields(self) -> tuple[str, str, list[tuple[str, Any]]]:
        """A row universe, its unique key, and its first columns: the key and one or two fields to show."""
        model = self.rng.choice(ROW_UNIVERSES)
        key = schema.KEY[model]
        cols: list[tuple[str, Any]] = [(key, FieldRef((key,)))]
        for path in self.rng.sample(self.out_fields(model), self.rng.choice((1, 1, 2))):
            cols.append((dunder(path), FieldRef(path)))
        return model, key, cols

    def shape_filter(self) -> Query:
        rng = self.rng
        model, key, cols = self.key_and_fields()
        if rng.random() < 0.5 and (c := self.computed_col(model)) is not None:
            cols.append(c)
        where = self.where(model, rng.choice((1, 2, 2, 3)))
        exclude = None
        if rng.random() < 0.2:
            exclude = self.atom(model, [where] if where else [], allow_rel=False)
        orderable = [n for n, e in cols if n != key and not schema_nullable(model, e)]
        order = self.order(cols, [key], rng.choice(orderable) if orderable else key)
        return Query(model, tuple(cols), order, where=where, exclude=exclude, limit=rng.choice((None, None, 3, 5, 8)))

    def agg_for(self, model: str, rel_choices: list[tuple[str, ...]], group: bool = False) -> tuple[str, Agg]:
        rng = self.rng
        rel = rng.choice(rel_choices)
        target = model
        for hop in rel:
            target = schema.MULTI[target][hop][0] if hop in schema.MULTI.get(target, {}) else schema.FK[target][hop][0]
        fields = [
            p
            for p, f in ((p, schema.resolve(target, p)[1]) for p in self.pred_fields(target))
            if f.type in ("int", "dec", "date") and len(p) == 1
        ]
        fn = rng.choice(("count", "count", "sum", "avg", "max", "min"))
        if not fields or fn == "count":
            cond = None
            if rng.random() < 0.5 and self.pred_fields(target) and not (group and rel):
                rows = self.w.rows[target]
                cond = self.field_atom(target, rng.choice([p for p in self.pred_fields(target) if len(p) == 1]), rows)
                if isinstance(cond, Text | IsNull):
                    cond = None
            distinct = len(rel) > 1
            name = "n_" + ("distinct_" if distinct else "") + (rel[-1] if rel else schema.PLURAL[model])
            if cond is not None:
                name += "_matching"
            return name, Agg("count", rel, None, distinct=distinct, cond=cond)
        path = rng.choice(fields)
        ftype = schema.resolve(target, path)[1].type
        if ftype == "date" and fn in ("sum", "avg"):
            fn = rng.choice(("max", "min"))
        product = None
        if target == "Sale" and fn == "sum" and rng.random() < 0.4:
            path, product = ("quantity",), ("unit_price",)
        cond = None
        if rng.random() < 0.3 and fn in ("sum", "max", "min"):
            c = self.field_atom(target, rng.choice([p for p in self.pred_fields(target) if len(p) == 1]), self.w.rows[target])
            cond = None if isinstance(c, Text | IsNull) else c
        coalesce = fn == "sum" and bool(rel) and rng.random() < 0.7
        name = f"{fn}_{'revenue' if product else path[0]}"
        return name, Agg(fn, rel, path, cond=cond, coalesce=coalesce, product=product)

    def shape_row_agg(self) -> Query:
        rng = self.rng
        model = rng.choice(("Publisher", "Genre", "Author", "Book", "Book", "Store"))
        key = schema.KEY[model]
        rels = [(r,) for r in self.rels(model)]
        two = {
            "Publisher": [("books", "authors"), ("books", "sales")],
            "Genre": [("books", "authors"), ("books", "reviews")],
            "Author": [("books", "publisher"), ("books", "reviews")],
            "Store": [("sales", "book")],
            "Book": [],
        }[model]
        cols: list[tuple[str, Any]] = [(key, FieldRef((key,)))]
        name, agg = self.agg_for(model, rels + two)
        cols.append((name, agg))
        if rng.random() < 0.4:
            name2, agg2 = self.agg_for(model, rels + two)
            if name2 != name and agg2.rel == agg.rel:
                cols.append((name2, agg2))
            elif name2 != name and agg2.fn in ("count", "max", "min") and agg.fn in ("count", "max", "min"):
                # two relations in one query multiply each other's rows: counts must be distinct
                fix = [
                    (n, dataclasses.replace(a, distinct=True) if a.fn == "count" else a) for n, a in ((name, agg), (name2, agg2))
                ]
                cols = [cols[0], *fix]
        where = self.where(model, 1) if rng.random() < 0.5 else None
        having = None
        if rng.random() < 0.6:
            n, a = cols[1]
            probe = Query(model, tuple(cols), ((key, False),), where=where)
            vals = [r[1] for r in evaluate_raw(probe, self.w) if r[1] is not None]
            if vals:
                having = Cmp(ColRef(n), rng.choice(("gt", "gte", "lt", "lte")), rng.choice(vals))
        order = self.order(cols, [key], cols[1][0])
        return Query(model, tuple(cols), order, where=where, having=having, limit=rng.choice((None, None, 5, 10)))

    def shape_group(self) -> Query:
        rng = self.rng
        model = rng.choice(("Book", "Book", "Sale", "Sale", "Review", "Review"))
        fields = {
            "Book": (("publisher", "country"), ("genre", "name"), ("publisher", "name"), ("in_print",)),
            "Sale": (
                ("store", "name"),
                ("store", "country"),
                ("book", "genre", "name"),
                ("book", "publisher", "country"),
                ("store", "is_online"),
            ),
            "Review": (("rating",), ("verified",), ("reviewer",), ("book", "genre", "name"), ("book", "publisher", "country")),
        }[model]
        sold, created = FieldRef(("sold_on",)), FieldRef(("created",))
        key_options = [(dunder(p), FieldRef(p)) for p in fields] + {
            "Book": [
                ("year_published", Part("year", FieldRef(("published",)))),
                ("length_band", self.bucket("Book", ("pages",), ("short", "medium", "long"))),
            ],
            "Sale": [
                ("month_sold", Part("month", sold)),
                ("quarter_sold", Part("quarter", sold)),
                ("year_sold", Part("year", sold)),
                ("month_start", Trunc("month", sold)),
            ],
            "Review": [("year_reviewed", Part("year", created)), ("weekday_reviewed", Part("week_day", created))],
        }[model]
        if self.seeded and model == "Sale":
            key_options.append(("hour_sold", Part("hour", FieldRef(("sold_at",)))))
        keys = rng.sample(key_options, rng.choice((1, 1, 2)))
        cols: list[tuple[str, Any]] = list(keys)
        fk_distinct = {"Sale": [("book",), ("store",)], "Review": [("book",)], "Book": [("authors",)]}[model]
        for _ in range(rng.choice((1, 2))):
            if rng.random() < 0.2:
                rel = rng.choice(fk_distinct)
                name, agg = f"n_distinct_{rel[0]}", Agg("count", rel, None, distinct=True)
            else:
                name, agg = self.agg_for(model, [()], group=True)
                if agg.rel == () and agg.fn == "count":
                    name = name.replace("n_" + schema.PLURAL[model], "n_" + schema.PLURAL[model])
            if name not in dict(cols):
                cols.append((name, agg))
        where = self.where(model, 1, allow_rel=False) if rng.random() < 0.5 else None
        having = None
        aggs = [(n, e) for n, e in cols if n not in dict(keys)]
        if rng.random() < 0.5:
            n, _ = rng.choice(aggs)
            probe = Query(model, tuple(cols), tuple((k, False) for k, _ in keys), where=where, group=tuple(k for k, _ in keys))
            idx = [c for c, _ in cols].index(n)
            vals = [r[idx] for r in evaluate_raw(probe, self.w) if r[idx] is not None]
            if vals:
                having = Cmp(ColRef(n), rng.choice(("gt", "gte", "lt", "lte")), rng.choice(vals))
        primary = rng.choice(aggs)[0]
        order = self.order(cols, [k for k, _ in keys], primary)
        return Query(
            model,
            tuple(cols),
            order,
            where=where,
            group=tuple(k for k, _ in keys),
            having=having,
            limit=rng.choice((None, None, None, 5)),
        )

    def shape_subquery(self) -> Query:
        rng = self.rng
        model, rel = rng.choice(
            (("Book", "sales"), ("Book", "reviews"), ("Store", "sales"), ("Publisher", "books"), ("Genre", "books"))
        )
        target = schema.MULTI[model][rel][0]
        key = schema.KEY[model]
        fields = [p for p in self.pred_fields(target) if len(p) == 1 and schema.resolve(target, p)[1].type in NUMERIC]
        fn = rng.choice(("count", "sum", "max", "min"))
        path = rng.choice(fields)
        if schema.resolve(target, path)[1].type == "date" and fn == "sum":
            fn = "max"
        cond = None
        if rng.random() < 0.5:
            c = self.field_atom(target, rng.choice([p for p in self.pred_fields(target) if len(p) == 1]), self.w.rows[target])
            cond = None if isinstance(c, Text | IsNull) else c
        sub = Sub(fn, rel, None if fn == "count" else path, cond, coalesce=fn in ("count", "sum") and rng.random() < 0.8)
        name = f"{'n' if fn == 'count' else fn}_{rel if fn == 'count' else path[0]}_sub"
        cols: list[tuple[str, Any]] = [(key, FieldRef((key,))), (name, sub)]
        if rng.random() < 0.4 and model in OUT_FIELDS:
            p = rng.choice(self.out_fields(model))
            cols.insert(1, (dunder(p), FieldRef(p)))
        where = self.where(model, 1, allow_rel=False) if rng.random() < 0.6 else None
        having = None
        probe = Query(model, tuple(cols), ((key, False),), where=where)
        vals = [r[-1] for r in evaluate_raw(probe, self.w) if r[-1] is not None]
        if vals and rng.random() < 0.7:
            having = Cmp(ColRef(name), rng.choice(("gt", "gte", "lt", "lte")), rng.choice(vals))
        order = self.order(cols, [key], name)
        return Query(model, tuple(cols), order, where=where, having=having, limit=rng.choice((None, None, 5)))

    def shape_window(self, fns: tuple[str, ...] = (), topk_share: float = 0.6) -> Query:
        rng = self.rng
        model = "Book"
        key = schema.KEY[model]
        if model == "Book":
            partition = rng.choice((("genre", "name"), ("publisher", "name"), ("publisher", "country"), None))
            order_f = rng.choice((("price",), ("pages",), ("published",)))
        else:
            partition, order_f = ("country",), ("birth_date",)
        fn = rng.choice(fns or WINDOW_FNS)
        desc = rng.random() < 0.6
        cols: list[tuple[str, Any]] = [(key, FieldRef((key,)))]
        if partition is not None:
            cols.append((dunder(partition), FieldRef(partition)))
        cols.append((dunder(order_f), FieldRef(order_f)))
        topk = None
        if fn in ("rank", "dense_rank", "row_number"):
            name = f"{order_f[0]}_{'position' if fn == 'row_number' else fn}"
            cols.append((name, Win(fn, partition, order_f, desc)))
            if rng.random() < topk_share:
                topk = (name, rng.choice((1, 2, 2, 3)))
        elif fn == "ntile":
            size = rng.choice((2, 3, 4))
            cols.append((f"{order_f[0]}_group", Win(fn, partition, order_f, desc, size=size)))
        else:
            arg = order_f if fn not in ("lag", "first_value") or rng.random() < 0.5 else (key,)
            size = None
            if fn in ("running_sum", "moving_sum"):
                arg = rng.choice((("pages",), ("price",)))
                size = rng.choice((2, 3)) if fn == "moving_sum" else None
            prefix = {"lag": "previous_", "lead": "next_", "first_value": "first_", "running_sum": "running_"}
            name = prefix.get(fn, "moving_") + arg[0]
            cols.append((name, Win(fn, partition, order_f, desc, arg, size)))
        n_preds = rng.choice((1, 2) if fn in ("rank", "dense_rank") else (1, 2, 2, 3))
        where = self.where(model, n_preds, allow_rel=rng.random() < 0.3)
        return Query(model, tuple(cols), self.window_order(fn, partition, order_f, cols[-1][0], key), where=where, topk=topk)

    def shape_row_number(self) -> Query:
        """A window shape of row numbers only, each cut to its top k (the window shape draws them one time in six)."""
        return self.shape_window(("row_number",), topk_share=1.0)

    def window_order(self, fn: str, partition: tuple[str, ...] | None, order_f: tuple[str, ...], name: str, key: str) -> tuple:
        """The output order of a window task: keys that leave ties for the unique key to close, so it is tested.

        Positions are unique within a partition, so they come first and tie only across partitions;
        moving sums rarely tie at all, so those rows are ordered by the unique key alone.
        """
        part = [dunder(partition)] if partition is not None else []
        if fn == "row_number" and partition is not None:
            keys = [name]
        elif fn == "moving_sum":
            keys = []
        else:
            keys = [*part, name]
        return tuple((n, False) for n in keys) + ((key, self.rng.random() < 0.5),)

    def cast_col(self, model: str) -> tuple[str, Cast] | None:
        """A Cast column: a money value cut to a whole number, or an integer written as text."""
        price, sale = FieldRef(("price",)), FieldRef(("sale_price",))
        options = {
            "Book": [
                ("whole_price", Cast(price, "int")),
                ("whole_price", Cast(price, "int")),
                ("whole_sale_price", Cast(sale, "int")),
                ("whole_discount", Cast(Arith("-", price, sale), "int")),
                ("pages_text", Cast(FieldRef(("pages",)), "str")),
            ],
            "Publisher": [("founded_text", Cast(FieldRef(("founded",)), "str"))],
        }.get(model)
        return self.rng.choice(options) if options else None

    def two_filters(self, model: str, tries: int = 4) -> tuple[Any, Any]:
        """A compound's two filters, neither a same-row join (one filter() call with .distinct(), not a side)."""
        for _ in range(tries):
            first = self.where(model, self.rng.choice((1, 1, 2)))
            given = (first,) if first is not None and self.rng.random() < 0.5 else ()
            second = self.where(model, self.rng.choice((1, 1, 2)), given=given)
            if first is not None and second is not None and not any(isinstance(n, SameRow) for n in walk((first, second))):
                return first, second
        raise ValueError("no two filters without a same-row join")

    def shape_setop(self) -> Query:
        rng = self.rng
        model, key, cols = self.key_and_fields()
        if rng.random() < 0.3 and (c := self.cast_col(model)) is not None:
            cols.append(c)
        first, second = self.two_filters(model)
        op = rng.choice(("union", "union", "intersection", "difference"))
        orderable = [n for n, e in cols if n != key and not schema_nullable(model, e)]
        order = self.order(cols, [key], rng.choice(orderable) if orderable else key)
        order = tuple((n, n == key or d) for n, d in order)  # the key closes the order Z to A (the docstring says why)
        return Query(model, tuple(cols), order, where=first, limit=rng.choice((None, None, None, 8)),
                     compound=Compound(op, second))  # fmt: skip

    def shape_cast(self) -> Query:
        rng = self.rng
        model = rng.choice(("Book", "Book", "Book", "Publisher"))
        key = schema.KEY[model]
        name, cast = self.cast_col(model) or ("", None)
        out = [p for p in self.out_fields(model) if p[0] not in ("price", "sale_price", "pages", "founded")]
        cols: list[tuple[str, Any]] = [(key, FieldRef((key,)))]
        if rng.random() < 0.5:
            path = rng.choice(out)
            cols.append((dunder(path), FieldRef(path)))
        if isinstance(cast.arg, FieldRef):  # the value cut, beside its cut
            cols.append((dunder(cast.arg.path), cast.arg))
        cols.append((name, cast))
        where = self.where(model, rng.choice((1, 1, 2)), allow_rel=rng.random() < 0.3) if rng.random() < 0.7 else None
        having = None
        if cast.to == "int" and rng.random() < 0.6:
            probe = Query(model, tuple(cols), ((key, False),), where=where)
            vals = [r[-1] for r in evaluate_raw(probe, self.w) if r[-1] is not None]
            having = Cmp(ColRef(name), rng.choice(("gt", "gte", "lt", "lte")), rng.choice(vals)) if vals else None
        order = ((name, rng.random() < 0.6), (key, rng.random() < 0.3))
        return Query(model, tuple(cols), order, where=where, having=having, limit=rng.choice((None, None, 5, 8)))

    def draw(self, shape: str | None = None) -> Query:
        shape = shape or self.rng.choice(SHAPES)
        return getattr(self, f"shape_{shape}")()


# rank-like functions twice: their top-k cut makes a second task shape
WINDOW_FNS = ("rank", "rank", "dense_rank", "dense_rank", "row_number", "row_number", "ntile", "lag", "lead",
              "first_value", "running_sum", "moving_sum")  # fmt: skip


def schema_nullable(model: str, e: Any) -> bool:
    from sandbox_env.generate.columns import expr_type

    return expr_type(model, e)[1]


def evaluate_raw(q: Query, w) -> list[tuple]:
    return Evaluator(w).run(q)


def candidate(seed: int, index: int, shape: str | None = None, fixture: int | None = None) -> Query | None:
    """The index-th candidate of `seed` (None when the draw found no constants); of one shape if named.

    A named shape draws from a stream of its own, so a batch of one shape never repeats the mixed draws.
    `fixture` names the seeded world whose rows give the constants (a stream of its own again); None
    keeps the hand-written fixture's streams, which the stored tasks were drawn from.
    """
    if shape is not None and shape not in SHAPE_NAMES:
        raise ValueError(f"unknown shape {shape!r}; the shapes are: {', '.join(SHAPE_NAMES)}")
    if fixture is not None and not is_seeded(fixture):
        raise ValueError(f"fixture {fixture} is not a seeded world's fixture seed (runtime/container/orm_fixture/world.py)")
    key = f"websandbox-orm-gen:{seed}:{index}" if shape is None else f"websandbox-orm-gen:{seed}:{shape}:{index}"
    rng = random.Random(key if fixture is None else f"{key}:world:{fixture}")
    try:
        q = Sampler(rng, 0 if fixture is None else fixture).draw(shape)
    except (IndexError, ValueError):
        return None
    return None if returns_to_origin(q) else q


def _simple_paths(p: Any) -> list[tuple[str, ...]]:
    """The field paths a predicate reads on its own model (not inside a relation's condition)."""
    if isinstance(p, Cmp | Between | IsNull | In | Text) and isinstance(p.target, FieldRef):
        return [p.target.path]
    if isinstance(p, Not):
        return _simple_paths(p.item)
    if isinstance(p, And | Or):
        return [x for i in p.items for x in _simple_paths(i)]
    return []


def _pred_returns(p: Any, model: str) -> bool:
    if isinstance(p, Not):
        return _pred_returns(p.item, model)
    if isinstance(p, And | Or):
        return any(_pred_returns(i, model) for i in p.items)
    if isinstance(p, Exists | Every | SameRow):
        target, _, back = schema.MULTI[model][p.rel]
        conds = p.conds if isinstance(p, SameRow) else (() if p.cond is None else (p.cond,))
        return any(path[0] == back for c in conds for path in _simple_paths(c)) or any(_pred_returns(c, target) for c in conds)
    return False


def returns_to_origin(q: Query) -> bool:
    """Whether a relation's condition walks back to the row it started from ("a store with no sale whose
    store is online": the sale's store is the store itself). Such a condition is a disguised filter on
    the row, its English reads as nonsense, so the sampler never draws it and the store drops it."""
    if q.where is not None and _pred_returns(q.where, q.universe):
        return True
    if q.exclude is not None and _pred_returns(q.exclude, q.universe):
        return True
    if q.compound is not None and _pred_returns(q.compound.where, q.universe):
        return True
    for _, e in q.cols:
        if isinstance(e, Sub) and e.cond is not None:
            back = schema.MULTI[q.universe][e.rel][2]
            if any(path[0] == back for path in _simple_paths(e.cond)):
                return True
        if isinstance(e, Agg) and e.cond is not None and len(e.rel) == 1 and e.rel[0] in schema.MULTI.get(q.universe, {}):
            back = schema.MULTI[q.universe][e.rel[0]][2]
            if any(path[0] == back for path in _simple_paths(e.cond)):
                return True
    return False


def ablations(q: Query) -> list[Query]:
    """The tree with one part removed at a time: each predicate of the where, the exclude, having, top-N, top-k."""
    out = []
    w = q.where
    if w is not None:
        out.append(dataclasses.replace(q, where=None))
        if isinstance(w, And):
            for i in range(len(w.items)):
                rest = w.items[:i] + w.items[i + 1 :]
                out.append(dataclasses.replace(q, where=rest[0] if len(rest) == 1 else And(rest)))
        if isinstance(w, Or):
            for item in w.items:
                out.append(dataclasses.replace(q, where=item))
        if isinstance(w, Not):
            out.append(dataclasses.replace(q, where=w.item))
    for name in ("exclude", "having", "limit", "topk"):
        if getattr(q, name) is not None:
            out.append(dataclasses.replace(q, **{name: None}))
    if q.compound is not None:  # either side alone
        out += [dataclasses.replace(q, compound=None), dataclasses.replace(q, where=q.compound.where, compound=None)]
    return out


FLIPS = {"lt": "lte", "lte": "lt", "gt": "gte", "gte": "gt"}
SWAPS = ("sum", "avg", "max", "min")


def _local_edits(node: Any) -> list[Any]:
    """Mutations of one node, after verify/mutants.py's orm operators, on the tree."""
    r = dataclasses.replace
    if isinstance(node, Cmp) and node.op in FLIPS:
        return [r(node, op=FLIPS[node.op])]
    if isinstance(node, Text) and node.kind in ("exact", "iexact"):
        return [r(node, kind="iexact" if node.kind == "exact" else "exact")]
    if isinstance(node, IsNull):
        return [r(node, isnull=not node.isnull)]
    if isinstance(node, Agg | Sub):
        out = [r(node, fn=f) for f in SWAPS if node.fn in SWAPS and f != node.fn]
        return out + ([r(node, coalesce=False)] if node.coalesce else [])
    if isinstance(node, Win) and node.fn in ("rank", "dense_rank"):
        return [r(node, fn="dense_rank" if node.fn == "rank" else "rank")]
    if isinstance(node, Win) and node.fn == "row_number":  # mutants.op_rank: a rank over the order without its tiebreak
        return [r(node, fn="rank"), r(node, fn="dense_rank")]
    if isinstance(node, Compound):  # mutants.op_setop: another set operation; a union keeping duplicates
        out = [r(node, op=o) for o in ("union", "intersection", "difference") if o != node.op]
        return out + ([r(node, all=True)] if node.op == "union" and not node.all else [])
    if isinstance(node, Query):
        out = [r(node, order=node.order[:i] + ((n, not d),) + node.order[i + 1 :]) for i, (n, d) in enumerate(node.order)]
        if node.limit is not None:
            out += [r(node, limit=node.limit + 1), r(node, limit=node.limit - 1)]
        return out
    return []


def _edits(value: Any) -> list[Any]:
    if dataclasses.is_dataclass(value):
        out = _local_edits(value)
        for f in dataclasses.fields(value):
            out += [dataclasses.replace(value, **{f.name: nv}) for nv in _edits(getattr(value, f.name))]
        return out
    if isinstance(value, tuple):
        return [value[:i] + (nv,) + value[i + 1 :] for i, item in enumerate(value) for nv in _edits(item)]
    return []


def tree_mutants(q: Query) -> list[Query]:
    """The tree with one mutation each: the evaluator's preview of the ORM mutants."""
    return _edits(q)


def universe_size(q: Query, variant: int) -> int:
    return len(world(variant).rows[q.universe])


def screen_variant(q: Query, variant: int) -> tuple[list[list[Any]] | None, str]:
    """The evaluator's rows on one variant, or None and why the variant cannot serve the task."""
    w = world(variant)
    try:
        rows = evaluate(q, w)
    except (TypeError, KeyError, ZeroDivisionError) as exc:
        return None, f"evaluator: {type(exc).__name__}: {exc}"
    if not 2 <= len(rows) <= 40:
        return None, f"{len(rows)} rows"
    if q.group is None and len(rows) >= 0.75 * universe_size(q, variant):
        return None, "75 % of the universe or more"
    for ab in ablations(q):
        if evaluate(ab, w) == rows:
            return None, "an ablation gives the same rows"
    names = [n for n, _ in q.cols]
    for i in range(1, len(q.order)):
        prefix = [names.index(n) for n, _ in q.order[:i]]
        if len({tuple(r[j] for j in prefix) for r in rows}) == len(rows):
            return None, f"no tie before ordering key {i + 1}: it is untested"
    if any(isinstance(n, Win) and n.fn not in ("rank", "dense_rank") for n in walk(q)):
        if any(evaluate(q, w, window_tiebreak=other) == rows for other in ("key_desc", "id")):
            return None, "no tie inside the window's order: its tiebreak is untested"
    for m in tree_mutants(q):
        try:
            if evaluate(m, w) == rows:
                return None, "a mutation gives the same rows"
        except (TypeError, KeyError, ValueError, ZeroDivisionError):
            continue
    kind = unseparated_trap(q, w, rows)
    if kind is not None:
        return None, f"the data does not test a stated rule ({kind}): its mistake gives the same rows"
    return rows, "ok"


def unseparated_trap(q: Query, w, rows: list[list[Any]]) -> str | None:
    """The kind of the first stated rule whose mistake (traps.py) gives `rows` on world `w`, or None."""
    for kind, m in trap_mistakes(q):
        try:
            if evaluate(m, w) == rows:
                return kind
        except (TypeError, KeyError, ValueError, ZeroDivisionError):
            continue
    return None


def _hashable(v: Any) -> Any:
    return v


def prescreen(q: Query) -> dict[int, list[list[Any]]]:
    """The evaluator's rows on every variant that passes the cheap checks."""
    out = {}
    for v in range(VARIANTS):
        rows, _ = screen_variant(q, v)
        if rows is not None:
            out[v] = rows
    return out


__all__ = ["Decimal", "Sampler", "ablations", "candidate", "prescreen", "returns_to_origin", "screen_variant"]
