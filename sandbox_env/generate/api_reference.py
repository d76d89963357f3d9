"""The reference app of a generated fastapi task, rendered from its tree (generate/api_tree.py).

Written the way a careful person writes it, and so that every mutant verify/mutants.py makes of
it changes an answer some check reads: no construct is emitted whose mutants no request can tell
apart. Hence: `response_model` only where a field must be left out (without one it would change
nothing); ids from `itertools.count(1)` (no arithmetic to flip); the collection filter as a truth
test on the repeated parameter (a `None` test there would have an equivalent mutant, since an
absent parameter is None and never an empty list); the key test as `is None` then `!=` (a truth
test would answer an empty key 401, which the checks send and expect 403).

Grammar-2 kinds: an aliased field is declared by its snake_case name with the alias (the input
models; the record is dumped by alias, so stored records and answers carry the JSON key, and the
output model declares the JSON key itself: an alias there would have mutants no request tells
apart); the error shape is two exception handlers (every HTTP error, and validation errors with
the stated message), keeping each status code and header; the unique text is an exact `==` over
the stored records before anything is stored.

Grammar-3 kinds: the Location header is set on the create's response object after the record is
stored (`/<many>/{id}` from the record itself); the preference cookie is a parameter limited to the
two words, with the default as its default, and the list is reversed when the cookie asks for newest
first, tested against the default word (`== default` when the default is newest first, `!= default`
otherwise), so a default changed to any other text changes the list; the preference route takes the
word as a one-key body limited to the two words and sets the cookie on its response (path `/`, the
default of the call).

PATCH's model declares every field with a `None` default that is not validated, so a field left
out stays unset, and an explicit null is refused for every field but the note (its type does not
admit None).
"""

from __future__ import annotations

import json
from typing import Any


def _title(tree: dict[str, Any]) -> str:
    return "".join(p.capitalize() for p in tree["one"].split("_"))


def _model_fields(tree: dict[str, Any], patch: bool) -> list[str]:
    t, n = tree["text"], tree["number"]
    d = "default=None, " if patch else ""
    alias = f"alias={tree['alias']['json']!r}, " if tree.get("alias") else ""
    lines = [
        f"    {t['name']}: str = Field({d}min_length={t['min']}, max_length={t['max']})",
        f"    {n['name']}: int = Field({d}{alias}ge={n['ge']}, le={n['le']})",
    ]
    if tree["note"]:
        lines.append(f"    {tree['note']['name']}: str | None = None")
    if tree["choice"]:
        c = tree["choice"]
        values = ", ".join(repr(v) for v in c["values"])
        lines.append(f"    {c['name']}: Literal[{values}] = {'None' if patch else repr(c['default'])}")
    if tree["labels"]:
        lines.append(f"    {tree['labels']['name']}: list[str] = {'None' if patch else '[]'}")
    if tree["secret"] and not patch:
        lines.append(f"    {tree['secret']['name']}: str")
    return lines


def _out_fields(tree: dict[str, Any]) -> list[str]:
    number = tree["alias"]["json"] if tree.get("alias") else tree["number"]["name"]
    lines = ["    id: int", f"    {tree['text']['name']}: str", f"    {number}: int"]
    if tree["note"]:
        lines.append(f"    {tree['note']['name']}: str | None")
    if tree["choice"]:
        lines.append(f"    {tree['choice']['name']}: str")
    if tree["labels"]:
        lines.append(f"    {tree['labels']['name']}: list[str]")
    return lines


