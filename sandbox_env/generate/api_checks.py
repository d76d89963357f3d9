"""The checks of a generated fastapi task, with their drawn tokens, and the oracle that answers them.

The expected answers come from `Oracle`: plain Python over the tree (generate/api_tree.py) that
keeps the records as dicts and applies the field rules as the spec states them. It never runs
the reference, and the reference (api_reference.py) never reads it: the two meet only in the
verification by execution (stages/generate_fastapi.py), where a disagreement drops the task.

Tokens (`Tokens`, families/fastapi_vary.py's `[[vary]]`): every value a check sends that an
answer could give back or depend on is a token drawn afresh per grading: the records' texts,
numbers, notes, labels and secrets, an unknown id, a too-long text, numbers past either bound,
a word outside the choices, a wrong key, a limit past its maximum. A drawn value keeps what the
spec says of it: a word token is drawn at its own length and case shape (so a too-long text
stays too long), an int token inside its range (so a valid number stays valid, an invalid one
invalid). Only values the spec names (the key, the bounds themselves, the limit's edges) and
short fixed texts at a length bound are sent as written. Ids are fixed (1, 2, 3 in creation
order), which the spec states.

Check names are stable per role (`NAMES`); api_spec.py maps each spec sentence to them.

Grammar-2 kinds (api_tree.py): a field's JSON key is `json_key` (the camelCase alias where the tree
has one; its snake_case name is then an unknown key, ignored); every error body is `error_json` (the
tree's stated shape, or `{"detail": ...}`; a 422 has a body only under the shape, where the spec
states its message); a unique text is compared exactly, so the check that separates the readings
sends a fixed pair differing only in letter case (`CASE_PAIR`: a drawn token would be redrawn in one
case shape only) beside drawn numbers.

Grammar-3 kinds: every 201 of a create carries `Location: /<many>/<id>` (`location_of`); the list is
ordered by the preference cookie (`Oracle.cookies`: the cookies a request carries are those it sends,
else those earlier answers of the same check set, as the grading client keeps them for a check's
session and sends none of its jar beside a Cookie header given); the setter's answer is expected to
hold `<cookie>=<word>` and `Path=/` in its Set-Cookie header (`set_cookie_answer`), and the checks read
the list again after it, so a cookie set under another name or path shows. The words are the spec's
own; the records listed, and a refused word, are drawn.
"""

from __future__ import annotations

import random
import re
import string
from typing import Any

from sandbox_env.families.fastapi_checks import normalize_check
from sandbox_env.families.fastapi_vary import normalize as normalize_vary
from sandbox_env.families.fastapi_vary import sends_a_token
from sandbox_env.generate.api_reference import tree_has_id_routes

NAMES = {
    "create": "creating answers 201 with the record, ids counting from 1",
    "validate": "creating refuses every broken field rule with 422 and accepts the bounds",
    "get": "a record is answered by its id",
    "unknown": "an unknown id is answered 404 with its detail and header",
    "list_limit": "the list keeps creation order and stops at the limit",
    "list_bounds": "a limit outside its bounds is refused with 422",
    "list_filter": "the repeated query parameter keeps the records with one of its texts",
    "patch": "a PATCH changes only the fields it carries",
    "patch_invalid": "a PATCH with a broken value or a refused null is 422 and changes nothing",
    "delete": "a DELETE answers 204 with no body, the record is gone and its id is not reused",
    "key_missing": "a request without the key is refused with 401",
    "key_wrong": "a wrong or empty key is refused with 403",
    "key_reads_open": "reading needs no key",
    "alias": "a field is taken and answered only under its stated JSON key",
    "error_shape": "error answers of different codes share the stated shape",
    "conflict": "a create with a text already held is 409 and stores nothing",
    "conflict_case": "texts that differ only in letter case are different texts",
    "location": "a create answers the new record's path in its Location header",
    "pref_read": "the list follows the order its cookie states, a default without it, 422 for another word",
    "pref_set": "the preference route sets the cookie that the list then follows",
}
MISSING_KEY, WRONG_KEY = "missing key", "wrong key"
SPEC_CODES = (200, 201, 204, 401, 403, 404, 422)
_CONSONANTS, _VOWELS = "bcdfghjklmnprstvz", "aeiou"
CASE_PAIR_LENGTH = 6  # within every drawn text's bounds (MIN_LENGTHS up to 4, MAX_LENGTHS from 12)


