"""Values a fastapi check sends, drawn afresh for every grading: no fixed answer key to replay.

Why. A check is a fixed request with a fixed expectation. Under the threat model (the policy
has read this repository) and in RL over a fixed task set (memorisation across epochs), an
app could answer from a table of the check requests: a 50-line app with no store and no
update logic once scored 6/6 on fastapi_patch_partial. So the values a check *sends* and
expects back (a name in a PATCH body, a tag, a tax, an unknown id, a query value echoed)
are declared per task and drawn on the host for each grading from `random.SystemRandom`;
the expectations follow the draw, so only an app that implements the behaviour passes.
Values the spec itself fixes (an initial store the spec prints, status codes, error texts)
stay as they are: a declared token must not occur in the spec.

Declaration, in task.toml:

    [[vary]]
    token = "Barz"          # the literal as it appears in the checks
    kind = "word"           # "word" | "int" | "float"
    range = [1, 99]         # int and float: inclusive bounds of the draw
    decimals = 1            # float: digits after the point (default 1)

Substitution (`substitute`), over every request and expectation of every check:
- word: every occurrence inside a string (path, query and header values, cookie text, JSON
  keys and values, form fields, raw content, expected bodies, texts and headers), delimited
  by non-word characters; the draw is random ASCII letters in the token's case shape (Title,
  lower, UPPER) and of the token's length (6 letters for a token shorter than MIN_WORD), so
  an expected length such as len("hello there") still holds;
- int / float: every JSON number equal to the token (an int 5 sent and a 5.0 expected both
  follow the draw, each keeping its own type), and every occurrence inside a string
  delimited by non-digit, non-point characters (a path "/items/5", a query value "5").
The `status` expectation and the `at` paths of `json_at` (a document's keys and list
indexes) are never touched.

Compile-time validation (`validate`): each token occurs in at least one request of the
checks (a token only expected is a value the app cannot learn from the request); it occurs
nowhere in the spec; a word token occurs only at word boundaries (no part of another
literal); no token is part of another. At draw time, a value is redrawn while it collides
with any literal of the task (spec text, check strings, numbers) or another draw, so no
draw can be mistaken for a fixed value.

Derived expectations: a check whose expected value is computed from a sent one (a price
with tax added) must not vary that input; the declaration has no arithmetic on purpose.

No fixed echo (`require_drawn_echoes`, at compile time for every fastapi row): a check whose
expectations give back a value its own requests send (an echo: exactly what a table of
recorded responses replays) must send at least one drawn token, unless the spec itself names
that value (a token may not occur in the spec, so the rule asks only for what a draw can give).
"""

from __future__ import annotations

import json
import random
import re
import string
from typing import Any

KINDS = ("word", "int", "float")
MAX_REDRAWS = 200
MIN_WORD = 4  # a word token this long or longer is drawn at its own length (a length may be expected)


class VaryError(ValueError):
    """A [[vary]] declaration is malformed or unsound for its task."""


def _word_re(token: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![A-Za-z0-9_]){re.escape(token)}(?![A-Za-z0-9_])")


def _num_re(text: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![0-9.]){re.escape(text)}(?![0-9.])")