def _error_handlers(tree: dict[str, Any]) -> list[str]:
    """Every HTTP error and every validation error answered in the tree's error shape."""
    shape = tree["errors"]
    outer, message, invalid = shape["outer"], shape["message"], json.dumps(shape["invalid"])
    return [
        "",
        "",
        "@app.exception_handler(StarletteHTTPException)",
        "async def shaped_http_error(request: Request, exc: StarletteHTTPException):",
        f'    body = {{"{outer}": {{"status": exc.status_code, "{message}": exc.detail}}}}',
        "    return JSONResponse(body, status_code=exc.status_code, headers=exc.headers)",
        "",
        "",
        "@app.exception_handler(RequestValidationError)",
        "async def shaped_validation_error(request: Request, exc: RequestValidationError):",
        f'    body = {{"{outer}": {{"status": 422, "{message}": {invalid}}}}}',
        "    return JSONResponse(body, status_code=422)",
    ]


def _error_imports() -> list[str]:
    return [
        "from fastapi.exceptions import RequestValidationError",
        "from fastapi.responses import JSONResponse",
        "from starlette.exceptions import HTTPException as StarletteHTTPException",
    ]


def _unique_test(tree: dict[str, Any]) -> list[str]:
    """The create's refusal of a text a stored record holds (exact comparison)."""
    text, many = tree["text"]["name"], tree["many"]
    return [
        f'    if any(r["{text}"] == body.{text} for r in {many}.values()):',
        f"        raise HTTPException(status_code=409, detail={json.dumps(tree['unique']['detail'])})",
    ]


def _words(pref: dict[str, Any]) -> str:
    return f"Literal[{', '.join(repr(v) for v in pref['values'])}]"


def _pref_param(tree: dict[str, Any]) -> list[str]:
    """The list's cookie parameter (limited to the two words, the default as its default)."""
    pref = tree["pref"]
    return [f"    {pref['cookie']}: {_words(pref)} = Cookie(default={pref['default']!r}),"]


def _pref_order(tree: dict[str, Any]) -> list[str]:
    """Newest first when the cookie says so, tested against the default word."""
    pref = tree["pref"]
    test = "==" if pref["default"] == pref["values"][1] else "!="
    return [f"    if {pref['cookie']} {test} {pref['default']!r}:", "        rows.reverse()"]


def _pref_route(tree: dict[str, Any]) -> list[str]:
    """The route that sets the preference cookie."""
    pref = tree["pref"]
    return [
        "",
        "",
        f'@app.put("{pref["route"]}")',
        f"def set_{pref['cookie']}(response: Response, value: {_words(pref)} = Body(embed=True)):",
        f"    response.set_cookie({pref['cookie']!r}, value)",
        '    return {"value": value}',
    ]


def _location_line(tree: dict[str, Any]) -> list[str]:
    """The create's Location header: the stored record's path."""
    return [f'    response.headers["Location"] = f"/{tree["many"]}/{{record[\'id\']}}"']


def _fastapi_names(tree: dict[str, Any]) -> list[str]:
    names = ["FastAPI", "HTTPException"]
    if tree["auth"] != "none":
        names += ["Depends", "Header"]
    if "list_query" in tree["ops"]:
        names.append("Query")
    if tree.get("errors"):
        names.append("Request")
    if tree.get("location") or tree.get("pref"):
        names.append("Response")
    if tree.get("pref"):
        names += ["Body", "Cookie"]
    return names