def json_key(tree: dict[str, Any], role: str) -> str:
    """The JSON key of a field: its alias where the tree gives it one, else its name."""
    alias = tree.get("alias")
    return alias["json"] if alias and alias["field"] == role else tree[role]["name"]


def error_json(tree: dict[str, Any], status: int, message: str) -> dict[str, Any]:
    """The body of an error answer: the tree's stated shape, or {"detail": message}."""
    shape = tree.get("errors")
    if not shape:
        return {"detail": message}
    return {shape["outer"]: {"status": status, shape["message"]: message}}


def invalid_answer(tree: dict[str, Any]) -> dict[str, Any]:
    """A 422 answer: its body only where the tree states an error shape (else the body is not checked)."""
    shape = tree.get("errors")
    return {"status": 422, "json": error_json(tree, 422, shape["invalid"])} if shape else {"status": 422}


def location_of(tree: dict[str, Any], rid: int) -> dict[str, str]:
    """The headers a create answered 201 carries: the new record's path under the Location header."""
    return {"location": f"/{tree['many']}/{rid}"} if tree.get("location") else {}


def set_cookie_answer(pref: dict[str, Any], word: str) -> dict[str, Any]:
    """The preference route's answer: 200, the word back, and the cookie set for every path."""
    texts = [f"{pref['cookie']}={word}", "Path=/"]
    return {"status": 200, "json": {"value": word}, "header_contains": {"set-cookie": texts}}


def case_pair() -> tuple[str, str]:
    """Two fixed texts that differ only in letter case (a unique text is compared exactly)."""
    text = "".join(string.ascii_lowercase[i] for i in range(CASE_PAIR_LENGTH))
    return text.capitalize(), text


class Tokens:
    """The task's drawn tokens: literal values for the checks, and their `[[vary]]` declarations."""

    def __init__(self, rng: random.Random, fixed_numbers: set[int]) -> None:
        self.rng = rng
        self.decls: list[dict[str, Any]] = []
        self._words: set[str] = set()
        self._numbers = set(fixed_numbers)

    def word(self, length: int, title: bool = False) -> str:
        while True:
            letters = "".join(
                self.rng.choice(_CONSONANTS if i % 2 == 0 else _VOWELS) for i in range(length)
            )  # pronounceable, never a real field or domain word of this module
            if any(letters in w or w in letters for w in self._words):
                continue
            self._words.add(letters)
            token = letters.capitalize() if title else letters
            self.decls.append({"token": token, "kind": "word"})
            return token

    def number(self, lo: int, hi: int) -> int:
        """An int token whose draws stay in [lo, hi]; its literal is unlike any other number of the task."""
        for _ in range(1000):
            value = self.rng.randint(lo, hi)
            if value not in self._numbers and abs(value) > 10:
                self._numbers.add(value)
                self.decls.append({"token": value, "kind": "int", "range": [lo, hi]})
                return value
        raise ValueError(f"no int token in [{lo}, {hi}]")


