"""Hidden-test data drawn per grading: the `[[vary]]` tables of a django task.

Threat: the policy has read every hidden test, so a deliverable can key on the data a
hidden test inserts (a product's name, an order's quantity) and return the answers it
memorized without doing the work. A task closes that by declaring tokens of its hidden
tests that stand for data the spec leaves free:

    [[vary]]
    token = 6            # an int literal of the hidden tests
    range = [11, 40]     # drawn from this range (both ends included)

    [[vary]]
    token = "kettle"     # a word inside the hidden tests' string literals
    keep = 1             # the drawn word keeps this many leading letters (so orderings hold)

For every grading the host draws a value per token (`draw`) and rewrites the hidden
modules (`substitute`, on the AST: an int token replaces every int constant equal to it, a
word token every whole-word occurrence inside a string constant, f-string parts included)
before the suite is made, so the expected values a test compares are computed from the
draw: an expected value written as arithmetic of tokens (`1 + 6 + 2`) is folded into a
literal on the host and, like every expected value, stays there (django_suite.py). What the
test inserts differs between gradings, so a replayed answer key meets other data.

Soundness rests on the task: the spec must stay true for every draw (no token occurs in
the spec, checked), and every expected value that depends on a token must be written in
terms of it; `verify` grades each reference on several draws, and the controls on them.
A drawn value never equals another literal of the tests or another draw, so a token's
substitution cannot merge two values the test keeps apart.
"""

from __future__ import annotations

import ast
import random
import re
import string
from typing import Any

MIN_INT_RANGE = 10
MAX_REDRAWS = 200


class VaryError(ValueError):
    pass


def _word_re(token: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_])")


def _constants(sources: dict[str, str]) -> list[object]:
    return [n.value for text in sources.values() for n in ast.walk(ast.parse(text)) if isinstance(n, ast.Constant)]


def _ints(sources: dict[str, str]) -> list[int]:
    return [v for v in _constants(sources) if type(v) is int]


def _strs(sources: dict[str, str]) -> list[str]:
    return [v for v in _constants(sources) if isinstance(v, str)]


