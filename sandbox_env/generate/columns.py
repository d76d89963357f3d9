"""The type of each output column of a tree: what the reference formats and what the spec promises.

Types: `str`, `int`, `dec` (money: rendered as text with two places), `date` (ISO text),
`bool`, `float` (averages, not rounded). `nullable` says whether None can appear.
"""

from __future__ import annotations

from typing import Any

from sandbox_env.generate import schema
from sandbox_env.generate.tree import (
    Agg,
    Arith,
    Bucket,
    Cast,
    CoalesceE,
    ColRef,
    Concat,
    FieldRef,
    PairFn,
    Part,
    Query,
    StrFn,
    Sub,
    Trunc,
    Win,
)  # fmt: skip


def related_model(model: str, rel: tuple[str, ...]) -> str:
    for hop in rel:
        model = schema.MULTI[model][hop][0] if hop in schema.MULTI.get(model, {}) else schema.FK[model][hop][0]
    return model


def expr_type(model: str, e: Any, q: Query | None = None) -> tuple[str, bool]:
    """(type, nullable) of an expression evaluated on rows of `model`."""
    if isinstance(e, FieldRef):
        return schema.resolve(model, e.path)[1].type, schema.path_nullable(model, e.path)
    if isinstance(e, ColRef):
        assert q is not None
        return expr_type(model, dict(q.cols)[e.name], q)
    if isinstance(e, Arith):
        (ta, na), (tb, nb) = expr_type(model, e.left), expr_type(model, e.right)
        return ("dec" if "dec" in (ta, tb) else ta), na or nb
    if isinstance(e, Part):
        return "int", expr_type(model, e.arg)[1]
    if isinstance(e, Trunc):
        return "date", expr_type(model, e.arg)[1]
    if isinstance(e, StrFn):
        return ("int" if e.fn == "length" else "str"), expr_type(model, e.arg)[1]
    if isinstance(e, Concat):
        return "str", False
    if isinstance(e, Bucket):
        return "str", expr_type(model, e.arg)[1]
    if isinstance(e, CoalesceE):
        return expr_type(model, e.first)[0], expr_type(model, e.second)[1]
    if isinstance(e, PairFn):
        (kind, na), (_, nb) = expr_type(model, e.first), expr_type(model, e.second)
        return kind, True if e.fn == "nullif" else na or nb
    if isinstance(e, Cast):  # SQLite's CAST keeps NULL
        return e.to, expr_type(model, e.arg)[1]
    if isinstance(e, Agg):
        target = related_model(model, e.rel)
        if e.fn == "count":
            return "int", False
        if e.fn == "avg":
            return "float", True
        kind = "dec" if e.product is not None else schema.resolve(target, e.field)[1].type
        return kind, not e.coalesce
    if isinstance(e, Sub):
        target = schema.MULTI[model][e.rel][0]
        if e.fn == "count":
            return "int", not e.coalesce
        return schema.resolve(target, e.field)[1].type, not e.coalesce
    if isinstance(e, Win):
        if e.fn in ("rank", "dense_rank", "row_number", "ntile"):
            return "int", False
        kind, nullable = expr_type(model, FieldRef(e.arg))
        return kind, nullable or e.fn in ("lag", "lead")
    raise TypeError(f"not an expression: {e!r}")


def column_types(q: Query) -> list[tuple[str, str, bool]]:
    """(name, type, nullable) of every output column, in order."""
    return [(name, *expr_type(q.universe, e, q)) for name, e in q.cols]