def render_reference(tree: dict[str, Any]) -> str:
    one, many, cls = tree["one"], tree["many"], _title(tree)
    ops, auth = tree["ops"], tree["auth"]
    hidden = bool(tree["secret"])
    fastapi_names = _fastapi_names(tree)
    out = ["import itertools"]
    if tree["choice"] or tree.get("pref"):
        out.append("from typing import Literal")
    imports = [f"from fastapi import {', '.join(sorted(fastapi_names))}", "from pydantic import BaseModel, Field"]
    out += ["", *sorted(imports + (_error_imports() if tree.get("errors") else [])), ""]
    if auth != "none":
        k = tree["key"]
        out += [
            f"KEY = {k['value']!r}",
            "",
            "",
            f"def require_key(key: str | None = Header(default=None, alias={k['header']!r})):",
            "    if key is None:",
            '        raise HTTPException(status_code=401, detail="missing key")',
            "    if key != KEY:",
            '        raise HTTPException(status_code=403, detail="wrong key")',
            "",
            "",
        ]
    out.append("app = FastAPI(dependencies=[Depends(require_key)])" if auth == "all" else "app = FastAPI()")
    if tree.get("errors"):
        out += _error_handlers(tree)
    out += ["", "", f"class {cls}In(BaseModel):", *_model_fields(tree, patch=False)]
    if hidden:
        out += ["", "", f"class {cls}Out(BaseModel):", *_out_fields(tree)]
    if "patch_partial" in ops:
        out += ["", "", f"class {cls}Patch(BaseModel):", *_model_fields(tree, patch=True)]
    out += ["", "", f"{many}: dict[int, dict] = {{}}", "next_ids = itertools.count(1)"]
    by_alias = "by_alias=True" if tree.get("alias") else ""
    write_dep = ", dependencies=[Depends(require_key)]" if auth == "writes" else ""
    model = f", response_model={cls}Out" if hidden else ""
    if tree_has_id_routes(tree):
        out += [
            "",
            "",
            f"def stored({one}_id: int) -> dict:",
            f"    if {one}_id not in {many}:",
            "        raise HTTPException(",
            f'            status_code=404, detail=f"{one} {{{one}_id}} not found", headers={{"X-Lookup": "missing-{one}"}}',
            "        )",
            f"    return {many}[{one}_id]",
        ]
    out += [
        "",
        "",
        f'@app.post("/{many}", status_code=201{model}{write_dep})',
        f"def create_{one}(body: {cls}In{', response: Response' if tree.get('location') else ''}):",
        *(_unique_test(tree) if tree.get("unique") else []),
        f'    record = {{"id": next(next_ids), **body.model_dump({by_alias})}}',
        f'    {many}[record["id"]] = record',
        *(_location_line(tree) if tree.get("location") else []),
        "    return record",
    ]
    if "get_by_id" in ops:
        out += [
            "",
            "",
            f'@app.get("/{many}/{{{one}_id}}"{model})',
            f"def read_{one}({one}_id: int):",
            f"    return stored({one}_id)",
        ]
    if "list_query" in ops:
        t, lim = tree["text"]["name"], tree["limit"]
        list_model = f", response_model=list[{cls}Out]" if hidden else ""
        out += [
            "",
            "",
            f'@app.get("/{many}"{list_model})',
            f"def list_{many}(",
            f"    {t}: list[str] | None = Query(default=None),",
            f"    limit: int = Query(default={lim['default']}, ge=1, le={lim['max']}),",
            *(_pref_param(tree) if tree.get("pref") else []),
            "):",
            f"    rows = list({many}.values())",
            *(_pref_order(tree) if tree.get("pref") else []),
            f"    if {t}:",
            f'        rows = [r for r in rows if r["{t}"] in {t}]',
            "    return rows[:limit]",
        ]
        out += _pref_route(tree) if tree.get("pref") else []
    if "patch_partial" in ops:
        out += [
            "",
            "",
            f'@app.patch("/{many}/{{{one}_id}}"{model}{write_dep})',
            f"def update_{one}({one}_id: int, body: {cls}Patch):",
            f"    record = stored({one}_id)",
            f"    record.update(body.model_dump(exclude_unset=True{', ' + by_alias if by_alias else ''}))",
            "    return record",
        ]
    if "delete_204" in ops:
        out += [
            "",
            "",
            f'@app.delete("/{many}/{{{one}_id}}", status_code=204{write_dep})',
            f"def delete_{one}({one}_id: int):",
            f"    stored({one}_id)",
            f"    del {many}[{one}_id]",
        ]
    return "\n".join(out) + "\n"


def tree_has_id_routes(tree: dict[str, Any]) -> bool:
    return any(op in tree["ops"] for op in ("get_by_id", "patch_partial", "delete_204"))
