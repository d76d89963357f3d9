"""Composed fastapi tasks: several hand-written tasks served by one app, with rules that hold across all of them.

Pure logic (no container): which references can become a part, how a reference becomes a
router under its own prefix, the composed reference, its checks, its spec and its coverage
mapping, and the wrong answers that stand for each app-wide rule missing or misapplied.
stages/compose.py runs them in the image and generate/compose_store.py stores what passes.

A part is a hand-written fastapi task whose reference only declares routes on a plain
`app = FastAPI()` (no app-level options, handlers, middleware, mounts or lifespan: those are
what the app-wide rules of the composition own). Its routes move onto an `APIRouter` with the
part's prefix; its checks are rewritten for the prefix (request paths, and the OpenAPI
document's path keys) and keep their names behind a `part N:` label, so every check of every
part still runs. Parts whose module-level names collide, whose drawn tokens collide, or whose
check or spec text names something that would have to be renamed are not combined.

The app-wide rules (`RULES`), whose effect on the parts is the point:
  stamp        every response, errors and unknown paths included, carries a header with a
               fixed value (an HTTP middleware): every step of every check expects it.
  invalid_400  a request that fails an endpoint's declared validation gets 400 and a fixed body
               instead of FastAPI's 422 (a RequestValidationError handler): every part's 422
               expectation is rewritten, so only compositions with a 422 step get this rule.
  api_key      every endpoint of one part requires a header with a fixed key (a dependency on
               that part's router); refused requests get 401. The part's checks send the key;
               interaction checks send its first request without it and with a wrong one, and
               another part's first request without any key.
The spec states each rule as behaviour (what a client sends and gets), never the FastAPI
construct that produces it.

Verification (stages/compose.py) asks, by execution: the composed reference 1.0 twice (two
draws), the catch-all and empty controls at most 0.02 and 0, every mutant of the composed
reference (verify/mutants.py's fastapi operators, so every part's mutants lifted and the
rules' own) below 1.0, and every interaction wrong answer below 1.0; spec coverage of the
composed text is checked there before any container.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import hashlib
import json
import random
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.families.fastapi_checks import passes_for_catch_all
from sandbox_env.families.fastapi_vary import VaryError, validate

RULES = ("stamp", "invalid_400", "api_key")
ROUTE_METHODS = ("get", "post", "put", "patch", "delete")
OPENAPI = "/openapi.json"
STAMP_HEADER = "X-Served-By"
KEY_HEADER = "X-Api-Key"
INVALID_BODY = {"error": "invalid request"}
KEY_DETAIL = "missing or wrong API key"
MAX_CHECKS = 20  # the composed tier's cap (a hand-written fastapi task has 2 to 6)
PREFIXES = (
    "atlas", "beacon", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "indigo", "juniper",
    "kestrel", "lagoon", "meadow", "nectar", "onyx", "pioneer", "quarry", "ridge", "summit", "tundra",
)  # fmt: skip
STAMPS = ("front-desk", "relay-7", "gateway-east", "node-b", "edge-2", "hub-north")
KEYS = ("k-7f3a9c", "key-20b1", "alpha-9911", "q4-secret", "tok-5e5e")


@dataclass(frozen=True)
class ComposableTask:
    """A hand-written task that can be served as one router of a composed app."""

    task_id: str
    source: str
    spec: str
    checks: list[dict[str, Any]]
    vary: list[dict[str, Any]]
    coverage: list[dict[str, Any]]
    split: str = "train"
    names: frozenset[str] = field(default_factory=frozenset)


class ComposeError(ValueError):
    """A combination that cannot be composed (the reason says why)."""


# -- parts ----------------------------------------------------------------------------------


def _route_on_app(dec: ast.AST) -> bool:
    return (
        isinstance(dec, ast.Call)
        and isinstance(dec.func, ast.Attribute)
        and dec.func.attr in ROUTE_METHODS
        and isinstance(dec.func.value, ast.Name)
        and dec.func.value.id == "app"
    )


def _is_plain_app(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Assign) and ast.unparse(stmt) == "app = FastAPI()"


def _mentions_app(node: ast.AST) -> bool:
    return any(
        (isinstance(n, ast.Name) and n.id == "app") or (isinstance(n, ast.Attribute) and n.attr == "app") for n in ast.walk(node)
    )


def part_problem(source: str, grading: dict[str, Any]) -> str | None:
    """Why a reference cannot be a part (None when it can)."""
    if grading.get("openapi_url", OPENAPI) != OPENAPI or grading.get("catch_all"):
        return "serves the OpenAPI document elsewhere or answers every path"
    tree = ast.parse(source)
    if not any(_is_plain_app(s) for s in tree.body):
        return "has no plain `app = FastAPI()`"
    for stmt in tree.body:
        if _is_plain_app(stmt):
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.decorator_list:
            if all(_route_on_app(d) for d in stmt.decorator_list) and not any(_mentions_app(s) for s in stmt.body):
                if not any(_mentions_app(a) for a in ast.walk(stmt.args)):
                    continue
        if _mentions_app(stmt):
            return f"uses the app object: {ast.unparse(stmt)[:60]}"
    return None


def pins_parameter_lists(part: ComposableTask) -> bool:
    """True when a check of the part asserts a whole OpenAPI parameter list or a position in one.

    The key rule's header is a parameter of every operation of the keyed part, so such a check
    (`len`, `equals` or a list under `has` at `parameters`, or an index into it) fails on a
    right answer: the part cannot be the keyed one. Checks that select a parameter by its name
    are unaffected.
    """
    for check in part.checks:
        for step in check["steps"]:
            expect = step["expect"]
            if any('"parameters"' in json.dumps(expect.get(k)) for k in ("json", "json_has")):
                return True
            for item in expect.get("json_at", []):
                at = item["at"]
                if "parameters" not in at:
                    continue
                after = at[at.index("parameters") + 1 :]
                whole = not after and ({"len", "equals"} & set(item) or isinstance(item.get("has"), list))
                if whole or (after and isinstance(after[0], int)):
                    return True
    return False


def defined_names(source: str) -> frozenset[str]:
    """Module-level names a reference defines (functions, classes, variables), `app` aside."""
    out: set[str] = set()
    for stmt in ast.parse(source).body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(stmt.name)
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
        elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
            out.update((a.asname or a.name).split(".")[0] for a in stmt.names)
    out.discard("app")
    return frozenset(out)


def _imports(source: str) -> dict[str, str]:
    """{bound name: the import statement that binds it}."""
    out: dict[str, str] = {}
    for stmt in ast.parse(source).body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            for alias in stmt.names:
                one = copy.deepcopy(stmt)
                one.names = [alias]
                out[(alias.asname or alias.name).split(".")[0]] = ast.unparse(one)
    return out


def merged_imports(lines: list[str]) -> list[str]:
    """Import statements deduplicated, `from M import a` lines of one module merged, sorted."""
    plain: set[str] = set()
    names: dict[str, set[str]] = {}
    for line in lines:
        for stmt in ast.parse(line).body:
            if isinstance(stmt, ast.ImportFrom) and stmt.level == 0 and all(a.asname is None for a in stmt.names):
                names.setdefault(stmt.module, set()).update(a.name for a in stmt.names)
            else:
                plain.add(ast.unparse(stmt))
    merged = {f"from {m} import {', '.join(sorted(ns))}" for m, ns in names.items()}
    return sorted(plain | merged)


# -- the composed reference -------------------------------------------------------------------


def router_body(source: str, var: str, prefix: str, key_dependency: bool) -> list[str]:
    """The part's statements with its routes on `var`, an APIRouter under `prefix` (imports left out)."""
    tree = ast.parse(source)
    out: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            continue
        if _is_plain_app(stmt):
            deps = ", dependencies=[Depends(require_api_key)]" if key_dependency else ""
            out.append(f"{var} = APIRouter(prefix={prefix!r}{deps})")
            continue
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for dec in stmt.decorator_list:
                if _route_on_app(dec):
                    dec.func.value = ast.Name(var, ast.Load())
        out.append(ast.unparse(stmt))
    return out


