"""The English spec of a generated fastapi task, rendered from its tree, with its coverage mapping.

Behaviour only: routes, status codes, bodies, headers and the field rules, as a client sees
them; never the FastAPI or pydantic construct that gives them (families/fastapi_words.py refuses
those words and the FastAPI documentation's example strings, for the composed tier and here).
Every rule the checks enforce is stated: bounds and whether they are included, defaults, what
null does, order, the limit's default and range, the exact error bodies and the header.

Every requirement unit (a bullet; the one opening sentence) is rendered together with the
roles of the checks that test it (api_checks.NAMES), so the coverage mapping
(verify/coverage.py) is made with the text and cannot drift from it.

Grammar-2 kinds add units of their own (the aliased field's exact JSON key and the name that is not
it; the one error shape, with the message of a 422; the 409 of a held text and how texts compare)
and change no unit of a grammar-1 tree: error bodies are written through api_checks.error_json,
which gives a grammar-1 tree its `{"detail": ...}` bodies unchanged.

Grammar-3 kinds add units the same way (the Location header of a create, with an example path; the
preference cookie: its name, its two words and what each means, its default, 422 for another word,
and the route that sets it, with the two texts its Set-Cookie header holds) and change the list's unit
only in naming the cookie's order in place of creation order.
"""

from __future__ import annotations

import json
from typing import Any

from sandbox_env.generate.api_checks import MISSING_KEY, NAMES, WRONG_KEY, error_json, json_key


def _q(value: str) -> str:
    return f"`{value}`"


WRITES = (("create", "POST"), ("patch_partial", "PATCH"), ("delete_204", "DELETE"))


def _methods(methods: list[str]) -> str:
    quoted = [_q(m) for m in methods]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " and " + quoted[-1]


def title(tree: dict[str, Any]) -> str:
    words = {
        "get_by_id": "read by id",
        "list_query": "a filtered list",
        "patch_partial": "partial updates",
        "delete_204": "deletion",
    }
    parts = ["create", *(words[op] for op in tree["ops"] if op in words)]
    extra = {"none": "", "writes": "; a key on every write", "all": "; a key on every request"}[tree["auth"]]
    return f"{tree['many'].capitalize()} kept in memory: {', '.join(parts)}{extra}"


def _number_unit(t: dict[str, Any]) -> tuple[str, str, list[str]]:
    """The number field's rule; under an alias, its exact JSON key and the name that is not it."""
    number = t["number"]
    key = json_key(t, "number")
    rule = f"{_q(key)}: a whole number from {number['ge']} to {number['le']}, both included; required."
    if not t.get("alias"):
        return ("Fields", rule, ["validate"])
    snake = _q(number["name"])
    patch = f", and a PATCH that gives only {snake} changes nothing" if "patch_partial" in t["ops"] else ""
    rule += (
        f" Its JSON key is exactly {_q(key)}, in the bodies sent and in every answer. {snake} is not a name of this "
        f"field: it is ignored wherever it is sent (a create that gives {snake} but no {_q(key)} lacks this required "
        f"field and is answered 422{patch}), and no answer has a {snake} key."
    )
    return ("Fields", rule, ["validate", "alias"])


def _error_codes(t: dict[str, Any]) -> list[str]:
    codes = ["404"] if any(op in t["ops"] for op in ("get_by_id", "patch_partial", "delete_204")) else []
    codes += ["409"] if t.get("unique") else []
    codes += ["401", "403"] if t["auth"] != "none" else []
    return [*codes, "422"]


def _error_shape_unit(t: dict[str, Any]) -> tuple[str, str, list[str]]:
    """Every error answer's one JSON shape, and the message of a 422."""
    shape = t["errors"]
    outer, message = _q(shape["outer"]), _q(shape["message"])
    example = json.dumps(error_json(t, 404, f"{t['one']} 7 not found"))
    codes = _error_codes(t)
    listed = ", ".join(codes[:-1]) + " and " + codes[-1]
    text = (
        f"Every error answer ({listed}) has a JSON body of one shape, for example {_q(example)}: an object whose only "
        f"key is {outer}, holding an object with exactly two keys, {_q('status')} (the answer's status code, as a "
        f"number) and {message} (a text). The status code of the answer itself is the one stated for each case. "
        f"A 422 (a body or a query parameter that breaks a rule) has the {message} "
        f"{_q(shape['invalid'])}; every other error answer has the {message} this spec gives it."
    )
    return ("Rules", text, ["error_shape", "validate"])