class Oracle:
    """The service as the spec states it, in plain Python: records as dicts, the field rules, the key."""

    def __init__(self, tree: dict[str, Any]) -> None:
        self.tree = tree
        self.rows: dict[int, dict[str, Any]] = {}
        self.next_id = 1
        self.jar: dict[str, str] = {}

    # -- the field rules ------------------------------------------------------------------------

    def _field_ok(self, role: str, value: Any) -> bool:
        t = self.tree
        if role == "text":
            return isinstance(value, str) and t["text"]["min"] <= len(value) <= t["text"]["max"]
        if role == "number":
            return isinstance(value, int) and not isinstance(value, bool) and t["number"]["ge"] <= value <= t["number"]["le"]
        if role == "note":
            return value is None or isinstance(value, str)
        if role == "choice":
            return value in t["choice"]["values"]
        if role == "labels":
            return isinstance(value, list) and all(isinstance(x, str) for x in value)
        if role == "secret":
            return isinstance(value, str)
        raise ValueError(role)

    def _roles(self) -> dict[str, str]:
        """JSON key -> role, for the fields this tree has."""
        roles = ("text", "number", "note", "choice", "labels", "secret")
        return {json_key(self.tree, r): r for r in roles if self.tree[r]}

    def valid(self, body: Any, partial: bool) -> bool:
        if not isinstance(body, dict):
            return False
        roles = self._roles()
        for name, role in roles.items():
            if name not in body:
                if not partial and role in ("text", "number", "secret"):
                    return False
                continue
            if partial and role == "secret":
                continue  # PATCH has no such field: it is ignored
            if not self._field_ok(role, body[name]):
                return False
        return True

    def _filled(self, body: dict[str, Any]) -> dict[str, Any]:
        t = self.tree
        number = json_key(t, "number")
        record = {"id": self.next_id, t["text"]["name"]: body[t["text"]["name"]], number: body[number]}
        if t["note"]:
            record[t["note"]["name"]] = body.get(t["note"]["name"])
        if t["choice"]:
            record[t["choice"]["name"]] = body.get(t["choice"]["name"], t["choice"]["default"])
        if t["labels"]:
            record[t["labels"]["name"]] = list(body.get(t["labels"]["name"], []))
        if t["secret"]:
            record[t["secret"]["name"]] = body[t["secret"]["name"]]
        return record

    def shown(self, record: dict[str, Any]) -> dict[str, Any]:
        secret = self.tree["secret"]
        return {k: v for k, v in record.items() if not (secret and k == secret["name"])}

    # -- answering one request -----------------------------------------------------------------

    def _keyed(self, method: str) -> bool:
        auth = self.tree["auth"]
        return auth == "all" or (auth == "writes" and method in ("POST", "PATCH", "DELETE"))

    def _unknown(self, rid: int) -> dict[str, Any]:
        one = self.tree["one"]
        body = error_json(self.tree, 404, f"{one} {rid} not found")
        return {"status": 404, "json": body, "headers": {"X-Lookup": f"missing-{one}"}}

    def _held(self, text: str) -> bool:
        """Whether a stored record has this text, compared exactly (letter case matters)."""
        name = self.tree["text"]["name"]
        return any(r[name] == text for r in self.rows.values())

    def cookies(self, req: dict[str, Any]) -> dict[str, str]:
        """The cookies a request carries: those it sends, else those answers of its check have set."""
        return dict(req["cookies"]) if req.get("cookies") else dict(self.jar)

    def _set_pref(self, body: Any) -> dict[str, Any]:
        pref = self.tree["pref"]
        word = body.get("value") if isinstance(body, dict) else None
        if word not in pref["values"]:
            return invalid_answer(self.tree)
        self.jar[pref["cookie"]] = word
        return set_cookie_answer(pref, word)

    def _create(self, body: Any) -> dict[str, Any]:
        t = self.tree
        if not self.valid(body, partial=False):
            return invalid_answer(t)
        if t.get("unique") and self._held(body[t["text"]["name"]]):
            return {"status": 409, "json": error_json(t, 409, t["unique"]["detail"])}
        record = self._filled(body)
        self.rows[self.next_id] = record
        self.next_id += 1
        made = {"status": 201, "json": self.shown(record)}
        location = location_of(t, record["id"])
        return {**made, "headers": location} if location else made

    def answer(self, req: dict[str, Any]) -> dict[str, Any]:
        """The expectation of one request (raw check-language form: method, path, query, headers, cookies, json)."""
        method = req.get("method", "GET")
        t = self.tree
        if self._keyed(method):
            sent = (req.get("headers") or {}).get(t["key"]["header"])
            if sent is None:
                return {"status": 401, "json": error_json(t, 401, MISSING_KEY)}
            if sent != t["key"]["value"]:
                return {"status": 403, "json": error_json(t, 403, WRONG_KEY)}
        if t.get("pref") and method == "PUT" and req["path"] == t["pref"]["route"]:
            return self._set_pref(req.get("json"))
        segments = req["path"].strip("/").split("/")
        if len(segments) == 1:
            if method == "POST":
                return self._create(req.get("json"))
            return self._list(req.get("query") or {}, self.cookies(req))
        rid = int(segments[1])
        if method == "PATCH" and not self.valid(req.get("json"), partial=True):
            return invalid_answer(t)  # the body is read before the endpoint looks the id up
        if rid not in self.rows:
            return self._unknown(rid)
        if method == "GET":
            return {"status": 200, "json": self.shown(self.rows[rid])}
        if method == "PATCH":
            roles = self._roles()
            for name, value in req["json"].items():
                if name in roles and roles[name] != "secret":
                    self.rows[rid][name] = list(value) if isinstance(value, list) else value
            return {"status": 200, "json": self.shown(self.rows[rid])}
        if method == "DELETE":
            del self.rows[rid]
            return {"status": 204, "empty": True}
        raise ValueError(f"no route for {method} {req['path']}")

    def _ordered(self, cookies: dict[str, str]) -> list[dict[str, Any]] | None:
        """The records in the order the preference cookie states (creation order without one); None: refused."""
        rows = list(self.rows.values())
        pref = self.tree.get("pref")
        if not pref:
            return rows
        word = cookies.get(pref["cookie"], pref["default"])
        if word not in pref["values"]:
            return None
        return rows[::-1] if word == pref["values"][1] else rows

    def _list(self, query: dict[str, Any], cookies: dict[str, str]) -> dict[str, Any]:
        lim = self.tree["limit"]
        raw = query.get("limit", lim["default"])
        limit = int(raw)
        ordered = self._ordered(cookies)
        if not 1 <= limit <= lim["max"] or ordered is None:
            return invalid_answer(self.tree)
        wanted = query.get(self.tree["text"]["name"])
        wanted = [wanted] if isinstance(wanted, str) else wanted
        rows = [r for r in ordered if not wanted or r[self.tree["text"]["name"]] in wanted]
        return {"status": 200, "json": [self.shown(r) for r in rows[:limit]]}


