"""The English of a tree: title, spec, columns and order lines, as a hand-written task.toml has them.

Every rule the grader enforces is stated where the tree touches it: bounds say whether the
bound itself is in (`at least 20.00, 20.00 itself included`), text comparisons say whether
letter case matters, a comparison over a nullable value says what a missing value does, an
aggregate says what an empty relation gives (None, or 0 when the tree coalesces), a
same-related-row filter says that one related row must meet every condition and that each
row appears once, ranks say how ties share a rank, ordering names its tiebreak (always a
unique key: the universe's key or the group keys) and how text compares (by character code,
capitals before lower case), a grouped nullable key says that missing values form a group.
`traps(tree)` lists which of those rules the spec states (the difficulty score counts them).
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from sandbox_env.generate import schema
from sandbox_env.generate.columns import column_types, related_model
from sandbox_env.generate.tree import (
    Agg,
    And,
    Arith,
    Between,
    Bucket,
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

WEEKDAYS = {1: "Sunday", 2: "Monday", 3: "Tuesday", 4: "Wednesday", 5: "Thursday", 6: "Friday", 7: "Saturday"}
PART_EN = {"year": "year", "month": "month (1 to 12)", "quarter": "quarter (1 to 4)",
           "week_day": "day of the week (1 = Sunday to 7 = Saturday)"}  # fmt: skip
REL_SINGULAR = {"books": "book", "sales": "sale", "reviews": "review", "authors": "author"}


def show(v: Any) -> str:
    if isinstance(v, str):
        return f'"{v}"'
    if isinstance(v, Decimal):
        return format(v, ".2f")
    if isinstance(v, date):
        return v.isoformat()
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


class Speaker:
    def __init__(self, q: Query) -> None:
        self.q = q
        self.traps: set[str] = set()

    # -- predicates -------------------------------------------------------------------------
    def noun(self, model: str, t: Any) -> str:
        if isinstance(t, ColRef):
            return f"{t.name} (as defined under Each row)"
        return schema.noun_of(model, t.path)

    def missing(self, model: str, t: Any, keeps: bool = False) -> str:
        if isinstance(t, FieldRef) and schema.path_nullable(model, t.path):
            self.traps.add("null")
            return f" (a missing {schema.noun_of(model, t.path)} never matches)"
        return ""

    def pred(self, p: Any, model: str) -> str:
        if isinstance(p, Cmp):
            subject = f"its {self.noun(model, p.target)}"
            if p.part is not None:
                subject = f"the {PART_EN[p.part]} of its {self.noun(model, p.target)}"
                if p.part == "week_day" and p.op == "exact":
                    return f"its {self.noun(model, p.target)} falls on a {WEEKDAYS[p.value]}" + self.missing(model, p.target)
            v = show(p.value)
            if p.op in ("lte", "gte", "lt", "gt"):
                self.traps.add("bound")
            text = {
                "lt": f"is below {v} ({v} itself excluded)",
                "lte": f"is at most {v} ({v} itself included)",
                "gt": f"is above {v} ({v} itself excluded)",
                "gte": f"is at least {v} ({v} itself included)",
                "exact": f"is {v}",
            }[p.op]
            return f"{subject} {text}" + self.missing(model, p.target)
        if isinstance(p, Between):
            self.traps.add("bound")
            return (f"its {self.noun(model, p.target)} is between {show(p.lo)} and {show(p.hi)}, both included"
                    + self.missing(model, p.target))  # fmt: skip
        if isinstance(p, IsNull):
            self.traps.add("null")
            n = self.noun(model, p.target)
            return f"its {n} is missing (None)" if p.isnull else f"its {n} is present (not None)"
        if isinstance(p, In):
            if isinstance(p.values[0], str):
                self.traps.add("case")
                return (f"its {self.noun(model, p.target)} is one of {', '.join(show(v) for v in p.values)}, "
                        "exactly as written (letter case included)") + self.missing(model, p.target)  # fmt: skip
            return f"its {self.noun(model, p.target)} is one of {', '.join(show(v) for v in p.values)}" + self.missing(
                model, p.target
            )
        if isinstance(p, Text):
            self.traps.add("case")
            n, v = self.noun(model, p.target), show(p.value)
            return {
                "exact": f"its {n} is exactly {v} (letter case as written: other casings do not match)",
                "iexact": f"its {n} is {v} in any letter case",
                "prefix": f"its {n} starts with {v}, letter case as written",
                "iprefix": f"its {n} starts with {v} in any letter case",
                "contains": f"its {n} contains {v}, letter case as written",
                "icontains": f"its {n} contains {v} in any letter case",
            }[p.kind] + self.missing(model, p.target)
        if isinstance(p, Not):
            return f"it is not the case that {self.pred(p.item, model)}"
        if isinstance(p, And):
            return " and ".join(self.pred(i, model) for i in p.items)
        if isinstance(p, Or):
            return "either " + " or ".join(f"({self.pred(i, model)})" for i in p.items) + " (or both)"
        if isinstance(p, Exists | Every | SameRow):
            target = schema.MULTI[model][p.rel][0]
            one = REL_SINGULAR[p.rel]
            if isinstance(p, Exists):
                cond = "" if p.cond is None else f" for which {self.pred(p.cond, target)}"
                return f"it has no {one}{cond}" if p.negate else f"it has at least one {one}{cond}"
            if isinstance(p, Every):
                self.traps.add("vacuous")
                return (f"every one of its {p.rel} meets this: {self.pred(p.cond, target)} (one with no {p.rel} "
                        "at all meets it too)")  # fmt: skip
            self.traps.update({"same_row", "fan_out"})
            conds = " and ".join(self.pred(c, target) for c in p.conds)
            return f"one and the same {one} of it meets all of this: {conds}"
        raise TypeError(f"no English for {p!r}")

    # -- expressions ------------------------------------------------------------------------
    def agg_en(self, e: Agg | Sub, model: str, group: bool) -> str:
        rel = (e.rel,) if isinstance(e, Sub) else e.rel
        target = related_model(model, rel)
        plural = {"book": "books", "publisher": "publishers", "store": "stores"}
        words = [plural.get(r, r) for r in rel]
        if not rel:
            things = f"the group's {schema.PLURAL[model]}"
        elif group:
            things = f"the {' of the '.join(reversed(words))} of the group's {schema.PLURAL[model]}"
        elif len(rel) == 1:
            things = f"its {words[0]}"
        else:
            things = f"the {' of the '.join(reversed(words[1:]))} of its {words[0]}"
        if e.cond is not None:
            things += f" for which {self.pred(e.cond, target)}"
        if isinstance(e, Agg) and e.distinct:
            self.traps.add("fan_out")
        if e.field is None:
            noun = f"the number of {'distinct ' if isinstance(e, Agg) and e.distinct else ''}{things}"
            if isinstance(e, Agg) and e.distinct:
                noun += " (each counted once, however many ways it is reached)"
        else:
            fname = schema.noun_of(target, e.field)
            if isinstance(e, Agg) and e.product is not None:
                fname = f"{fname} times {schema.noun_of(target, e.product)}"
            kind = schema.resolve(target, e.field)[1].type
            word = {"sum": "total", "avg": "average", "max": "latest" if kind == "date" else "highest",
                    "min": "earliest" if kind == "date" else "lowest", "count": "number"}[e.fn]  # fmt: skip
            noun = f"the {word} {fname} over {things}"
            if isinstance(e, Agg) and e.distinct:
                noun += " (each distinct value once)"
        if e.coalesce:
            self.traps.add("null")
            noun += "; 0 when there is none"
        elif not (isinstance(e, Agg) and e.fn == "count"):
            noun += "; None when there is none"
        return noun

    def expr(self, e: Any, model: str) -> str:
        if isinstance(e, FieldRef):
            return f"the {schema.noun_of(model, e.path)}"
        if isinstance(e, Arith):
            word = {"+": "plus", "-": "minus", "*": "times"}[e.op]
            return f"{self.expr(e.left, model)} {word} {self.expr(e.right, model)}"
        if isinstance(e, Part):
            return f"the {PART_EN[e.part]} of the {schema.noun_of(model, e.arg.path)}"
        if isinstance(e, Trunc):
            return f"the first day of the {e.unit} of the {schema.noun_of(model, e.arg.path)}"
        if isinstance(e, StrFn):
            n = schema.noun_of(model, e.arg.path)
            return {"lower": f"the {n} in lower case", "upper": f"the {n} in upper case",
                    "length": f"the number of characters of the {n}"}[e.fn]  # fmt: skip
        if isinstance(e, Concat):
            return (f"the {schema.noun_of(model, e.left.path)}, then {show(e.sep)}, then the "
                    f"{schema.noun_of(model, e.right.path)}")  # fmt: skip
        if isinstance(e, Bucket):
            self.traps.add("bound")
            n = schema.noun_of(model, e.arg.path)
            parts = [f"{show(lab)} when the {n} is below {show(c)}" for c, lab in zip(e.cuts, e.labels, strict=False)]
            return "; ".join(parts) + f"; otherwise {show(e.labels[-1])} (the first that applies)"
        if isinstance(e, CoalesceE):
            return f"the {schema.noun_of(model, e.first.path)} when there is one, else the {schema.noun_of(model, e.second.path)}"
        if isinstance(e, Agg | Sub):
            return self.agg_en(e, model, self.q.group is not None)
        if isinstance(e, Win):
            within = (f"among the {schema.PLURAL[model]} with the same {schema.noun_of(model, e.partition)}"
                      if e.partition is not None else f"among all the listed {schema.PLURAL[model]}")  # fmt: skip
            on = schema.noun_of(model, e.order)
            direction = _direction(schema.resolve(model, e.order)[1].type, e.desc)
            if e.fn in ("rank", "dense_rank"):
                self.traps.add("ties")
                gaps = ("the rank after a tie skips the shared places (1, 1, 3)" if e.fn == "rank"
                        else "no rank is skipped after a tie (1, 1, 2)")  # fmt: skip
                return f"the rank of the {on} {within}, {direction}; equal values share a rank and {gaps}"
            arg = schema.noun_of(model, e.arg)
            key = schema.noun_of(model, (schema.KEY[model],))
            seq = f"{within}, ordered by {on} ({direction}), equal {on}s by {key} A to Z"
            self.traps.add("ties")
            if e.fn == "lag":
                return f"the {arg} of the previous {schema.SINGULAR[model]} {seq}; None for the first"
            if e.fn == "lead":
                return f"the {arg} of the next {schema.SINGULAR[model]} {seq}; None for the last"
            return f"the running total of the {arg} {seq}, up to and including this {schema.SINGULAR[model]}"
        raise TypeError(f"no English for {e!r}")

    # -- the task ---------------------------------------------------------------------------
    def spec(self) -> str:
        q, model = self.q, self.q.universe
        plural = schema.PLURAL[model]
        out = []
        if q.group is None:
            s = f"List the {plural}"
            if q.where is not None:
                s += f" for which {self.pred(q.where, model)}"
            out.append(s + ".")
        else:
            s = f"Take the {plural}"
            if q.where is not None:
                s += f" for which {self.pred(q.where, model)}"
            keys = [dict(q.cols)[k] for k in q.group]
            s += " and group them by " + " and ".join(self.expr(k, model) for k in keys) + "; one row per group."
            out.append(s)
            for k in keys:
                if self.expr_nullable(k):
                    self.traps.add("null")
                    whose = self.expr(k, model)[4:]
                    plural = schema.PLURAL[model].capitalize()
                    out.append(f"{plural} whose {whose} is missing form one group of their own (key None).")
        if q.exclude is not None:
            out.append(f"Leave out every {schema.SINGULAR[model]} for which {self.pred(q.exclude, model)}"
                       " (one for which that cannot be decided, because a value is missing, stays).")  # fmt: skip
        if any(isinstance(n, SameRow) for n in walk(q.where)):
            out.append(f"Each {schema.SINGULAR[model]} appears once, however many of its related rows match.")
        if q.having is not None:
            out.append(f"Keep only the rows for which {self.pred(q.having, model)}.")
        if q.topk is not None:
            out.append(f"Keep only the rows whose {q.topk[0]} is at most {q.topk[1]}.")
        if q.limit is not None:
            out.append(f"Only the first {q.limit} rows in the order below.")
        return "\n".join(out)

    def expr_nullable(self, e: Any) -> bool:
        from sandbox_env.generate.columns import expr_type

        return expr_type(self.q.universe, e, self.q)[1]

    def columns(self) -> list[str]:
        lines = []
        for (name, e), (_, kind, nullable) in zip(self.q.cols, column_types(self.q), strict=True):
            shape = {"str": "str", "int": "int", "dec": "str (money, two decimals)", "date": "str (ISO date)",
                     "float": "float (not rounded)", "bool": "bool"}[kind]  # fmt: skip
            if nullable:
                shape += " or None"
            lines.append(f"{name}: {shape}, {self.expr(e, self.q.universe)}")
        return lines

    def order(self) -> str:
        types = {n: t for n, t, _ in column_types(self.q)}
        parts = [f"by {n}, {_direction(types[n], d)}" for n, d in self.q.order]
        if any(types[n] == "str" for n, _ in self.q.order):
            self.traps.add("case")
            parts[-1] += " (text compares by character code: capitals before lower case)"
        self.traps.add("ties")
        return parts[0] + "".join(f"; ties {p}" for p in parts[1:])

    def title(self) -> str:
        q = self.q
        names = [n for n, _ in q.cols]
        what = "grouped " + schema.PLURAL[q.universe] if q.group else schema.PLURAL[q.universe].capitalize()
        return f"{what}: {', '.join(names)}"[:80]


def _direction(kind: str, desc: bool) -> str:
    if kind == "str":
        return "Z to A" if desc else "A to Z"
    if kind == "date":
        return "latest first" if desc else "earliest first"
    if kind == "bool":
        return "true first" if desc else "false first"
    return "highest first" if desc else "lowest first"


def render_spec(q: Query) -> dict[str, Any]:
    """title, spec, columns, order (task.toml's keys), and the traps the spec states."""
    s = Speaker(q)
    spec, columns, order = s.spec(), s.columns(), s.order()
    return {"title": s.title(), "spec": spec, "columns": columns, "order": order, "traps": sorted(s.traps)}
