"""Query budgets measured where the code cannot see it: every top-level statement of a graded test is counted.

Threat: a budget deliverable that can tell, from inside its own process, whether its
queries are being counted runs its forbidden per-row loop only when they are not. Under
Django's budgets it can: `connection.force_debug_cursor` and a growing `queries_log` hold
only inside `assertNumQueries` / `django_assert_num_queries` blocks, the fixture is an
argument of the budget tests alone, and the test's own source (on disk, in `linecache`)
shows the `with` block around the call.

Decision: the count is always on, taken below Django, and looks the same in every test.
Each top-level statement of every test the grading runs, real or canary, budget or not,
becomes

    with _span("<key>"):
        <the statement>

`_span` (runtime/grader/observations.py) tells the query audit's hook where the statement
starts and ends; the hook, which alone counts the statements SQLite runs on any connection
of the process (query_audit.py, out of the code's reach), hands back the count, and the
span sends it as an observation of its key (`observe(key, "==", count, hole(0))`). Django's
debug cursor stays off and its log empty, as in production. What the count is held to stays
on the host (`Span`): at most `n` for a budget block (`with django_assert_num_queries(n):`,
`django_assert_max_num_queries(n)`, `self.assertNumQueries(n)`, which becomes the span of its
statements), nothing for any other statement. The budget fixtures leave the test's
signature. So a deliverable sees the same state in every statement of every test, and the
same source shape around every call: it cannot tell when a budget is being kept.

The hook counts what SQLite ran, not what Django logged: transaction control, PRAGMA and
Django's `SELECT QUOTE(...)` are not queries, so an exact budget is held as a maximum (a
deliverable that needs fewer queries than the budget is not wrong for it).

A result read later. A budgeted call could return an object that runs its per-row loop when it
is first read (its length, its items, its equality), in the next statement, outside the budget's
span. So every top-level statement after a budget block in the same test is held to
READ_AFTER_BUDGET = 0 queries: the frozen tests only read and compare the block's result there,
and a result of finished values (lists, dicts, numbers, as the prompt of a budget task says)
runs none. The prompt states it (families/django.py).

Limits, recorded: a budget block below the top level of its test (none of the tasks has one)
is a span nested in another, a shape that tells it apart; a `return` inside a budget block
still reports its count (the span ends), but a test that returns before it never reaches it.
"""

from __future__ import annotations

import ast
import copy
import random
from dataclasses import dataclass

BUDGET_CALLS = ("assertNumQueries", "django_assert_num_queries", "django_assert_max_num_queries")
BUDGET_FIXTURES = ("django_assert_num_queries", "django_assert_max_num_queries")
SPAN = "_span"
READ_AFTER_BUDGET = 0  # what a statement after a budget block in its test may run: reading the result runs no query


@dataclass(frozen=True)
class Span:
    """One counted statement of a graded test, as the host holds it: its budget (None: none) and line."""

    budget: int | None
    line: int


def _budget_of(stmt: ast.stmt) -> int | None:
    """n of a `with` statement whose only item is a budget with a literal count, else None."""
    if not isinstance(stmt, ast.With) or len(stmt.items) != 1 or stmt.items[0].optional_vars is not None:
        return None
    call = stmt.items[0].context_expr
    if not isinstance(call, ast.Call):
        return None
    name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
    if name not in BUDGET_CALLS:
        return None
    arg = call.args[0] if call.args else next((k.value for k in call.keywords if k.arg == "num"), None)
    if not (isinstance(arg, ast.Constant) and type(arg.value) is int):
        return None
    return arg.value


class _Counter:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.spans: dict[str, Span] = {}

    def span(self, body: list[ast.stmt], budget: int | None, where: ast.stmt) -> ast.With:
        """`with _span("<key>"): body`, its Span kept for the host, at `where`'s line."""
        key = f"{self.rng.getrandbits(64):016x}"
        line = getattr(where, "lineno", 1)
        self.spans[key] = Span(budget, line)
        made = ast.With([ast.withitem(ast.Call(ast.Name(SPAN, ast.Load()), [ast.Constant(key)], []))], body)
        made.lineno, made.col_offset = line, getattr(where, "col_offset", 0)
        return made

    def top(self, body: list[ast.stmt]) -> list[ast.stmt]:
        out: list[ast.stmt] = []
        after_budget = False
        for i, stmt in enumerate(body):
            if isinstance(stmt, (ast.Global, ast.Nonlocal)) or (
                i == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            ):
                out.append(stmt)  # a declaration or the docstring stays where it is
                continue
            budget = _budget_of(stmt)
            inner = self.nested(stmt.body) if budget is not None else [self.inside(stmt)]  # type: ignore[attr-defined]
            out.append(self.span(inner, READ_AFTER_BUDGET if budget is None and after_budget else budget, stmt))
            after_budget = after_budget or budget is not None
        return out

    def nested(self, body: list[ast.stmt]) -> list[ast.stmt]:
        """A block's statements, with any budget block among them made a nested span."""
        out: list[ast.stmt] = []
        for stmt in body:
            budget = _budget_of(stmt)
            out.append(self.inside(stmt) if budget is None else self.span(self.nested(stmt.body), budget, stmt))  # type: ignore[attr-defined]
        return out

    def inside(self, stmt: ast.stmt) -> ast.stmt:
        """The statement with every budget block inside its own bodies made a span (see the limits above)."""
        for name in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, name, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                setattr(stmt, name, self.nested(inner))
        for handler in getattr(stmt, "handlers", []) or []:
            handler.body = self.nested(handler.body)
        return stmt


def count_queries(
    fn: ast.FunctionDef | ast.AsyncFunctionDef, rng: random.Random
) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, dict[str, Span]]:
    """A copy of a test whose every top-level statement is a counted span, and the spans by key."""
    fn = copy.deepcopy(fn)
    counter = _Counter(rng)
    fn.body = counter.top(fn.body) or [ast.Pass()]
    used = {n.id for n in ast.walk(ast.Module(body=fn.body, type_ignores=[])) if isinstance(n, ast.Name)}
    fn.args.args = [a for a in fn.args.args if a.arg not in BUDGET_FIXTURES or a.arg in used]
    return fn, counter.spans
