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