def _unique_unit(t: dict[str, Any]) -> tuple[str, str, list[str]]:
    """A create whose text a stored record holds: 409, nothing stored; how texts compare."""
    name, one, many = t["text"]["name"], t["one"], t["many"]
    body = json.dumps(error_json(t, 409, t["unique"]["detail"]))
    text = (
        f"A {_q('POST /' + many)} whose {_q(name)} equals the {_q(name)} of a stored {one} is answered 409 with the "
        f"body {_q(body)} and stores nothing (it takes no id either). The comparison is exact: letter case matters, "
        f"so {_q('Abc')} and {_q('abc')} are different values of {_q(name)}."
    )
    return ("Rules", text, ["conflict", "conflict_case"])


def _location_unit(t: dict[str, Any]) -> tuple[str, str, list[str]]:
    """The Location header of a create answered 201 (and, with a read by id, what that path answers)."""
    one, many = t["one"], t["many"]
    text = (
        f"A {_q('POST /' + many)} answered 201 carries the header {_q('Location: /' + many + '/{id}')}, the path "
        f"of the new {one} with its id (for example {_q('Location: /' + many + '/7')} for id 7)."
    )
    if "get_by_id" in t["ops"]:
        text += f" A {_q('GET')} of that path answers that {one}."
    return ("Rules", text, ["location", "create"])


