"""The ORM reference of a tree: one execute_code cell that leaves `result`, like a hand-written reference.py.

The code is written the way a careful person writes it, so that verify/mutants.py's orm
operators find what they look for: lookups as keyword arguments (gt/gte flips), `order_by`
with string keys (direction flips, a dropped tiebreak), `Count(..., distinct=True)`,
`Coalesce`, Q objects joined by `&`/`|`, a top-N as a slice, window functions by name, a
same-related-row condition as one `filter()` call over the relation followed by
`.distinct()`. Names the session does not import (ExtractQuarter, TruncYear, ...) are
imported in the cell's first line.

Decisions:
- Substrings and prefixes are matched with `__regex`/`__iregex`, never `__contains`/
  `__startswith`: Django on SQLite runs both through LIKE, which ignores ASCII case, so a
  "case-sensitive" contains cannot be what SQLite does, and the case-insensitive lookup
  would always have an equivalent mutant. A regular expression's letter case is honoured.
- A compound query names its two sides (`first`, `second`: each filtered, annotated and projected
  by `values_list` over the same columns) and combines them with `first.union(second)` (or
  `.intersection`, `.difference`), then orders by column names and slices: Django on SQLite allows
  neither ordering nor a slice inside a side, and the names are what the combined rows carry.
- Cast is written `Cast(<expression>, IntegerField())` (or `CharField()`), both names preloaded.
- A scalar subquery aggregates (`.values(back).annotate(v=Max(...)).values("v")`) rather than
  slicing `[:1]`: SQLite reads the first row of a scalar subquery, so the slice mutant `[:2]`
  would be equivalent.
"""

from __future__ import annotations

import re
from datetime import date
from decimal import Decimal
from typing import Any

from sandbox_env.families.orm import DB_NAMES, FUNCTION_NAMES
from sandbox_env.generate import schema
from sandbox_env.generate.columns import column_types
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
)  # fmt: skip

PRELOADED = set(DB_NAMES) | set(FUNCTION_NAMES)  # what the session's preamble imports
PART_FN = {"year": "ExtractYear", "month": "ExtractMonth", "quarter": "ExtractQuarter", "week_day": "ExtractWeekDay",
           "hour": "ExtractHour"}  # fmt: skip
TRUNC_FN = {"year": "TruncYear", "month": "TruncMonth"}
AGG_FN = {"count": "Count", "sum": "Sum", "avg": "Avg", "max": "Max", "min": "Min"}
WIN_FN = {
    "rank": "Rank",
    "dense_rank": "DenseRank",
    "row_number": "RowNumber",
    "ntile": "Ntile",
    "lag": "Lag",
    "lead": "Lead",
    "first_value": "FirstValue",
    "running_sum": "Sum",
    "moving_sum": "Sum",
}
MONEY = "DecimalField(max_digits=12, decimal_places=2)"


def lit(v: Any) -> str:
    if isinstance(v, Decimal):
        return f'Decimal("{v}")'
    if isinstance(v, date):
        return f"date({v.year}, {v.month}, {v.day})"
    if isinstance(v, tuple):
        return "[" + ", ".join(lit(x) for x in v) + "]"
    return repr(v)


def dunder(path: tuple[str, ...]) -> str:
    return "__".join(path)


def lookup(p: Any, prefix: str = "") -> tuple[str, str]:
    """A simple predicate as (keyword, value source); prefix is a relation path with `__`."""
    if isinstance(p, Cmp):
        base = prefix + (p.target.name if isinstance(p.target, ColRef) else dunder(p.target.path))
        if p.part is not None:
            base += f"__{p.part}"
        return (base if p.op == "exact" else f"{base}__{p.op}"), lit(p.value)
    if isinstance(p, Between):
        return f"{prefix}{dunder(p.target.path)}__range", f"({lit(p.lo)}, {lit(p.hi)})"
    if isinstance(p, IsNull):
        return f"{prefix}{dunder(p.target.path)}__isnull", repr(p.isnull)
    if isinstance(p, In):
        return f"{prefix}{dunder(p.target.path)}__in", lit(p.values)
    if isinstance(p, Text):
        base = prefix + dunder(p.target.path)
        if p.kind in ("exact", "iexact"):
            return (base if p.kind == "exact" else f"{base}__iexact"), repr(p.value)
        pattern = ("^" if p.kind.endswith("prefix") else "") + re.escape(p.value)
        return f"{base}__{'iregex' if p.kind.startswith('i') else 'regex'}", repr(pattern)
    raise TypeError(f"not a simple predicate: {p!r}")


