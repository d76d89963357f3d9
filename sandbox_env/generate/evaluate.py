"""The independent evaluator: a query tree's expected rows from the fixture's plain rows, no ORM.

Semantics written down once (fixture.py says why plain Python): a comparison with a missing
value is false, and so is its negation's inner test (Django's `exclude`/`~Q` keep rows whose
value is NULL, which `not False` does here); NULLs form one group; text compares by code
point (SQLite's BINARY collation); Sum/Avg/Max/Min of nothing is None, Count of nothing 0;
Concat reads a missing part as empty (Django's Concat on SQLite); Greatest/Least of a missing
value is missing (SQLite's scalar max/min), NullIf(a, b) is a unless a equals b; Rank counts the rows
ordered strictly before, DenseRank the distinct values before; Lag/Lead/running sums follow
the window's order with the unique key as its tiebreak; Cast to an integer cuts toward zero
(SQLite's CAST of a REAL: a DecimalField is stored with NUMERIC affinity, as a REAL or, when whole,
an INTEGER; the evaluator cuts the exact Decimal, and verification drops a tree where the image's
floating-point arithmetic would land on the other side of a whole number), Cast of an integer to
text is its decimal digits, and a NULL stays NULL.

Compound queries (union, intersection, difference) follow SQLite's compound SELECT: each side is
its filtered rows projected to the selected columns; UNION, INTERSECT and EXCEPT keep distinct rows
over those columns (NULLs equal, text by BINARY collation); only UNION ALL keeps duplicates.
Ordering and the top-N apply to the combined rows.

`evaluate(tree, world)` gives the rows as the grader compares them (`plain`): money as text
with two places, dates as ISO text, averages as float.
"""

from __future__ import annotations

import dataclasses
import re
from collections import defaultdict
from datetime import date
from decimal import Decimal
from typing import Any

from sandbox_env.generate import schema
from sandbox_env.generate.fixture import World
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
)  # fmt: skip


class Row:
    """A row of `model` with the columns computed so far."""

    __slots__ = ("model", "data", "cols")

    def __init__(self, model: str, data: dict[str, Any]) -> None:
        self.model, self.data, self.cols = model, data, {}


def value_at(world: World, model: str, data: dict[str, Any] | None, path: tuple[str, ...]) -> Any:
    for hop in path[:-1]:
        if data is None:
            return None
        target = schema.FK[model][hop][0]
        data, model = world.fk(model, data, hop, target), target
    return None if data is None else data[path[-1]]


def related(world: World, model: str, data: dict[str, Any], rel: tuple[str, ...]) -> tuple[str, list[dict[str, Any]]]:
    """The rows reached over multi-valued (and forward) hops, one per join path, and their model."""
    items = [data]
    for hop in rel:
        nxt = []
        if hop in schema.MULTI.get(model, {}):
            for item in items:
                nxt += world.multi(model, item, hop)
            model = schema.MULTI[model][hop][0]
        else:
            target = schema.FK[model][hop][0]
            nxt = [r for r in (world.fk(model, i, hop, target) for i in items) if r is not None]
            model = target
        items = nxt
    return model, items


def week_day(d: date) -> int:
    return d.isoweekday() % 7 + 1  # Django: 1 = Sunday ... 7 = Saturday


