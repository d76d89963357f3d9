"""Mutants of a generated django task's reference: the django operators, plus each feature kind's own.

`verify/mutants.py`'s DJANGO_OPERATORS cover field options, constraints, lookups, comparisons,
raises, transactions and signals. A generated feature kind adds the mistakes its spec states
precisely and a model makes, each an operator over the reference's syntax tree (the same
`generate` machinery, so names and order are deterministic):
- queryset: a zero figure left as NULL (`coalesce`, reused), one aggregate for another
  (`aggregate`, reused), an aggregate counting every status (`aggregate_filter`), a status
  left out of the counted ones (`in_list`), the flag's filter flipped (`bool_lookup`);
- view: an ordering's direction or key (`order`, reused), a test negated (`negate`, reused), a
  status code changed (`response_status`: `status=404` -> 200, any other -> 404), an integer
  path segment that takes any text (`path_converter`: `<int:` -> `<str:`), a view decorator
  dropped (`decorator`: the method restriction gone), the flag's condition flipped or dropped
  (`bool_lookup`);
- budget: the django operators drop the related rows' prefetch (`related`); plus `coalesce`,
  `aggregate`, `aggregate_filter`, `order` and `bool_lookup` as above;
- constraints: the django operators already drop a constraint, a field option, a validator, the
  capacity check's raise and flip its boundary;
- form: the django operators drop each rule's raise and flip each boundary (a bound or the
  capacity off by one); plus an error attached to the wrong place (`error_place`: a field's own
  rule's error made a non-field one, the cross-field rule's put on each field it reads), the
  normalisation skipped (`case_call`: `x.lower()` -> `x`), the cross-field rule checked for every
  status or without one of its guards (`drop_condition`: one operand of an `and`/`or` dropped), a
  status left out of the capped ones or a field out of the form (`constant_member`), and the status
  test negated (`negate`, reused);
- command: the django operators drop each refusal's raise and flip each bound (`--min`'s range,
  the quantity's `__gte`); plus an argument declared loosely (`argument_option`: its `choices`,
  `type` or `action` dropped), a filter ignored (`filter_call`: a `.filter(...)` call or one of its
  conditions dropped), a refusal printed instead of raised (`refusal_write`), a wrong output line
  (`write_format`: two printed values swapped, a separator changed), a guard dropped so that its
  body always runs (`if_body`: a dry run that writes, a refusal made unconditional), the order's
  direction or tiebreak (`order`, reused), a status left out of the pool (`constant_member`) and
  one side of the range check dropped (`drop_condition`).
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Iterator
from pathlib import Path

from sandbox_env.verify.mutants import (
    DJANGO_OPERATORS,
    Context,
    Edit,
    Mutant,
    Operator,
    _with_keyword,
    generate,
    op_aggregate,
    op_coalesce,
    op_negate,
    op_order,
)


def op_response_status(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A response's status code changed: `status=404` -> 200, any other code -> 404."""
    if not isinstance(node, ast.Call):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg == "status" and isinstance(kw.value, ast.Constant) and type(kw.value.value) is int:
            code = kw.value.value
            other = 200 if code == 404 else 404
            yield f"status {code}->{other}", _with_keyword(node, i, ast.keyword("status", ast.Constant(other)))