RULE_IMPORTS = {
    "stamp": ["from fastapi import Request"],
    "invalid_400": [
        "from fastapi import Request",
        "from fastapi.exceptions import RequestValidationError",
        "from fastapi.responses import JSONResponse",
    ],
    "api_key": ["from typing import Annotated", "from fastapi import Depends, Header, HTTPException"],
}


def rule_source(rules: tuple[str, ...], stamp: str, key: str, skip: str = "") -> tuple[list[str], list[str]]:
    """(definitions before the routers, statements after `app = FastAPI()`) for the rules; `skip` leaves one out."""
    before: list[str] = []
    after: list[str] = []
    if "api_key" in rules and skip != "api_key":
        before.append(
            "def require_api_key(x_api_key: Annotated[str | None, Header()] = None):\n"
            f"    if x_api_key != {key!r}:\n"
            f"        raise HTTPException(status_code=401, detail={KEY_DETAIL!r})"
        )
    if "api_key" in rules and skip == "api_key":
        before.append("def require_api_key():\n    return None")
    if "stamp" in rules and skip != "stamp":
        after.append(
            '@app.middleware("http")\n'
            "async def stamp_every_response(request: Request, call_next):\n"
            "    response = await call_next(request)\n"
            f"    response.headers[{STAMP_HEADER!r}] = {stamp!r}\n"
            "    return response"
        )
    if "invalid_400" in rules and skip != "invalid_400":
        after.append(
            "@app.exception_handler(RequestValidationError)\n"
            "async def invalid_request(request: Request, exc: RequestValidationError):\n"
            f"    return JSONResponse(status_code=400, content={INVALID_BODY!r})"
        )
    return before, after