def normalize(raw: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for i, d in enumerate(raw, 1):
        w = f"{where} vary {i}"
        unknown = set(d) - {"token", "range", "keep"}
        if unknown:
            raise VaryError(f"{w}: unknown key(s) {sorted(unknown)}")
        token = d.get("token")
        if type(token) is int:
            rng = d.get("range")
            if not (isinstance(rng, list) and len(rng) == 2 and all(type(x) is int for x in rng)):
                raise VaryError(f"{w}: an int token needs range = [lo, hi]")
            if rng[1] - rng[0] < MIN_INT_RANGE:
                raise VaryError(f"{w}: range {rng} of token {token} is too narrow")
            out.append({"token": token, "kind": "int", "range": list(rng)})
        elif isinstance(token, str) and re.fullmatch(r"[a-z][a-z0-9]{2,}", token):
            keep = d.get("keep", 1)
            if type(keep) is not int or not 0 <= keep < len(token) - 1:
                raise VaryError(f"{w}: keep must be an int below the token's length less one")
            out.append({"token": token, "kind": "word", "keep": keep})
        else:
            raise VaryError(f"{w}: a token is an int or a lowercase word of 3+ letters, got {token!r}")
    return out


def validate(decls: list[dict[str, Any]], hidden: dict[str, str], spec: str, where: str) -> None:
    """Raise VaryError unless every declaration names data of the hidden tests that the spec leaves free."""
    tokens = [d["token"] for d in decls]
    if len(set(map(str, tokens))) != len(tokens):
        raise VaryError(f"{where}: a token is declared twice")
    ints, strs = _ints(hidden), _strs(hidden)
    for d in decls:
        token = d["token"]
        if d["kind"] == "int":
            if token not in ints:
                raise VaryError(f"{where}: vary token {token} is no int literal of the hidden tests")
            if re.search(rf"(?<![0-9.]){token}(?![0-9])", spec):
                raise VaryError(f"{where}: vary token {token} occurs in the spec, which fixes it")
            continue
        if not any(_word_re(token).search(s) for s in strs):
            raise VaryError(f"{where}: vary token {token!r} occurs in no string literal of the hidden tests")
        if _word_re(token).search(spec):
            raise VaryError(f"{where}: vary token {token!r} occurs in the spec, which fixes it")
        for other in tokens:
            if isinstance(other, str) and other != token and token in other:
                raise VaryError(f"{where}: vary token {token!r} is part of token {other!r}")


def draw(decls: list[dict[str, Any]], sources: dict[str, str], spec: str, rng: random.Random) -> dict[str | int, Any]:
    """A value per token: none equal to a literal of the tests, found in the spec or the tests, holding a
    word of the tests' strings (a fixed search term) or holding or held by another draw."""
    literals = set(_ints(sources))
    corpus = (spec + "\n" + "\n".join(sources.values())).lower()
    tokens = {d["token"] for d in decls if d["kind"] != "int"}
    # words the tests search or match with (a fixed search term): a drawn word must not hold one,
    # or a test that searches for it would find a row it must not find
    fixed_words = {w for text in _strs(sources) for w in re.findall(r"[a-z]{3,}", text.lower())} - tokens
    taken: set[object] = set()
    values: dict[str | int, Any] = {}
    for d in decls:
        token = d["token"]
        for _ in range(MAX_REDRAWS):
            if d["kind"] == "int":
                value: Any = rng.randint(*d["range"])
                clash = value in literals or value in taken
            else:
                tail = "".join(rng.choice(string.ascii_lowercase) for _ in range(len(token) - d["keep"]))
                value = token[: d["keep"]] + tail
                clash = (
                    value in corpus
                    or any(word in value for word in fixed_words)
                    or any(isinstance(t, str) and (t in value or value in t) for t in taken)
                )
            if not clash:
                break
        else:
            raise VaryError(f"no value for vary token {token!r} avoids the tests' literals")
        values[token] = value
        taken.add(value)
    return values


class _Substitute(ast.NodeTransformer):
    def __init__(self, decls: list[dict[str, Any]], values: dict[str | int, Any]) -> None:
        self.ints = {d["token"]: values[d["token"]] for d in decls if d["kind"] == "int"}
        self.words = [(_word_re(d["token"]), values[d["token"]]) for d in decls if d["kind"] == "word"]

    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        value = node.value
        if type(value) is int and value in self.ints:
            return ast.copy_location(ast.Constant(self.ints[value]), node)
        if isinstance(value, str) and self.words:
            for pattern, new in self.words:
                value = pattern.sub(new, value)
            return ast.copy_location(ast.Constant(value), node)
        return node

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.expr:
        """An f-string of constants only (`f"/articles/{1987}/"`) becomes the plain string: a literal the host keeps."""
        node = self.generic_visit(node)  # type: ignore[assignment]
        if all(isinstance(n, (ast.JoinedStr, ast.FormattedValue, ast.Constant)) for n in ast.walk(node)):
            return ast.copy_location(ast.Constant(eval(compile(ast.Expression(node), "<vary>", "eval"))), node)  # noqa: S307
        return node


def substitute(sources: dict[str, str], decls: list[dict[str, Any]], values: dict[str | int, Any]) -> dict[str, str]:
    """The modules with every token replaced by its drawn value (identifiers and test names as written)."""
    if not decls:
        return sources
    out = {}
    for path, text in sources.items():
        tree = _Substitute(decls, values).visit(ast.parse(text, path))
        out[path] = ast.unparse(ast.fix_missing_locations(tree)) + "\n"
    return out


def drawn_hidden(grading: dict[str, Any], rng: random.Random) -> tuple[dict[str, str], dict[str | int, Any]]:
    """The hidden modules of one grading with this run's draw, and the draw."""
    hidden = grading.get("hidden", {})
    decls = grading.get("vary") or []
    if not decls:
        return hidden, {}
    values = draw(decls, {**grading["tests"], **hidden}, grading.get("spec", ""), rng)
    return substitute(hidden, decls, values), values
