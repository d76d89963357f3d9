"""Mutants of a reference solution, made by editing its syntax tree: no hand list per task.

Each operator looks at one node of the reference's AST and proposes small edits of it; every
edit gives one mutant, the whole source unparsed again with that one change. Operators are
grouped per family (ORM_OPERATORS, FASTAPI_OPERATORS, DJANGO_OPERATORS) after the kinds of
mistake a spec states precisely and a model gets wrong: a boundary (`gt` for `gte`), a
tiebreak, a dense rank, a status code, a validation bound, a field option, a raised error, a
comparison's boundary, a given falsy value taken for a missing one.

Decisions:
- Determinism: nodes are visited in source pre-order and operators in their listed order, so
  the same source always gives the same mutants in the same order.
- Names: `operator@line:col detail` (the position of the edited node in the reference, the
  detail says what changed, e.g. `lookup@2:41 price__gte->price__gt`). A name that would repeat
  gets `#2`, `#3`. Task sources declare equivalent mutants by these names, so a name changes
  only when the reference itself changes.
- Pure: this module only reads and writes source text; running mutants is sensitivity.py's job.
- Multi-valued relations (for the filter-splitting operator) are read from the models' source
  (`related_names_of`), not listed by hand.
- Rank functions: `rank` swaps DenseRank, Rank and RowNumber by name, except in a RowNumber window
  whose order ends with a tiebreak (`order_by=[key, ..., tiebreak]`, the unique key closing the
  order). Ties never occur inside such a window, so a bare swap numbers rows alike on any data (an
  equivalent mutant); the swap there also drops the last key, the mistake a person makes (ties
  then share a number, and a top-k keeps every row tied at its boundary). The edit replaces the
  whole Window call, so its name carries the Window's position; every other window keeps the
  bare swap and its name. An operator reads a node's parent through `Context.parent`.
"""

from __future__ import annotations

import ast
import copy
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace

# An operator gets (node, context) and yields (detail, replacement). The replacement is a node,
# a list of statements (replacing one statement), or REMOVE (the node leaves its list).
REMOVE = object()
Edit = tuple[str, object]
Operator = Callable[[ast.AST, "Context"], Iterator[Edit]]


@dataclass(frozen=True)
class Mutant:
    name: str
    operator: str
    source: str


def one_per_operator(mutants: list[Mutant]) -> list[Mutant]:
    """The first mutant of each operator, in order: a sample that still makes every kind of mistake once
    (what the default test tier grades; a task is admitted only when every mutant is killed)."""
    seen: set[str] = set()
    return [m for m in mutants if not (m.operator in seen or seen.add(m.operator))]


@dataclass(frozen=True)
class Context:
    """What some operators need beyond the node: the multi-valued relation names and the nullable
    field names of the schema (`related_names_of`, `nullable_names_of`), and each node's parent in
    the source being mutated (`generate` fills it in)."""

    multi_valued: frozenset[str] = frozenset()
    nullable: frozenset[str] = frozenset()
    parents: dict[int, ast.AST] = field(default_factory=dict, compare=False, repr=False)

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))


# -- helpers --------------------------------------------------------------------------------


def _preorder(node: ast.AST) -> Iterator[ast.AST]:
    yield node
    for child in ast.iter_child_nodes(node):
        yield from _preorder(child)


def _call_name(node: ast.AST) -> str:
    """`Q` for Q(...), `filter` for qs.filter(...), `CharField` for models.CharField(...)."""
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return ""


def _dotted(node: ast.AST) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return f"{base}.{node.attr}" if base else node.attr
    return ""


def _const(node: ast.AST, kind: type | tuple[type, ...]) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (kind if isinstance(kind, tuple) else (kind,))


def _with_keyword(call: ast.Call, index: int, keyword: ast.keyword | None) -> ast.Call:
    """A copy of call with keyword `index` replaced (or removed when keyword is None)."""
    new = copy.deepcopy(call)
    if keyword is None:
        del new.keywords[index]
    else:
        new.keywords[index] = keyword
    return new


def _where(node: ast.AST) -> str:
    """line:col of a node; for a method call, of the method's name (a chain's calls all start alike)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.end_lineno is not None:
        return f"{node.func.end_lineno}:{node.func.end_col_offset - len(node.func.attr)}"
    return f"{getattr(node, 'lineno', 0)}:{getattr(node, 'col_offset', 0)}"


def related_names_of(models_source: str) -> frozenset[str]:
    """Names that traverse a multi-valued relation: many-to-many fields and every related_name."""
    names: set[str] = set()
    for node in _preorder(ast.parse(models_source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            kind = _call_name(node.value)
            if kind == "ManyToManyField":
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
            if kind in ("ManyToManyField", "ForeignKey"):
                for kw in node.value.keywords:
                    if kw.arg == "related_name" and _const(kw.value, str):
                        names.add(kw.value.value)
    return frozenset(names)


def nullable_names_of(models_source: str) -> frozenset[str]:
    """Names of the fields that may hold None (`null=True`), foreign keys included."""
    names: set[str] = set()
    for node in _preorder(ast.parse(models_source)):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            if any(kw.arg == "null" and _const(kw.value, bool) and kw.value.value for kw in node.value.keywords):
                names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return frozenset(names)


# -- ORM operators --------------------------------------------------------------------------

LOOKUP_FLIPS = {
    "gt": "gte",
    "gte": "gt",
    "lt": "lte",
    "lte": "lt",
    "exact": "iexact",
    "iexact": "exact",
    "contains": "icontains",
    "icontains": "contains",
    "startswith": "istartswith",
    "istartswith": "startswith",
    "endswith": "iendswith",
    "iendswith": "endswith",
}
KNOWN_LOOKUPS = set(LOOKUP_FLIPS) | {
    "in",
    "range",
    "isnull",
    "year",
    "month",
    "day",
    "week_day",
    "date",
    "regex",
    "iregex",
    "quarter",
    "hour",
    "minute",
    "second",
    "week",
    "iso_year",
}
LOOKUP_CALLS = {"filter", "exclude", "get", "Q", "When", "get_or_create", "update_or_create"}
NOT_LOOKUPS = {"then", "default", "defaults", "output_field"}


def op_lookup(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Flip a comparison lookup (gt<->gte, lt<->lte, exact<->iexact, contains<->icontains, ...).

    An implicit exact lookup on a string (`name="x"`) becomes `name__iexact`; `isnull=True`
    becomes `isnull=False` and back.
    """
    if _call_name(node) not in LOOKUP_CALLS:
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg is None or kw.arg in NOT_LOOKUPS:
            continue
        parts = kw.arg.split("__")
        last = parts[-1]
        if last in LOOKUP_FLIPS and len(parts) > 1:
            new_arg = "__".join([*parts[:-1], LOOKUP_FLIPS[last]])
            yield f"{kw.arg}->{new_arg}", _with_keyword(node, i, ast.keyword(new_arg, copy.deepcopy(kw.value)))
        elif last == "isnull" and _const(kw.value, bool):
            flipped = ast.keyword(kw.arg, ast.Constant(not kw.value.value))
            yield f"{kw.arg}={kw.value.value}->{not kw.value.value}", _with_keyword(node, i, flipped)
        elif last not in KNOWN_LOOKUPS and _const(kw.value, str):
            new_arg = f"{kw.arg}__iexact"
            yield f"{kw.arg}->{new_arg}", _with_keyword(node, i, ast.keyword(new_arg, copy.deepcopy(kw.value)))