def composed_source(
    parts: list[ComposableTask], prefixes: list[str], rules: tuple[str, ...], stamp: str, key: str, keyed: int, skip: str = ""
) -> str:
    """The composed reference: the parts' imports, the rules, each part as a router, one app including them."""
    imports: dict[str, str] = {}
    for p in parts:
        imports.update(_imports(p.source))
    lines = [*imports.values(), "from fastapi import APIRouter, FastAPI", *(x for r in rules for x in RULE_IMPORTS[r])]
    head = merged_imports(lines)
    before, after = rule_source(rules, stamp, key, skip)
    blocks = ["\n".join(head), *before]
    for i, (p, prefix) in enumerate(zip(parts, prefixes, strict=True)):
        blocks += router_body(p.source, f"part_{i + 1}", prefix, "api_key" in rules and i == keyed)
    blocks.append("app = FastAPI()")
    blocks += after
    blocks += [f"app.include_router(part_{i + 1})" for i in range(len(parts))]
    source = "\n\n\n".join(blocks) + "\n"
    return ast.unparse(ast.parse(source)) + "\n"


# -- checks ---------------------------------------------------------------------------------


def _prefixed_request(req: dict[str, Any], prefix: str, key: str | None) -> dict[str, Any]:
    req = copy.deepcopy(req)
    if req["path"] != OPENAPI:
        req["path"] = prefix + req["path"]
        if key is not None:
            req["headers"] = [*req.get("headers", []), [KEY_HEADER.lower(), key]]
    return req


def _prefixed_expect(expect: dict[str, Any], path: str, prefix: str, rules: tuple[str, ...], stamp: str) -> dict[str, Any]:
    expect = copy.deepcopy(expect)
    if path == OPENAPI:
        for item in expect.get("json_at", []):
            at = item["at"]
            if len(at) > 1 and at[0] == "paths" and isinstance(at[1], str):
                at[1] = prefix + at[1]
    elif "invalid_400" in rules and expect.get("status") == 422:
        keep = {k: v for k, v in expect.items() if k in ("headers", "headers_present", "headers_absent")}
        expect = {**keep, "status": 400, "json": dict(INVALID_BODY)}
    if "stamp" in rules:
        expect["headers"] = {**expect.get("headers", {}), STAMP_HEADER.lower(): stamp}
    return expect


