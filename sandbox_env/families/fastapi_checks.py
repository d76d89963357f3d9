"""The fastapi family's check language: normalising checks, evaluating expectations, canaries.

Pure host-side logic (no Docker): expectations are evaluated here and never leave the host.

A check is {"name", "steps": [{"request": {...}, "expect": {...}}]}; it passes only when
every expectation of every step holds. In task.toml a check is written either with a
`steps` list or, for one request, with the request keys and `expect` at the check's level.

Request keys: method (default GET), path, query (table; a list value repeats the
parameter), headers (table), cookies (table, sent as one Cookie header), json, form
(table; a list value repeats the field), files (list of {field, filename, content,
content_type}), content (raw text body).

Expectation keys:
  status            the status code
  json              the body, parsed as JSON, equals this
  json_has          the body contains this (objects: these keys, recursively; lists: same length)
  json_at           list of {at = [keys...], <op> = value}: a value at a path of the JSON body, e.g.
                    ["paths", "/items/", "get", "parameters", {name = "q"}, "schema", "type"].
                    A table in `at` selects the first list element that contains it; a "$ref"
                    met on the way is followed. Ops: equals, has, contains (list element or
                    substring), keys (exact set of object keys), exists (true/false), len.
  headers           {name = value}: a header has exactly this value (names are case-insensitive)
  header_contains   {name = text or [texts]}: one value of the header contains every text
  headers_present / headers_absent   lists of header names
  empty             true: the body is empty
  text / text_contains   the body as text equals / contains this
  sse               list of events parsed from a text/event-stream body, in order, count exact;
                    each is compared by the keys it gives: data (raw text), data_json (data
                    parsed as JSON), event, id, retry
Expected values may use markers: {"$any": true}, {"$type": "string"|"integer"|"number"|
"boolean"|"null"|"array"|"object"}, {"$regex": "..."}, {"$unordered": [...]} (a list in any
order), {"$absent": true} (as an object value: the key must not be there), {"$range": [lo, hi]}.
TOML has no null: the string "$null" stands for JSON null in requests and expectations.

Every response body comes from the app, so everything that reads one is total: a body is
JSON only when it parses within MAX_JSON_DEPTH levels (`parse_json`; Python's parser raises
RecursionError, not ValueError, on deeper nesting, and what comes back is walked
recursively), and an SSE `retry` is a number only when it is ASCII digits that fit an int.
An exception here would reach grade_final as a harness fault: a wrong app could turn its
own zero into a rescheduled rollout.
"""

from __future__ import annotations

import base64
import json
import random
import re
from typing import Any

MISSING = object()
NULL = "$null"
MAX_JSON_DEPTH = 200  # levels of a response body read as JSON; honest answers nest a handful
REQUEST_KEYS = {"method", "path", "query", "headers", "cookies", "json", "form", "files", "content"}
EXPECT_KEYS = {
    "status",
    "json",
    "json_has",
    "json_at",
    "headers",
    "header_contains",
    "headers_present",
    "headers_absent",
    "empty",
    "text",
    "text_contains",
    "sse",
}
AT_OPS = {"equals", "has", "contains", "keys", "exists", "len"}
METHODS = {"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"}
_TYPES = {
    "string": lambda v: isinstance(v, str),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "array": lambda v: isinstance(v, list),
    "object": lambda v: isinstance(v, dict),
}


class CheckError(ValueError):
    """A check in a task source is malformed."""


# -- normalising task sources ---------------------------------------------------------------


def denull(value: Any) -> Any:
    """Replace the "$null" stand-in with None, recursively."""
    if value == NULL:
        return None
    if isinstance(value, dict):
        return {k: denull(v) for k, v in value.items()}
    if isinstance(value, list):
        return [denull(v) for v in value]
    return value


def _scalar_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _pairs(table: dict[str, Any]) -> list[list[str]]:
    out: list[list[str]] = []
    for key, value in table.items():
        for item in value if isinstance(value, list) else [value]:
            out.append([key, _scalar_text(item)])
    return out