def _flip_order_key(key: ast.AST) -> ast.AST | None:
    """'-x' <-> 'x'; F('x').desc() <-> F('x').asc(); F('x') -> F('x').desc()."""
    if _const(key, str):
        text = key.value
        return ast.Constant(text[1:] if text.startswith("-") else f"-{text}")
    if isinstance(key, ast.Call) and isinstance(key.func, ast.Attribute) and key.func.attr in ("asc", "desc"):
        new = copy.deepcopy(key)
        new.func.attr = "asc" if key.func.attr == "desc" else "desc"
        return new
    if isinstance(key, ast.Call) and _call_name(key) == "F":
        return ast.Call(ast.Attribute(copy.deepcopy(key), "desc", ast.Load()), [], [])
    return None


def _order_edits(keys: list[ast.AST], rebuild: Callable[[list[ast.AST]], ast.AST]) -> Iterator[Edit]:
    for i, key in enumerate(keys):
        flipped = _flip_order_key(key)
        if flipped is not None:
            yield f"key {i + 1} {ast.unparse(key)}->{ast.unparse(flipped)}", rebuild([*keys[:i], flipped, *keys[i + 1 :]])
    for i in range(1, len(keys)):
        yield f"drop tiebreak {ast.unparse(keys[i])}", rebuild([*keys[:i], *keys[i + 1 :]])


def op_order(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Flip the direction of each ordering key; drop each tiebreak key (every key after the first)."""
    if not isinstance(node, ast.Call):
        return
    if _call_name(node) == "order_by" and isinstance(node.func, ast.Attribute) and not node.keywords:

        def rebuild(keys: list[ast.AST]) -> ast.AST:
            new = copy.deepcopy(node)
            new.args = [copy.deepcopy(k) for k in keys]
            return new

        yield from _order_edits(node.args, rebuild)
    for i, kw in enumerate(node.keywords):
        if kw.arg != "order_by":
            continue
        seq = kw.value
        if isinstance(seq, (ast.List, ast.Tuple)):

            def rebuild_seq(keys: list[ast.AST], i: int = i, seq: ast.AST = seq) -> ast.AST:
                new_seq = type(seq)([copy.deepcopy(k) for k in keys], ast.Load())
                return _with_keyword(node, i, ast.keyword("order_by", new_seq))

            yield from _order_edits(seq.elts, rebuild_seq)
        else:
            flipped = _flip_order_key(seq)
            if flipped is not None:
                yield (
                    f"order_by {ast.unparse(seq)}->{ast.unparse(flipped)}",
                    _with_keyword(node, i, ast.keyword("order_by", flipped)),
                )


def _drop_method(names: tuple[str, ...]) -> Operator:
    def op(node: ast.AST, ctx: Context) -> Iterator[Edit]:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names:
            if node.func.attr == "distinct" and (node.args or node.keywords):
                return
            yield f"drop .{node.func.attr}()", copy.deepcopy(node.func.value)

    op.__name__ = "op_drop_" + "_".join(names)
    return op


op_distinct = _drop_method(("distinct",))
op_related = _drop_method(("select_related", "prefetch_related"))


def _swap_names(group: tuple[str, ...]) -> Operator:
    def op(node: ast.AST, ctx: Context) -> Iterator[Edit]:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in group:
            for other in group:
                if other != node.func.id:
                    new = copy.deepcopy(node)
                    new.func.id = other
                    yield f"{node.func.id}->{other}", new

    return op


_swap_ranks = _swap_names(("DenseRank", "Rank", "RowNumber"))


def _window_expression(window: ast.Call) -> ast.AST | None:
    """The function a Window call computes: its first argument or its `expression=` keyword."""
    if window.args:
        return window.args[0]
    return next((kw.value for kw in window.keywords if kw.arg == "expression"), None)


def _tiebroken_row_number(node: ast.AST) -> int | None:
    """The index of the `order_by` keyword when node is Window(RowNumber(), ..., order_by=[key, ..., tiebreak])."""
    if not (isinstance(node, ast.Call) and _call_name(node) == "Window"):
        return None
    expr = _window_expression(node)
    if not (isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name) and expr.func.id == "RowNumber"):
        return None
    for i, kw in enumerate(node.keywords):
        if kw.arg == "order_by" and isinstance(kw.value, (ast.List, ast.Tuple)) and len(kw.value.elts) >= 2:
            return i
    return None


def op_rank(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Swap DenseRank, Rank and RowNumber; a tiebroken RowNumber window becomes a rank that also drops the tiebreak."""
    at = _tiebroken_row_number(node)
    if at is not None:
        keys = node.keywords[at].value.elts
        for other in ("DenseRank", "Rank"):
            new = copy.deepcopy(node)
            _window_expression(new).func.id = other
            del new.keywords[at].value.elts[-1]
            yield f"RowNumber->{other}, drop tiebreak {ast.unparse(keys[-1])}", new
        return
    parent = ctx.parent(node)
    if parent is not None and _tiebroken_row_number(parent) is not None and _window_expression(parent) is node:
        return  # the window's edit above replaces the bare swap
    yield from _swap_ranks(node, ctx)


op_aggregate = _swap_names(("Avg", "Sum", "Max", "Min"))


def op_count_distinct(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Count(..., distinct=True) <-> distinct=False."""
    if _call_name(node) != "Count":
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg == "distinct" and _const(kw.value, bool):
            flipped = ast.keyword("distinct", ast.Constant(not kw.value.value))
            yield f"distinct={kw.value.value}->{not kw.value.value}", _with_keyword(node, i, flipped)


def op_coalesce(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Coalesce(x, fallback) -> x (a field name becomes F(name))."""
    if _call_name(node) != "Coalesce" or len(node.args) < 2:
        return
    first = copy.deepcopy(node.args[0])
    if _const(first, str):
        first = ast.Call(ast.Name("F", ast.Load()), [first], [])
    yield f"Coalesce(...)->{ast.unparse(first)}", first


def _is_q(node: ast.AST) -> bool:
    if _call_name(node) == "Q" and isinstance(node.func, ast.Name):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return _is_q(node.operand)
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)):
        return _is_q(node.left) or _is_q(node.right)
    return False


