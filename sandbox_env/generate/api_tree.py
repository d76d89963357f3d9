"""The fastapi generator's API grammar: one tree per task, drawn from a seed.

A tree is one resource kept in memory by one service (a domain: the resource's name, its
fields and their rules) and the operations the service offers on it (node kinds). Three
renderings come from it: the English spec (api_spec.py), the reference app
(api_reference.py) and the checks with their drawn tokens (api_checks.py, whose expected
answers come from a plain-Python oracle over the tree, never from the reference).

Fields, by role (every domain names them in its own words):
  text       required text with a minimum and a maximum length
  number     required whole number with inclusive bounds
  note       optional text that may be null (null when not given)
  choice     one of three words, with a default
  labels     a list of texts, empty when not given
  secret     required text that is stored and never answered

Node kinds (KINDS; each is recorded in the row's measures):
  create         POST with body validation (422 on every field rule), 201, ids from 1, never reused
  get_by_id      GET by a path id; an unknown id is 404 with a detail naming it and a fixed header
  list_query     GET of the collection: a bounded `limit` query with a default, a repeated query
                 parameter keeping the records whose text equals one of its values
  patch_partial  PATCH: only the fields present change; the note may be set to null; null for any
                 other field is 422
  delete_204     DELETE: 204 with no body; the id is gone
  hidden_field   the secret field is accepted and stored but left out of every answer
  key_on_writes  an API key in a header on every write (401 without it, 403 with another value)
  key_on_all     the same key on every route: the cross-cutting rule of the hard tier
  alias_field    (grammar 2) the number is sent and answered under a camelCase JSON key; its
                 snake_case name is not that field (a create giving only it lacks a required field)
  error_shape    (grammar 2) every error answer (404, 422, 409, 401, 403) has one stated JSON shape,
                 an outer key holding the status code and a message; needs an id route or the key
  conflict_409   (grammar 2) a create whose text equals (letter case matters) a stored record's text
                 is 409 with a stated detail and stores nothing; needs get_by_id or list_query to observe
  location_header (grammar 3) a create answered 201 carries `Location: /<many>/<id>`, the new record's
                 path (which answers the record where the tree has get_by_id)
  cookie_pref    (grammar 3) the collection GET (list_query, added if absent) orders the list by id as a
                 stated cookie says (two stated words, oldest or newest first; a stated default when
                 absent; 422 for any other value), and `PUT /preferences/<cookie>` with {"value": word}
                 answers 200 and sets that cookie (`Set-Cookie: <cookie>=<word>; Path=/`)

`create` is in every tree (it is how records enter); one or two of the other operations are
drawn beside it (a grammar-2 kind that needs another operation to be observed adds get_by_id; the
cookie preference adds list_query and keeps at most one other operation, see `_pref`). A tree with
`key_on_all` is the hard tier (`tier = "cross_cutting"`).

Grammars (GRAMMARS; `candidate(seed, index, grammar)`): a stored line keeps drawing under the grammar
it was drawn with, so a new kind never changes what an existing (seed, index) draws. Grammar 1 is
`draw_tree` on the stream `fastapi-gen:{seed}:{index}` and its trees have none of the grammar-2 keys
(`alias`, `errors`, `unique`); grammar 2 is `draw_tree_v2` on its own stream
`fastapi-gen:g2:{seed}:{index}`: the grammar-1 draw, then the three grammar-2 kinds, whose keys every
grammar-2 tree has (None when not drawn). Grammar 3 is `draw_tree_v3` on `fastapi-gen:g3:{seed}:{index}`:
the grammar-2 draw, then one or both grammar-3 kinds (keys `location`, `pref`, None when not drawn; at
least one is drawn, so every grammar-3 tree has a grammar-3 kind). A grammar-3 tree keeps at most one
grammar-2 kind (the first drawn, in KINDS order): the check count stays within the screen's cap.
Renderers read the newer keys with `.get`, so one renderer serves every grammar.

Decisions: the tree is plain data (a dict that survives JSON), so a stored line redraws and
re-renders from itself; the structural signature blanks the domain and every constant (names,
bounds, defaults, the key), so `eval` holds out whole structures; `candidate(seed, index)` is a
pure function of its arguments (same seed and grammar, same trees).
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

OPERATIONS = ("get_by_id", "list_query", "patch_partial", "delete_204")
GRAMMAR_2_KINDS = ("alias_field", "error_shape", "conflict_409")
GRAMMAR_3_KINDS = ("location_header", "cookie_pref")
KINDS = ("create", *OPERATIONS, "hidden_field", "key_on_writes", "key_on_all", *GRAMMAR_2_KINDS, *GRAMMAR_3_KINDS)
GRAMMARS = (1, 2, 3)
GRAMMAR = GRAMMARS[-1]  # what new generation draws
OPTIONAL_FIELDS = ("note", "choice", "labels", "secret")

# one vocabulary per domain: the resource, and a field name for each role
DOMAINS: dict[str, dict[str, Any]] = {
    "library": {
        "one": "book",
        "many": "books",
        "text": "title",
        "number": "pages",
        "note": "remark",
        "choice": ("genre", ("fiction", "poetry", "essay")),
        "labels": "shelves",
        "secret": "acquisition_ref",
        "key_header": "X-Library-Key",
        "alias": ("page_count", "pageCount"),
    },
    "greenhouse": {
        "one": "plant",
        "many": "plants",
        "text": "name",
        "number": "height_cm",
        "note": "care_tip",
        "choice": ("light", ("shade", "partial", "full")),
        "labels": "zones",
        "secret": "supplier_code",
        "key_header": "X-Greenhouse-Key",
        "alias": ("height_cm", "heightCm"),
    },
    "harbour": {
        "one": "vessel",
        "many": "vessels",
        "text": "callsign",
        "number": "length_m",
        "note": "cargo",
        "choice": ("berth_side", ("north", "south", "east")),
        "labels": "crew",
        "secret": "owner_token",
        "key_header": "X-Harbour-Key",
        "alias": ("length_m", "lengthM"),
    },
    "bakery": {
        "one": "loaf",
        "many": "loaves",
        "text": "label",
        "number": "weight_g",
        "note": "glaze",
        "choice": ("crust", ("soft", "crisp", "dark")),
        "labels": "seeds",
        "secret": "recipe_pin",
        "key_header": "X-Bakery-Key",
        "alias": ("weight_g", "weightG"),
    },
    "observatory": {
        "one": "star",
        "many": "stars",
        "text": "designation",
        "number": "distance_ly",
        "note": "observer",
        "choice": ("band", ("visible", "infrared", "radio")),
        "labels": "catalogues",
        "secret": "survey_id",
        "key_header": "X-Observatory-Key",
        "alias": ("distance_ly", "distanceLy"),
    },
    "workshop": {
        "one": "tool",
        "many": "tools",
        "text": "model",
        "number": "mass_g",
        "note": "fault",
        "choice": ("state", ("ready", "worn", "broken")),
        "labels": "benches",
        "secret": "asset_tag",
        "key_header": "X-Workshop-Key",
        "alias": ("mass_g", "massG"),
    },
}
KEYS = ("k-7f3a9c", "key-20b1", "alpha-9911", "q4-secret", "tok-5e5e", "lime-3303")
MIN_LENGTHS = (2, 3, 4)
MAX_LENGTHS = (12, 16, 20, 24)
NUMBER_BOUNDS = ((0, 500), (1, 1000), (5, 2000), (10, 5000), (1, 250))
LIMIT_DEFAULTS = (2, 3)
LIMIT_MAXIMA = (20, 25, 50)
ERROR_KEYS = ("error", "problem", "fault")
MESSAGE_KEYS = ("message", "reason")
INVALID_MESSAGES = ("request is invalid", "the request breaks a rule", "invalid input")
GRAMMAR_2_CHANCE = 0.4  # of each grammar-2 kind, independently
PREF_COOKIES = ("order", "sort_order", "list_order")
PREF_WORDS = (("asc", "desc"), ("oldest", "newest"), ("up", "down"))  # (oldest first, newest first)


def draw_tree(rng: random.Random) -> dict[str, Any]:
    """One tree: a domain with its field rules, `create` and one or two operations, and the key rule."""
    domain_name = rng.choice(sorted(DOMAINS))
    d = DOMAINS[domain_name]
    ops = ["create", *sorted(rng.sample(OPERATIONS, rng.choice((1, 1, 2))))]
    fields = [f for f in OPTIONAL_FIELDS if rng.random() < 0.5]
    if "patch_partial" in ops and "note" not in fields:
        fields.append("note")  # PATCH's explicit null needs a field that may be null
    lo, hi = rng.choice(NUMBER_BOUNDS)
    choice_name, choices = d["choice"]
    auth = rng.choice(("none", "none", "writes", "all"))
    return {
        "domain": domain_name,
        "one": d["one"],
        "many": d["many"],
        "text": {"name": d["text"], "min": rng.choice(MIN_LENGTHS), "max": rng.choice(MAX_LENGTHS)},
        "number": {"name": d["number"], "ge": lo, "le": hi},
        "note": {"name": d["note"]} if "note" in fields else None,
        "choice": {"name": choice_name, "values": list(choices), "default": rng.choice(choices)} if "choice" in fields else None,
        "labels": {"name": d["labels"]} if "labels" in fields else None,
        "secret": {"name": d["secret"]} if "secret" in fields else None,
        "ops": ops,
        "limit": {"default": rng.choice(LIMIT_DEFAULTS), "max": rng.choice(LIMIT_MAXIMA)} if "list_query" in ops else None,
        "auth": auth,
        "key": {"header": d["key_header"], "value": rng.choice(KEYS)} if auth != "none" else None,
    }


def _with_operation(tree: dict[str, Any], op: str) -> None:
    """Add an operation a drawn kind needs to be observed (ops stay create first, then sorted)."""
    if op not in tree["ops"]:
        tree["ops"] = ["create", *sorted([*tree["ops"][1:], op])]


def draw_tree_v2(rng: random.Random) -> dict[str, Any]:
    """A grammar-2 tree: the grammar-1 draw, then the alias, the error shape and the unique text."""
    tree = draw_tree(rng)
    d = DOMAINS[tree["domain"]]
    alias, errors, unique = (rng.random() < GRAMMAR_2_CHANCE for _ in range(3))
    tree["alias"] = None
    if alias:
        snake, camel = d["alias"]
        tree["number"]["name"] = snake
        tree["alias"] = {"field": "number", "json": camel}
    tree["errors"] = None
    if errors:
        tree["errors"] = {
            "outer": rng.choice(ERROR_KEYS),
            "message": rng.choice(MESSAGE_KEYS),
            "invalid": rng.choice(INVALID_MESSAGES),
        }
        if not id_routes(tree) and tree["auth"] == "none":
            _with_operation(tree, "get_by_id")  # a second error code beside 422
    tree["unique"] = {"detail": f"{tree['text']['name']} already taken"} if unique else None
    if unique and not ({"get_by_id", "list_query"} & set(tree["ops"])):
        _with_operation(tree, "get_by_id")  # a read shows the refused create stored nothing
    return tree


def _one_grammar_2_kind(tree: dict[str, Any]) -> None:
    """Keep the first drawn grammar-2 kind only (its keys stay; the others become None)."""
    drawn = [key for key in ("alias", "errors", "unique") if tree[key]]
    for key in drawn[1:]:
        if key == "alias":
            tree["number"]["name"] = DOMAINS[tree["domain"]]["number"]
        tree[key] = None


def _pref(rng: random.Random, tree: dict[str, Any]) -> dict[str, Any]:
    """The cookie preference: its name, its two words (oldest first, newest first), its default.

    It reads the list (added if absent), beside one other operation (the first drawn) when the tree
    has no grammar-2 kind, else beside none (but an id route where the error shape needs a second
    error code), so the checks stay within the screen's cap.
    """
    cookie = rng.choice(PREF_COOKIES)
    words = list(rng.choice(PREF_WORDS))
    if tree["limit"] is None:
        tree["limit"] = {"default": rng.choice(LIMIT_DEFAULTS), "max": rng.choice(LIMIT_MAXIMA)}
    grammar_2 = tree["alias"] or tree["errors"] or tree["unique"]
    others = [] if grammar_2 else [op for op in tree["ops"][1:] if op != "list_query"][:1]
    if not others and tree["errors"] and tree["auth"] == "none":
        others = ["get_by_id"]
    tree["ops"] = ["create", *sorted([*others, "list_query"])]
    return {"cookie": cookie, "values": words, "default": rng.choice(words), "route": f"/preferences/{cookie}"}


def draw_tree_v3(rng: random.Random) -> dict[str, Any]:
    """A grammar-3 tree: the grammar-2 draw (one grammar-2 kind kept), then the Location header, the cookie or both."""
    tree = draw_tree_v2(rng)
    _one_grammar_2_kind(tree)
    which = rng.choice(("location", "pref", "both"))
    tree["location"] = {"path": f"/{tree['many']}/{{id}}"} if which != "pref" else None
    tree["pref"] = _pref(rng, tree) if which != "location" else None
    return tree


def candidate(seed: int, index: int, grammar: int = GRAMMAR) -> dict[str, Any]:
    """The index-th tree of a seed's stream under a grammar: a pure function of (seed, index, grammar)."""
    if grammar == 1:
        return draw_tree(random.Random(f"fastapi-gen:{seed}:{index}"))
    if grammar == 2:
        return draw_tree_v2(random.Random(f"fastapi-gen:g2:{seed}:{index}"))
    if grammar == 3:
        return draw_tree_v3(random.Random(f"fastapi-gen:g3:{seed}:{index}"))
    raise ValueError(f"no fastapi grammar {grammar}")