def _num_text(value: float | int) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _strings(value: Any) -> list[str]:
    """Every string of a JSON-like value, dict keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in [k, *_strings(v)]]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _numbers(value: Any) -> list[float]:
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [value]
    if isinstance(value, dict):
        return [n for v in value.values() for n in _numbers(v)]
    if isinstance(value, list):
        return [n for v in value for n in _numbers(v)]
    return []


def normalize(raw: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
    out = []
    for i, d in enumerate(raw, 1):
        w = f"{where} vary {i}"
        kind = d.get("kind")
        if kind not in KINDS:
            raise VaryError(f"{w}: kind must be one of {KINDS}, got {kind!r}")
        unknown = set(d) - {"token", "kind", "range", "decimals"}
        if unknown:
            raise VaryError(f"{w}: unknown key(s) {sorted(unknown)}")
        token = d.get("token")
        if kind == "word":
            if not isinstance(token, str) or not re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", token):
                raise VaryError(f"{w}: a word token is letters and digits, got {token!r}")
            out.append({"token": token, "kind": "word"})
            continue
        if isinstance(token, bool) or not isinstance(token, int | float):
            raise VaryError(f"{w}: a {kind} token is a number, got {token!r}")
        rng = d.get("range")
        if not (isinstance(rng, list) and len(rng) == 2 and rng[0] < rng[1]):
            raise VaryError(f"{w}: a {kind} token needs range = [lo, hi]")
        item = {"token": token, "kind": kind, "range": list(rng)}
        if kind == "float":
            item["decimals"] = int(d.get("decimals", 1))
        out.append(item)
    return out


def _sent_strings(checks: list[dict[str, Any]]) -> list[str]:
    return [s for c in checks for st in c["steps"] for s in _strings(st["request"])]


def _all_strings(checks: list[dict[str, Any]]) -> list[str]:
    return [s for c in checks for st in c["steps"] for s in _strings(st["request"]) + _strings(st["expect"])]


def _occurs(decl: dict[str, Any], texts: list[str], numbers: list[float]) -> bool:
    token = decl["token"]
    if decl["kind"] == "word":
        return any(_word_re(token).search(t) for t in texts)
    return token in numbers or any(_num_re(_num_text(token)).search(t) for t in texts)


def validate(decls: list[dict[str, Any]], checks: list[dict[str, Any]], spec: str, where: str) -> None:
    """Raise VaryError unless every declaration is sound for these checks and this spec."""
    sent_numbers = [n for c in checks for st in c["steps"] for n in _numbers(st["request"].get("json"))]
    tokens = [str(d["token"]) for d in decls]
    if len(set(tokens)) != len(tokens):
        raise VaryError(f"{where}: a token is declared twice")
    for d in decls:
        token = d["token"]
        if not _occurs(d, _sent_strings(checks), sent_numbers):
            raise VaryError(f"{where}: vary token {token!r} is sent by no request of the checks")
        if _occurs(d, [spec], []):
            raise VaryError(f"{where}: vary token {token!r} occurs in the spec, which fixes it")
        if d["kind"] == "word":
            loose = sum(t.count(token) for t in _all_strings(checks))
            bounded = sum(len(_word_re(token).findall(t)) for t in _all_strings(checks))
            if loose != bounded:
                raise VaryError(f"{where}: vary token {token!r} occurs inside another literal")
        else:
            lo, hi = d["range"]
            if (hi - lo) < 10:
                raise VaryError(f"{where}: vary token {token!r}: range {d['range']} is too narrow")
        for other in tokens:
            if d["kind"] == "word" and other != str(token) and str(token) in other:
                raise VaryError(f"{where}: vary token {token!r} is part of token {other!r}")


def _shape(token: str, letters: str) -> str:
    if token.isupper():
        return letters.upper()
    if token[0].isupper():
        return letters.capitalize()
    return letters


def draw(decls: list[dict[str, Any]], checks: list[dict[str, Any]], spec_text: str, rng: random.Random) -> dict[str, Any]:
    """One value per token, none colliding with a literal of the task or with another draw."""
    corpus = (spec_text + "\n" + json.dumps(checks)).lower()
    literals = set(_numbers([st["request"].get("json") for c in checks for st in c["steps"]]))
    literals |= set(_numbers([st["expect"] for c in checks for st in c["steps"]]))
    literals |= {float(m) for m in re.findall(r"\d+(?:\.\d+)?", spec_text)}
    literals |= {float(m) for m in re.findall(r"\d+(?:\.\d+)?", json.dumps(checks))}
    values: dict[str, Any] = {}
    taken: set[Any] = set()
    for d in decls:
        for _ in range(MAX_REDRAWS):
            if d["kind"] == "word":
                n = len(d["token"]) if len(d["token"]) >= MIN_WORD else 6
                value: Any = _shape(d["token"], "".join(rng.choice(string.ascii_lowercase) for _ in range(n)))
                clash = value.lower() in corpus or value.lower() in taken
                key: Any = value.lower()
            elif d["kind"] == "int":
                value = rng.randint(*d["range"])
                clash = value in literals or float(value) in taken
                key = float(value)
            else:
                lo, hi = d["range"]
                value = round(rng.uniform(lo, hi), d["decimals"])
                clash = value in literals or value in taken or float(value).is_integer()
                key = value
            if not clash:
                break
        else:
            raise VaryError(f"no value for vary token {d['token']!r} avoids the task's literals")
        values[str(d["token"])] = value
        taken.add(key)
    return values


def _sub(value: Any, decls: list[dict[str, Any]], values: dict[str, Any]) -> Any:
    if isinstance(value, dict):
        return {_sub(k, decls, values): _sub(v, decls, values) for k, v in value.items()}
    if isinstance(value, list):
        return [_sub(v, decls, values) for v in value]
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        for d in decls:
            if d["kind"] != "word" and value == d["token"]:
                new = values[str(d["token"])]
                return float(new) if isinstance(value, float) else new
        return value
    if isinstance(value, str):
        for d in decls:
            token, new = d["token"], values[str(d["token"])]
            if d["kind"] == "word":
                value = _word_re(token).sub(new, value)
            else:
                value = _num_re(_num_text(token)).sub(_num_text(new), value)
        return value
    return value


def _sub_expect(expect: dict[str, Any], decls: list[dict[str, Any]], values: dict[str, Any]) -> dict[str, Any]:
    """The status and the `at` paths of json_at (keys and indexes of a document) stay as written."""
    out = {}
    for k, v in expect.items():
        if k == "status":
            out[k] = v
        elif k == "json_at":
            out[k] = [{op: (x if op == "at" else _sub(x, decls, values)) for op, x in item.items()} for item in v]
        else:
            out[k] = _sub(v, decls, values)
    return out


def substitute(checks: list[dict[str, Any]], decls: list[dict[str, Any]], values: dict[str, Any]) -> list[dict[str, Any]]:
    """The checks with every declared token replaced by its drawn value (names left as written)."""
    if not decls:
        return checks
    return [
        {
            "name": c["name"],
            "steps": [
                {"request": _sub(st["request"], decls, values), "expect": _sub_expect(st["expect"], decls, values)}
                for st in c["steps"]
            ],
        }
        for c in checks
    ]


def drawn_checks(grading: dict[str, Any], spec_text: str, rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The checks of one grading with this grading's draw (spec_text: what the model read), and the draw."""
    decls = grading.get("vary") or []
    checks = grading["checks"]
    if not decls:
        return checks, {}
    values = draw(decls, checks, spec_text, rng)
    return substitute(checks, decls, values), values


