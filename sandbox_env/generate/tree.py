"""The query grammar: one tree per task, as frozen dataclasses, with a canonical form.

A `Query` names its universe model, its row filter (`where`, `exclude`), its output columns
(`cols`: name -> expression; for a grouped query the group keys come first), an optional
group-by, a filter on computed columns (`having`), the ordering (names with a direction, the
last key a unique one) and a top-N (`limit`) or a top-k per partition (`topk`).

Expressions: FieldRef (a path over forward foreign keys), Arith (F arithmetic), Part
(Extract year/month/quarter/week_day), Trunc (year/month), StrFn (Lower/Upper/Length), Concat,
Bucket (Case/When), CoalesceE (first non-null of two fields), PairFn (Greatest/Least/NullIf of two
fields), Agg (an aggregate over a
multi-valued relation per row, or over the group's rows), Sub (a scalar subquery over a
related model through OuterRef), Win (Rank/DenseRank/RowNumber/NTile/Lag/Lead/FirstValue, a
running Sum and a moving Sum over a frame of rows, over a partition),
Cast (a numeric value cut to a whole number, or an integer written as text), ColRef (a computed
column by name, in `having` and in ordering).

Compound: a query whose rows are the union, intersection or difference of two filtered querysets of
its universe over the same columns (`where` filters the first, the compound's own `where` the
second); ordering and the top-N apply to the combined rows.

Predicates: Cmp (comparison, optionally through a date part), Between (inclusive range),
IsNull, In, Text (exact, iexact, or a prefix/substring by regular expression, with or without
letter case), Not, And, Or, Exists (at least one / none related row matching, `Exists` and
`~Exists`), Every (every related row matches: `~Exists` of the negation), SameRow (a join
filter whose conditions must hold for one related row, with `.distinct()`).

Decisions:
- `canonical(tree)` is plain JSON data (every node tagged by its class name, constants tagged by
  type), so a tree round-trips through the stored data set (`from_canonical`) and its hash is
  stable across processes (`tree_hash`).
- `signature(tree)` is the canonical form with every constant replaced by its type tag and
  the top-N/top-k sizes dropped: the task's structure. The held-out split and the "at most three
  tasks per structure" rule are keyed by it.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any


# -- expressions ----------------------------------------------------------------------------
@dataclass(frozen=True)
class FieldRef:
    path: tuple[str, ...]


@dataclass(frozen=True)
class ColRef:
    name: str


@dataclass(frozen=True)
class Arith:
    op: str  # "+", "-", "*"
    left: Expr
    right: Expr


@dataclass(frozen=True)
class Part:
    part: str  # year, month, quarter, week_day
    arg: FieldRef


@dataclass(frozen=True)
class Trunc:
    unit: str  # year, month
    arg: FieldRef


@dataclass(frozen=True)
class StrFn:
    fn: str  # lower, upper, length
    arg: FieldRef


@dataclass(frozen=True)
class Concat:
    left: FieldRef
    sep: str
    right: FieldRef


@dataclass(frozen=True)
class Bucket:
    arg: FieldRef
    cuts: tuple[Any, ...]  # ascending; value < cuts[i] -> labels[i], else labels[-1]
    labels: tuple[str, ...]


@dataclass(frozen=True)
class CoalesceE:
    first: FieldRef
    second: FieldRef


@dataclass(frozen=True)
class PairFn:
    fn: str  # greatest, least (None when either is missing, as SQLite's scalar max/min), nullif
    first: FieldRef
    second: FieldRef


@dataclass(frozen=True)
class Cast:
    arg: FieldRef | Arith  # a numeric value (to "int": cut to a whole number) or an integer (to "str": its digits)
    to: str  # int, str


@dataclass(frozen=True)
class Agg:
    fn: str  # count, sum, avg, max, min
    rel: tuple[str, ...]  # multi-valued relation path from the row (empty: the group's own rows)
    field: tuple[str, ...] | None  # on the related model; None: count rows
    distinct: bool = False
    cond: Pred | None = None  # conditional aggregate (filter=Q), fields relative to the related model
    coalesce: bool = False  # NULL (no related row) reads as 0
    product: tuple[str, ...] | None = None  # sum of field * product (quantity * unit price)


@dataclass(frozen=True)
class Sub:
    fn: str  # count, sum, max, min
    rel: str  # a multi-valued relation of the row's model
    field: tuple[str, ...] | None
    cond: Pred | None = None
    coalesce: bool = False


@dataclass(frozen=True)
class Win:
    fn: str  # rank, dense_rank, row_number, ntile, lag, lead, first_value, running_sum, moving_sum
    partition: tuple[str, ...] | None
    order: tuple[str, ...]  # the field the window orders by
    desc: bool
    arg: tuple[str, ...] | None = None  # lag/lead/first_value/running_sum/moving_sum: the field read
    # ntile: the number of tiles; moving_sum: the rows in the frame (this one and size - 1 before it)
    size: int | None = dataclasses.field(default=None, metadata={"omit_when_default": True})


Expr = FieldRef | ColRef | Arith | Part | Trunc | StrFn | Concat | Bucket | CoalesceE | PairFn | Cast | Agg | Sub | Win


# -- predicates -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Cmp:
    target: FieldRef | ColRef
    op: str  # lt, lte, gt, gte, exact
    value: Any
    part: str | None = None  # a date part compared instead of the date


@dataclass(frozen=True)
class Between:
    target: FieldRef
    lo: Any
    hi: Any


@dataclass(frozen=True)
class IsNull:
    target: FieldRef
    isnull: bool


@dataclass(frozen=True)
class In:
    target: FieldRef
    values: tuple[Any, ...]


@dataclass(frozen=True)
class Text:
    target: FieldRef
    kind: str  # exact, iexact, prefix, iprefix, contains, icontains
    value: str


@dataclass(frozen=True)
class Not:
    item: Pred


@dataclass(frozen=True)
class And:
    items: tuple[Pred, ...]


@dataclass(frozen=True)
class Or:
    items: tuple[Pred, ...]


@dataclass(frozen=True)
class Exists:
    rel: str
    cond: Pred | None
    negate: bool = False


@dataclass(frozen=True)
class Every:
    rel: str
    cond: Pred


@dataclass(frozen=True)
class SameRow:
    rel: str
    conds: tuple[Pred, ...]  # each a Cmp/Text/In on the related model, all on one related row


Pred = Cmp | Between | IsNull | In | Text | Not | And | Or | Exists | Every | SameRow


@dataclass(frozen=True)
class Compound:
    op: str  # union, intersection, difference (SQL's UNION, INTERSECT, EXCEPT: distinct rows)
    where: Pred  # the second queryset's filter
    all: bool = False  # union only: keep duplicate rows (UNION ALL); the grammar draws False, a mutant True


@dataclass(frozen=True)
class Query:
    universe: str
    cols: tuple[tuple[str, Expr], ...]
    order: tuple[tuple[str, bool], ...]  # (column name, descending)
    where: Pred | None = None
    exclude: Pred | None = None
    group: tuple[str, ...] | None = None  # names of the cols that are group keys
    having: Pred | None = None
    limit: int | None = None
    topk: tuple[str, int] | None = None  # (window column, k): rows whose rank is at most k
    # the rows combined with a second filtered queryset's (a field added later: old trees keep their form)
    compound: Compound | None = dataclasses.field(default=None, metadata={"omit_when_default": True})


NODES = {
    cls.__name__: cls
    for cls in (
        FieldRef, ColRef, Arith, Part, Trunc, StrFn, Concat, Bucket, CoalesceE, PairFn, Cast, Agg, Sub, Win,
        Cmp, Between, IsNull, In, Text, Not, And, Or, Exists, Every, SameRow, Compound, Query,
    )
}  # fmt: skip


# -- canonical form -------------------------------------------------------------------------
CONSTANT_FIELDS = ("value", "lo", "hi", "values", "cuts", "labels", "sep", "size")  # what `signature` blanks


def _enc(value: Any, blank: bool = False, keep: bool = False) -> Any:
    """Plain JSON data of a node; with `blank`, constants (CONSTANT_FIELDS) become type tags."""
    if dataclasses.is_dataclass(value):
        out: dict[str, Any] = {"node": type(value).__name__}
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if f.metadata.get("omit_when_default") and v == f.default:
                continue  # a field added later: trees without it keep their hash
            if blank and f.name == "limit" and v is not None:
                out[f.name] = "N"
            elif blank and f.name == "topk" and v is not None:
                out[f.name] = [v[0], "K"]
            else:
                out[f.name] = _enc(v, blank, blank and f.name in CONSTANT_FIELDS)
        return out
    if isinstance(value, tuple | list):
        return [_enc(v, blank, keep) for v in value]
    if keep:
        return f"<{type(value).__name__}>"
    if isinstance(value, Decimal):
        return {"dec": str(value)}
    if isinstance(value, date):
        return {"date": value.isoformat()}
    if isinstance(value, float):
        return {"float": repr(value)}
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError(f"no canonical form for {value!r}")


def canonical(tree: Query) -> dict[str, Any]:
    return _enc(tree)


def signature_of(tree: Query) -> dict[str, Any]:
    """The structure: the canonical form with constants blanked (their type kept), sizes dropped."""
    return _enc(tree, True)


def _digest(data: Any) -> str:
    return hashlib.sha256(json.dumps(data, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def tree_hash(tree: Query) -> str:
    return _digest(canonical(tree))[:16]


def signature(tree: Query) -> str:
    return _digest(signature_of(tree))[:12]


def _dec(value: Any) -> Any:
    if isinstance(value, dict) and "node" in value:
        cls = NODES[value["node"]]
        kwargs = {}
        for f in dataclasses.fields(cls):
            v = _dec(value.get(f.name))
            kwargs[f.name] = v
        return cls(**kwargs)
    if isinstance(value, dict) and set(value) == {"dec"}:
        return Decimal(value["dec"])
    if isinstance(value, dict) and set(value) == {"float"}:
        return float(value["float"])
    if isinstance(value, dict) and set(value) == {"date"}:
        return date.fromisoformat(value["date"])
    if isinstance(value, list):
        return tuple(_dec(v) for v in value)
    return value


def from_canonical(data: dict[str, Any]) -> Query:
    tree = _dec(data)
    if not isinstance(tree, Query):
        raise ValueError("not a query tree")
    return tree


def walk(node: Any):
    """Every node of a tree, pre-order."""
    if dataclasses.is_dataclass(node):
        yield node
        for f in dataclasses.fields(node):
            yield from walk(getattr(node, f.name))
    elif isinstance(node, tuple):
        for item in node:
            yield from walk(item)