def canonical(tree: dict[str, Any]) -> str:
    return json.dumps(tree, sort_keys=True, separators=(",", ":"))


def tree_hash(tree: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(tree).encode()).hexdigest()[:12]


def task_id(tree: dict[str, Any]) -> str:
    return f"fastapi_gen_{tree_hash(tree)}"


def id_routes(tree: dict[str, Any]) -> list[str]:
    """The operations that address one record by its id (they share the unknown-id answer)."""
    return [op for op in tree["ops"] if op in ("get_by_id", "patch_partial", "delete_204")]


def kinds(tree: dict[str, Any]) -> list[str]:
    """The node kinds of a tree, in KINDS order."""
    present = set(tree["ops"])
    if tree["secret"]:
        present.add("hidden_field")
    if tree["auth"] == "writes":
        present.add("key_on_writes")
    if tree["auth"] == "all":
        present.add("key_on_all")
    if tree.get("alias"):
        present.add("alias_field")
    if tree.get("errors"):
        present.add("error_shape")
    if tree.get("unique"):
        present.add("conflict_409")
    if tree.get("location"):
        present.add("location_header")
    if tree.get("pref"):
        present.add("cookie_pref")
    return [k for k in KINDS if k in present]


def tier(tree: dict[str, Any]) -> str:
    return "cross_cutting" if tree["auth"] == "all" else "single"