def op_q_and_or(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """`&` <-> `|` between Q objects."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)) and _is_q(node):
        new = copy.deepcopy(node)
        new.op = ast.BitOr() if isinstance(node.op, ast.BitAnd) else ast.BitAnd()
        yield "&->|" if isinstance(node.op, ast.BitAnd) else "|->&", new


def op_filter_split(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """filter(a, b) over one multi-valued relation -> filter(a).filter(b) (a join per filter)."""
    if _call_name(node) != "filter" or not isinstance(node.func, ast.Attribute) or node.args:
        return
    by_relation: dict[str, list[int]] = {}
    for i, kw in enumerate(node.keywords):
        if kw.arg is None:
            continue
        parts = kw.arg.split("__")
        multi = [j for j, p in enumerate(parts[:-1] or parts) if p in ctx.multi_valued]
        if multi:
            by_relation.setdefault("__".join(parts[: multi[0] + 1]), []).append(i)
    for relation, idx in by_relation.items():
        if len(idx) < 2:
            continue
        first = idx[0]
        inner = copy.deepcopy(node)
        inner.keywords = [copy.deepcopy(kw) for j, kw in enumerate(node.keywords) if j != first]
        outer = ast.Call(
            ast.Attribute(copy.deepcopy(node.func.value), "filter", ast.Load()), [], [copy.deepcopy(node.keywords[first])]
        )
        inner.func = ast.Attribute(outer, "filter", ast.Load())
        yield f"split filter on {relation} ({node.keywords[first].arg} first)", inner


def op_slice(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Slice bounds moved by one: [:5] -> [:4], [:6], [1:5]."""
    if not (isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice)):
        return
    sl = node.slice
    for field_name in ("lower", "upper"):
        bound = getattr(sl, field_name)
        if bound is None:
            if field_name == "lower" and sl.upper is not None:
                candidates = [1]
            else:
                continue
        elif _const(bound, int):
            candidates = [v for v in (bound.value - 1, bound.value + 1) if v >= 0]
        else:
            continue
        for value in candidates:
            new = copy.deepcopy(node)
            setattr(new.slice, field_name, ast.Constant(value))
            yield f"{field_name} {ast.unparse(sl)}->{ast.unparse(new.slice)}", new


SET_OPERATIONS = ("union", "intersection", "difference")