def _short_text(n: int) -> str:
    return "".join(string.ascii_lowercase[i % 26] for i in range(n))


def list_case_steps(req: Any, post: str, body: dict[str, Any], name_key: str) -> list[dict[str, Any]]:
    """A record whose text is one of the case pair, then a filter by the other: the exact filter lists nothing."""
    upper, lower = case_pair()
    return [req("POST", post, {**body, name_key: upper}), req("GET", post, query={name_key: [lower]})]


def build_checks(tree: dict[str, Any], rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(checks in the check language, normalised; their [[vary]] declarations) for one tree."""
    t = tree
    many, ops = t["many"], t["ops"]
    text, number = t["text"], t["number"]
    nkey = json_key(t, "number")
    lim = t["limit"]
    fixed = {number["ge"], number["le"], text["min"], text["max"], text["min"] - 1, *range(0, 11)}
    fixed |= {int(n) for n in re.findall(r"[0-9]+", t["key"]["value"])} if t["key"] else set()
    fixed |= set(SPEC_CODES)  # the status codes the spec states: a token equal to one would be fixed by it
    if lim:
        fixed |= {lim["default"], lim["max"], lim["max"] + 1}
    tok = Tokens(rng, fixed)
    names = [tok.word(rng.randint(5, 8), title=True) for _ in range(5)]
    numbers = [tok.number(number["ge"] + 1, number["le"] - 1) for _ in range(3)]
    note = tok.word(rng.randint(5, 8), title=True) if t["note"] else None
    labels = [tok.word(rng.randint(4, 7)) for _ in range(2)] if t["labels"] else []
    secret = tok.word(rng.randint(6, 9)) if t["secret"] else None
    unknown = tok.number(100, 9999)
    too_long = tok.word(text["max"] + 1)
    over = tok.number(number["le"] + 1, number["le"] + 1000)
    under = tok.number(number["ge"] - 1000, number["ge"] - 1)
    bad_choice = tok.word(rng.randint(5, 7)) if t["choice"] else None
    wrong_key = tok.word(rng.randint(6, 8)) if t["key"] else None
    over_limit = tok.number(lim["max"] + 1, lim["max"] + 500) if lim else None
    bad_pref = tok.word(rng.randint(5, 7)) if t.get("pref") else None

    def key_headers(method: str) -> dict[str, str]:
        keyed = t["auth"] == "all" or (t["auth"] == "writes" and method in ("POST", "PATCH", "DELETE"))
        return {t["key"]["header"]: t["key"]["value"]} if keyed else {}

    def body(i: int, full: bool = True) -> dict[str, Any]:
        b: dict[str, Any] = {text["name"]: names[i], nkey: numbers[i % len(numbers)]}
        if t["secret"]:
            b[t["secret"]["name"]] = secret
        if full and t["note"]:
            b[t["note"]["name"]] = note
        if full and t["choice"]:
            c = t["choice"]
            b[c["name"]] = next(v for v in c["values"] if v != c["default"])
        if full and t["labels"]:
            b[t["labels"]["name"]] = list(labels)
        return b

    def req(
        method: str, path: str, json: Any = None, query: dict[str, Any] | None = None, key: bool = True, cookie: str = ""
    ) -> dict:
        r: dict[str, Any] = {"method": method, "path": path}
        if json is not None:
            r["json"] = json
        if query:
            r["query"] = query
        if cookie:
            r["cookies"] = {t["pref"]["cookie"]: cookie}
        h = key_headers(method) if key else {}
        if h:
            r["headers"] = h
        return r

    checks: list[dict[str, Any]] = []

    def check(role: str, requests: list[dict[str, Any]]) -> None:
        oracle = Oracle(tree)
        steps = [{**r, "expect": oracle.answer(r)} for r in requests]
        checks.append({"name": NAMES[role], "steps": steps})

    post = f"/{many}"
    one_path = lambda i: f"/{many}/{i}"  # noqa: E731
    check("create", [req("POST", post, body(0)), req("POST", post, body(1, full=False))])
    invalid = [
        {**body(0), text["name"]: too_long},
        {**body(0), text["name"]: _short_text(text["min"] - 1)},
        {**body(0), nkey: over},
        {**body(0), nkey: under},
        {k: v for k, v in body(0).items() if k != text["name"]},
        {k: v for k, v in body(0).items() if k != nkey},
    ]
    if t["choice"]:
        invalid.append({**body(0), t["choice"]["name"]: bad_choice})
    if t["secret"]:
        invalid.append({k: v for k, v in body(0).items() if k != t["secret"]["name"]})
    edges = [
        {**body(1), text["name"]: _short_text(text["min"]), nkey: number["le"]},
        {**body(2), text["name"]: _short_text(text["max"]), nkey: number["ge"]},
    ]
    check("validate", [req("POST", post, b) for b in invalid + edges])
    if "get_by_id" in ops:
        check("get", [req("POST", post, body(0)), req("POST", post, body(1)), req("GET", one_path(2)), req("GET", one_path(1))])
    if tree_has_id_routes(tree):
        probes = [req("POST", post, body(0))]
        if "get_by_id" in ops:
            probes.append(req("GET", one_path(unknown)))
        if "patch_partial" in ops:
            probes.append(req("PATCH", one_path(unknown), {nkey: numbers[1]}))
        if "delete_204" in ops:
            probes.append(req("DELETE", one_path(unknown)))
        check("unknown", probes)
    if "list_query" in ops:
        d = lim["default"]
        made = [req("POST", post, body(i)) for i in range(d + 1)]
        check(
            "list_limit",
            [*made, req("GET", post), req("GET", post, query={"limit": d + 1}), req("GET", post, query={"limit": 1})],
        )
        check(
            "list_bounds",
            [
                req("GET", post, query={"limit": 0}),
                req("GET", post, query={"limit": over_limit}),
                req("POST", post, body(0)),
                req("GET", post, query={"limit": lim["max"]}),
                req("GET", post, query={"limit": lim["max"] + 1}),  # the edge past the maximum: a drawn one may miss it
            ],
        )
        made = [req("POST", post, body(i)) for i in range(3)]
        check(
            "list_filter",
            [
                *made,
                req("GET", post, query={text["name"]: [names[0], names[2]], "limit": lim["max"]}),
                req("GET", post, query={text["name"]: [names[1]]}),
                req("GET", post, query={text["name"]: [names[4]]}),
                # the one match is not first in either order: a limit taken before the filter loses it
                req("GET", post, query={text["name"]: [names[1]], "limit": 1}),
                # "equals exactly": a text differing only in letter case matches nothing (a fixed pair, as for
                # conflict_case: a drawn token would be redrawn in one case shape only)
                *list_case_steps(req, post, body(3), text["name"]),
            ],
        )
    if "patch_partial" in ops:
        changes: list[dict[str, Any]] = [{nkey: numbers[1]}, {t["note"]["name"]: None}, {text["name"]: names[3]}]
        if t["choice"]:
            changes.append({t["choice"]["name"]: t["choice"]["default"]})
        if t["labels"]:
            changes.append({t["labels"]["name"]: [labels[1]]})
        steps = [req("POST", post, body(0)), *(req("PATCH", one_path(1), c) for c in changes), req("PATCH", one_path(1), {})]
        if "get_by_id" in ops:
            steps.append(req("GET", one_path(1)))
        check("patch", steps)
        broken: list[dict[str, Any]] = [
            {text["name"]: too_long},
            {text["name"]: _short_text(text["min"] - 1)},
            {nkey: over},
            {nkey: under},
            {text["name"]: None},
            {nkey: None},
        ]
        if t["choice"]:
            broken += [{t["choice"]["name"]: bad_choice}, {t["choice"]["name"]: None}]
        if t["labels"]:
            broken.append({t["labels"]["name"]: None})
        check(
            "patch_invalid",
            [req("POST", post, body(0)), *(req("PATCH", one_path(1), b) for b in broken), req("PATCH", one_path(1), {})],
        )
    if "delete_204" in ops:
        steps = [req("POST", post, body(0)), req("POST", post, body(1)), req("DELETE", one_path(1)), req("DELETE", one_path(1))]
        steps.append(req("POST", post, body(2)))
        if "get_by_id" in ops:
            steps += [req("GET", one_path(1)), req("GET", one_path(2))]
        check("delete", steps)
    if t["auth"] != "none":
        routes = [("POST", post, body(0))]
        if "get_by_id" in ops and t["auth"] == "all":
            routes.append(("GET", one_path(1), None))
        if "list_query" in ops and t["auth"] == "all":
            routes.append(("GET", post, None))
        if "patch_partial" in ops:
            routes.append(("PATCH", one_path(1), {nkey: numbers[1]}))
        if "delete_204" in ops:
            routes.append(("DELETE", one_path(1), None))
        check("key_missing", [req(m, p, b, key=False) for m, p, b in routes])
        wrong = [
            {**req("POST", post, body(0), key=False), "headers": {t["key"]["header"]: wrong_key}},
            {**req("POST", post, body(0), key=False), "headers": {t["key"]["header"]: ""}},
            req("POST", post, body(1)),
        ]
        check("key_wrong", wrong)
        if t["auth"] == "writes" and ("get_by_id" in ops or "list_query" in ops):
            reads = [req("POST", post, body(0))]
            reads += [req("GET", one_path(1), key=False)] if "get_by_id" in ops else [req("GET", post, key=False)]
            check("key_reads_open", reads)
    if t.get("alias"):
        snake_body = {**{k: v for k, v in body(0).items() if k != nkey}, number["name"]: numbers[0]}
        steps = [req("POST", post, snake_body), req("POST", post, body(0))]
        if "patch_partial" in ops:
            steps.append(req("PATCH", one_path(1), {number["name"]: numbers[1]}))
        if "get_by_id" in ops:
            steps.append(req("GET", one_path(1)))
        check("alias", steps)
    if t.get("errors"):
        steps = [req("POST", post, {**body(0), text["name"]: too_long})]
        if "get_by_id" in ops:
            steps.append(req("GET", one_path(unknown)))
        elif "delete_204" in ops:
            steps.append(req("DELETE", one_path(unknown)))
        elif "patch_partial" in ops:
            steps.append(req("PATCH", one_path(unknown), {nkey: numbers[1]}))
        if t["key"]:
            steps.append(req("POST", post, body(1), key=False))
        check("error_shape", steps)
    if t.get("unique"):
        observe = req("GET", one_path(2)) if "get_by_id" in ops else req("GET", post, query={"limit": lim["max"]})
        held = {**body(1), text["name"]: names[0]}
        check("conflict", [req("POST", post, body(0)), req("POST", post, held), observe, req("POST", post, body(2))])
        upper, lower = case_pair()
        pair = [{**body(0), text["name"]: upper}, {**body(1), text["name"]: lower}, {**body(2), text["name"]: upper}]
        check("conflict_case", [req("POST", post, b) for b in pair])
    if t.get("location"):
        steps = [req("POST", post, body(0)), req("POST", post, body(1))]
        steps += [req("GET", one_path(2))] if "get_by_id" in ops else []
        steps += [req("DELETE", one_path(1)), req("POST", post, body(2))] if "delete_204" in ops else []
        check("location", steps)
    if t.get("pref"):
        pref, top = t["pref"], {"limit": lim["max"]}
        other = next(v for v in pref["values"] if v != pref["default"])
        made = [req("POST", post, body(i)) for i in range(3)]
        reads = [req("GET", post, query=top), req("GET", post, query=top, cookie=other)]
        reads += [req("GET", post, query={"limit": 1}, cookie=other), req("GET", post, cookie=bad_pref)]
        check("pref_read", [*made, *reads])
        put = lambda word: req("PUT", pref["route"], {"value": word})  # noqa: E731
        sets = [put(other), req("GET", post, query=top), put(bad_pref), req("GET", post, query=top)]
        check("pref_set", [*made, *sets, put(pref["default"]), req("GET", post, query=top)])
    normalized = [normalize_check(c, "generated") for c in checks]
    sent = [d for d in normalize_vary(tok.decls, "generated") if any(sends_a_token(c, [d]) for c in normalized)]
    return normalized, sent