def part_checks(
    part: ComposableTask, n: int, prefix: str, rules: tuple[str, ...], stamp: str, key: str | None
) -> list[dict[str, Any]]:
    """A part's checks, rewritten for its prefix and the rules, named `part N: ...`."""
    out = []
    for c in part.checks:
        steps = [
            {
                "request": _prefixed_request(s["request"], prefix, key),
                "expect": _prefixed_expect(s["expect"], s["request"]["path"], prefix, rules, stamp),
            }
            for s in c["steps"]
        ]
        out.append({"name": f"part {n}: {c['name']}", "steps": steps})
    return out


def _first_plain_step(part: ComposableTask) -> dict[str, Any] | None:
    """The first step of a part's first check that does not read the OpenAPI document (sent to a fresh app)."""
    for c in part.checks:
        if c["steps"][0]["request"]["path"] != OPENAPI:
            return c["steps"][0]
    return None


def interaction_checks(
    parts: list[ComposableTask], prefixes: list[str], rules: tuple[str, ...], stamp: str, key: str, keyed: int, rng: random.Random
) -> list[dict[str, Any]]:
    """Checks of the rules themselves, across parts."""
    out: list[dict[str, Any]] = []
    stamped = {STAMP_HEADER.lower(): stamp} if "stamp" in rules else {}
    if "stamp" in rules:
        path = f"/{rng.choice(PREFIXES)}-{rng.randrange(100, 999)}/nowhere"
        out.append(
            {
                "name": "rule: an unknown path answers 404 and still carries the service header",
                "steps": [{"request": _bare_request(path), "expect": {"status": 404, "headers": dict(stamped)}}],
            }
        )
    if "api_key" in rules:
        first = _first_plain_step(parts[keyed])
        if first is None:
            raise ComposeError(f"part {keyed + 1} has no request outside the OpenAPI document")
        refused = {"status": 401, "json": {"detail": KEY_DETAIL}, **({"headers": dict(stamped)} if stamped else {})}
        bare = _prefixed_request(first["request"], prefixes[keyed], None)
        wrong = _prefixed_request(first["request"], prefixes[keyed], key + "-old")
        out.append(
            {"name": f"rule: part {keyed + 1} refuses a request without the key", "steps": [{"request": bare, "expect": refused}]}
        )
        out.append(
            {
                "name": f"rule: part {keyed + 1} refuses a wrong key",
                "steps": [{"request": wrong, "expect": copy.deepcopy(refused)}],
            }
        )
        other = next((i for i in range(len(parts)) if i != keyed and _first_plain_step(parts[i]) is not None), None)
        if other is None:
            raise ComposeError("no other part has a request to send without a key")
        step = _first_plain_step(parts[other])
        out.append(
            {
                "name": f"rule: part {other + 1} needs no key",
                "steps": [
                    {
                        "request": _prefixed_request(step["request"], prefixes[other], None),
                        "expect": _prefixed_expect(step["expect"], step["request"]["path"], prefixes[other], rules, stamp),
                    }
                ],
            }
        )
    return out


def _bare_request(path: str) -> dict[str, Any]:
    return {"method": "GET", "path": path}


# -- the spec ---------------------------------------------------------------------------------


def _rule_sentences(rules: tuple[str, ...], stamp: str, key: str, keyed: int) -> list[tuple[str, str]]:
    """(rule, bullet text) per rule, stated as behaviour."""
    out = []
    if "stamp" in rules:
        out.append(
            (
                "stamp",
                f"Every response of the service, errors and requests to unknown paths included, carries the "
                f"header `{STAMP_HEADER}: {stamp}`.",
            )
        )
    if "invalid_400" in rules:
        out.append(
            (
                "invalid_400",
                "Whenever a request does not satisfy what an endpoint declares for its path, query, header, "
                "cookie, form or body values (the cases a part below answers with 422), the service answers 400 "
                f"with exactly `{json.dumps(INVALID_BODY)}` instead, in every part. Errors an endpoint raises "
                "itself keep their own status and body.",
            )
        )
    if "api_key" in rules:
        out.append(
            (
                "api_key",
                f"Every endpoint of part {keyed + 1} requires the request header `{KEY_HEADER}: {key}`; a request "
                f"to it without that header, or with another value, gets 401 with "
                f'`{{"detail": "{KEY_DETAIL}"}}`. The endpoints of the other parts need no key.',
            )
        )
    return out