def signature(tree: dict[str, Any]) -> str:
    """The structure with the domain and every constant blanked: the kinds and which optional fields exist."""
    fields = [f for f in OPTIONAL_FIELDS if tree[f]]
    return "fastapi_gen:" + "+".join(kinds(tree)) + ":" + "+".join(fields or ["-"])


def measures(tree: dict[str, Any], n_checks: int) -> dict[str, Any]:
    """Structural measures, and the difficulty they give.

    score = operations beyond create + 1 for the hidden field + 1 for a key on writes + 3 for the key on
    every route (the cross-cutting rule) + 1 when a PATCH and a hidden field meet + 1 for each grammar-2
    or grammar-3 kind (alias, error shape, unique text, Location header, cookie preference); easy at 1,
    hard from 4 and for every cross-cutting tree, medium between.
    """
    ks = kinds(tree)
    score = (len(tree["ops"]) - 1) + ("hidden_field" in ks) + ("key_on_writes" in ks) + 3 * ("key_on_all" in ks)
    score += sum(k in ks for k in (*GRAMMAR_2_KINDS, *GRAMMAR_3_KINDS))
    score += "patch_partial" in ks and "hidden_field" in ks
    difficulty = "hard" if score >= 4 or tier(tree) == "cross_cutting" else ("easy" if score <= 1 else "medium")
    return {
        "node_kinds": ks,
        "tier": tier(tree),
        "operations": len(tree["ops"]),
        "fields": 2 + sum(bool(tree[f]) for f in OPTIONAL_FIELDS),
        "checks": n_checks,
        "score": score,
        "difficulty": difficulty,
    }
