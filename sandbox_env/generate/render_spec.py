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

Decisions (each closes a way a correct-by-reading answer could score 0):
- NULLs: an ordering key that can be None says where None goes (SQLite: first ascending, last
  descending); a HAVING bound over a computed value that can be None says such rows are left
  out (a comparison with NULL is false); under a Not or an exclude, a missing value keeps the
  row (Django's negation adds `OR ... IS NULL`), elsewhere it never matches; an aggregate over
  a nullable field says missing values are skipped.
- Whose value: a condition on a related row names its owner ("the review's rating"), never
  "its", which would read as the listed row's.
- Structure: an And whose parts are relation conditions, ORs or contain "and" themselves is
  numbered ("all of these hold: (1) ...; (2) ..."), so no reader can re-bracket it; a grouped
  query names its keys by column, and says that text keys differing in case are different keys.
- Fan-out: a sum or average reached over a multi-valued hop and then a foreign key (the
  publishers of an author's books) says a target counts once per path; distinct counts say
  each is counted once.
- Windows are computed over the rows the conditions keep, before a top-k cut; a nullable
  partition key says its missing values form one partition.
- Row numbers state their tiebreak as a rule of numbering (rows with equal values take
  consecutive positions in order of the unique key), and a top-k over them says that rows tied at
  the cut still take separate positions, so at most k rows per partition are kept: the grader
  kills a rank that lets ties share a number (verify/mutants.op_rank).
- Compound queries say which rows are kept in plain English, never the set operation's name: a
  union lists the rows of either condition and says that a row meeting both appears once; an
  intersection lists the rows that meet both; a difference lists the rows of the first condition
  and leaves out those of the second (a missing value never matches the second, so such a row
  stays).
- Cast to an integer says the value is cut to a whole number, dropping any fraction (never
  "rounded"); Cast of an integer to text says the digits are compared as text.
- Trees whose relation condition leads back to the row itself are never rendered into the
  store (sample.returns_to_origin); the English would be a disguised filter on the row.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Any

from sandbox_env.generate import schema
from sandbox_env.generate.columns import column_types, expr_type, related_model
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
)  # fmt: skip

WEEKDAYS = {1: "Sunday", 2: "Monday", 3: "Tuesday", 4: "Wednesday", 5: "Thursday", 6: "Friday", 7: "Saturday"}
PART_EN = {"year": "year", "month": "month (1 to 12)", "quarter": "quarter (1 to 4)",
           "week_day": "day of the week (1 = Sunday to 7 = Saturday)", "hour": "hour (0 to 23)"}  # fmt: skip
REL_SINGULAR = {"books": "book", "sales": "sale", "reviews": "review", "authors": "author",
                "contributions": "contribution (a book, author and role row)",
                "mentees": "mentee (an author whose mentor it is)"}  # fmt: skip
REL_PLURAL = {"contributions": "contributions (book, author and role rows)",
              "mentees": "mentees (the authors whose mentor it is)"}  # fmt: skip


REL_OWNER = {"mentees": "mentee"}  # a self-relation's related row, named apart from the listed row


def rel_plural(name: str) -> str:
    return REL_PLURAL.get(name, name)


def owner_of(rel: str) -> bool | str:
    """How a related row's condition names its owner (`Spec.subject`'s `inner`)."""
    return REL_OWNER.get(rel, True)


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
            return t.name
        return schema.noun_of(model, t.path)

    def subject(self, model: str, t: Any, inner: bool | str) -> str:
        """Whose value a predicate reads: "its price" for the listed row, "the review's rating" inside a relation.

        `inner` may name the related row ("mentee") where the relation leads back to the listed rows'
        own model: "the author's name" would read as the listed author's.
        """
        owner = f"the {inner}'s" if isinstance(inner, str) else f"the {schema.SINGULAR[model]}'s" if inner else "its"
        return f"{owner} {self.noun(model, t)}"

    def missing(self, model: str, t: Any, negated: bool = False) -> str:
        """What a missing value does to a comparison: it never matches; under a negation the row is kept."""
        if isinstance(t, FieldRef) and schema.path_nullable(model, t.path):
            self.traps.add("null")
            who = f"{article(schema.SINGULAR[model])} whose {schema.noun_of(model, t.path)} is missing"
            return f" ({who} is kept)" if negated else f" ({who} never matches)"
        return ""

    def pred(self, p: Any, model: str, inner: bool | str = False, negated: bool = False) -> str:
        """A predicate on rows of `model`; `inner`: a related row's condition; `negated`: under a Not or exclude."""
        if isinstance(p, Cmp):
            subject = self.subject(model, p.target, inner)
            if p.part is not None:
                subject = f"the {PART_EN[p.part]} of {subject}"
                if p.part == "week_day" and p.op == "exact":
                    return (f"{self.subject(model, p.target, inner)} falls on a {WEEKDAYS[p.value]}"
                            + self.missing(model, p.target, negated))  # fmt: skip
            return f"{subject} {self.compare(p.op, p.value)}" + self.missing(model, p.target, negated)
        if isinstance(p, Between):
            self.traps.add("bound")
            return (f"{self.subject(model, p.target, inner)} is between {show(p.lo)} and {show(p.hi)}, both included"
                    + self.missing(model, p.target, negated))  # fmt: skip
        if isinstance(p, IsNull):
            self.traps.add("null")
            n = self.subject(model, p.target, inner)
            return f"{n} is missing (None)" if p.isnull else f"{n} is present (not None)"
        if isinstance(p, In):
            values = ", ".join(show(v) for v in p.values)
            head = f"{self.subject(model, p.target, inner)} is " + (values if len(p.values) == 1 else f"one of {values}")
            if isinstance(p.values[0], str):
                self.traps.add("case")
                head += ", exactly as written (letter case included)"
            return head + self.missing(model, p.target, negated)
        if isinstance(p, Text):
            self.traps.add("case")
            n, v = self.subject(model, p.target, inner), show(p.value)
            return {
                "exact": f"{n} is exactly {v} (letter case as written: other casings do not match)",
                "iexact": f"{n} is {v} in any letter case",
                "prefix": f"{n} starts with {v}, letter case as written",
                "iprefix": f"{n} starts with {v} in any letter case",
                "contains": f"{n} contains {v}, letter case as written",
                "icontains": f"{n} contains {v} in any letter case",
            }[p.kind] + self.missing(model, p.target, negated)
        if isinstance(p, Not):
            return f"it is not the case that {self.pred(p.item, model, inner, not negated)}"
        if isinstance(p, And):
            parts = [self.pred(i, model, inner, negated) for i in p.items]
            if any(isinstance(i, COMPOUND) for i in p.items) or any(" and " in t for t in parts):
                # a relation's condition or a range followed by "and" would blur where each part ends
                return f"all of these hold: {'; '.join(f'({k}) {t}' for k, t in enumerate(parts, 1))}"
            return " and ".join(parts)
        if isinstance(p, Or):
            return "either " + " or ".join(f"({self.pred(i, model, inner, negated)})" for i in p.items) + " (or both)"
        if isinstance(p, Exists | Every | SameRow):
            target = schema.MULTI[model][p.rel][0]
            one = REL_SINGULAR[p.rel]
            if isinstance(p, Exists):
                cond = "" if p.cond is None else f" for which {self.pred(p.cond, target, owner_of(p.rel))}"
                return f"it has no {one}{cond}" if p.negate else f"it has at least one {one}{cond}"
            if isinstance(p, Every):
                self.traps.add("vacuous")
                return (f"every one of its {rel_plural(p.rel)} meets this: {self.pred(p.cond, target, owner_of(p.rel))} "
                        f"({article(schema.SINGULAR[model])} with no {p.rel} at all counts as meeting it)")  # fmt: skip
            self.traps.update({"same_row", "fan_out"})
            conds = "; and ".join(self.pred(c, target, owner_of(p.rel)) for c in p.conds)
            return f"one and the same {one} of it meets all of this: {conds}"
        raise TypeError(f"no English for {p!r}")

    def compare(self, op: str, value: Any) -> str:
        v = show(value)
        if op in ("lte", "gte", "lt", "gt"):
            self.traps.add("bound")
        return {
            "lt": f"is below {v} ({v} itself excluded)",
            "lte": f"is at most {v} ({v} itself included)",
            "gt": f"is above {v} ({v} itself excluded)",
            "gte": f"is at least {v} ({v} itself included)",
            "exact": f"is {v}",
        }[op]

    # -- expressions ------------------------------------------------------------------------
    def agg_en(self, e: Agg | Sub, model: str, group: bool) -> str:
        rel = (e.rel,) if isinstance(e, Sub) else e.rel
        target = related_model(model, rel)
        distinct = isinstance(e, Agg) and e.distinct
        words, m = [], model
        for hop in rel:  # the English plural of each hop: a relation's name, a foreign key's target
            words.append(rel_plural(hop) if hop in schema.MULTI.get(m, {}) else schema.PLURAL[related_model(m, (hop,))])
            m = related_model(m, (hop,))
        base = f"the group's {schema.PLURAL[model]}" if group else "its"
        if not rel:
            things = base
        elif group:
            things = f"the {' of the '.join(reversed(words))} of {base}"
        elif len(rel) == 1:
            things = f"its {words[0]}"
        else:
            things = f"the {' of the '.join(reversed(words[1:]))} of its {words[0]}"
        cond = "" if e.cond is None else f" for which {self.pred(e.cond, target, owner_of(rel[-1]) if rel else True)}"
        if distinct:
            self.traps.add("fan_out")
        if e.field is None:
            if distinct and things.startswith("the "):
                noun = f"the number of distinct {things[4:]}{cond}"
            else:
                noun = f"the number of {things}{cond}"
            if distinct:
                noun += " (each counted once, however many ways it is reached)"
        else:
            fname = schema.noun_of(target, e.field)
            if isinstance(e, Agg) and e.product is not None:
                fname = f"{fname} times {schema.noun_of(target, e.product)}"
            kind = schema.resolve(target, e.field)[1].type
            word = {"sum": "total", "avg": "average", "max": "latest" if kind == "date" else "highest",
                    "min": "earliest" if kind == "date" else "lowest", "count": "number"}[e.fn]  # fmt: skip
            noun = f"the {word} {fname} over {things}{cond}"
            notes = []
            if distinct:
                notes.append("each distinct value once")
            elif e.fn in ("sum", "avg") and _fans_out(model, rel):
                self.traps.add("fan_out")
                via = words[0] if group else f"its {words[0]}"
                notes.append(f"{article(schema.SINGULAR[target])} counts once for each of {via} it is reached through")
            if schema.resolve(target, e.field)[1].nullable:
                self.traps.add("null")
                notes.append(f"missing {fname}s are skipped")
            if notes:
                noun += f" ({'; '.join(notes)})"
        if e.coalesce:
            self.traps.add("null")
            zero = "0.00" if expr_type(model, e)[0] == "dec" else "0"
            noun += f"; {zero} when there is none"
        elif not (isinstance(e, Agg) and e.fn == "count"):
            self.traps.add("null")
            noun += "; None when there is none" if e.cond is None else f"; None when there is no such {schema.SINGULAR[target]}"
            if e.field is not None and schema.resolve(target, e.field)[1].nullable:
                noun += f" or none has a {schema.noun_of(target, e.field)}"
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
            return (
                "; ".join(parts)
                + f"; otherwise {show(e.labels[-1])} (the first that applies; a {n} equal to a cut is not below it)"
            )
        if isinstance(e, CoalesceE):
            return f"the {schema.noun_of(model, e.first.path)} when there is one, else the {schema.noun_of(model, e.second.path)}"
        if isinstance(e, PairFn):
            return self.pair(e, model)
        if isinstance(e, Cast):
            return self.cast(e, model)
        if isinstance(e, Agg | Sub):
            return self.agg_en(e, model, self.q.group is not None)
        if isinstance(e, Win):
            return self.window(e, model)
        raise TypeError(f"no English for {e!r}")

    def pair(self, e: PairFn, model: str) -> str:
        first, second = schema.noun_of(model, e.first.path), schema.noun_of(model, e.second.path)
        if e.fn == "nullif":
            self.traps.add("null")
            return f"the {first}, except None where it equals the {second} (and None where the {first} is missing)"
        self.traps.add("null")
        which = "larger" if e.fn == "greatest" else "smaller"
        return f"the {which} of the {first} and the {second}; None when either of them is missing"

    def cast(self, e: Cast, model: str) -> str:
        """A value cut to a whole number (toward zero, as SQLite's CAST), or an integer's digits as text."""
        parts = (e.arg.left, e.arg.right) if isinstance(e.arg, Arith) else (e.arg,)
        missing = [
            schema.noun_of(model, f.path) for f in parts if isinstance(f, FieldRef) and schema.path_nullable(model, f.path)
        ]
        nullable = expr_type(model, e.arg)[1]
        if e.to == "int":
            self.traps.add("bound")
            text = f"{self.expr(e.arg, model)} cut to a whole number, dropping any fraction (7.95 gives 7, 12.00 gives 12)"
        else:
            self.traps.add("case")
            text = f'{self.expr(e.arg, model)} written as text, its digits only (312 gives "312"), compared as text'
        if nullable:
            self.traps.add("null")
            text += f"; None when the {' or the '.join(missing)} is missing"
        return text

    def window(self, e: Win, model: str) -> str:
        q = self.q
        scope = (f"the {schema.PLURAL[model]} kept by the conditions above" if q.where is not None or q.exclude is not None
                 else f"all the {schema.PLURAL[model]}")  # fmt: skip
        if e.partition is not None:
            pn = schema.noun_of(model, e.partition)
            within = f"among {scope} that have the same {pn}"
            if schema.path_nullable(model, e.partition):
                self.traps.add("null")
                within += f" (those whose {pn} is missing rank among themselves)"
        else:
            within = f"among {scope}"
        on = schema.noun_of(model, e.order)
        kind = schema.resolve(model, e.order)[1].type
        direction = _direction(kind, e.desc)
        self.traps.add("ties")
        if e.fn in ("rank", "dense_rank"):
            gaps = ("the rank after a tie skips the shared places (1, 1, 3)" if e.fn == "rank"
                    else "no rank is skipped after a tie (1, 1, 2)")  # fmt: skip
            first = _extreme(kind, e.desc)
            return f"the rank of the {on} {within}: 1 for the {first} {on}; equal values share a rank and {gaps}"
        arg = "" if e.arg is None else schema.noun_of(model, e.arg)
        key = schema.noun_of(model, (schema.KEY[model],))
        seq = f"{within}, ordered by {on} ({direction}), equal {on}s by {key} A to Z"
        one = schema.SINGULAR[model]
        if e.fn == "row_number":
            return (
                f"the position of this {one} (1, 2, 3, ...) {within}, ordered by {on} ({direction}); {schema.PLURAL[model]} "
                f"with equal {on}s take consecutive positions in order of {key} A to Z, so no two share a position"
            )
        if e.fn == "ntile":
            many = schema.PLURAL[model]
            return (f"which of {e.size} groups, numbered 1 to {e.size}, this {one} falls in: {within.removeprefix('among ')} are "
                    f"taken in order of {on} ({direction}), equal {on}s by {key} A to Z, and cut into {e.size} "
                    f"consecutive groups as equal in size as possible, the first groups holding one more {one} when "
                    f"the sizes cannot be equal (with fewer than {e.size} {many}, each is a group of its own: 1, 2, ...)"
                    )  # fmt: skip
        if e.fn == "lag":
            return f"the {arg} of the previous {one} {seq}; None for the first"
        if e.fn == "lead":
            return f"the {arg} of the next {one} {seq}; None for the last"
        if e.fn == "first_value":
            return f"the {arg} of the first {one} {seq} (the same for every {one} there)"
        if e.fn == "moving_sum":
            before = "the one" if e.size == 2 else f"the {e.size - 1}"
            return (f"the total of the {arg} of this {one} and {before} {one if e.size == 2 else schema.PLURAL[model]} "
                    f"just before it {seq} (fewer at the start, where fewer come before it)")  # fmt: skip
        return f"the running total of the {arg} {seq}, up to and including this {one}"

    # -- the task ---------------------------------------------------------------------------
    def spec(self) -> str:
        q, model = self.q, self.q.universe
        plural = schema.PLURAL[model]
        out = []
        head = f"List the {plural}" if q.group is None else f"Take the {plural}"
        if q.compound is not None:
            out.append(self.compound(q, q.compound))
        elif q.where is not None:
            out.append(head + f" for which {self.pred(q.where, model)}.")
        else:
            out.append(head + ".")
        if q.group is not None:
            names = " and ".join(q.group)
            each = "as defined under Each row" if len(q.group) == 1 else "each as defined under Each row"
            out.append(f"Group them by {names} ({each}); one row per group.")
            cased = [k for k, t, _ in column_types(q) if k in q.group and t == "str"]
            if cased:
                self.traps.add("case")
                out.append(f"Values of {' and '.join(cased)} that differ only in letter case are different keys.")
            for k in q.group:
                e = dict(q.cols)[k]
                if self.expr_nullable(e):
                    self.traps.add("null")
                    out.append(f"{plural.capitalize()} whose {k} is missing form one group of their own ({k} None).")
        if q.exclude is not None:
            out.append(f"Leave out every {schema.SINGULAR[model]} for which {self.pred(q.exclude, model, negated=True)}.")
        if any(isinstance(n, SameRow) for n in walk(q.where)):
            out.append(f"Each {schema.SINGULAR[model]} appears once, however many of its related rows match.")
        if q.having is not None:
            h = q.having
            s = f"Keep only the rows whose {h.target.name} (as defined under Each row) {self.compare(h.op, h.value)}"
            if self.expr_nullable(h.target):
                self.traps.add("null")
                s += f"; a row whose {h.target.name} is None is left out"
            out.append(s + ".")
        if q.topk is not None:
            out.append(self.topk(q))
        if q.limit is not None:
            out.append(f"Only the first {q.limit} rows in the order below.")
        return "\n".join(out)

    def topk(self, q: Query) -> str:
        """The top-k cut; over row numbers it says that rows tied at the cut still take separate positions."""
        name, k = q.topk
        win = dict(q.cols)[name]
        if not (isinstance(win, Win) and win.fn == "row_number"):
            return f"Then keep only the rows whose {name} is at most {k} (ranks are computed before this cut)."
        where = "" if win.partition is None else f" per {schema.noun_of(q.universe, win.partition)}"
        return (
            f"Then keep only the rows whose {name} is at most {k} (positions are computed before this cut; rows tied "
            f"at the cut still take separate positions, so at most {k} rows{where} are kept)."
        )

    def compound(self, q: Query, c: Compound) -> str:
        """Which rows a union, intersection or difference keeps, in plain English."""
        model = q.universe
        plural, one = schema.PLURAL[model], schema.SINGULAR[model]
        first, second = self.pred(q.where, model), self.pred(c.where, model)
        if c.op == "union":
            self.traps.add("duplicates")
            return (f"List the {plural} for which {first}, together with the {plural} for which {second}.\n"
                    f"{article(one).capitalize()} that meets both conditions appears once.")  # fmt: skip
        if c.op == "intersection":
            return f"List the {plural} that meet both of these conditions: (1) {first}; (2) {second}."
        return f"List the {plural} for which {first}, leaving out every {one} for which {second}."

    def expr_nullable(self, e: Any) -> bool:
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
        """Each key with its direction; a key that can be None says where None goes (SQLite: first ascending)."""
        types = {n: (t, nullable) for n, t, nullable in column_types(self.q)}
        parts = []
        for n, d in self.q.order:
            kind, nullable = types[n]
            part = f"by {n}, {_direction(kind, d)}"
            if nullable:
                self.traps.add("null")
                part += ", None last" if d else ", None first"
            parts.append(part)
        self.traps.add("ties")
        text = parts[0] + "".join(f"; ties {p}" for p in parts[1:])
        if any(types[n][0] == "str" for n, _ in self.q.order):
            self.traps.add("case")
            text += ". Text compares by character code: capitals before lower case."
        return text

    def title(self) -> str:
        q = self.q
        names = [n for n, _ in q.cols]
        what = f"Grouped {schema.PLURAL[q.universe]}" if q.group else schema.PLURAL[q.universe].capitalize()
        title = f"{what}: {', '.join(names)}"
        while len(title) > 80:  # whole column names only
            names = names[:-1]
            title = f"{what}: {', '.join(names)}, ..."
        return title


COMPOUND = (Or, Exists, Every, SameRow)


def _fans_out(model: str, rel: tuple[str, ...]) -> bool:
    """Whether a forward foreign key follows a multi-valued hop: the same target is then reached once per path."""
    seen_multi = False
    for hop in rel:
        if hop in schema.MULTI.get(model, {}):
            seen_multi = True
        elif seen_multi:
            return True
        model = related_model(model, (hop,))
    return False


def article(noun: str) -> str:
    return f"{'an' if noun[0] in 'aeiou' else 'a'} {noun}"


def _extreme(kind: str, desc: bool) -> str:
    if kind == "date":
        return "latest" if desc else "earliest"
    return "highest" if desc else "lowest"


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