SIMPLE = (Cmp, Between, IsNull, In, Text)


class Renderer:
    def __init__(self, q: Query) -> None:
        self.q = q
        self.imports: set[str] = set()

    def fn(self, name: str) -> str:
        if name not in PRELOADED:
            self.imports.add(name)
        return name

    # -- predicates -------------------------------------------------------------------------
    def q_expr(self, p: Any, model: str, prefix: str = "") -> str:
        """A predicate as an expression usable in filter(): Q(...), ~Q(...), Exists(...), joined by & and |."""
        if isinstance(p, SIMPLE):
            k, v = lookup(p, prefix)
            return f"Q({k}={v})"
        if isinstance(p, Not):
            inner = self.q_expr(p.item, model, prefix)
            return f"~{inner}" if inner.startswith(("Q(", "Exists(")) else f"~({inner})"
        if isinstance(p, And | Or):
            glue = " & " if isinstance(p, And) else " | "
            parts = [self.q_expr(i, model, prefix) for i in p.items]
            return glue.join(f"({x})" if (" | " in x or " & " in x) else x for x in parts)
        if isinstance(p, Exists | Every):
            target, _, back = schema.MULTI[model][p.rel]
            inner = f'{target}.objects.filter({back}=OuterRef("pk")'
            if isinstance(p, Exists):
                if p.cond is not None:
                    inner += self.filter_args(p.cond, target, lead=", ")
                inner += ")"
                return f"~Exists({inner})" if p.negate else f"Exists({inner})"
            return f"~Exists({inner}).exclude({self.filter_args(p.cond, target)}))"
        raise TypeError(f"no Q form for {p!r}")

    def filter_args(self, p: Any, model: str, lead: str = "") -> str:
        """The arguments of a filter() call: an And of simple predicates as keywords, else one expression."""
        items = p.items if isinstance(p, And) else (p,)
        same = [i for i in items if isinstance(i, SameRow)]
        items = tuple(i for i in items if not isinstance(i, SameRow))
        joined = [f"{k}={v}" for s in same for k, v in (lookup(c, s.rel + "__") for c in s.conds)]
        if same:
            rest = self.filter_args(And(items), model) if items else ""
            return lead + ", ".join([x for x in (rest,) if x] + joined)
        positional = [self.q_expr(i, model) for i in items if not isinstance(i, SIMPLE)]
        keywords: dict[str, str] = {}
        for k, v in (lookup(i) for i in items if isinstance(i, SIMPLE)):
            if k in keywords:  # a keyword cannot repeat: a second condition on one lookup goes in a Q
                positional.append(f"Q({k}={v})")
            else:
                keywords[k] = f"{k}={v}"
        return lead + ", ".join(positional + list(keywords.values()))

    # -- expressions ------------------------------------------------------------------------
    def expr(self, e: Any, model: str) -> str:
        if isinstance(e, FieldRef):
            return f'F("{dunder(e.path)}")'
        if isinstance(e, Arith):
            text = f"{self.expr(e.left, model)} {e.op} {self.expr(e.right, model)}"
            types = {schema.resolve(model, x.path)[1].type for x in (e.left, e.right) if isinstance(x, FieldRef)}
            if len(types) > 1:
                return f"ExpressionWrapper({text}, output_field={MONEY})"
            return text
        if isinstance(e, Part):
            return f'{self.fn(PART_FN[e.part])}("{dunder(e.arg.path)}")'
        if isinstance(e, Trunc):
            return f'{self.fn(TRUNC_FN[e.unit])}("{dunder(e.arg.path)}")'
        if isinstance(e, StrFn):
            return f'{self.fn(e.fn.capitalize())}("{dunder(e.arg.path)}")'
        if isinstance(e, Concat):
            return f'{self.fn("Concat")}("{dunder(e.left.path)}", Value({e.sep!r}), "{dunder(e.right.path)}")'
        if isinstance(e, Bucket):
            whens = ", ".join(
                f"When({dunder(e.arg.path)}__lt={lit(c)}, then=Value({label!r}))"
                for c, label in zip(e.cuts, e.labels, strict=False)
            )
            return f"Case({whens}, default=Value({e.labels[-1]!r}))"
        if isinstance(e, CoalesceE):
            return f'Coalesce("{dunder(e.first.path)}", "{dunder(e.second.path)}")'
        if isinstance(e, PairFn):
            name = self.fn({"greatest": "Greatest", "least": "Least", "nullif": "NullIf"}[e.fn])
            return f'{name}("{dunder(e.first.path)}", "{dunder(e.second.path)}")'
        if isinstance(e, Cast):
            arg = self.expr(e.arg, model) if isinstance(e.arg, Arith) else f'"{dunder(e.arg.path)}"'
            return f"Cast({arg}, {'IntegerField' if e.to == 'int' else 'CharField'}())"
        if isinstance(e, Agg):
            return self.agg(e, model)
        if isinstance(e, Sub):
            target, _, back = schema.MULTI[model][e.rel]
            inner = f'{target}.objects.filter({back}=OuterRef("pk")'
            if e.cond is not None:
                inner += self.filter_args(e.cond, target, lead=", ")
            arg = '"pk"' if e.field is None else f'"{dunder(e.field)}"'
            inner += f').values("{back}").annotate(v={AGG_FN[e.fn]}({arg})).values("v")'
            text = f"Subquery({inner})"
            if e.coalesce:
                return f"Coalesce({text}, 0)"
            return text
        if isinstance(e, Win):
            key = schema.KEY[model]
            desc = ".desc()" if e.desc else ".asc()"
            name = self.fn(WIN_FN[e.fn])
            order = f'[F("{dunder(e.order)}"){desc}, F("{key}").asc()]'
            frame = ""
            if e.fn in ("rank", "dense_rank"):
                func, order = f"{name}()", f'F("{dunder(e.order)}"){desc}'
            elif e.fn == "row_number":
                func = f"{name}()"
            elif e.fn == "ntile":
                func = f"{name}({e.size})"
            else:
                func = f'{name}("{dunder(e.arg)}")'
            if e.fn == "moving_sum":
                frame = f", frame={self.fn('RowRange')}(start=-{e.size - 1}, end=0)"
            part = "" if e.partition is None else f', partition_by=F("{dunder(e.partition)}")'
            return f"Window({func}{part}, order_by={order}{frame})"
        raise TypeError(f"no ORM form for {e!r}")

    def agg(self, e: Agg, model: str) -> str:
        prefix = dunder(e.rel) + "__" if e.rel else ""
        if e.field is None:
            arg = f'"{dunder(e.rel)}"' if e.rel else '"pk"'
        elif e.product is not None:
            arg = f'F("{prefix}{dunder(e.field)}") * F("{prefix}{dunder(e.product)}")'
        else:
            arg = f'"{prefix}{dunder(e.field)}"'
        kwargs = []
        if e.distinct:
            kwargs.append("distinct=True")
        if e.cond is not None:
            cond_model = model
            for hop in e.rel:
                cond_model = schema.MULTI[cond_model][hop][0] if hop in schema.MULTI.get(cond_model, {}) else cond_model
            kwargs.append(f"filter={self.q_expr(e.cond, cond_model, prefix)}")
        if e.product is not None:
            kwargs.append(f"output_field={MONEY}")
        text = f"{AGG_FN[e.fn]}({', '.join([arg, *kwargs])})"
        if not e.coalesce:
            return text
        money = e.product is not None or (e.field is not None and _is_money(model, e))
        if money:
            return f'Coalesce({text}, Value(Decimal("0.00")), output_field={MONEY})'
        return f"Coalesce({text}, 0)"

    # -- the query --------------------------------------------------------------------------
    def side(self, where: Any) -> str:
        """One side of a compound query: filtered, annotated and projected to the selected columns."""
        q, model = self.q, self.q.universe
        chain = f"{model}.objects.filter({self.filter_args(where, model)})"
        computed = [(n, e) for n, e in q.cols if not (isinstance(e, FieldRef) and n == dunder(e.path))]
        if computed:
            chain += ".annotate(" + ", ".join(f"{n}={self.expr(e, model)}" for n, e in computed) + ")"
        return chain + ".values_list(" + ", ".join(f'"{n}"' for n, _ in q.cols) + ")"

    def combined(self) -> str:
        q = self.q
        assert q.compound is not None and q.group is None and q.having is None and q.topk is None and q.exclude is None
        first, second = self.side(q.where), self.side(q.compound.where)
        call = f"first.{q.compound.op}(second{', all=True' if q.compound.all else ''})"
        chain = call + "\n    .order_by(" + ", ".join(f'"{"-" if d else ""}{n}"' for n, d in q.order) + ")"
        if q.limit is not None:
            chain += f"[:{q.limit}]"
        return f"first = {first}\nsecond = {second}\nrows = (\n    {chain}\n)"

    def render(self) -> str:
        q, model = self.q, self.q.universe
        if q.compound is not None:
            return self.finish(self.combined())
        names = {n for n, _ in q.cols}
        plain_cols = {n: e for n, e in q.cols if isinstance(e, FieldRef) and n == dunder(e.path)}
        chain = f"{model}.objects"
        if q.where is not None:
            chain += f".filter({self.filter_args(q.where, model)})"
        if q.exclude is not None:
            chain += f".exclude({self.filter_args(q.exclude, model)})"
        computed = [(n, e) for n, e in q.cols if n not in plain_cols]
        if q.group is not None:
            keys = [n for n in q.group]
            pre = [(n, e) for n, e in computed if n in keys]
            if pre:
                chain += ".annotate(" + ", ".join(f"{n}={self.expr(e, model)}" for n, e in pre) + ")"
            chain += ".values(" + ", ".join(f'"{k}"' for k in keys) + ")"
            computed = [(n, e) for n, e in computed if n not in keys]
        if computed:
            chain += "\n    .annotate(" + ", ".join(f"{n}={self.expr(e, model)}" for n, e in computed) + ")"
        post = []
        if q.having is not None:
            post.append(q.having)
        if q.topk is not None:
            post.append(Cmp(ColRef(q.topk[0]), "lte", q.topk[1]))
        if post:
            chain += f"\n    .filter({self.filter_args(And(tuple(post)) if len(post) > 1 else post[0], model)})"
        if any(isinstance(n, SameRow) for n in walk(q.where)):
            chain += ".distinct()"
        chain += "\n    .order_by(" + ", ".join(f'"{"-" if d else ""}{n}"' for n, d in q.order) + ")"
        chain += "\n    .values_list(" + ", ".join(f'"{n}"' for n in (n for n, _ in q.cols)) + ")"
        if q.limit is not None:
            chain += f"[:{q.limit}]"
        assert names
        return self.finish(f"rows = (\n    {chain}\n)")

    def finish(self, rows: str) -> str:
        """The imports, the statements that leave `rows`, and `result` formatted per column type."""
        q = self.q
        vars_ = [f"v{i}" for i in range(len(q.cols))]
        cells = [_format(v, t, nullable) for v, (_, t, nullable) in zip(vars_, column_types(q), strict=True)]
        lines = []
        if self.imports:
            dj = sorted(i for i in self.imports if i.endswith("Field") or i in ("ExpressionWrapper", "RowRange"))
            fns = sorted(i for i in self.imports if i not in dj)
            if fns:
                lines.append(f"from django.db.models.functions import {', '.join(fns)}")
            if dj:
                lines.append(f"from django.db.models import {', '.join(dj)}")
        lines.append(rows)
        lines.append(f"result = [({', '.join(cells)},) for {', '.join(vars_)} in rows]")
        return "\n".join(lines) + "\n"


def _is_money(model: str, e: Agg) -> bool:
    target = model
    for hop in e.rel:
        target = schema.MULTI[target][hop][0] if hop in schema.MULTI.get(target, {}) else schema.FK[target][hop][0]
    return schema.resolve(target, e.field)[1].type == "dec"


def _format(var: str, kind: str, nullable: bool) -> str:
    text = {"dec": f'format({var}, ".2f")', "date": f"{var}.isoformat()", "float": f"float({var})"}.get(kind)
    if text is None:
        return var
    return f"None if {var} is None else {text}" if nullable else text


def render_orm(q: Query) -> str:
    return Renderer(q).render()
