"""The mistakes a stated rule invites, as trees: a variant admits a task only where each gives other rows.

A generated spec states rules a careless reading gets wrong (render_spec's `traps`: a vacuous
"every", a missing value, letter case, a bound, fan-out). A rule the data never tests is a rule
the reward does not enforce: a policy that breaks it on one task scores 1.0 and on another 0.0,
noise exactly where the difficulty score counts. So each kind of stated rule has mistakes here,
each a whole tree that makes the mistake the way a model would write it, and a fixture variant
admits a task only where every mistake of the rules its spec states gives other rows than the
reference (sample.screen_variant, over the evaluator; stages/generate_orm.py also runs each
mistake, rendered to ORM code like the reference, in the image as one more mutant).

| rule the spec states | the mistake |
| --- | --- |
| vacuous: a row with no related rows meets "every one of its ..." | it is left out: "has at least one, and every one meets it" |
| null: a comparison never matches a missing value (kept under a negation) | taken as matching (dropped under a negation) |
| null: rows whose group key is missing form one group of their own | that group dropped |
| case: a text match with or without letter case | the other way (exact/iexact, prefix/iprefix, contains/icontains) |
| bound: "between a and b, both included" | both ends excluded |
| fan_out: a distinct count, or a sum over rows reached several ways counted each way | the other way round |
| fan_out: one and the same related row meets every condition | each condition met by some related row |

Already tested elsewhere, so not repeated here: a comparison's own bound (gt/gte, the tree's
mutations), `None` read as 0 (coalesce dropped), ranks and tiebreaks (the tie checks of
screen_variant), missing group keys of an expression with no field of its own.

Decisions: only the listed rows' own predicates (the where and the exclude, through And, Or and
Not) get the missing-value mistake, since a relation's condition reads another model whose
nullability the walk would have to carry; the walk stops at a relation. Text order and text
group keys by letter case have no tree that makes the mistake without changing the output
values, so they stay tested by the data only (the fixture's mixed-case rows).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

from sandbox_env.generate import schema
from sandbox_env.generate.tree import (
    Agg,
    And,
    Between,
    Cmp,
    Every,
    Exists,
    FieldRef,
    In,
    IsNull,
    Not,
    Or,
    Query,
    SameRow,
    Text,
)

CASE_FLIPS = {"exact": "iexact", "iexact": "exact", "prefix": "iprefix", "iprefix": "prefix"} | {
    "contains": "icontains",
    "icontains": "contains",
}
ATOMS = (Cmp, Between, In, Text)


def _replace_all(value: Any) -> Iterator[tuple[str, Any]]:
    """(kind, `value` with one node replaced by one of `_local`'s mistakes), for every node of the tree."""
    if dataclasses.is_dataclass(value):
        yield from _local(value)
        for f in dataclasses.fields(value):
            for kind, new in _replace_all(getattr(value, f.name)):
                yield kind, dataclasses.replace(value, **{f.name: new})
    elif isinstance(value, tuple):
        for i, item in enumerate(value):
            for kind, new in _replace_all(item):
                yield kind, value[:i] + (new,) + value[i + 1 :]


def _local(node: Any) -> Iterator[tuple[str, Any]]:
    """Mistakes that replace one node, wherever it stands."""
    if isinstance(node, Every):
        yield "vacuous", And((Exists(node.rel, None), node))
    elif isinstance(node, Text) and node.kind in CASE_FLIPS:
        yield "case", dataclasses.replace(node, kind=CASE_FLIPS[node.kind])
    elif isinstance(node, Between):
        yield "bound", And((Cmp(node.target, "gt", node.lo), Cmp(node.target, "lt", node.hi)))
    elif isinstance(node, Agg) and (node.distinct or node.fn in ("sum", "avg")) and node.rel:
        yield "fan_out", dataclasses.replace(node, distinct=not node.distinct)
    elif isinstance(node, SameRow) and len(node.conds) > 1:
        yield "fan_out", And(tuple(Exists(node.rel, c) for c in node.conds))


def _missing_matches(p: Any, model: str) -> Iterator[Any]:
    """`p` with one comparison on a value that can be missing read as matching a missing value."""
    if isinstance(p, ATOMS) and isinstance(p.target, FieldRef) and schema.path_nullable(model, p.target.path):
        yield Or((p, IsNull(p.target, True)))
    elif isinstance(p, Not):
        yield from (Not(x) for x in _missing_matches(p.item, model))
    elif isinstance(p, And | Or):
        for i, item in enumerate(p.items):
            for x in _missing_matches(item, model):
                yield type(p)(p.items[:i] + (x,) + p.items[i + 1 :])


def _missing_group_dropped(q: Query) -> Iterator[Query]:
    """The rows whose group key is missing left out (a key read straight from a field that can be missing)."""
    for name, e in q.cols:
        if q.group and name in q.group and isinstance(e, FieldRef) and schema.path_nullable(q.universe, e.path):
            present = IsNull(e, False)
            where = present if q.where is None else And((q.where, present))
            yield dataclasses.replace(q, where=where)


def trap_mistakes(q: Query) -> list[tuple[str, Query]]:
    """Every mistake of this module's table that the tree admits, each as (rule kind, the whole tree)."""
    out: list[tuple[str, Query]] = list(_replace_all(q))
    for name in ("where", "exclude"):
        p = getattr(q, name)
        if p is not None:
            out += [("null", dataclasses.replace(q, **{name: x})) for x in _missing_matches(p, q.universe)]
    out += [("null", m) for m in _missing_group_dropped(q)]
    return out