def normalize_request(raw: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = set(raw) - REQUEST_KEYS
    if unknown:
        raise CheckError(f"{where}: unknown request key(s) {sorted(unknown)}")
    if "path" not in raw or not str(raw["path"]).startswith("/"):
        raise CheckError(f"{where}: a request needs a path starting with /")
    method = str(raw.get("method", "GET")).upper()
    if method not in METHODS:
        raise CheckError(f"{where}: unknown method {method!r}")
    req: dict[str, Any] = {"method": method, "path": raw["path"]}
    if raw.get("query"):
        req["query"] = _pairs(raw["query"])
    headers = _pairs(raw.get("headers") or {})
    if raw.get("cookies"):
        headers.append(["cookie", "; ".join(f"{k}={_scalar_text(v)}" for k, v in raw["cookies"].items())])
    if headers:
        req["headers"] = headers
    if "json" in raw:
        req["json"] = denull(raw["json"])
    if "form" in raw:
        req["form"] = {
            k: ([_scalar_text(x) for x in v] if isinstance(v, list) else _scalar_text(v)) for k, v in raw["form"].items()
        }
    if "files" in raw:
        req["files"] = [
            [f["field"], f.get("filename", "upload.txt"), f.get("content", ""), f.get("content_type", "text/plain")]
            for f in raw["files"]
        ]
    if "content" in raw:
        req["content"] = str(raw["content"])
    if sum(k in req for k in ("json", "content")) + (("form" in req or "files" in req) and 1) > 1:
        raise CheckError(f"{where}: give one body: json, content, or form/files")
    return req


def normalize_expect(raw: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = set(raw) - EXPECT_KEYS
    if unknown:
        raise CheckError(f"{where}: unknown expectation(s) {sorted(unknown)}")
    if not raw:
        raise CheckError(f"{where}: a step needs at least one expectation")
    exp = denull(raw)
    for item in exp.get("json_at", []):
        ops = set(item) - {"at"}
        if "at" not in item or len(ops) != 1 or not ops <= AT_OPS:
            raise CheckError(f"{where}: json_at items need `at` and exactly one of {sorted(AT_OPS)}, got {item}")
    if "headers" in exp:
        exp["headers"] = {k.lower(): str(v) for k, v in exp["headers"].items()}
    if "header_contains" in exp:
        exp["header_contains"] = {
            k.lower(): [str(x) for x in (v if isinstance(v, list) else [v])] for k, v in exp["header_contains"].items()
        }
    for key in ("headers_present", "headers_absent"):
        if key in exp:
            exp[key] = [k.lower() for k in exp[key]]
    return exp


def normalize_check(raw: dict[str, Any], where: str) -> dict[str, Any]:
    name = raw.get("name")
    if not name:
        raise CheckError(f"{where}: a check needs a name")
    where = f"{where} ({name})"
    if "steps" in raw:
        extra = set(raw) - {"name", "steps"}
        if extra:
            raise CheckError(f"{where}: with `steps`, put {sorted(extra)} inside the steps")
        raw_steps = raw["steps"]
    else:
        raw_steps = [{k: v for k, v in raw.items() if k != "name"}]
    steps = []
    for i, step in enumerate(raw_steps, 1):
        if "expect" not in step:
            raise CheckError(f"{where}: step {i} has no expect table")
        req = normalize_request({k: v for k, v in step.items() if k != "expect"}, f"{where} step {i}")
        steps.append({"request": req, "expect": normalize_expect(step["expect"], f"{where} step {i}")})
    if not steps:
        raise CheckError(f"{where}: no steps")
    return {"name": name, "steps": steps}


# -- comparing values -------------------------------------------------------------------------


def _short(value: Any, limit: int = 160) -> str:
    try:
        text = "<missing>" if value is MISSING else json.dumps(value, sort_keys=True, default=repr)
    except (ValueError, TypeError, RecursionError):  # e.g. keys of mixed types from a $ref walk
        text = repr(value)[: limit * 2]
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _depth_within(doc: Any, limit: int) -> bool:
    """Whether a parsed JSON value nests at most `limit` levels (walked without recursion)."""
    stack = [(doc, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return False
        if isinstance(node, dict):
            stack.extend((v, depth + 1) for v in node.values())
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node)
    return True


def parse_json(text: str) -> tuple[Any, str]:
    """A body parsed as JSON and "", or MISSING and why it is not JSON the host will read."""
    try:
        doc = json.loads(text)
    except RecursionError:
        return MISSING, "nested deeper than the parser allows"
    except ValueError as exc:
        return MISSING, str(exc)[:160]
    if not _depth_within(doc, MAX_JSON_DEPTH):
        return MISSING, f"nested deeper than {MAX_JSON_DEPTH} levels"
    return doc, ""


def last_line(text: str, limit: int = 400) -> str:
    """The last non-blank line of an error text (the text itself when it has none)."""
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return (lines[-1] if lines else text.strip() or "unknown error")[:limit]


MARKERS = {"$any", "$type", "$regex", "$range", "$unordered", "$absent"}


def _is_marker(value: Any) -> bool:
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in MARKERS


def diff(expected: Any, actual: Any, path: str = "$", subset: bool = False) -> str | None:
    """None when `actual` matches `expected`, else where and how they first differ."""
    if _is_marker(expected):
        return _marker_diff(expected, actual, path, subset)
    if actual is MISSING:
        return f"{path}: missing (expected {_short(expected)})"
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return f"{path}: expected an object, got {_short(actual)}"
        for key, exp in expected.items():
            sub = f"{path}.{key}"
            if _is_marker(exp) and "$absent" in exp:
                if key in actual:
                    return f"{sub}: must be absent, got {_short(actual[key])}"
                continue
            problem = diff(exp, actual.get(key, MISSING), sub, subset)
            if problem:
                return problem
        if not subset:
            extra = sorted(set(actual) - set(expected))
            if extra:
                return f"{path}: unexpected key(s) {', '.join(map(repr, extra))}"
        return None
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"{path}: expected a list, got {_short(actual)}"
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} item(s), got {len(actual)}: {_short(actual)}"
        for i, (exp, act) in enumerate(zip(expected, actual, strict=True)):
            problem = diff(exp, act, f"{path}[{i}]", subset)
            if problem:
                return problem
        return None
    if _same_scalar(expected, actual):
        return None
    return f"{path}: expected {_short(expected)}, got {_short(actual)}"


def _same_scalar(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return isinstance(expected, bool) and isinstance(actual, bool) and expected == actual
    if isinstance(expected, int | float) and isinstance(actual, int | float):
        return expected == actual
    return type(expected) is type(actual) and expected == actual


def _marker_diff(marker: dict[str, Any], actual: Any, path: str, subset: bool) -> str | None:
    ((kind, arg),) = marker.items()
    if kind == "$absent":
        return None if actual is MISSING else f"{path}: must be absent, got {_short(actual)}"
    if actual is MISSING:
        return f"{path}: missing"
    if kind == "$any":
        return None
    if kind == "$type":
        return None if _TYPES[arg](actual) else f"{path}: expected a {arg}, got {_short(actual)}"
    if kind == "$regex":
        ok = isinstance(actual, str) and re.fullmatch(arg, actual) is not None
        return None if ok else f"{path}: expected text matching /{arg}/, got {_short(actual)}"
    if kind == "$range":
        ok = isinstance(actual, int | float) and not isinstance(actual, bool) and arg[0] <= actual <= arg[1]
        return None if ok else f"{path}: expected a number in [{arg[0]}, {arg[1]}], got {_short(actual)}"
    if kind == "$unordered":
        if not isinstance(actual, list) or len(actual) != len(arg):
            return f"{path}: expected {len(arg)} item(s) in any order, got {_short(actual)}"
        left = list(actual)
        for exp in arg:
            hit = next((i for i, act in enumerate(left) if diff(exp, act, path, subset) is None), None)
            if hit is None:
                return f"{path}: no item matches {_short(exp)} (got {_short(actual)})"
            left.pop(hit)
        return None
    raise CheckError(f"unknown marker {kind!r}")  # pragma: no cover - MARKERS guards this


def navigate(doc: Any, at: list[Any]) -> tuple[Any, str]:
    """The value at a path (MISSING if absent) and the path walked, following $ref."""
    node, walked = doc, "$"
    for step in at:
        if isinstance(node, dict) and "$ref" in node and not (isinstance(step, str) and step in node):
            node = _resolve_ref(doc, node["$ref"])
        if isinstance(step, dict):
            if not isinstance(node, list):
                return MISSING, walked
            node = next((item for item in node if diff(step, item, subset=True) is None), MISSING)
            walked += f"[{_short(step, 60)}]"
        elif isinstance(step, int) and not isinstance(step, bool):
            node = node[step] if isinstance(node, list) and -len(node) <= step < len(node) else MISSING
            walked += f"[{step}]"
        else:
            node = node.get(step, MISSING) if isinstance(node, dict) else MISSING
            walked += f"[{step!r}]" if "/" in str(step) or "." in str(step) else f".{step}"
        if node is MISSING:
            return MISSING, walked
    if isinstance(node, dict) and "$ref" in node and len(node) == 1:
        node = _resolve_ref(doc, node["$ref"])
    return node, walked


def _resolve_ref(doc: Any, ref: Any) -> Any:
    if not isinstance(ref, str) or not ref.startswith("#/"):
        return MISSING
    node = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        node = node.get(part, MISSING) if isinstance(node, dict) else MISSING
        if node is MISSING:
            return MISSING
    return node


def at_diff(doc: Any, item: dict[str, Any]) -> str | None:
    value, walked = navigate(doc, item["at"])
    ((op, arg),) = ((k, v) for k, v in item.items() if k != "at")
    if op == "exists":
        present = value is not MISSING
        return None if present == bool(arg) else f"{walked}: {'missing' if arg else 'must be absent, got ' + _short(value)}"
    if value is MISSING:
        return f"{walked}: missing"
    if op == "equals":
        return diff(arg, value, walked)
    if op == "has":
        return diff(arg, value, walked, subset=True)
    if op == "keys":
        if not isinstance(value, dict):
            return f"{walked}: expected an object, got {_short(value)}"
        got = sorted(value)
        return None if got == sorted(arg) else f"{walked}: expected keys {sorted(arg)}, got {got}"
    if op == "len":
        if not isinstance(value, list | dict | str):
            return f"{walked}: has no length ({_short(value)})"
        return None if len(value) == arg else f"{walked}: expected length {arg}, got {len(value)}"
    if op == "contains":
        if isinstance(value, str):
            return None if isinstance(arg, str) and arg in value else f"{walked}: {_short(value)} does not contain {arg!r}"
        if isinstance(value, list):
            if any(diff(arg, item, subset=True) is None for item in value):
                return None
            return f"{walked}: no item matches {_short(arg)} (got {_short(value)})"
        return f"{walked}: expected a list or text, got {_short(value)}"
    raise CheckError(f"unknown json_at op {op!r}")


# -- responses -------------------------------------------------------------------------------


def body_text(resp: dict[str, Any]) -> str:
    if "text" in resp:
        return resp["text"]
    return base64.b64decode(resp.get("b64", "")).decode("utf-8", "replace")


def body_bytes_len(resp: dict[str, Any]) -> int:
    if "text" in resp:
        return len(resp["text"].encode())
    return len(base64.b64decode(resp.get("b64", "")))


def header_values(resp: dict[str, Any], name: str) -> list[str]:
    return [v for k, v in resp.get("headers", []) if k.lower() == name]


def parse_sse(text: str) -> list[dict[str, Any]]:
    """Events of a text/event-stream body, as the HTML spec's parser sees them (comments skipped)."""
    events: list[dict[str, Any]] = []
    data: list[str] = []
    event: dict[str, Any] = {}
    for line in re.split(r"\r\n|\r|\n", text):
        if line == "":
            if data or event:
                if data:
                    event["data"] = "\n".join(data)
                events.append(event)
            data, event = [], {}
            continue
        if line.startswith(":"):
            continue
        field, _, value = line.partition(":")
        value = value[1:] if value.startswith(" ") else value
        if field == "data":
            data.append(value)
        elif field in ("event", "id"):
            event[field] = value
        elif field == "retry" and value.isascii() and value.isdigit():  # isdigit() alone admits '²'
            try:
                event["retry"] = int(value)
            except ValueError:  # more digits than int() converts: no honest retry
                pass
    if data or event:
        if data:
            event["data"] = "\n".join(data)
        events.append(event)
    return events


def _sse_diff(expected: list[dict[str, Any]], text: str) -> str | None:
    got = parse_sse(text)
    if len(got) != len(expected):
        return f"SSE: expected {len(expected)} event(s), got {len(got)}: {_short(got, 240)}"
    for i, (exp, act) in enumerate(zip(expected, got, strict=True)):
        for key, want in exp.items():
            if key == "data_json":
                raw = act.get("data")
                value, why = parse_json(raw) if raw is not None else (MISSING, "")
                if why:
                    return f"SSE event {i}: data is not JSON ({why}): {raw[:160]!r}"
                problem = diff(want, value, f"event[{i}].data")
            else:
                problem = diff(want, act.get(key, MISSING), f"event[{i}].{key}")
            if problem:
                return "SSE " + problem
    return None


def expectation_problems(expect: dict[str, Any], resp: dict[str, Any]) -> list[str]:
    """Every expectation of one step that the response does not meet (empty: all hold)."""
    if "error" in resp:
        return [f"the request failed: {last_line(resp['error'], 300)}"]
    problems: list[str] = []
    status = resp.get("status")
    if "status" in expect and status != expect["status"]:
        problems.append(f"status: expected {expect['status']}, got {status}")
    text = body_text(resp)
    wants_json = any(k in expect for k in ("json", "json_has", "json_at"))
    body: Any = MISSING
    if wants_json:
        body, why = parse_json(text)
        if why:
            problems.append(f"body is not JSON ({why}): {text[:160]!r}")
    if body is not MISSING:
        if "json" in expect and (p := diff(expect["json"], body)):
            problems.append(f"json: {p}")
        if "json_has" in expect and (p := diff(expect["json_has"], body, subset=True)):
            problems.append(f"json: {p}")
        for item in expect.get("json_at", []):
            if p := at_diff(body, item):
                problems.append(f"json at {p}")
    for name, want in expect.get("headers", {}).items():
        got = header_values(resp, name)
        if want not in got:
            problems.append(f"header {name}: expected {want!r}, got {got[0]!r}" if got else f"header {name}: missing")
    for name, parts in expect.get("header_contains", {}).items():
        got = header_values(resp, name)
        if not any(all(p in v for p in parts) for v in got):
            problems.append(f"header {name}: expected a value containing {parts!r}, got {got!r}")
    for name in expect.get("headers_present", []):
        if not header_values(resp, name):
            problems.append(f"header {name}: missing")
    for name in expect.get("headers_absent", []):
        if got := header_values(resp, name):
            problems.append(f"header {name}: must be absent, got {got[0]!r}")
    if expect.get("empty") and body_bytes_len(resp):
        problems.append(f"body: expected empty, got {text[:120]!r}")
    if "text" in expect and text != expect["text"]:
        problems.append(f"text: expected {_short(expect['text'])}, got {_short(text)}")
    if "text_contains" in expect and expect["text_contains"] not in text:
        problems.append(f"text: expected it to contain {expect['text_contains']!r}, got {_short(text)}")
    if "sse" in expect and (p := _sse_diff(expect["sse"], text)):
        problems.append(p)
    return problems


def describe_request(req: dict[str, Any]) -> str:
    query = "&".join(f"{k}={v}" for k, v in req.get("query", []))
    return f"{req['method']} {req['path']}{'?' + query if query else ''}"


def evaluate_check(check: dict[str, Any], responses: list[dict[str, Any]], session_error: str | None = None) -> dict[str, Any]:
    """{"name", "passed", "detail"} for one check, from its steps' responses in order."""
    for i, step in enumerate(check["steps"]):
        label = describe_request(step["request"])
        if len(check["steps"]) > 1:
            label = f"step {i + 1} ({label})"
        if i >= len(responses):
            why = last_line(session_error) if session_error else "no response recorded"
            return {"name": check["name"], "passed": False, "detail": f"{label}: {why}"}
        problems = expectation_problems(step["expect"], responses[i])
        if problems:
            return {"name": check["name"], "passed": False, "detail": f"{label}: " + "; ".join(problems)}
    if session_error:
        return {"name": check["name"], "passed": False, "detail": last_line(session_error)}
    return {"name": check["name"], "passed": True, "detail": ""}


CATCH_ALL_RESPONSE = {"status": 200, "headers": [["content-length", "2"], ["content-type", "application/json"]], "text": "{}"}


def passes_for_catch_all(check: dict[str, Any]) -> bool:
    """Whether an app answering every request with 200 {} would pass this check (a design defect)."""
    return evaluate_check(check, [CATCH_ALL_RESPONSE] * len(check["steps"]))["passed"]


# -- canaries --------------------------------------------------------------------------------

_WORDS = (
    "alpha",
    "orbit",
    "maple",
    "quartz",
    "harbor",
    "lumen",
    "cobalt",
    "tundra",
    "vivid",
    "ember",
    "nimbus",
    "prairie",
    "saffron",
    "glacier",
    "mosaic",
    "pixel",
    "zephyr",
    "canyon",
    "velvet",
    "falcon",
)


def _random_segment(rng: random.Random) -> str:
    return f"{rng.choice(_WORDS)}{rng.choice(['-', '_', ''])}{rng.randrange(16**5):05x}"


def make_canaries(rng: random.Random, openapi_url: str = "/openapi.json", catch_all: bool = False) -> list[dict[str, Any]]:
    """Requests whose honest answers the host knows, made up afresh for every grading."""
    canaries = []
    if not catch_all:
        for method in rng.sample(["GET", "POST", "DELETE", "PUT"], 2):
            req: dict[str, Any] = {"method": method, "path": f"/{_random_segment(rng)}/{_random_segment(rng)}"}
            if method in ("POST", "PUT"):
                req["json"] = {_random_segment(rng): rng.randrange(1000)}
            if rng.random() < 0.5:
                req["query"] = [[_random_segment(rng), str(rng.randrange(100))]]
            canaries.append({"kind": "unknown_path", "request": req})
    if openapi_url:  # byte for byte a check's GET of the document: nothing tells the two apart
        canaries.append({"kind": "openapi", "request": normalize_request({"path": openapi_url}, "the openapi canary")})
    return canaries


def lay_out(checks: list[dict[str, Any]], n_canaries: int, rng: random.Random) -> list[list[tuple[str, int, int]]]:
    """Sessions as tags: ("step", check, step) per check in order, ("canary", k, 0) slipped in at
    random places, and the sessions in a random order, so position says nothing about a request."""
    layout = [[("step", ci, si) for si in range(len(c["steps"]))] for ci, c in enumerate(checks)]
    for k in range(n_canaries):
        s = rng.randrange(len(layout))
        layout[s].insert(rng.randrange(len(layout[s]) + 1), ("canary", k, 0))
    rng.shuffle(layout)
    return layout


def _template_regex(template: str) -> re.Pattern[str]:
    """A path template of an OpenAPI document as a regex. The document drops `:path`
    converters, so a parameter that ends the template may span slashes.

    The document is the app's, so adjacent parameters become one bounded repeat
    (`{a}{b}` is `[^/]{2,}`, not `[^/]+[^/]+`): a template of many adjacent parameters
    would otherwise backtrack exponentially on the host for every canary path.
    """
    parts = [p for p in re.split(r"(\{[^}]*\})", template) if p]
    pattern, run = "", 0
    for i, part in enumerate(parts):
        if part.startswith("{") and part.endswith("}"):
            run += 1
            if i < len(parts) - 1:
                continue
            pattern += (f"[^/]{{{run - 1}}}" if run > 1 else "") + ".*"  # the last one spans the rest
        else:
            pattern += (f"[^/]{{{run},}}" if run else "") + re.escape(part)
        run = 0
    return re.compile(pattern)


def _is_openapi_doc(resp: dict[str, Any]) -> Any:
    doc, why = parse_json(body_text(resp))
    if why:
        return None
    if isinstance(doc, dict) and isinstance(doc.get("openapi"), str) and isinstance(doc.get("paths"), dict):
        return doc
    return None


def judge_canaries(
    canaries: list[dict[str, Any]], responses: list[dict[str, Any] | None], openapi_url: str, check_openapi: list[dict[str, Any]]
) -> list[str]:
    """Why the canaries say the run was tampered with (empty: they came out as an honest run's would).

    - openapi: a 2xx answer must be an OpenAPI document (an app may disable or break its
      schema, which gives 404 or 500, but a 2xx non-document is a faked response), and its
      paths must be those of the other 2xx /openapi.json answers of the same run.
    - unknown_path: a random path must not get a 2xx answer unless a path template of the
      app's own OpenAPI document matches it (a catch-all route is honest).
      The app may answer unknown paths itself (a 404 handler that forgot its status code):
      a 2xx that the driver's witness saw the app send is not held against the run.
    A canary with no response (its session failed) is not judged.
    """
    problems: list[str] = []
    doc = None
    for canary, resp in zip(canaries, responses, strict=True):
        if canary["kind"] != "openapi" or resp is None or "error" in resp:
            continue
        if 200 <= resp["status"] < 300:
            doc = _is_openapi_doc(resp)
            if doc is None:
                problems.append(f"GET {openapi_url} answered {resp['status']} with a body that is no OpenAPI document")
                continue
            for other in check_openapi:
                if "error" in other or not 200 <= other.get("status", 0) < 300:
                    continue
                other_doc = _is_openapi_doc(other)
                if other_doc is None or sorted(other_doc["paths"]) != sorted(doc["paths"]):
                    problems.append(f"the answers to GET {openapi_url} differ between requests of the same run")
                    break
    templates = [_template_regex(p) for p in (doc or {}).get("paths", {})]
    for canary, resp in zip(canaries, responses, strict=True):
        if canary["kind"] != "unknown_path" or resp is None or "error" in resp:
            continue
        path = canary["request"]["path"]
        from_app = resp.get("app_calls") == 1 and resp.get("app_status") == resp["status"]
        if 200 <= resp["status"] < 300 and not from_app and not any(t.fullmatch(path) for t in templates):
            problems.append(
                f"{canary['request']['method']} of an unknown path answered {resp['status']}, "
                "and no route of the app's OpenAPI document matches it"
            )
    return problems


def witness_problems(labelled: list[tuple[str, dict[str, Any] | None]]) -> list[str]:
    """Answers that the app did not produce, by the driver's witness around the app.

    Every response of an honest run carries `app_calls` (1) and `app_status` (the status the
    app sent, or None when the app crashed before answering and the test client made up its
    own 500). A response without them, with no call into the app, or whose status differs
    from the one the app sent, was made up or altered between the app and the report.
    """
    for label, resp in labelled:
        if resp is None or "error" in resp:
            continue
        if "app_calls" not in resp or "app_status" not in resp:
            return [f"the answer to {label} carries no record of the app's own answer"]
        if resp["app_calls"] != 1:
            return [f"the answer to {label} came back after {resp['app_calls']} calls into the app instead of 1"]
        sent = resp["app_status"]
        if (sent is None and resp.get("status") != 500) or (sent is not None and sent != resp.get("status")):
            return [f"the answer to {label} has status {resp.get('status')}, but the app sent {sent}"]
    return []