def composed_spec(
    parts: list[ComposableTask], prefixes: list[str], rules: tuple[str, ...], stamp: str, key: str, keyed: int
) -> str:
    n = len(parts)
    lines = [
        f"One application serves {n} independent parts, each under its own path prefix and with its own data, "
        "and rules that hold across all of them.",
        "",
        "Rules for the whole service:",
        "",
    ]
    lines += [f"- {text}" for _, text in _rule_sentences(rules, stamp, key, keyed)]
    for i, (p, prefix) in enumerate(zip(parts, prefixes, strict=True)):
        lines += [
            "",
            f"Part {i + 1}:",
            "",
            f"Every path of part {i + 1}, and its key in the OpenAPI document, starts with `{prefix}`: a path "
            f"`/x` written below means `{prefix}/x` (the OpenAPI document itself stays at `/openapi.json`, one for "
            "the whole service).",
            "",
            p.spec.strip(),
        ]
    return "\n".join(lines) + "\n"


def composed_coverage(
    parts: list[ComposableTask], prefixes: list[str], rules: tuple[str, ...], stamp: str, key: str, keyed: int, checks: list[dict]
) -> list[dict[str, Any]]:
    """The spec coverage entries: the parts' own (check names relabelled), the rules', the frame's."""
    names = [c["name"] for c in checks]
    per_part = {i: [n for n in names if n.startswith(f"part {i + 1}: ")] for i in range(len(parts))}
    rule_checks = [n for n in names if n.startswith("rule: ")]
    entries = [{"says": "One application serves", "checks": names[:1]}]
    for rule, text in _rule_sentences(rules, stamp, key, keyed):
        if rule == "stamp":
            hit = [n for n in rule_checks if "service header" in n] or names
        elif rule == "invalid_400":
            hit = [c["name"] for c in checks if any(s["expect"].get("json") == INVALID_BODY for s in c["steps"])]
        else:
            hit = [n for n in rule_checks if "key" in n]
        entries.append({"says": text[:60], "checks": hit})
    for i, p in enumerate(parts):
        entries.append({"says": f"Every path of part {i + 1}, and its key", "checks": per_part[i]})
        for e in p.coverage:
            entries.append({"says": e["says"], "checks": [f"part {i + 1}: {n}" for n in e["checks"]]})
    return entries


# -- one composition ----------------------------------------------------------------------------


def _draw_rules(parts: list[ComposableTask], rng: random.Random) -> tuple[str, ...]:
    """One to three rules; the 400 rule only where some part has a 422 to rewrite."""
    has_422 = any(s["expect"].get("status") == 422 for p in parts for c in p.checks for s in c["steps"])
    options = [r for r in RULES if r != "invalid_400" or has_422]
    chosen = set(rng.sample(options, rng.choice((1, 2, 2, 3)) if len(options) == 3 else rng.choice((1, 2))))
    return tuple(r for r in RULES if r in chosen)


class _Rename(ast.NodeTransformer):
    def __init__(self, names: dict[str, str]) -> None:
        self.names = names

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.names.get(node.id, node.id)
        return node

    def _named(self, node: ast.AST) -> ast.AST:
        node.name = self.names.get(node.name, node.name)
        return self.generic_visit(node)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_ClassDef = _named


def _renamable(part: ComposableTask, name: str) -> bool:
    """A module-level name can take a suffix when nothing but its own references spells it."""
    if name in json.dumps(part.checks) or name in part.spec:
        return False
    for node in ast.walk(ast.parse(part.source)):
        if isinstance(node, ast.arg) and node.arg == name:
            return False
        if isinstance(node, ast.keyword) and node.arg == name:
            return False
        if isinstance(node, ast.Attribute) and node.attr == name:
            return False
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and name in node.value:
            return False
    return True