def op_setop(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """qs.union(other) <-> .intersection(other) <-> .difference(other); a union without `all` gets `all=True`
    (duplicates kept: a row both sides hold comes twice)."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SET_OPERATIONS):
        return
    for other in SET_OPERATIONS:
        if other != node.func.attr:
            new = copy.deepcopy(node)
            new.func.attr = other
            yield f"{node.func.attr}->{other}", new
    if node.func.attr == "union" and not any(kw.arg == "all" for kw in node.keywords):
        new = copy.deepcopy(node)
        new.keywords.append(ast.keyword("all", ast.Constant(True)))
        yield "union->union(all=True)", new


# -- ORM operators for the rules a spec states: missing values, a range's ends, letter case ----
# The hand-written tasks' specs state what happens to a row with nothing on the other side of a
# relation or None in a field: "a book with no genre at all is not Fantasy: include it", "books
# without a genre are left out", "None if none of its books has a review". Each operator below makes
# the mistake one such sentence is there to prevent; verify/orm.py admits a fixture variant only
# where every mutant gives other rows than the reference, so a stated rule holds on every variant a
# rollout can draw, not only on the hand-written fixture.


def _missing_prefix(path: str, ctx: Context) -> str | None:
    """The shortest prefix of a lookup path that can be missing: a multi-valued relation or a nullable field."""
    parts = [p for p in path.split("__") if p not in KNOWN_LOOKUPS]
    for i, part in enumerate(parts):
        if part in ctx.multi_valued or part in ctx.nullable:
            return "__".join(parts[: i + 1])
    return None


def _chain(receiver: ast.AST, method: str, keywords: list[ast.keyword]) -> ast.Call:
    return ast.Call(ast.Attribute(copy.deepcopy(receiver), method, ast.Load()), [], keywords)


def op_exclude_missing(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """qs.exclude(rel__x=v) -> qs.exclude(rel=None).exclude(rel__x=v): a row with nothing (None) on the path is
    dropped, where `exclude` keeps it (a vacuous "none of its books" read as "has books, none of which")."""
    if _call_name(node) != "exclude" or not isinstance(node.func, ast.Attribute):
        return
    done: set[str] = set()
    for kw in node.keywords:
        prefix = _missing_prefix(kw.arg or "", ctx)
        if prefix is None or prefix in done or kw.arg in (prefix, f"{prefix}__isnull"):
            continue
        done.add(prefix)
        new = copy.deepcopy(node)
        new.func.value = _chain(node.func.value, "exclude", [ast.keyword(prefix, ast.Constant(None))])
        yield f"drop rows with no {prefix}", new


def _is_missing_test(kw: ast.keyword, method: str) -> bool:
    """`x__isnull=False` in a filter, `x=None` or `x__isnull=True` in an exclude: a row with x missing is left out."""
    if kw.arg is None or not isinstance(kw.value, ast.Constant):
        return False
    if method == "filter":
        return kw.arg.endswith("__isnull") and kw.value.value is False
    return (kw.arg.endswith("__isnull") and kw.value.value is True) or kw.value.value is None


def op_keep_missing(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Drop the condition that leaves out rows with a missing value (`genre__isnull=False`, `exclude(genre=None)`,
    `filter(Exists(...))`): the rows a spec says are left out ("books without a genre are left out", "each
    publisher that has at least one book") come back."""
    method = _call_name(node)
    if method not in ("filter", "exclude") or not isinstance(node.func, ast.Attribute):
        return
    for i, arg in enumerate(node.args):
        if method == "filter" and _call_name(arg) == "Exists":  # "that has at least one book" dropped
            new = copy.deepcopy(node)
            del new.args[i]
            yield "keep rows with no match of Exists(...)", new if new.args or new.keywords else copy.deepcopy(node.func.value)
    for i, kw in enumerate(node.keywords):
        if not _is_missing_test(kw, method):
            continue
        if len(node.keywords) == 1 and not node.args:
            yield f"keep rows with {kw.arg}={ast.unparse(kw.value)}", copy.deepcopy(node.func.value)
        else:
            yield f"keep rows with {kw.arg}={ast.unparse(kw.value)}", _with_keyword(node, i, None)


def _assigned(name: ast.Name, ctx: Context) -> ast.AST | None:
    """The value last assigned to `name` at module level before it is read (`qs = ...` then `qs.values(...)`)."""
    module = name
    while ctx.parent(module) is not None:
        module = ctx.parent(module)
    found = None
    for stmt in getattr(module, "body", []):
        if stmt.lineno >= name.lineno:
            break
        if isinstance(stmt, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name.id for t in stmt.targets):
            found = stmt.value
    return found


def _required_before(chain: ast.AST, prefix: str, ctx: Context) -> bool:
    """Whether a `.filter(...)` earlier in the chain (through module-level names) already compares something on
    `prefix` (SQL's comparisons with NULL are never true, so no row there has it missing: dropping such rows
    changes nothing)."""
    if isinstance(chain, ast.Name):
        chain = _assigned(chain, ctx)
    while isinstance(chain, ast.Call) and isinstance(chain.func, ast.Attribute):
        if chain.func.attr == "filter":
            for kw in chain.keywords:
                if kw.arg and (kw.arg == prefix or kw.arg.startswith(prefix + "__")) and not _is_missing_test(kw, "exclude"):
                    return True
        chain = chain.func.value
        if isinstance(chain, ast.Name):
            chain = _assigned(chain, ctx)
    return False


def op_drop_none_group(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """qs.values("genre__name", ...) -> qs.exclude(genre=None).values(...): the group (or the rows) whose key is
    missing dropped, where the spec keeps it ("books with no genre form one group of their own")."""
    if _call_name(node) not in ("values", "values_list") or not isinstance(node.func, ast.Attribute):
        return
    done: set[str] = set()
    for arg in node.args:
        prefix = _missing_prefix(arg.value, ctx) if _const(arg, str) else None
        if prefix is None or prefix in done or _required_before(node.func.value, prefix, ctx):
            continue
        done.add(prefix)
        new = copy.deepcopy(node)
        new.func.value = _chain(node.func.value, "exclude", [ast.keyword(prefix, ast.Constant(None))])
        yield f"drop the group with no {prefix}", new


def op_missing_matches(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """filter(sale_price__lt=x) -> filter(Q(sale_price__lt=x) | Q(sale_price=None)): a row whose value is missing
    taken as meeting the condition, where the spec leaves it out ("books without a sale price are left out")."""
    if _call_name(node) != "filter" or not isinstance(node.func, ast.Attribute):
        return
    for i, kw in enumerate(node.keywords):
        prefix = _missing_prefix(kw.arg or "", replace(ctx, multi_valued=frozenset()))
        if prefix is None or _is_missing_test(kw, "filter") or kw.arg.endswith("__isnull"):
            continue
        meets = ast.Call(ast.Name("Q", ast.Load()), [], [copy.deepcopy(kw)])
        missing = ast.Call(ast.Name("Q", ast.Load()), [], [ast.keyword(prefix, ast.Constant(None))])
        new = _with_keyword(node, i, None)
        new.args = [*new.args, ast.BinOp(meets, ast.BitOr(), missing)]
        yield f"{kw.arg} also met by no {prefix}", new


def op_range_ends(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """x__range=(a, b) -> x__gt=a, x__lt=b, and each end alone left out: a range stated with its ends included."""
    if _call_name(node) not in ("filter", "exclude", "Q"):
        return
    for i, kw in enumerate(node.keywords):
        value = kw.value
        if not (kw.arg and kw.arg.endswith("__range") and isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == 2):
            continue
        path, (low, high) = kw.arg[: -len("__range")], value.elts
        for detail, lower, upper in (("both ends", "gt", "lt"), ("low end", "gt", "lte"), ("high end", "gte", "lt")):
            new = _with_keyword(node, i, None)
            new.keywords[i:i] = [
                ast.keyword(f"{path}__{lower}", copy.deepcopy(low)),
                ast.keyword(f"{path}__{upper}", copy.deepcopy(high)),
            ]
            yield f"{kw.arg} without its {detail}", new


CASE_FREE = {"icontains": "{}", "iexact": "^{}$", "istartswith": "^{}", "iendswith": "{}$"}


def op_case_sensitive(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """title__icontains="night" -> title__regex="night": a match stated "in any letter case" made in one case only.
    (On SQLite `contains` ignores ASCII case as `icontains` does, so the flip of op_lookup is equivalent there; a
    regular expression is matched case by case.)"""
    if _call_name(node) not in LOOKUP_CALLS:
        return
    for i, kw in enumerate(node.keywords):
        parts = (kw.arg or "").split("__")
        if parts[-1] in CASE_FREE and len(parts) > 1 and _const(kw.value, str):
            pattern = CASE_FREE[parts[-1]].format(re.escape(kw.value.value))
            new_arg = "__".join([*parts[:-1], "regex"])
            yield f"{kw.arg}->{new_arg}", _with_keyword(node, i, ast.keyword(new_arg, ast.Constant(pattern)))


NONE_AS_ZERO = {"Avg": 0.0, "Sum": 0}


def op_none_as_zero(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Avg(x) -> Coalesce(Avg(x), Value(0.0)), Sum(x) -> Coalesce(Sum(x), Value(0)): an aggregate over nothing read as
    0 where the spec says None. Only an aggregate that can be over nothing: across a multi-valued relation, or
    with a `filter=`."""
    name = _call_name(node)
    if name not in NONE_AS_ZERO or not isinstance(node.func, ast.Name):
        return
    over = node.args[0].value if node.args and _const(node.args[0], str) else ""
    conditional = any(kw.arg == "filter" for kw in node.keywords)
    if not conditional and _missing_prefix(over, replace(ctx, nullable=frozenset())) is None:
        return  # over a group's own rows, never empty: None cannot come
    parent = ctx.parent(node)
    if parent is not None and _call_name(parent) == "Coalesce":
        return
    zero = ast.Call(ast.Name("Value", ast.Load()), [ast.Constant(NONE_AS_ZERO[name])], [])
    yield (
        f"{name}(...)->Coalesce({name}(...), {NONE_AS_ZERO[name]!r})",
        ast.Call(ast.Name("Coalesce", ast.Load()), [copy.deepcopy(node), zero], []),
    )


# -- FastAPI operators ----------------------------------------------------------------------

PARAM_CALLS = {"Query", "Path", "Body", "Field", "Header", "Cookie", "Form", "File"}
CONSTRAINTS = {
    "ge",
    "le",
    "gt",
    "lt",
    "min_length",
    "max_length",
    "pattern",
    "regex",
    "multiple_of",
    "max_digits",
    "decimal_places",
    "embed",
    "convert_underscores",
}
ROUTE_METHODS = {"get", "post", "put", "patch", "delete", "head", "options", "api_route", "route", "websocket"}


def _status_of(node: ast.AST) -> int | None:
    if _const(node, int):
        return node.value
    name = _dotted(node)
    if name.rsplit(".", 1)[-1].startswith("HTTP_"):
        digits = name.rsplit(".", 1)[-1].split("_")[1]
        return int(digits) if digits.isdigit() else None
    return None


def _other_status(code: int, exception: bool) -> int:
    if exception:
        return 400 if code != 400 else 404
    return 200 if code != 200 else 201


def op_status(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Every status code changed: status_code=, HTTPException(404, ...), response.status_code = 201."""
    if isinstance(node, ast.Call):
        exception = _call_name(node) in ("HTTPException", "StarletteHTTPException")
        for i, kw in enumerate(node.keywords):
            if kw.arg == "status_code" and (code := _status_of(kw.value)) is not None:
                new = ast.keyword("status_code", ast.Constant(_other_status(code, exception)))
                yield f"status_code {code}->{new.value.value}", _with_keyword(node, i, new)
        if exception and node.args and (code := _status_of(node.args[0])) is not None:
            new = copy.deepcopy(node)
            new.args[0] = ast.Constant(_other_status(code, True))
            yield f"HTTPException {code}->{new.args[0].value}", new
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and target.attr == "status_code":
            code = _status_of(node.value)
            if code is not None:
                new = copy.deepcopy(node)
                new.value = ast.Constant(_other_status(code, False))
                yield f"status_code {code}->{new.value.value}", new


def op_constraint(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each validation constraint (ge, le, gt, lt, min_length, max_length, pattern, ...) removed."""
    if _call_name(node) not in PARAM_CALLS and not _call_name(node).startswith("con"):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg in CONSTRAINTS:
            yield f"drop {kw.arg}={ast.unparse(kw.value)}", _with_keyword(node, i, None)


def _route_decorator(dec: ast.AST) -> ast.Call | None:
    if isinstance(dec, ast.Call) and isinstance(dec.func, ast.Attribute) and dec.func.attr in ROUTE_METHODS:
        return dec
    return None


def op_response_model(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """response_model= removed from a route, and a route function's return annotation removed."""
    if isinstance(node, ast.Call) and _route_decorator(node) is not None:
        for i, kw in enumerate(node.keywords):
            if kw.arg == "response_model":
                yield "drop response_model", _with_keyword(node, i, None)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.returns is not None:
        if any(_route_decorator(d) is not None for d in node.decorator_list):
            if not (_const(node.returns, type(None)) or (isinstance(node.returns, ast.Constant) and node.returns.value is None)):
                new = copy.deepcopy(node)
                new.returns = None
                yield f"drop return annotation {ast.unparse(node.returns)}", new


def _changed_constant(node: ast.AST) -> ast.Constant | None:
    if not isinstance(node, ast.Constant):
        return None
    v = node.value
    if type(v) is bool:
        return ast.Constant(not v)
    if type(v) is int:
        return ast.Constant(v + 1)
    if type(v) is float:
        return ast.Constant(v + 1.0)
    if type(v) is str:
        return ast.Constant(v + "x" if v else "x")
    return None


def op_default(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each default value changed: function defaults, model field defaults, Query(default)/Field(default)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        for arg, default in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True):
            changed = _changed_constant(default)
            if changed is not None:
                new = copy.deepcopy(node)
                new.args.defaults[args.defaults.index(default)] = changed
                yield f"default {arg.arg}={default.value!r}->{changed.value!r}", new
        for j, (arg, default) in enumerate(zip(args.kwonlyargs, args.kw_defaults, strict=True)):
            changed = _changed_constant(default) if default is not None else None
            if changed is not None:
                new = copy.deepcopy(node)
                new.args.kw_defaults[j] = changed
                yield f"default {arg.arg}={default.value!r}->{changed.value!r}", new
    if isinstance(node, ast.AnnAssign) and node.value is not None and isinstance(node.target, ast.Name):
        changed = _changed_constant(node.value)
        if changed is not None:
            new = copy.deepcopy(node)
            new.value = changed
            yield f"default {node.target.id}={node.value.value!r}->{changed.value!r}", new
    if _call_name(node) in PARAM_CALLS:
        for i, kw in enumerate(node.keywords):
            if kw.arg == "default" and (changed := _changed_constant(kw.value)) is not None:
                yield f"default={kw.value.value!r}->{changed.value!r}", _with_keyword(node, i, ast.keyword("default", changed))
        if node.args and (changed := _changed_constant(node.args[0])) is not None:
            new = copy.deepcopy(node)
            new.args[0] = changed
            yield f"default {node.args[0].value!r}->{changed.value!r}", new


EXCLUDE_FLIPS = {
    "response_model_exclude_unset": "response_model_exclude_none",
    "response_model_exclude_none": "response_model_exclude_unset",
    "exclude_unset": "exclude_none",
    "exclude_none": "exclude_unset",
}


def op_exclude(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """exclude_unset <-> exclude_none (in routes, model_dump, jsonable_encoder)."""
    if not isinstance(node, ast.Call):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg in EXCLUDE_FLIPS:
            yield (
                f"{kw.arg}->{EXCLUDE_FLIPS[kw.arg]}",
                _with_keyword(node, i, ast.keyword(EXCLUDE_FLIPS[kw.arg], copy.deepcopy(kw.value))),
            )


def _renamed(text: str) -> str:
    return text + "-x" if "-" in text else text + "_x"


def op_header_cookie_name(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each header or cookie name changed, where it is read and where it is written."""
    # parameters read from a header or cookie: the alias changed, or one given that differs
    if isinstance(node, ast.arg):
        for k, sub in enumerate(_preorder(node.annotation) if node.annotation is not None else ()):
            if _call_name(sub) in ("Header", "Cookie"):
                for detail, new_call in _alias_edits(sub, node.arg):
                    new = copy.deepcopy(node)
                    target = next(n for i, n in enumerate(_preorder(new.annotation)) if i == k)
                    target.keywords = new_call.keywords
                    yield detail, new
        return
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        positional = [*args.posonlyargs, *args.args]
        pairs = list(zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None]
        for arg, default in pairs:
            if _call_name(default) in ("Header", "Cookie") and not any(
                _call_name(s) in ("Header", "Cookie") for s in _preorder(arg.annotation or ast.Constant(None))
            ):
                for detail, new_call in _alias_edits(default, arg.arg):
                    new = copy.deepcopy(node)
                    for cand in _preorder(new):
                        if isinstance(cand, ast.Call) and ast.dump(cand) == ast.dump(default):
                            cand.keywords = new_call.keywords
                            break
                    yield detail, new
        return
    # response.headers["X-Name"] / request.cookies["name"] / .headers.get("X-Name")
    if isinstance(node, ast.Subscript) and _const(node.slice, str):
        if isinstance(node.value, ast.Attribute) and node.value.attr in ("headers", "cookies"):
            new = copy.deepcopy(node)
            new.slice = ast.Constant(_renamed(node.slice.value))
            yield f"{node.value.attr} name {node.slice.value!r}->{new.slice.value!r}", new
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        owner = node.func.value
        method = node.func.attr
        if method in ("get", "getlist") and isinstance(owner, ast.Attribute) and owner.attr in ("headers", "cookies"):
            if node.args and _const(node.args[0], str):
                new = copy.deepcopy(node)
                new.args[0] = ast.Constant(_renamed(node.args[0].value))
                yield f"{owner.attr} name {node.args[0].value!r}->{new.args[0].value!r}", new
        if method in ("set_cookie", "delete_cookie"):
            if node.args and _const(node.args[0], str):
                new = copy.deepcopy(node)
                new.args[0] = ast.Constant(_renamed(node.args[0].value))
                yield f"cookie name {node.args[0].value!r}->{new.args[0].value!r}", new
            for i, kw in enumerate(node.keywords):
                if kw.arg == "key" and _const(kw.value, str):
                    renamed = ast.keyword("key", ast.Constant(_renamed(kw.value.value)))
                    yield f"cookie name {kw.value.value!r}->{renamed.value.value!r}", _with_keyword(node, i, renamed)
    if isinstance(node, ast.Call):
        for i, kw in enumerate(node.keywords):
            if kw.arg == "headers" and isinstance(kw.value, ast.Dict):
                for j, key in enumerate(kw.value.keys):
                    if key is not None and _const(key, str):
                        new_dict = copy.deepcopy(kw.value)
                        new_dict.keys[j] = ast.Constant(_renamed(key.value))
                        yield (
                            f"header name {key.value!r}->{new_dict.keys[j].value!r}",
                            _with_keyword(node, i, ast.keyword("headers", new_dict)),
                        )


def _alias_edits(call: ast.Call, param: str) -> Iterator[tuple[str, ast.Call]]:
    for i, kw in enumerate(call.keywords):
        if kw.arg in ("alias", "validation_alias") and _const(kw.value, str):
            renamed = ast.keyword(kw.arg, ast.Constant(_renamed(kw.value.value)))
            yield (
                f"{_call_name(call).lower()} {param} alias {kw.value.value!r}->{renamed.value.value!r}",
                _with_keyword(call, i, renamed),
            )
            return
    name = param.replace("_", "-") if _call_name(call) == "Header" else param
    new = copy.deepcopy(call)
    new.keywords.append(ast.keyword("alias", ast.Constant(_renamed(name))))
    yield f"{_call_name(call).lower()} {param} read as {_renamed(name)!r}", new


def op_dependency(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each dependency removed: an entry of dependencies=[...], or Depends(f) made a no-op."""
    if not isinstance(node, ast.Call):
        return
    if _call_name(node) in ("Depends", "Security") and isinstance(node.func, ast.Name) and node.args:
        new = copy.deepcopy(node)
        new.args[0] = ast.Lambda(ast.arguments([], [], None, [], [], None, []), ast.Constant(None))
        yield f"{node.func.id}({ast.unparse(node.args[0])}) does nothing", new
    for i, kw in enumerate(node.keywords):
        if kw.arg == "dependencies" and isinstance(kw.value, (ast.List, ast.Tuple)):
            for j, elt in enumerate(kw.value.elts):
                seq = copy.deepcopy(kw.value)
                del seq.elts[j]
                yield f"drop dependency {ast.unparse(elt)}", _with_keyword(node, i, ast.keyword("dependencies", seq))


NEGATIONS = {ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq}
ARITH_SWAPS = {ast.Mult: ast.Add, ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Div: ast.Mult, ast.FloorDiv: ast.Mult}


def op_negate(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A test negated: is <-> is not, in <-> not in, == <-> != (tests for None are none_check's)."""
    if not isinstance(node, ast.Compare):
        return
    for i, op in enumerate(node.ops):
        other = NEGATIONS.get(type(op))
        if other is None or _const(node.comparators[i], type(None)):
            continue
        new = copy.deepcopy(node)
        new.ops[i] = other()
        which = f"op {i + 1} " if len(node.ops) > 1 else ""
        yield f"{which}{type(op).__name__}->{other.__name__}", new


def _is_text(node: ast.AST) -> bool:
    return isinstance(node, ast.JoinedStr) or _const(node, str)


def op_arith(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """An arithmetic operator swapped: * -> +, + -> -, - -> +, / and // -> * (text concatenation left alone)."""
    if isinstance(node, ast.BinOp) and type(node.op) in ARITH_SWAPS:
        if _is_text(node.left) or _is_text(node.right):
            return
        new = copy.deepcopy(node)
    elif isinstance(node, ast.AugAssign) and type(node.op) in ARITH_SWAPS:
        if _is_text(node.value):
            return
        new = copy.deepcopy(node)
    else:
        return
    new.op = ARITH_SWAPS[type(node.op)]()
    yield f"{type(node.op).__name__}->{type(new.op).__name__}", new


def _has_yield(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, (ast.Yield, ast.YieldFrom)) for s in body for n in _preorder(s))


def op_teardown(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A generator's teardown dropped: what runs after `yield` in a lifespan or a dependency, or its `finally`."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for i, stmt in enumerate(node.body[:-1]):
            if isinstance(stmt, ast.Expr) and isinstance(stmt.value, (ast.Yield, ast.YieldFrom)):
                new = copy.deepcopy(node)
                new.body = new.body[: i + 1]
                yield "drop the statements after yield", new
    if isinstance(node, ast.Try) and node.finalbody and _has_yield(node.body):
        new = copy.deepcopy(node)
        new.finalbody = []
        yield "drop finally around yield", (new if new.handlers else new.body)


def _route_path(dec: ast.AST) -> tuple[str, str, str] | None:
    """(router, method, path) of a route decorator with a literal path."""
    call = _route_decorator(dec)
    if call is None or not call.args or not _const(call.args[0], str):
        return None
    return ast.unparse(call.func.value), call.func.attr, call.args[0].value


def _segments_overlap(a: str, b: str) -> bool:
    """Whether one request path can match both route paths (a parameter matches one segment, `{p:path}` the rest)."""
    sa, sb = a.strip("/").split("/"), b.strip("/").split("/")
    for x, y in zip(sa, sb, strict=False):
        if x.endswith(":path}") or y.endswith(":path}"):
            return True
        if x != y and not (x.startswith("{") and y) and not (y.startswith("{") and x):
            return False  # a parameter matches one non-empty segment
    return len(sa) == len(sb)


def op_route_order(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Two neighbouring routes that can match the same request swapped: the first declared wins."""
    if not isinstance(node, ast.Module):
        return
    for i in range(len(node.body) - 1):
        a, b = node.body[i], node.body[i + 1]
        if not all(isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.decorator_list for s in (a, b)):
            continue
        pa, pb = _route_path(a.decorator_list[0]), _route_path(b.decorator_list[0])
        if pa and pb and pa[:2] == pb[:2] and pa[2] != pb[2] and _segments_overlap(pa[2], pb[2]):
            new = copy.deepcopy(node)
            new.body[i], new.body[i + 1] = new.body[i + 1], new.body[i]
            yield f"{pb[2]} declared before {pa[2]}", new


def op_path_converter(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A path parameter's converter dropped: {p:path} -> {p}."""
    call = _route_decorator(node)
    if call is None or not call.args or not _const(call.args[0], str):
        return
    path = call.args[0].value
    plain = re.sub(r"\{(\w+):\w+\}", r"{\1}", path)
    if plain != path:
        new = copy.deepcopy(call)
        new.args[0] = ast.Constant(plain)
        yield f"path {path}->{plain}", new


def op_mount(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A mounted application or an included router dropped, or an app hook assignment (app.openapi = f) dropped."""
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Attribute):
        if node.value.func.attr in ("mount", "include_router"):
            yield f"drop {ast.unparse(node.value)[:60]}", REMOVE
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.value, ast.Name):
        target = node.targets[0]
        if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id != "self":
            yield f"drop {ast.unparse(node)[:60]}", REMOVE


def op_guard(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """An early return dropped: `if cond: return x` with no else goes (a cache, a special case)."""
    if isinstance(node, ast.If) and not node.orelse and len(node.body) == 1 and isinstance(node.body[0], ast.Return):
        yield f"drop if {ast.unparse(node.test)[:50]}: return", REMOVE


def op_alias(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A query, form, body or field alias dropped: the parameter is read by its Python name."""
    if _call_name(node) not in ("Query", "Form", "Body", "Field"):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg in ("alias", "validation_alias", "serialization_alias") and _const(kw.value, str):
            yield f"drop {kw.arg}={kw.value.value!r}", _with_keyword(node, i, None)


def _has_alias(cls: ast.ClassDef) -> bool:
    return any(_call_name(n) == "Field" and any(kw.arg == "alias" for kw in n.keywords) for n in _preorder(cls))


def _sets_model_config(cls: ast.ClassDef) -> bool:
    return any(isinstance(s, ast.Assign) and any(_dotted(t) == "model_config" for t in s.targets) for s in cls.body)


def op_alias_loose(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A model whose fields have aliases also takes them by their Python names (populate_by_name)."""
    if isinstance(node, ast.ClassDef) and _has_alias(node) and not _sets_model_config(node):
        new = copy.deepcopy(node)
        new.body.insert(0, ast.parse('model_config = {"populate_by_name": True}').body[0])
        yield "fields also taken by their Python names", new


def _without_decorator(node: ast.AST, name: str) -> Iterator[tuple[ast.AST, ast.AST]]:
    """(decorator, a copy of the function without it) for each `@name(...)` on a function."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for i, dec in enumerate(node.decorator_list):
            if _call_name(dec) == name:
                new = copy.deepcopy(node)
                del new.decorator_list[i]
                yield dec, new


def op_handler(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """An exception handler's decorator dropped: that error keeps the framework's default answer."""
    for dec, new in _without_decorator(node, "exception_handler"):
        yield f"drop @{ast.unparse(dec)[:50]}", new


def _lowered(node: ast.AST) -> ast.Call:
    return ast.Call(ast.Attribute(copy.deepcopy(node), "lower", ast.Load()), [], [])


def op_case(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """An exact comparison of a stored value with a sent one made case-blind: `r["t"] == body.t` -> both `.lower()`."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.Eq):
        left, right = node.left, node.comparators[0]
        if {type(left), type(right)} == {ast.Subscript, ast.Attribute}:
            yield "== made case-blind", ast.Compare(_lowered(left), [ast.Eq()], [_lowered(right)])


def op_filter_case(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A filter keeping the stored values that equal one of the sent ones, made case-blind:
    `r["t"] in sent` -> `r["t"].lower() in [v.lower() for v in sent]`."""
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.In)):
        return
    left, right = node.left, node.comparators[0]
    if isinstance(left, ast.Subscript) and isinstance(right, ast.Name):
        each = ast.ListComp(
            _lowered(ast.Name("v", ast.Load())),
            [ast.comprehension(ast.Name("v", ast.Store()), ast.Name(right.id, ast.Load()), [], 0)],
        )
        yield f"in {right.id} made case-blind", ast.Compare(_lowered(left), [ast.In()], [each])


def _is_location(target: ast.AST) -> bool:
    """`<x>.headers["Location"]` (any letter case)."""
    return (
        isinstance(target, ast.Subscript)
        and isinstance(target.value, ast.Attribute)
        and target.value.attr == "headers"
        and _const(target.slice, str)
        and target.slice.value.lower() == "location"
    )


def op_location(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A Location header set on an answer: dropped, or the collection's path without the new id."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and _is_location(node.targets[0]):
        yield "no Location header", REMOVE
        parts = node.value.values if isinstance(node.value, ast.JoinedStr) else []
        if len(parts) > 1 and _const(parts[0], str):
            new = copy.deepcopy(node)
            new.value = ast.Constant(parts[0].value.rstrip("/"))
            yield f"Location {new.value.value!r} without the id", new


def op_set_cookie(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A cookie an answer sets is never set: the `response.set_cookie(...)` statement dropped."""
    if isinstance(node, ast.Expr) and _call_name(node.value) == "set_cookie":
        yield f"drop {ast.unparse(node.value)[:60]}", REMOVE


def _returned_slice(fn: ast.AST, name: str) -> ast.expr | None:
    """The upper bound `N` of a `return <name>[:N]` in `fn`, if it has one."""
    for node in _preorder(fn):
        value = node.value if isinstance(node, ast.Return) else None
        if (
            isinstance(value, ast.Subscript)
            and isinstance(value.value, ast.Name)
            and value.value.id == name
            and isinstance(value.slice, ast.Slice)
            and value.slice.lower is None
            and value.slice.upper is not None
        ):
            return value.slice.upper
    return None


def op_limit_first(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A list filtered and then cut at a limit is cut first: the filter reads only the first `limit` rows."""
    if not isinstance(node, ast.ListComp) or len(node.generators) != 1 or not node.generators[0].ifs:
        return
    rows = node.generators[0].iter
    fn = ctx.parent(node)
    while fn is not None and not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        fn = ctx.parent(fn)
    upper = _returned_slice(fn, rows.id) if fn is not None and isinstance(rows, ast.Name) else None
    if upper is not None:
        new = copy.deepcopy(node)
        new.generators[0].iter = ast.Subscript(ast.Name(rows.id, ast.Load()), ast.Slice(upper=copy.deepcopy(upper)), ast.Load())
        yield f"the limit taken before the filter ({rows.id}[:{ast.unparse(upper)}] filtered)", new


def _literal_words(annotation: ast.AST | None) -> list[str] | None:
    """The words of a `Literal["a", "b"]` annotation (None for any other annotation)."""
    if not (isinstance(annotation, ast.Subscript) and _dotted(annotation.value).rsplit(".", 1)[-1] == "Literal"):
        return None
    elts = annotation.slice.elts if isinstance(annotation.slice, ast.Tuple) else [annotation.slice]
    return [e.value for e in elts] if all(_const(e, str) for e in elts) else None


def _literal_params(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> Iterator[tuple[int, ast.arg, ast.Call, list[str]]]:
    """(index in the defaults, parameter, its default call, its words) of each `p: Literal[...] = Cookie(...)`."""
    positional = [*fn.args.posonlyargs, *fn.args.args]
    first = len(positional) - len(fn.args.defaults)
    for i, default in enumerate(fn.args.defaults):
        arg, words = positional[first + i], _literal_words(positional[first + i].annotation)
        if words and _call_name(default) in PARAM_CALLS:
            yield i, arg, default, words


def op_literal_param(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A request value limited to listed words (a cookie, a body value): any text taken, or its default another word."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return
    for i, arg, default, words in _literal_params(node):
        new = copy.deepcopy(node)
        next(a for a in [*new.args.posonlyargs, *new.args.args] if a.arg == arg.arg).annotation = ast.Name("str", ast.Load())
        yield f"{arg.arg} takes any text", new
        given = next((kw.value.value for kw in default.keywords if kw.arg == "default" and _const(kw.value, str)), None)
        for word in [w for w in words if given is not None and w != given]:
            new = copy.deepcopy(node)
            call = new.args.defaults[i]
            call.keywords = [ast.keyword("default", ast.Constant(word)) if kw.arg == "default" else kw for kw in call.keywords]
            yield f"default {arg.arg}={given!r}->{word!r}", new


# -- Django operators -----------------------------------------------------------------------

FIELD_OPTIONS = {
    "max_length",
    "min_length",
    "unique",
    "null",
    "blank",
    "default",
    "validators",
    "max_value",
    "min_value",
    "required",
    "choices",
    "db_index",
    "max_digits",
    "decimal_places",
    "unique_for_date",
}
COMPARE_FLIPS = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


def op_field_option(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each model or form field option removed (max_length, unique, null, blank, default, validators, ...)."""
    name = _call_name(node)
    if not (name.endswith("Field") or name in ("ForeignKey", "OneToOneField", "ManyToManyField")):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg in FIELD_OPTIONS:
            yield f"{name} drop {kw.arg}={ast.unparse(kw.value)}", _with_keyword(node, i, None)


def op_meta_constraint(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each entry of Meta.constraints removed; unique_together / indexes removed."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return
    target = node.targets[0].id
    if target == "constraints" and isinstance(node.value, (ast.List, ast.Tuple)):
        for j, elt in enumerate(node.value.elts):
            new = copy.deepcopy(node)
            del new.value.elts[j]
            label = next(
                (kw.value.value for kw in getattr(elt, "keywords", []) if kw.arg == "name" and _const(kw.value, str)),
                _call_name(elt),
            )
            yield f"drop constraint {label}", new
    elif target in ("unique_together", "ordering"):
        yield f"drop Meta.{target}", REMOVE


def op_compare(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A Python comparison's boundary flipped: < <-> <=, > <-> >=."""
    if not isinstance(node, ast.Compare):
        return
    for i, op in enumerate(node.ops):
        other = COMPARE_FLIPS.get(type(op))
        if other is not None:
            new = copy.deepcopy(node)
            new.ops[i] = other()
            which = f"op {i + 1} " if len(node.ops) > 1 else ""
            yield f"{which}{type(op).__name__}->{other.__name__}", new


def op_none_check(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A test for None made a truth test: `x is not None` -> `x`, `x is None` -> `not x`.

    The mistake this stands for: a given falsy value (0, "", an empty list) taken for a
    missing one, as in `if item.tax:` where the spec says "when tax is given".
    """
    if not (isinstance(node, ast.Compare) and len(node.ops) == 1 and _const(node.comparators[0], type(None))):
        return
    if isinstance(node.ops[0], ast.IsNot):
        yield "is not None->truth test", copy.deepcopy(node.left)
    elif isinstance(node.ops[0], ast.Is):
        yield "is None->not", ast.UnaryOp(ast.Not(), copy.deepcopy(node.left))


def _is_atomic(node: ast.AST) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return _dotted(target) in ("transaction.atomic", "atomic", "db.transaction.atomic")


def op_atomic(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """transaction.atomic removed: a `with` block runs bare, a decorator goes."""
    if isinstance(node, (ast.With, ast.AsyncWith)):
        for i, item in enumerate(node.items):
            if _is_atomic(item.context_expr):
                if len(node.items) == 1:
                    yield "drop with transaction.atomic()", [copy.deepcopy(s) for s in node.body]
                else:
                    new = copy.deepcopy(node)
                    del new.items[i]
                    yield "drop transaction.atomic() from with", new
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for i, dec in enumerate(node.decorator_list):
            if _is_atomic(dec):
                new = copy.deepcopy(node)
                del new.decorator_list[i]
                yield "drop @transaction.atomic", new


def op_raise(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each raised error removed (the raise, or a form's add_error call, becomes `pass`)."""
    if isinstance(node, ast.Raise) and node.exc is not None:
        yield f"drop raise {ast.unparse(node.exc)[:60]}", ast.Pass()
    if isinstance(node, ast.Expr) and _call_name(node.value) == "add_error":
        yield f"drop {ast.unparse(node.value)[:60]}", ast.Pass()


def op_signal(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Signal handlers disconnected: @receiver removed, X.connect(handler) removed."""
    for _, new in _without_decorator(node, "receiver"):
        yield f"drop @receiver on {node.name}", new
    if isinstance(node, ast.Expr) and _call_name(node.value) == "connect":
        yield f"drop {ast.unparse(node.value)[:60]}", ast.Pass()


ORM_OPERATORS: dict[str, Operator] = {
    "lookup": op_lookup,
    "order": op_order,
    "distinct": op_distinct,
    "rank": op_rank,
    "count_distinct": op_count_distinct,
    "coalesce": op_coalesce,
    "q_and_or": op_q_and_or,
    "filter_split": op_filter_split,
    "slice": op_slice,
    "aggregate": op_aggregate,
    "setop": op_setop,
}
# the hand-written orm tasks' operators besides ORM_OPERATORS: the mistakes of the rules their specs state
# (the generated tasks render each stated rule's mistake from their tree instead: generate/traps.py)
ORM_STATED_RULE_OPERATORS: dict[str, Operator] = {
    "exclude_missing": op_exclude_missing,
    "keep_missing": op_keep_missing,
    "none_group": op_drop_none_group,
    "none_as_zero": op_none_as_zero,
    "missing_matches": op_missing_matches,
    "range_ends": op_range_ends,
    "case_sensitive": op_case_sensitive,
}
FASTAPI_OPERATORS: dict[str, Operator] = {
    "status": op_status,
    "constraint": op_constraint,
    "response_model": op_response_model,
    "default": op_default,
    "exclude": op_exclude,
    "name": op_header_cookie_name,
    "dependency": op_dependency,
    "compare": op_compare,
    "none_check": op_none_check,
    "raise": op_raise,
    "negate": op_negate,
    "arith": op_arith,
    "teardown": op_teardown,
    "route_order": op_route_order,
    "path_converter": op_path_converter,
    "mount": op_mount,
    "guard": op_guard,
    "alias": op_alias,
    "alias_loose": op_alias_loose,
    "handler": op_handler,
    "case": op_case,
    "location": op_location,
    "set_cookie": op_set_cookie,
    "literal_param": op_literal_param,
    "limit_first": op_limit_first,
    "filter_case": op_filter_case,
}
DJANGO_OPERATORS: dict[str, Operator] = {
    "field_option": op_field_option,
    "meta_constraint": op_meta_constraint,
    "lookup": op_lookup,
    "compare": op_compare,
    "related": op_related,
    "atomic": op_atomic,
    "raise": op_raise,
    "signal": op_signal,
}


# -- generation -----------------------------------------------------------------------------


def _parent_slots(tree: ast.AST) -> dict[int, tuple[ast.AST, str, int | None]]:
    """id(node) -> (parent, field, index in the field's list or None)."""
    slots: dict[int, tuple[ast.AST, str, int | None]] = {}
    for parent in _preorder(tree):
        for field_name, value in ast.iter_fields(parent):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        slots[id(item)] = (parent, field_name, i)
            elif isinstance(value, ast.AST):
                slots[id(value)] = (parent, field_name, None)
    return slots


def _replace(tree: ast.AST, target: ast.AST, replacement: object) -> ast.AST | None:
    """tree with target replaced in place (the root by a whole module); None if the edit cannot apply there."""
    if target is tree:
        return replacement if isinstance(replacement, ast.Module) else None
    parent, field_name, pos = _parent_slots(tree)[id(target)]
    if pos is None:
        if replacement is REMOVE or isinstance(replacement, list):
            return None
        setattr(parent, field_name, replacement)
        return tree
    items = getattr(parent, field_name)
    if replacement is REMOVE:
        del items[pos]
        if not items and field_name == "body":
            items.append(ast.Pass())
    elif isinstance(replacement, list):
        items[pos : pos + 1] = replacement or [ast.Pass()]
    else:
        items[pos] = replacement
    return tree


def _apply(tree: ast.AST, index: int, replacement: object) -> str | None:
    """The source of a copy of tree with its index-th node (pre-order) replaced; None if impossible."""
    new_tree = copy.deepcopy(tree)
    target = next(n for i, n in enumerate(_preorder(new_tree)) if i == index)
    new_tree = _replace(new_tree, target, replacement)
    if new_tree is None:
        return None
    ast.fix_missing_locations(new_tree)
    try:
        text = ast.unparse(new_tree)
        compile(text, "<mutant>", "exec")
    except (SyntaxError, ValueError):
        return None
    return text


def generate(source: str, operators: dict[str, Operator], ctx: Context | None = None, prefix: str = "") -> list[Mutant]:
    """Every mutant the operators make of source, in deterministic order, each named once."""
    tree = ast.parse(source)
    ctx = replace(ctx or Context(), parents={id(c): p for p in _preorder(tree) for c in ast.iter_child_nodes(p)})
    baseline = ast.unparse(tree)
    out: list[Mutant] = []
    seen_names: dict[str, int] = {}
    seen_sources: set[str] = {baseline}
    for index, node in enumerate(_preorder(tree)):
        for op_name, op in operators.items():
            for detail, replacement in op(node, ctx):
                text = _apply(tree, index, replacement)
                if text is None or text in seen_sources:
                    continue
                seen_sources.add(text)
                name = f"{prefix}{op_name}@{_where(node)} {detail}"
                seen_names[name] = seen_names.get(name, 0) + 1
                if seen_names[name] > 1:
                    name += f" #{seen_names[name]}"
                out.append(Mutant(name, op_name, text))
    return out