def op_path_converter(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A URL pattern's integer segment made to take any text: `<int:` -> `<str:`."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("path", "re_path")):
        return
    if node.args and isinstance(node.args[0], ast.Constant) and "<int:" in str(node.args[0].value):
        new = copy.deepcopy(node)
        new.args[0] = ast.Constant(node.args[0].value.replace("<int:", "<str:"))
        yield "<int:> -> <str:>", new


def op_decorator(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """Each decorator of a function dropped."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        for i, dec in enumerate(node.decorator_list):
            new = copy.deepcopy(node)
            del new.decorator_list[i]
            yield f"drop @{ast.unparse(dec)[:40]} on {node.name}", new


AGGREGATE_CALLS = ("Count", "Sum", "Max", "Min", "Avg")


def op_aggregate_filter(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """An aggregate's `filter=` dropped: every related row counted, whatever its status."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in AGGREGATE_CALLS:
        for i, kw in enumerate(node.keywords):
            if kw.arg == "filter":
                yield f"{node.func.id} drop filter", _with_keyword(node, i, None)


def op_in_list(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """One value left out of an `__in` lookup's list."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Q"):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg and kw.arg.endswith("__in") and isinstance(kw.value, (ast.List, ast.Tuple)) and len(kw.value.elts) > 1:
            for j, elt in enumerate(kw.value.elts):
                seq = copy.deepcopy(kw.value)
                del seq.elts[j]
                yield f"{kw.arg} drop {ast.unparse(elt)}", _with_keyword(node, i, ast.keyword(kw.arg, seq))


def op_bool_lookup(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A lookup on a boolean flipped (`flag=True` -> `flag=False`), or dropped when the call keeps another."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("filter", "exclude")):
        return
    for i, kw in enumerate(node.keywords):
        if kw.arg and isinstance(kw.value, ast.Constant) and type(kw.value.value) is bool:
            flipped = ast.keyword(kw.arg, ast.Constant(not kw.value.value))
            yield f"{kw.arg}={kw.value.value}->{not kw.value.value}", _with_keyword(node, i, flipped)
            if len(node.keywords) + len(node.args) > 1:
                yield f"drop {kw.arg}={kw.value.value}", _with_keyword(node, i, None)


def _enclosing_function(node: ast.AST, ctx: Context) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    parent = ctx.parent(node)
    while parent is not None and not isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)):
        parent = ctx.parent(parent)
    return parent


def _keys_read(fn: ast.AST) -> list[str]:
    """The text keys a method reads with `.get("key")`, in source order, each once."""
    keys: list[str] = []
    for sub in ast.walk(fn):
        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Attribute) and sub.func.attr == "get" and sub.args:
            first = sub.args[0]
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and first.value not in keys:
                keys.append(first.value)
    return keys


def _add_error(where: str | None, exc: ast.expr) -> ast.Expr:
    call = ast.Call(
        ast.Attribute(ast.Name("self", ast.Load()), "add_error", ast.Load()), [ast.Constant(where), copy.deepcopy(exc)], []
    )
    return ast.Expr(call)


def op_error_place(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A form's error attached to the wrong place: raised in a field's own method, it becomes a non-field error;
    raised in the form-wide method `clean`, it lands on each field that method reads (`.get("field")`)."""
    if not (isinstance(node, ast.Raise) and node.exc is not None):
        return
    fn = _enclosing_function(node, ctx)
    if fn is None:
        return
    if fn.name.startswith("clean_"):
        yield f"{fn.name} error -> non-field", _add_error(None, node.exc)
    elif fn.name == "clean":
        for key in _keys_read(fn):
            yield f"non-field error -> {key}", _add_error(key, node.exc)


CASE_METHODS = ("lower", "upper", "casefold", "capitalize", "title")


def op_case_call(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A normalisation of letter case skipped: `x.lower()` -> `x` (also upper, casefold, capitalize, title)."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in CASE_METHODS:
        if not node.args and not node.keywords:
            yield f"drop .{node.func.attr}()", copy.deepcopy(node.func.value)


def op_drop_condition(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """One operand of an `and` / `or` dropped: a rule checked under every status, or without a guard it needs."""
    if isinstance(node, ast.BoolOp) and len(node.values) > 1:
        for i, value in enumerate(node.values):
            rest = [copy.deepcopy(v) for j, v in enumerate(node.values) if j != i]
            new = rest[0] if len(rest) == 1 else ast.BoolOp(copy.deepcopy(node.op), rest)
            yield f"drop {ast.unparse(value)[:40]}", new


def op_constant_member(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """One text left out of a named tuple or list of texts (a capped status, a form's field)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
        return
    seq = node.value
    if isinstance(seq, (ast.Tuple, ast.List)) and len(seq.elts) > 1:
        if all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in seq.elts):
            for j, elt in enumerate(seq.elts):
                new = copy.deepcopy(node)
                del new.value.elts[j]
                yield f"{node.targets[0].id} drop {elt.value!r}", new


ARGUMENT_OPTIONS = ("choices", "type", "action")


def op_argument_option(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A command-line argument declared loosely: its `choices`, `type` or `action` dropped."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "add_argument":
        for i, kw in enumerate(node.keywords):
            if kw.arg in ARGUMENT_OPTIONS:
                yield f"add_argument drop {kw.arg}", _with_keyword(node, i, None)


def op_filter_call(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A filter ignored: `x.filter(...)` -> `x`, and each condition of a filter with several dropped."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "filter"):
        return
    yield f"drop .filter({ast.unparse(node)[len(ast.unparse(node.func)) + 1 : -1][:40]})", copy.deepcopy(node.func.value)
    if len(node.keywords) + len(node.args) > 1:
        for i, kw in enumerate(node.keywords):
            yield f"filter drop {kw.arg}", _with_keyword(node, i, None)


def op_refusal_write(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A refusal printed instead of raised: `raise E(message)` -> `self.stderr.write(message); return`."""
    if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call) and len(node.exc.args) == 1:
        err = ast.Attribute(ast.Name("self", ast.Load()), "stderr", ast.Load())
        write = ast.Call(ast.Attribute(err, "write", ast.Load()), [copy.deepcopy(node.exc.args[0])], [])
        yield "raise -> stderr.write", [ast.Expr(write), ast.Return(None)]


def _other_separator(text: str) -> str | None:
    for old, new in ((": ", " "), (", ", " "), (" ", ": ")):
        if old in text:
            return text.replace(old, new, 1)
    return None


def op_write_format(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A printed line in another format: in an f-string written out (`.write(f"...")`), the first two values
    swapped, or a separator changed (`": "` or `", "` -> `" "`, `" "` -> `": "`)."""
    parent = ctx.parent(node)
    if not (isinstance(node, ast.JoinedStr) and isinstance(parent, ast.Call) and isinstance(parent.func, ast.Attribute)):
        return
    if parent.func.attr != "write":
        return
    values = [i for i, part in enumerate(node.values) if isinstance(part, ast.FormattedValue)]
    if len(values) > 1:
        new = copy.deepcopy(node)
        a, b = values[:2]
        new.values[a], new.values[b] = new.values[b], new.values[a]
        yield "swap the first two values", new
    for i, part in enumerate(node.values):
        if isinstance(part, ast.Constant) and _other_separator(part.value) is not None:
            new = copy.deepcopy(node)
            new.values[i] = ast.Constant(_other_separator(part.value))
            yield f"separator {part.value!r}", new


def op_if_body(node: ast.AST, ctx: Context) -> Iterator[Edit]:
    """A guard dropped: `if c: body` (no else) -> `body`, which then always runs."""
    if isinstance(node, ast.If) and not node.orelse:
        yield f"drop if {ast.unparse(node.test)[:40]}", [copy.deepcopy(s) for s in node.body]


KIND_OPERATORS: dict[str, dict[str, Operator]] = {
    "queryset": {
        "coalesce": op_coalesce,
        "aggregate": op_aggregate,
        "aggregate_filter": op_aggregate_filter,
        "in_list": op_in_list,
        "bool_lookup": op_bool_lookup,
    },
    "constraints": {},
    "view": {
        "order": op_order,
        "negate": op_negate,
        "response_status": op_response_status,
        "path_converter": op_path_converter,
        "decorator": op_decorator,
        "bool_lookup": op_bool_lookup,
    },
    "budget": {
        "coalesce": op_coalesce,
        "aggregate": op_aggregate,
        "aggregate_filter": op_aggregate_filter,
        "order": op_order,
        "bool_lookup": op_bool_lookup,
    },
    "form": {
        "error_place": op_error_place,
        "case_call": op_case_call,
        "drop_condition": op_drop_condition,
        "constant_member": op_constant_member,
        "negate": op_negate,
    },
    "command": {
        "argument_option": op_argument_option,
        "filter_call": op_filter_call,
        "refusal_write": op_refusal_write,
        "write_format": op_write_format,
        "if_body": op_if_body,
        "order": op_order,
        "constant_member": op_constant_member,
        "drop_condition": op_drop_condition,
    },
}


def mutants_of(reference: dict[str, str], deliverables: list[str], kinds: list[str]) -> list[Mutant]:
    """Every mutant of each deliverable (name `path:operator@line:col detail`), django operators first."""
    operators = dict(DJANGO_OPERATORS)
    for kind in kinds:
        operators.update(KIND_OPERATORS[kind])
    out: list[Mutant] = []
    for path in deliverables:
        out += generate(reference[path], operators, prefix=f"{path}:")
    return out


def files_of(mutant: Mutant, reference: dict[str, str]) -> dict[str, str]:
    path = mutant.name.split(":", 1)[0]
    assert Path(path).suffix == ".py", mutant.name
    return {**reference, path: mutant.source}