def date_part(d: date | None, part: str) -> int | None:
    if d is None:
        return None
    if part == "hour":
        return d.hour  # a datetime (Sale.sold_at); naive, as the fixture's settings keep USE_TZ off
    return {"year": d.year, "month": d.month, "quarter": (d.month - 1) // 3 + 1, "week_day": week_day(d)}[part]


def _cmp(a: Any, op: str, b: Any) -> bool:
    if a is None or b is None:
        return False
    return {"lt": a < b, "lte": a <= b, "gt": a > b, "gte": a >= b, "exact": a == b}[op]


def _aggregate(fn: str, values: list[Any]) -> Any:
    present = [v for v in values if v is not None]
    if fn == "count":
        return len(present)
    if not present:
        return None
    if fn == "sum":
        return sum(present[1:], present[0])
    if fn == "avg":
        return float(sum(Decimal(str(v)) if isinstance(v, float) else v for v in present)) / len(present)
    if fn == "max":
        return max(present)
    return min(present)


def _tiles(n: int, tiles: int) -> list[int]:
    """NTILE's tile of each of n ordered rows: sizes differ by at most one, the larger tiles first."""
    base, extra = divmod(n, tiles)
    out: list[int] = []
    for t in range(1, min(n, tiles) + 1):
        out += [t] * (base + (1 if t <= extra else 0))
    return out


def _sequence_value(e: Win, i: int, vals: list[Any], tiles: list[int]) -> Any:
    """The value of an order-sensitive window at position i of its partition's ordered rows."""
    if e.fn == "row_number":
        return i + 1
    if e.fn == "ntile":
        return tiles[i]
    if e.fn == "lag":
        return vals[i - 1] if i > 0 else None
    if e.fn == "lead":
        return vals[i + 1] if i + 1 < len(vals) else None
    if e.fn == "first_value":
        return vals[0]
    if e.fn == "moving_sum":
        assert e.size is not None
        return _aggregate("sum", vals[max(0, i - e.size + 1) : i + 1])
    return _aggregate("sum", vals[: i + 1])


class Evaluator:
    def __init__(self, world: World, window_tiebreak: str = "key") -> None:
        self.w = world
        # the tiebreak inside an ordered window: the unique key A to Z as the reference writes it; "key_desc"
        # (Z to A) and "id" (the rows' storage order, what a window without a tiebreak tends to read) tell
        # whether the data tests that tiebreak at all (sample.screen_variant)
        self.window_tiebreak = window_tiebreak

    # -- predicates -------------------------------------------------------------------------
    def target(self, row: Row | tuple[str, dict], t: FieldRef | ColRef) -> Any:
        if isinstance(row, Row):
            if isinstance(t, ColRef):
                return row.cols[t.name]
            return value_at(self.w, row.model, row.data, t.path)
        model, data = row
        return value_at(self.w, model, data, t.path)

    def pred(self, p: Any, row: Row | tuple[str, dict]) -> bool:
        if isinstance(p, Cmp):
            v = self.target(row, p.target)
            if p.part is not None:
                v = date_part(v, p.part)
            return _cmp(v, p.op, p.value)
        if isinstance(p, Between):
            v = self.target(row, p.target)
            return v is not None and p.lo <= v <= p.hi
        if isinstance(p, IsNull):
            return (self.target(row, p.target) is None) == p.isnull
        if isinstance(p, In):
            return self.target(row, p.target) in p.values
        if isinstance(p, Text):
            v = self.target(row, p.target)
            if v is None:
                return False
            if p.kind == "exact":
                return v == p.value
            if p.kind == "iexact":
                return v.lower() == p.value.lower()  # SQLite LIKE: ASCII case only; values here are ASCII
            flags = re.IGNORECASE if p.kind.startswith("i") else 0
            pattern = ("^" if p.kind.endswith("prefix") else "") + re.escape(p.value)
            return re.search(pattern, v, flags) is not None
        if isinstance(p, Not):
            return not self.pred(p.item, row)
        if isinstance(p, And):
            return all(self.pred(i, row) for i in p.items)
        if isinstance(p, Or):
            return any(self.pred(i, row) for i in p.items)
        model, data = (row.model, row.data) if isinstance(row, Row) else row
        if isinstance(p, Exists):
            target, items = related(self.w, model, data, (p.rel,))
            found = any(p.cond is None or self.pred(p.cond, (target, i)) for i in items)
            return found != p.negate
        if isinstance(p, Every):
            target, items = related(self.w, model, data, (p.rel,))
            return all(self.pred(p.cond, (target, i)) for i in items)
        if isinstance(p, SameRow):
            target, items = related(self.w, model, data, (p.rel,))
            return any(all(self.pred(c, (target, i)) for c in p.conds) for i in items)
        raise TypeError(f"not a predicate: {p!r}")

    # -- expressions ------------------------------------------------------------------------
    def expr(self, e: Any, row: Row, group: list[Row] | None = None) -> Any:
        w = self.w
        if isinstance(e, FieldRef):
            return value_at(w, row.model, row.data, e.path)
        if isinstance(e, ColRef):
            return row.cols[e.name]
        if isinstance(e, Arith):
            a, b = self.expr(e.left, row), self.expr(e.right, row)
            if a is None or b is None:
                return None
            return a + b if e.op == "+" else a - b if e.op == "-" else a * b
        if isinstance(e, Part):
            return date_part(self.expr(e.arg, row), e.part)
        if isinstance(e, Trunc):
            d = self.expr(e.arg, row)
            return None if d is None else date(d.year, 1 if e.unit == "year" else d.month, 1)
        if isinstance(e, StrFn):
            v = self.expr(e.arg, row)
            return None if v is None else v.lower() if e.fn == "lower" else v.upper() if e.fn == "upper" else len(v)
        if isinstance(e, Concat):
            return f"{self.expr(e.left, row) or ''}{e.sep}{self.expr(e.right, row) or ''}"
        if isinstance(e, Bucket):
            v = self.expr(e.arg, row)
            if v is None:
                return None
            for cut, label in zip(e.cuts, e.labels, strict=False):
                if v < cut:
                    return label
            return e.labels[-1]
        if isinstance(e, CoalesceE):
            v = self.expr(e.first, row)
            return self.expr(e.second, row) if v is None else v
        if isinstance(e, PairFn):
            a, b = self.expr(e.first, row), self.expr(e.second, row)
            if e.fn == "nullif":
                return None if a == b else a
            if a is None or b is None:  # Greatest/Least on SQLite: a missing argument makes the result missing
                return None
            return max(a, b) if e.fn == "greatest" else min(a, b)
        if isinstance(e, Cast):
            v = self.expr(e.arg, row)
            return None if v is None else int(v) if e.to == "int" else str(v)  # int() cuts toward zero, as CAST
        if isinstance(e, Agg):
            return self.agg(e, row, group)
        if isinstance(e, Sub):
            target, items = related(w, row.model, row.data, (e.rel,))
            items = [i for i in items if e.cond is None or self.pred(e.cond, (target, i))]
            values = [1 if e.field is None else value_at(w, target, i, e.field) for i in items]
            v = None if not items else _aggregate(e.fn, values)  # a subquery with no row is NULL, even a count
            return 0 if v is None and e.coalesce else v
        raise TypeError(f"not a row expression: {e!r}")

    def agg(self, e: Agg, row: Row, group: list[Row] | None) -> Any:
        w = self.w
        if e.rel or group is None:
            sources = [(row.model, row.data)] if group is None else [(r.model, r.data) for r in group]
            pairs = []
            for model, data in sources:
                target, items = related(w, model, data, e.rel)
                pairs += [(target, i) for i in items]
        else:
            pairs = [(r.model, r.data) for r in group]
        if e.cond is not None:
            pairs = [(m, i) for m, i in pairs if self.pred(e.cond, (m, i))]
        if e.field is None:
            values: list[Any] = [i["id"] for _, i in pairs]
        elif e.product is not None:
            values = [None if (a := value_at(w, m, i, e.field)) is None or (b := value_at(w, m, i, e.product)) is None
                      else a * b for m, i in pairs]  # fmt: skip
        else:
            values = [value_at(w, m, i, e.field) for m, i in pairs]
        if e.distinct:
            values = list(dict.fromkeys(v for v in values if v is not None))
        v = _aggregate(e.fn, values)
        return 0 if v is None and e.coalesce else v

    # -- windows ----------------------------------------------------------------------------
    def windows(self, q: Query, rows: list[Row]) -> None:
        key = schema.KEY[q.universe]
        for name, e in q.cols:
            if not isinstance(e, Win):
                continue
            parts: dict[Any, list[Row]] = defaultdict(list)
            for r in rows:
                parts[None if e.partition is None else value_at(self.w, r.model, r.data, e.partition)].append(r)
            for members in parts.values():
                ov = [value_at(self.w, r.model, r.data, e.order) for r in members]
                if e.fn in ("rank", "dense_rank"):
                    for r, v in zip(members, ov, strict=True):
                        better = [o for o in ov if (o > v if e.desc else o < v)]
                        r.cols[name] = 1 + (len(better) if e.fn == "rank" else len(set(better)))
                    continue
                tiebreak = "id" if self.window_tiebreak == "id" else key
                seq = sorted(members, key=lambda r: r.data[tiebreak], reverse=self.window_tiebreak == "key_desc")
                seq.sort(key=lambda r: value_at(self.w, r.model, r.data, e.order), reverse=e.desc)
                vals = [None if e.arg is None else value_at(self.w, r.model, r.data, e.arg) for r in seq]
                tiles = _tiles(len(seq), e.size) if e.fn == "ntile" else []
                for i, r in enumerate(seq):
                    r.cols[name] = _sequence_value(e, i, vals, tiles)

    # -- the query --------------------------------------------------------------------------
    def run(self, q: Query) -> list[tuple]:
        if q.compound is not None:
            return self.compound(q, q.compound)
        rows = [Row(q.universe, d) for d in self.w.rows[q.universe]]
        if q.where is not None:
            rows = [r for r in rows if self.pred(q.where, r)]
        if q.exclude is not None:
            rows = [r for r in rows if not self.pred(q.exclude, r)]
        if q.group is None:
            self.windows(q, rows)
            for r in rows:
                for name, e in q.cols:
                    if not isinstance(e, Win):
                        r.cols[name] = self.expr(e, r)
            out = rows
        else:
            keyed: dict[tuple, list[Row]] = defaultdict(list)
            keys = [(n, e) for n, e in q.cols if n in q.group]
            for r in rows:
                keyed[tuple(self.expr(e, r) for _, e in keys)].append(r)
            out = []
            for kv, members in keyed.items():
                g = Row(q.universe, members[0].data)
                g.cols = dict(zip([n for n, _ in keys], kv, strict=True))
                for name, e in q.cols:
                    if name not in q.group:
                        g.cols[name] = self.agg(e, g, members)
                out.append(g)
        if q.having is not None:
            out = [r for r in out if self.pred(q.having, r)]
        if q.topk is not None:
            out = [r for r in out if r.cols[q.topk[0]] <= q.topk[1]]
        for name, desc in reversed(q.order):
            out.sort(key=lambda r, n=name: _sort_key(r.cols[n]), reverse=desc)
        if q.limit is not None:
            out = out[: q.limit]
        return [tuple(r.cols[n] for n, _ in q.cols) for r in out]

    def compound(self, q: Query, c: Compound) -> list[tuple]:
        """Both sides' rows over the selected columns, combined; distinct unless UNION ALL; then ordered and cut."""
        side = dataclasses.replace(q, compound=None, order=(), limit=None)
        first, second = self.run(side), self.run(dataclasses.replace(side, where=c.where))
        if c.op == "union":
            rows = first + second if c.all else list(dict.fromkeys(first + second))
        else:
            other = set(second)
            rows = list(dict.fromkeys(r for r in first if (r in other) == (c.op == "intersection")))
        names = [n for n, _ in q.cols]
        for name, desc in reversed(q.order):
            i = names.index(name)
            rows.sort(key=lambda r, i=i: _sort_key(r[i]), reverse=desc)
        return rows if q.limit is None else rows[: q.limit]


def _sort_key(v: Any) -> tuple:
    return (0, 0) if v is None else (1, v)  # SQLite: NULL sorts first ascending


def plain(value: Any) -> Any:
    """A value as the grader compares it: money text with two places, ISO dates, floats."""
    if isinstance(value, Decimal):
        return format(value, ".2f")
    if isinstance(value, date):
        return value.isoformat()
    return value


def evaluate(tree: Query, world: World, window_tiebreak: str = "key") -> list[list[Any]]:
    """The expected rows of `tree` over `world`, plain (with another tiebreak inside ordered windows if asked)."""
    return [[plain(v) for v in row] for row in Evaluator(world, window_tiebreak).run(tree)]