RESERVED = frozenset({"require_api_key", "stamp_every_response", "invalid_request", "stamp_this_part"})


def without_collisions(parts: list[ComposableTask]) -> list[ComposableTask]:
    """The parts, each later part's colliding module-level names suffixed `_pN`; ComposeError when one cannot be."""
    imports: dict[str, str] = {}
    for p in parts:
        for name, stmt in _imports(p.source).items():
            if imports.setdefault(name, stmt) != stmt:
                raise ComposeError(f"{name!r} is imported two ways")
    seen: set[str] = set(imports) | RESERVED
    out = []
    for n, p in enumerate(parts, 1):
        own = p.names - set(_imports(p.source))
        clash = {x for x in own if x in seen or x.startswith("part_")}
        for x in clash:
            if not _renamable(p, x):
                raise ComposeError(f"{p.task_id}: {x!r} is taken and cannot be renamed")
        names = {x: f"{x}_p{n}" for x in clash}
        if names:
            tree = _Rename(names).visit(ast.parse(p.source))
            p = dataclasses.replace(p, source=ast.unparse(tree), names=frozenset(names.get(x, x) for x in p.names))
        seen |= {names.get(x, x) for x in own}
        out.append(p)
    return out


def compose(parts: list[ComposableTask], rng: random.Random) -> dict[str, Any]:
    """One composed task record (not yet verified) from parts, or ComposeError."""
    parts = without_collisions(parts)
    prefixes = ["/" + p for p in rng.sample(PREFIXES, len(parts))]
    rules = _draw_rules(parts, rng)
    stamp, key = rng.choice(STAMPS), rng.choice(KEYS)
    keyed = rng.randrange(len(parts)) if "api_key" in rules else -1
    if keyed >= 0 and pins_parameter_lists(parts[keyed]):
        raise ComposeError(f"part {keyed + 1}'s checks pin an OpenAPI parameter list the key header would join")
    checks: list[dict[str, Any]] = []
    for i, (p, prefix) in enumerate(zip(parts, prefixes, strict=True)):
        checks += part_checks(p, i + 1, prefix, rules, stamp, key if i == keyed else None)
    checks += interaction_checks(parts, prefixes, rules, stamp, key, keyed, rng)
    if len(checks) > MAX_CHECKS:
        raise ComposeError(f"{len(checks)} checks, more than {MAX_CHECKS}")
    weak = [c["name"] for c in checks if passes_for_catch_all(c)]
    if weak:
        raise ComposeError(f"an app answering 200 {{}} everywhere would pass {weak}")
    spec = composed_spec(parts, prefixes, rules, stamp, key, keyed)
    vary = drawable(parts, checks, spec)
    coverage = composed_coverage(parts, prefixes, rules, stamp, key, keyed, checks)
    source = composed_source(parts, prefixes, rules, stamp, key, keyed)
    ids = [p.task_id for p in parts]
    signature = "composed:" + "+".join(sorted(ids)) + ":" + "+".join(rules)
    return {
        "task_id": "fastapi_composed_" + hashlib.sha256(signature.encode()).hexdigest()[:12],
        "family": "fastapi",
        "parts": ids,
        "prefixes": prefixes,
        "rules": list(rules),
        "stamp": stamp,
        "key": key,
        "keyed": keyed,
        "title": f"One service, {len(parts)} parts: " + ", ".join(rules_title(r) for r in rules),
        "spec": spec,
        "reference": source,
        "checks": checks,
        "vary": vary,
        "coverage": coverage,
        "signature": signature,
        "split": "eval" if any(p.split == "eval" for p in parts) else "train",
        "difficulty": "hard",
        "measures": {
            "components": len(parts),
            "app_wide": len(rules),
            "interaction_checks": sum(c["name"].startswith("rule: ") for c in checks)
            + sum(any(s["expect"].get("json") == INVALID_BODY for s in c["steps"]) for c in checks),
            "checks": len(checks),
        },
    }