def _pref_units(t: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """The preference cookie the list reads, and the route that sets it."""
    pref, many = t["pref"], t["many"]
    cookie, (oldest, newest) = _q(pref["cookie"]), pref["values"]
    read = (
        f"{_q('GET /' + many)} reads the cookie {cookie}: with the value {_q(oldest)} the list is oldest first "
        f"(ids ascending), with {_q(newest)} newest first (ids descending), and without that cookie it is "
        f"{_q(pref['default'])}. Any other value of {cookie} is answered 422. The filter and the limit apply to "
        "the list in that order: the limit keeps its first ones."
    )
    body = json.dumps({"value": newest})
    put = _q("PUT " + pref["route"])
    setter = (
        f"{put} with a JSON object such as {_q(body)} (the value {_q(oldest)} or {_q(newest)}) answers 200 with "
        f"that same object and sets the cookie {cookie} to that value for every path: its {_q('Set-Cookie')} header "
        f"holds {_q(pref['cookie'] + '=' + newest)} (for that value) and {_q('Path=/')}. Any other value, or no "
        "value, is answered 422 and sets nothing."
    )
    return [("Preferences", read, ["pref_read"]), ("Preferences", setter, ["pref_set"])]


def units(tree: dict[str, Any]) -> list[tuple[str, str, list[str]]]:
    """(section, text, check roles) for every requirement unit, in order; section "" is the opening."""
    t = tree
    one, many, ops = t["one"], t["many"], t["ops"]
    text = t["text"]
    has = set(ops)
    out: list[tuple[str, str, list[str]]] = [
        (
            "",
            f"A service keeps {many} in memory and starts with none; every answer that gives a {one} gives it as a "
            f"JSON object with {_q('id')} and the fields below.",
            ["create"],
        )
    ]
    out.append(
        (
            "Fields",
            f"{_q(text['name'])}: text of {text['min']} to {text['max']} characters, both lengths included; required.",
            ["validate"],
        )
    )
    out.append(_number_unit(t))
    if t["note"]:
        out.append(("Fields", f"{_q(t['note']['name'])}: text or null; null when not given.", ["create"]))
    if t["choice"]:
        c = t["choice"]
        values = ", ".join(_q(v) for v in c["values"])
        out.append(
            ("Fields", f"{_q(c['name'])}: one of the words {values}; {_q(c['default'])} when not given.", ["create", "validate"])
        )
    if t["labels"]:
        out.append(("Fields", f"{_q(t['labels']['name'])}: a list of texts; an empty list when not given.", ["create"]))
    if t["secret"]:
        out.append(
            (
                "Fields",
                f"{_q(t['secret']['name'])}: text; required when a {one} is created. It is kept but is never part of "
                f"any answer: every answer that gives a {one} leaves it out.",
                ["create", "validate"],
            )
        )
    ids = f"Ids are whole numbers counting from 1 in the order {many} are created"
    ids += f"; an id is never given again, even after its {one} is deleted." if "delete_204" in has else "."
    out.append(("Rules", ids, ["create", "delete"] if "delete_204" in has else ["create"]))
    if any(op in has for op in ("get_by_id", "patch_partial", "delete_204")):
        routes = [
            f"{m} /{many}/{{id}}"
            for op, m in (("get_by_id", "GET"), ("patch_partial", "PATCH"), ("delete_204", "DELETE"))
            if op in has
        ]
        example = json.dumps(error_json(t, 404, f"{one} 7 not found"))
        out.append(
            (
                "Rules",
                f"An id that no stored {one} has ({', '.join(_q(r) for r in routes)}) is answered 404 with the body "
                f"{_q(example)} (with the id as sent in place of 7) and the header {_q('X-Lookup: missing-' + one)}.",
                ["unknown"],
            )
        )
    if t.get("errors"):
        out.append(_error_shape_unit(t))
    if t.get("unique"):
        out.append(_unique_unit(t))
    if t.get("location"):
        out.append(_location_unit(t))
    broken = ["a text too short or too long", "a number out of its range"]
    broken += ["a value that is not one of the listed words"] if t["choice"] else []
    broken.append("a missing required field")
    out.append(
        (
            "Endpoints",
            f"{_q('POST /' + many)} with a JSON object of the fields creates a {one} and answers 201 with it. A body "
            f"that breaks any field rule above ({', '.join(broken)}) is answered 422 and stores nothing.",
            ["create", "validate"],
        )
    )
    if "get_by_id" in has:
        out.append(("Endpoints", f"{_q('GET /' + many + '/{id}')} answers 200 with that {one}.", ["get"]))
    if "list_query" in has:
        lim = t["limit"]
        name = text["name"]
        order = "in the order they were created"
        if t.get("pref"):
            order = f"in the order the cookie {_q(t['pref']['cookie'])} chooses"
        out.append(
            (
                "Endpoints",
                f"{_q('GET /' + many)} answers 200 with a JSON list of the {many} {order}, at "
                f"most {_q('limit')} of them. The query parameter {_q('limit')} is a whole number from 1 to "
                f"{lim['max']}, both included, and {lim['default']} when not given; any other value is answered 422. "
                f"The query parameter {_q(name)} may be given any number of times "
                f"({_q('?' + name + '=a&' + name + '=b')}); when it is given, only the {many} whose {_q(name)} "
                "equals one of its values exactly are listed, and the limit counts those.",
                ["list_limit", "list_bounds", "list_filter"],
            )
        )
    if "patch_partial" in has:
        note = t["note"]["name"]
        also = f" (any but {_q(t['secret']['name'])})" if t["secret"] else ""
        out.append(
            (
                "Endpoints",
                f"{_q('PATCH /' + many + '/{id}')} with a JSON object holding some of the fields{also} changes only the "
                f"fields present in it and answers 200 with the whole {one}; an empty object changes nothing. "
                f"{_q(note)} may be set to null. A value that breaks its field's rule, or null for any field but "
                f"{_q(note)}, is answered 422 and changes nothing.",
                ["patch", "patch_invalid"],
            )
        )
    if "delete_204" in has:
        out.append(
            (
                "Endpoints",
                f"{_q('DELETE /' + many + '/{id}')} removes that {one} and answers 204 with an empty body.",
                ["delete"],
            )
        )
    if t.get("pref"):
        out += _pref_units(t)
    if t["auth"] != "none":
        k = t["key"]
        which = (
            "Every request to the endpoints above"
            if t["auth"] == "all"
            else f"Every {_methods([m for op, m in WRITES if op in has])} request"
        )
        roles = ["key_missing", "key_wrong"]
        tail = ""
        if t["auth"] == "writes" and ("get_by_id" in has or "list_query" in has):
            tail = " Reading needs no key."
            roles.append("key_reads_open")
        out.append(
            (
                "Access",
                f"{which} must carry the header {_q(k['header'] + ': ' + k['value'])}. Without that header the answer "
                f"is 401 with {_q(json.dumps(error_json(t, 401, MISSING_KEY)))}; with any other value, an empty one "
                f"included, it is 403 with {_q(json.dumps(error_json(t, 403, WRONG_KEY)))}.{tail}",
                roles,
            )
        )
    return out


def render_spec(tree: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    """(spec text, [[spec_coverage]] entries) of a tree; entries name checks by api_checks.NAMES."""
    lines: list[str] = []
    section = None
    coverage = []
    for sec, text, roles in units(tree):
        if sec != section:
            if sec:
                lines += ["", f"{sec}:", ""]
            section = sec
        lines.append(f"- {text}" if sec else text)
        says = " ".join(text.split())[:60]
        coverage.append({"says": says, "checks": [NAMES[r] for r in roles]})
    return "\n".join(lines) + "\n", coverage