# -- no fixed echo --------------------------------------------------------------------------

_PIECE = re.compile(r"[A-Za-z0-9_]+(?:\.[0-9]+)?")
_SKIPPED_MARKERS = {"$any", "$type", "$regex", "$range", "$absent"}  # constraints, not values given back
_SKIPPED_AT_OPS = {"keys", "len", "exists"}  # names and counts of a document, not values given back


def _pieces(text: str) -> set[str]:
    """A sent string and its word runs: the values an app could give back from it."""
    return {text, *_PIECE.findall(text)} - {""}


def _header_values(name: str, value: str) -> list[str]:
    """The values of a sent header; a Cookie header's values without the cookie names."""
    if name.lower() != "cookie":
        return [value]
    return [part.split("=", 1)[1] for part in value.split(";") if "=" in part]


def _leaves(value: Any) -> list[Any]:
    """The string and number leaves of a JSON-like value, object keys and booleans left out."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _leaves(v)]
    if isinstance(value, list):
        return [x for v in value for x in _leaves(v)]
    if isinstance(value, bool) or value is None:
        return []
    return [value] if isinstance(value, str | int | float) else []


def sent_values(request: dict[str, Any]) -> set[str]:
    """What one request sends as values: path segments, query, header, cookie and form values,
    JSON leaves, file names and contents, raw content (parameter, field and header names left out)."""
    texts = [seg for seg in request["path"].split("/") if seg]
    texts += [v for _, v in request.get("query", [])]
    texts += [v for k, val in request.get("headers", []) for v in _header_values(k, val)]
    texts += [str(x) for x in _leaves(request.get("json"))]
    texts += [str(x) for x in _leaves(request.get("form"))]
    texts += [x for f in request.get("files", []) for x in f[1:3]]
    texts += [request["content"]] if "content" in request else []
    return {p for t in texts for p in _pieces(t)}


def _expected_leaves(value: Any) -> list[Any]:
    """The leaves of an expected value; markers that constrain rather than give a value are skipped."""
    if isinstance(value, dict) and len(value) == 1 and next(iter(value)) in _SKIPPED_MARKERS:
        return []
    return _leaves(value)


def expected_values(expect: dict[str, Any]) -> list[Any]:
    """What one step expects back as values: JSON leaves (not keys), json_at values (not the `at`
    paths, key sets, lengths), header values, texts and SSE fields (status and header names left out)."""
    out = _expected_leaves(expect.get("json")) + _expected_leaves(expect.get("json_has"))
    for item in expect.get("json_at", []):
        out += [x for op, v in item.items() if op != "at" and op not in _SKIPPED_AT_OPS for x in _expected_leaves(v)]
    out += list(expect.get("headers", {}).values())
    out += [x for texts in expect.get("header_contains", {}).values() for x in texts]
    out += [expect[k] for k in ("text", "text_contains") if k in expect]
    out += [x for event in expect.get("sse", []) for x in _expected_leaves(event)]
    return out


def _number(text: str) -> float | None:
    return float(text) if re.fullmatch(r"-?[0-9]+(?:\.[0-9]+)?", text) else None


def _within(piece: str) -> re.Pattern[str]:
    """A sent piece as a whole word, or a whole number (one that ends a sentence included), of a text."""
    if _number(piece) is None:
        return _word_re(piece)
    return re.compile(rf"(?<![0-9.]){re.escape(piece)}(?![0-9]|\.[0-9])")


def _gives_back(expected: Any, piece: str) -> bool:
    """Whether an expected leaf gives back a sent piece: the same number, or the piece within an
    expected string."""
    if isinstance(expected, int | float):
        return _number(piece) == float(expected)
    return isinstance(expected, str) and _within(piece).search(expected) is not None


def echoes(check: dict[str, Any], spec: str) -> list[str]:
    """The values a check sends that its own expectations give back and the spec does not name."""
    sent = {p for st in check["steps"] for p in sent_values(st["request"])}
    wanted = [x for st in check["steps"] for x in expected_values(st["expect"])]
    return sorted(p for p in sent if not _within(p).search(spec) and any(_gives_back(x, p) for x in wanted))


def sends_a_token(check: dict[str, Any], decls: list[dict[str, Any]]) -> bool:
    """Whether a request of this check sends one of the drawn tokens."""
    texts = _sent_strings([check])
    numbers = [n for st in check["steps"] for n in _numbers(st["request"].get("json"))]
    return any(_occurs(d, texts, numbers) for d in decls)


def require_drawn_echoes(checks: list[dict[str, Any]], decls: list[dict[str, Any]], spec: str, where: str) -> None:
    """Refuse a check that gives back a value it sends while none of its requests sends a drawn token.

    Such a check has a fixed answer key: a table of the recorded request and response passes it
    without the behaviour. An echo is a sent value (a path segment, a query, header, cookie or form
    value, a JSON leaf, a file's name or content, raw content; the pieces of each, split at non-word
    characters) that an expected value gives back: the same number, or the same whole word or whole
    number inside an expected string (JSON leaves, json_at values, header values, texts, SSE fields).
    A value the spec names is left out: the spec fixes it, and a token may not occur in the spec.

    What it does not catch, on purpose (it refuses only what is plainly given back): an expected
    value computed from a sent one (x * 42, a slice picked by skip and limit), a stored record
    looked up by a sent key that the answer spells otherwise (a path `foo`, a name `Foo`), an
    answer that depends on a sent value without containing it (a filter that keeps nothing), names
    of parameters, fields, headers and JSON keys, and booleans and nulls.
    """
    for check in checks:
        given_back = echoes(check, spec)
        if given_back and not sends_a_token(check, decls):
            raise VaryError(
                f"{where}: check {check['name']!r} gives back {given_back} that its requests send, and none of its "
                "requests sends a drawn value, so a table of recorded responses passes it: declare a [[vary]] token "
                "for one of these values (or another value the check sends), or name the value in the spec if the "
                "spec fixes it"
            )