def drawable(parts: list[ComposableTask], checks: list[dict[str, Any]], spec: str) -> list[dict[str, Any]]:
    """The parts' drawn tokens that stay sound in the composition (fastapi_vary.validate over all of it).

    A token another part's spec or checks also use would be fixed by that text, or would draw
    inside another literal: it is sent as written instead (the part's other tokens still draw).
    Two parts declaring the same token share one declaration.
    """
    keep: list[dict[str, Any]] = []
    for d in (d for p in parts for d in p.vary):
        if any(str(k["token"]) == str(d["token"]) for k in keep):
            continue
        try:
            validate([*keep, d], checks, spec, "composed")
        except VaryError:
            continue
        keep.append(d)
    return keep


def rules_title(rule: str) -> str:
    return {"stamp": "a header on every answer", "invalid_400": "400 for invalid requests", "api_key": "a keyed part"}[rule]


def record_text(record: dict[str, Any], parts: list[ComposableTask]) -> tuple[str, list[dict[str, Any]]]:
    """A stored record's spec and coverage entries rendered again from its parts (after a wording change)."""
    args = (record["prefixes"], tuple(record["rules"]), record["stamp"], record["key"], record["keyed"])
    spec = composed_spec(parts, *args)
    return spec, composed_coverage(parts, *args, record["checks"])


def record_source(record: dict[str, Any], parts: list[ComposableTask], part: int = -1, source: str = "") -> str:
    """A stored record's composed reference made again from its parts; with `part`, that part's source replaced."""
    if part >= 0:
        parts = [*parts[:part], dataclasses.replace(parts[part], source=source), *parts[part + 1 :]]
    args = (record["prefixes"], tuple(record["rules"]), record["stamp"], record["key"], record["keyed"])
    return composed_source(without_collisions(parts), *args)


def wrong_answers(record: dict[str, Any], parts: list[ComposableTask]) -> dict[str, str]:
    """Interaction wrong answers: each rule left out, and each rule misapplied, by name."""
    parts = without_collisions(parts)
    rules, stamp, key, keyed = tuple(record["rules"]), record["stamp"], record["key"], record["keyed"]
    prefixes = record["prefixes"]
    out = {f"without_{r}": composed_source(parts, prefixes, rules, stamp, key, keyed, skip=r) for r in rules}
    if "api_key" in rules:
        every = composed_source(parts, prefixes, rules, stamp, key, keyed)
        for i in range(len(parts)):
            if i != keyed:
                every = every.replace(
                    f"APIRouter(prefix={prefixes[i]!r})",
                    f"APIRouter(prefix={prefixes[i]!r}, dependencies=[Depends(require_api_key)])",
                )
        out["api_key_on_every_part"] = every
    if "stamp" in rules:
        one = composed_source(parts, prefixes, tuple(r for r in rules if r != "stamp"), stamp, key, keyed)
        stamp_dep = f"def stamp_this_part(response: Response):\n    response.headers[{STAMP_HEADER!r}] = {stamp!r}\n"
        one = "from fastapi import Depends, Response\n" + one.replace("\napp = FastAPI()", f"\n{stamp_dep}\n\napp = FastAPI()", 1)
        one = one.replace("app.include_router(part_1)", "app.include_router(part_1, dependencies=[Depends(stamp_this_part)])")
        out["stamp_on_one_part"] = one
    if "invalid_400" in rules:
        out["invalid_keeps_422"] = composed_source(parts, prefixes, rules, stamp, key, keyed).replace(
            "JSONResponse(status_code=400,", "JSONResponse(status_code=422,"
        )
    return out


def draw_combinations(parts: list[ComposableTask], seed: int, n_parts: tuple[int, ...] = (3, 3, 4)) -> Any:
    """An endless stream of (parts, rng) drawn from seed: each combination of task ids at most once."""
    rng = random.Random(seed)
    seen: set[tuple[str, ...]] = set()
    misses = 0
    while misses < 2000:
        k = rng.choice(n_parts)
        chosen = rng.sample(parts, k)
        ids = tuple(sorted(p.task_id for p in chosen))
        if ids in seen:
            misses += 1
            continue
        seen.add(ids)
        yield chosen, random.Random(f"{seed}:{'+'.join(ids)}")
