"""Feature kinds of the django task generator: each draws its node and renders its part of a task.

A node is `{"kind", "options", "constants"}`: `options` are its structure (they enter the task's
signature), `constants` the values drawn for it (a status, a bound, an error code). A kind
renders, from the domain and its node: the files of the project tree it needs (given models,
stubs), the reference deliverables, a plausible wrong answer (`junk`), the English spec and the
tests, visible and hidden, each over its own drawn rows.

Expected values come from the oracles below: plain Python over the rows a test inserts and the
feature's rule, never from running the reference (verification runs the reference against
them). In a hidden test every value the spec leaves free is a `[[vary]]` token
(families/django_vary.py), redrawn for every grading: names and codes keep their first letter
(orderings by them hold), quantities are drawn inside disjoint bands (orderings and boundaries
by them hold), and an expected value that depends on several of them is written as their sum,
which the host folds after the draw.

Kinds:
- `queryset`: a custom queryset as the parent's manager, with a chainable filter on the flag
  and a method giving figures over the children of some statuses (count, total, largest) that
  keeps parents without such children with zeros; one query.
- `constraints`: the child model with rules the database refuses (a range check, a unique pair,
  plain or only among children of some statuses) and rules full validation reports (a field's
  own rule lands on the field; the capacity rule, which reads two models, lands on the
  non-field errors); where each error lands and under which code.
- `view`: a JSON view over one parent's children under an integer path segment, with filters
  from the query string (a status, a minimum quantity), 400 for a bad filter, 404 for a missing
  (or, drawn, flagged-off) parent and for a non-integer segment, 405 for any method but GET.
- `form` (generate/dj_form.py): a form over the child model with a field's own rules (on that
  field), a cross-field rule (on the non-field errors), the code normalised in what it cleans and
  stores.
- `command` (generate/dj_command.py): a management command over one parent's children, with
  arguments (a status choice, a bounded minimum, a dry run), stated output lines, what it changes
  (marks or deletes) and its refusals (`CommandError` with a stated message).
The helpers every kind shares live in generate/dj_common.py.

Spec rule: every rule a test enforces is stated as behaviour; no technique is named
(families/django_words.py, checked by generate/dj_task.py's screen).
"""

from __future__ import annotations

import random
from typing import Any

from sandbox_env.generate.dj_command import CommandKind
from sandbox_env.generate.dj_common import (
    NON_FIELD,
    Values,
    create_parent,
    draw_subset,
    models_file,
    parent_model,
    statuses_english,
    test_module_head,
)
from sandbox_env.generate.dj_domain import CODES, NAMES, Domain, Template
from sandbox_env.generate.dj_form import FormKind

BIG_CAPACITY = 100000


# -- drawn values: plain in a visible test, [[vary]] tokens in a hidden one ------------------------
# (`Values`, and the given models and small renderers every kind shares, live in generate/dj_common.py)


def _sum_expr(terms: list[int]) -> str:
    """A total as a test writes it: the sum of its terms (folded by the host after a draw), or 0."""
    return " + ".join(str(t) for t in terms) if terms else "0"


def _py(value: Any) -> str:
    return repr(value)


def _create_child(t: Template, parent_var: str, code: str, qty: int | str, status: str) -> str:
    return f'    {t.child}.objects.create({t.parent.lower()}={parent_var}, {t.code}="{code}", {t.qty}={qty}, status="{status}")'


# -- kind: queryset ------------------------------------------------------------------------------

AGGS = ("count", "sum", "max")
AGG_CLASSES = {"count": "Count", "sum": "Sum", "max": "Max"}


def qs_names(t: Template, node: dict[str, Any]) -> dict[str, str]:
    c = node["constants"]
    label = c["label"]
    return {
        "class": f"{t.parent}QuerySet",
        "filter": c["filter_method"],
        "stats": f"with_{label}_figures",
        "count": f"{label}_{t.children}",
        "sum": f"{label}_{t.qty}",
        "max": f"largest_{label}_{t.qty}",
    }


def qs_oracle(parents: list[dict], children: list[dict], counted: list[str], aggs: list[str]) -> dict[str, dict]:
    """Per parent name: the figures over its children whose status is exactly one of `counted`.

    count: how many; sum: the terms of the total (a test writes their sum); max: the largest, 0
    when none. Letter case matters: a status "DONE" is not "done".
    """
    out = {}
    for p in parents:
        mine = [ch["qty"] for ch in children if ch["parent"] == p["name"] and ch["status"] in counted]
        out[p["name"]] = {"count": len(mine), "sum": sorted(mine), "max": max(mine) if mine else 0}
    return out


class QuerysetKind:
    kind = "queryset"
    category = "querysets"

    def draw(self, domain: Domain, rng: random.Random) -> dict[str, Any]:
        t = domain.template
        aggs = [a for a in AGGS if rng.random() < 0.6] or [rng.choice(AGGS)]
        two = rng.random() < 0.5
        if two:
            left_out = rng.choice(t.statuses)
            counted = [s for s in t.statuses if s != left_out]
            label = f"not_{left_out}"
        else:
            counted = [rng.choice(t.statuses)]
            label = counted[0]
        flag_method = t.flag_on.replace(" ", "_")
        return {
            "kind": self.kind,
            "options": {"aggs": aggs, "statuses": len(counted)},
            "constants": {"counted": counted, "label": label, "filter_method": flag_method},
        }

    def deliverables(self, domain: Domain, node: dict[str, Any]) -> list[str]:
        return [f"{domain.app}/querysets.py"]

    def tree(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        t, n = domain.template, qs_names(domain.template, node)
        return {
            f"{domain.app}/models.py": models_file(t, n["class"], "querysets"),
            f"{domain.app}/querysets.py": (
                f'"""The queryset behind {t.parent}.objects: write {n["class"]} here (see the task)."""\n'
            ),
        }

    def _counted_q(self, t: Template, node: dict[str, Any]) -> str:
        counted = node["constants"]["counted"]
        if len(counted) == 1:
            return f'Q({t.children}__status="{counted[0]}")'
        return f"Q({t.children}__status__in={counted!r})"

    def reference(self, domain: Domain, node: dict[str, Any], junk: bool = False) -> dict[str, str]:
        t, n = domain.template, qs_names(domain.template, node)
        aggs = node["options"]["aggs"]
        lines = []
        filt = "" if junk else ", filter=COUNTED"
        for a in aggs:
            if a == "count":
                lines.append(f'            {n["count"]}=Count("{t.children}"{filt}),')
            elif a == "sum":
                inner = f'Sum("{t.children}__{t.qty}"{filt})'
                lines.append(f"            {n['sum']}={inner if junk else f'Coalesce({inner}, Value(0))'},")
            else:
                inner = f'Max("{t.children}__{t.qty}"{filt})'
                lines.append(f"            {n['max']}={inner if junk else f'Coalesce({inner}, Value(0))'},")
        imports = sorted({"Q", "Value"} | {AGG_CLASSES[a] for a in aggs})
        body = "\n".join(lines)
        flag_value = "False" if junk else "True"
        text = f'''"""The queryset behind {t.parent}.objects."""

from django.db import models
from django.db.models import {", ".join(imports)}
from django.db.models.functions import Coalesce

COUNTED = {self._counted_q(t, node)}


class {n["class"]}(models.QuerySet):
    def {n["filter"]}(self):
        return self.filter({t.flag}={flag_value})

    def {n["stats"]}(self):
        return self.annotate(
{body}
        )
'''
        return {f"{domain.app}/querysets.py": text}

    def junk(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, junk=True)

    def spec(self, domain: Domain, node: dict[str, Any]) -> str:
        t, n, c = domain.template, qs_names(domain.template, node), node["constants"]
        counted = c["counted"]
        which = f"whose status is exactly {statuses_english(counted)}"
        figures = []
        for a in node["options"]["aggs"]:
            if a == "count":
                figures.append(f"- `{n['count']}`: the number of its {t.child_noun}s {which};")
            elif a == "sum":
                figures.append(f"- `{n['sum']}`: the total `{t.qty}` over those {t.child_noun}s;")
            else:
                figures.append(f"- `{n['max']}`: the largest `{t.qty}` among those {t.child_noun}s;")
        names = ", ".join(f"`{n[a]}`" for a in node["options"]["aggs"])
        equal = "equal to" if len(node["options"]["aggs"]) == 1 else "each equal to"
        return f"""`{domain.app}/models.py` gives `{t.parent}` (a {t.parent_noun}: `name`, `{t.flag}`, `{t.capacity}`) \
and `{t.child}` (a {t.child_noun} of one {t.parent_noun}, reached from it as `{t.children}`: `{t.code}`, `{t.qty}`, \
`status`), and declares `objects = {n["class"]}.as_manager()` on `{t.parent}`, importing `{n["class"]}` from \
`{domain.app}/querysets.py`, which you write.

`{n["class"]}` is a subclass of `django.db.models.QuerySet` with two methods, each returning a queryset of \
the same class, so that they chain with each other and with any other queryset method, in either order:

- `{n["filter"]}()`: only the {t.parent_noun}s whose `{t.flag}` is true.
- `{n["stats"]}()`: every {t.parent_noun} of the queryset, each carrying these attributes:
{chr(10).join("  " + f for f in figures)}

A status counts only when it is exactly one of those values: letter case matters (a {t.child_noun} whose \
status is `"{counted[0].upper()}"` is not counted). A {t.parent_noun} without such {t.child_noun}s (or without \
any {t.child_noun}) stays in the result with {names} {equal} the integer 0, never `None`. Each \
{t.parent_noun} appears once, whatever its number of {t.child_noun}s, and the result can be filtered and \
ordered on those attributes afterwards. `{t.parent}.objects.{n["filter"]}().{n["stats"]}()` reads its {t.parent_noun}s \
and their figures in one database query. With no {t.parent_noun} at all, the result is empty.
"""

    def tests(self, domain: Domain, node: dict[str, Any], rng: random.Random, hidden: bool) -> tuple[str, list]:
        t, n, c = domain.template, qs_names(domain.template, node), node["constants"]
        aggs, counted = node["options"]["aggs"], c["counted"]
        others = [s for s in t.statuses if s not in counted]
        v = Values(rng, hidden)
        names = v.words(NAMES, 4)
        roles = rng.sample(["off", "empty", "other", "many"], 4)
        parents = [{"name": nm, "flag": role != "off", "role": role} for nm, role in zip(names, roles, strict=True)]
        by_role = {p["role"]: p["name"] for p in parents}
        codes = v.words(CODES, 8)
        qtys = v.ints(7)
        order = rng.sample(range(7), 7)
        q = [qtys[i] for i in order]
        children = [
            {"parent": by_role["off"], "code": codes[0], "qty": q[0], "status": counted[0]},
            {"parent": by_role["many"], "code": codes[1], "qty": q[1], "status": counted[0]},
            {"parent": by_role["many"], "code": codes[2], "qty": q[2], "status": counted[-1]},
            {"parent": by_role["many"], "code": codes[3], "qty": q[3], "status": counted[0]},
            {"parent": by_role["other"], "code": codes[4], "qty": q[4], "status": counted[0].upper()},
        ]
        if others:
            children.append({"parent": by_role["many"], "code": codes[5], "qty": q[5], "status": others[0]})
            children.append({"parent": by_role["other"], "code": codes[6], "qty": q[6], "status": others[-1]})
        truth = qs_oracle(parents, children, counted, aggs)

        def figures(name: str) -> str:
            f = truth[name]
            vals = [str(f["count"]) if a == "count" else _sum_expr(f["sum"]) if a == "sum" else str(f["max"]) for a in aggs]
            return f"({', '.join(vals)},)" if len(vals) == 1 else f"({', '.join(vals)})"

        def table(keep: list[dict]) -> str:
            return "{" + ", ".join(f'"{p["name"]}": {figures(p["name"])}' for p in keep) + "}"

        on = [p for p in parents if p["flag"]]
        lines = test_module_head(
            ["import pytest"],
            [f"from {domain.app}.models import {t.child}, {t.parent}", f"from {domain.app}.querysets import {n['class']}"],
        )
        for i, p in enumerate(parents):
            lines.append(create_parent(t, f"p{i}", p["name"], p["flag"]))
        var = {p["name"]: f"p{i}" for i, p in enumerate(parents)}
        for ch in children:
            lines.append(_create_child(t, var[ch["parent"]], ch["code"], ch["qty"], ch["status"]))
        lines.append("    return {" + ", ".join(f'"{p["name"]}": {var[p["name"]]}' for p in parents) + "}")
        attrs = ", ".join(f"row.{n[a]}" for a in aggs)
        tuple_attrs = f"({attrs},)" if len(aggs) == 1 else f"({attrs})"
        first = n[aggs[0]]
        filt, stats = n["filter"], n["stats"]
        empty = by_role["empty"]
        lines += [
            "",
            "",
            "def figures(qs):",
            f"    return {{row.name: {tuple_attrs} for row in qs}}",
            "",
            "",
            "def test_the_manager_hands_out_the_custom_queryset():",
            f"    assert isinstance({t.parent}.objects.all(), {n['class']})",
            f"    assert type({t.parent}.objects.filter({t.capacity}__gte=0).{filt}()) is {n['class']}",
            f'    assert type({t.parent}.objects.order_by("name").{stats}()) is {n["class"]}',
            "",
            "",
            "def test_the_filter_keeps_only_flagged_rows(world):",
            f'    assert sorted({t.parent}.objects.{filt}().values_list("name", flat=True)) == {sorted(p["name"] for p in on)!r}',
            "",
            "",
            "def test_figures_count_only_the_statuses_named(world):",
            f"    assert figures({t.parent}.objects.{stats}()) == {table(parents)}",
            "",
            "",
            "def test_a_row_without_counted_children_is_kept_with_integer_zeros(world):",
            f'    row = {t.parent}.objects.{stats}().get(name="{empty}")',
            f"    assert {tuple_attrs} == ({', '.join('0' for _ in aggs)}{',' if len(aggs) == 1 else ''})",
            f"    assert all(type(v) is int for v in {tuple_attrs})",
            "",
            "",
            "def test_chaining_in_either_order_gives_the_same_rows(world):",
            f"    one = figures({t.parent}.objects.{filt}().{stats}())",
            f"    two = figures({t.parent}.objects.{stats}().{filt}())",
            f"    assert one == {table(on)}",
            f"    assert two == {table(on)}",
            "",
            "",
            "def test_each_row_appears_once_and_can_be_filtered_on_its_figures(world):",
            f'    qs = {t.parent}.objects.{stats}().filter({first}__gte=1).order_by("name")',
            f"    assert [row.name for row in qs] == {sorted(p['name'] for p in parents if truth[p['name']]['count'])!r}",
            "",
            "",
            "def test_the_filtered_figures_are_read_in_one_query(world, django_assert_num_queries):",
            "    with django_assert_num_queries(1):",
            f"        got = figures({t.parent}.objects.{filt}().{stats}())",
            f"    assert got == {table(on)}",
            "",
            "",
            "def test_no_rows_give_an_empty_result():",
            f"    assert list({t.parent}.objects.{filt}().{stats}()) == []",
        ]
        if "count" in aggs:
            ordered = sorted(parents, key=lambda p: (-truth[p["name"]]["count"], p["name"]))
            lines += [
                "",
                "",
                "def test_rows_can_be_ordered_on_a_figure(world):",
                f'    qs = {t.parent}.objects.{stats}().order_by("-{n["count"]}", "name")',
                f"    assert [row.name for row in qs] == {[p['name'] for p in ordered]!r}",
            ]
        return "\n".join(lines) + "\n", v.vary


# -- kind: constraints ---------------------------------------------------------------------------

RULES = ("range", "unique", "lowercase", "capacity")


def cs_codes(t: Template, node: dict[str, Any]) -> dict[str, str]:
    return {
        "range": f"{t.qty}_out_of_range",
        "unique": f"{t.code}_taken",
        "lowercase": f"{t.code}_not_lowercase",
        "capacity": f"over_{t.capacity}",
    }


def cs_oracle(node: dict[str, Any], t: Template, case: dict[str, Any], existing: list[dict]) -> tuple[dict, bool]:
    """What full validation reports for one child (field -> sorted error codes) and whether a plain save is refused.

    The rule table: a field's own rules (status one of three, code at most 12 characters and, with
    `lowercase`, lowercase letters only; a missing parent) land on that field; then `capacity` (its
    quantity above its parent's capacity) on the non-field errors; then the database rules, checked
    by validation too, on the non-field errors, each only when none of the fields it reads already
    has an error: `range` (quantity from 1 to the bound), `unique` (no other child of the same
    parent with the same code, among children whose status is one of the `among` statuses when
    given). A plain save is refused only by the database rules.
    """
    rules, c, codes = node["options"]["rules"], node["constants"], cs_codes(t, node)
    errors: dict[str, list[str]] = {}
    if case["status"] not in t.statuses:
        errors.setdefault("status", []).append("invalid_choice")
    if len(case["code"]) > 12:
        errors.setdefault(t.code, []).append("max_length")
    if "lowercase" in rules and not (case["code"].isascii() and case["code"].isalpha() and case["code"].islower()):
        errors.setdefault(t.code, []).append(codes["lowercase"])
    parent_key = t.parent.lower()
    if case["parent"] is None:
        errors.setdefault(parent_key, []).append("null")
    if "capacity" in rules and case["parent"] is not None and case["qty"] > case["capacity"]:
        errors.setdefault(NON_FIELD, []).append(codes["capacity"])
    among = c.get("among")
    in_range = 1 <= case["qty"] <= c.get("high", 0)
    dup = any(
        e["parent"] == case["parent"] and e["code"] == case["code"] and (not among or e["status"] in among) for e in existing
    ) and (not among or case["status"] in among)
    refused = False
    if "range" in rules and not in_range:
        refused = True
        if t.qty not in errors:
            errors.setdefault(NON_FIELD, []).append(codes["range"])
    if "unique" in rules and dup and case["parent"] is not None:
        refused = True
        if t.code not in errors and parent_key not in errors and (not among or "status" not in errors):
            errors.setdefault(NON_FIELD, []).append(codes["unique"])
    return {k: sorted(v) for k, v in errors.items()}, refused


class ConstraintsKind:
    kind = "constraints"
    category = "models"

    def draw(self, domain: Domain, rng: random.Random) -> dict[str, Any]:
        t = domain.template
        rules = draw_subset(rng, RULES, 0.6, at_least=2)
        options: dict[str, Any] = {"rules": rules}
        constants: dict[str, Any] = {}
        if "range" in rules:
            constants["high"] = rng.choice([h for h in range(200, 900) if h % 10 == 0])
        if "unique" in rules:
            conditional = rng.random() < 0.5
            options["unique_among"] = "some" if conditional else "all"
            if conditional:
                constants["among"] = list(t.statuses[:2])
        return {"kind": self.kind, "options": options, "constants": constants}

    def deliverables(self, domain: Domain, node: dict[str, Any]) -> list[str]:
        return [f"{domain.app}/models.py"]

    def tree(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        t = domain.template
        given = f"from django.db import models\n\n\n{parent_model(t)}"
        return {
            f"{domain.app}/{t.parents}.py": given,
            f"{domain.app}/models.py": (
                f'"""The models of the {domain.app} app: write {t.child} here (see the task); '
                f'{t.parent} is given in {domain.app}/{t.parents}.py."""\n\n'
                f"from {domain.app}.{t.parents} import {t.parent}  # noqa: F401\n"
            ),
        }

    def reference(self, domain: Domain, node: dict[str, Any], junk: bool = False) -> dict[str, str]:
        t, c, rules, codes = domain.template, node["constants"], node["options"]["rules"], cs_codes(domain.template, node)
        choices = "\n".join(f'        {s.upper()} = "{s}"' for s in t.statuses)
        validators = ", validators=[LOWERCASE]" if "lowercase" in rules else ""
        constraints = []
        if "range" in rules and not junk:
            constraints.append(
                f"            models.CheckConstraint(condition=Q({t.qty}__gte=1, {t.qty}__lte={c['high']}), "
                f'name="{t.child.lower()}_{t.qty}_in_range", violation_error_code="{codes["range"]}", '
                f'violation_error_message="{t.qty} out of range."),'
            )
        if "unique" in rules and not junk:
            cond = f", condition=Q(status__in={c['among']!r})" if c.get("among") else ""
            constraints.append(
                f'            models.UniqueConstraint(fields=["{t.parent.lower()}", "{t.code}"]{cond}, '
                f'name="one_{t.code}_per_{t.parent.lower()}", violation_error_code="{codes["unique"]}", '
                f'violation_error_message="{t.code} already taken."),'
            )
        meta = ""
        if constraints:
            meta = "\n    class Meta:\n        constraints = [\n" + "\n".join(constraints) + "\n        ]\n"
        clean = ""
        if "capacity" in rules:
            p = t.parent.lower()
            clean = f'''
    def clean(self):
        super().clean()
        if self.{p}_id is not None and self.{t.qty} is not None and self.{t.qty} > self.{p}.{t.capacity}:
            raise ValidationError("More {t.qty_noun} than the {t.parent_noun} allows.", code="{codes["capacity"]}")
'''
        lower = ""
        if "lowercase" in rules:
            lower = f'\nLOWERCASE = RegexValidator(r"^[a-z]+$", message="Lowercase letters only.", code="{codes["lowercase"]}")\n'
        imports = "from django.core.exceptions import ValidationError\n" if "capacity" in rules else ""
        imports += "from django.core.validators import RegexValidator\n" if "lowercase" in rules else ""
        imports += "from django.db import models\n"
        imports += "from django.db.models import Q\n" if constraints else ""
        text = f'''"""The models of the {domain.app} app."""

{imports}
from {domain.app}.{t.parents} import {t.parent}
{lower}

class {t.child}(models.Model):
    class Status(models.TextChoices):
{choices}

    {t.parent.lower()} = models.ForeignKey({t.parent}, on_delete=models.CASCADE, related_name="{t.children}")
    {t.code} = models.CharField(max_length=12{validators})
    {t.qty} = models.PositiveIntegerField()
    status = models.CharField(choices=Status.choices, default=Status.{t.statuses[0].upper()})
{meta}{clean}'''
        return {f"{domain.app}/models.py": text}

    def junk(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, junk=True)

    def spec(self, domain: Domain, node: dict[str, Any]) -> str:
        t, c, rules, codes = domain.template, node["constants"], node["options"]["rules"], cs_codes(domain.template, node)
        p = t.parent.lower()
        db_rules, check_rules = [], []
        if "range" in rules:
            db_rules.append(
                f'- `{t.qty}` is from 1 to {c["high"]}, both included; otherwise the error code is `"{codes["range"]}"`.'
            )
        if "unique" in rules:
            if c.get("among"):
                scope = (
                    f"among the {t.child_noun}s whose status is {statuses_english(c['among'])}, no two of one "
                    f"{t.parent_noun} share a `{t.code}` ({t.child_noun}s of any other status never conflict, "
                    f"with each other or with those)"
                )
            else:
                scope = f"no two {t.child_noun}s of one {t.parent_noun} share a `{t.code}`, whatever their status"
            db_rules.append(f'- {scope}; otherwise the error code is `"{codes["unique"]}"`.')
        if "lowercase" in rules:
            check_rules.append(
                f"- `{t.code}` holds lowercase letters `a`-`z` only; otherwise full validation reports, on the "
                f'`{t.code}` field, the code `"{codes["lowercase"]}"`.'
            )
        if "capacity" in rules:
            check_rules.append(
                f"- `{t.qty}` is at most the `{t.capacity}` of the {t.child_noun}'s {t.parent_noun}; otherwise full "
                f'validation reports, as a non-field error (not on any field), the code `"{codes["capacity"]}"`. '
                f"Full validation of a {t.child_noun} whose `{p}` is not set reports the missing `{p}` on that field "
                f"and nothing else fails."
            )
        parts = [
            f"Write the model `{t.child}` (a {t.child_noun}) in `{domain.app}/models.py`. `{t.parent}` (a "
            f"{t.parent_noun}) is given in `{domain.app}/{t.parents}.py`, with `name`, `{t.flag}` and `{t.capacity}` (a "
            f"whole number).",
            "",
            f"`{t.child}` has these fields:",
            f"- `{p}`: the {t.parent_noun} it belongs to (deleting the {t.parent_noun} deletes its {t.child_noun}s), "
            f"reached from a {t.parent_noun} as `{t.children}`;",
            f"- `{t.code}`: text of at most 12 characters (a longer one is reported by full validation on the "
            f'`{t.code}` field with the code `"max_length"`);',
            f"- `{t.qty}`: a whole number, zero or more;",
            f"- `status`: text, one of {statuses_english(t.statuses)} (another value is "
            f'reported by full validation on the `status` field with the code `"invalid_choice"`), '
            f'`"{t.statuses[0]}"` when not given.',
            "",
            "The model passes Django's system checks (`" + t.child + ".check()` reports nothing).",
        ]
        if db_rules:
            parts += [
                "",
                "Rules the database itself refuses: a plain `save()` that breaks one raises `IntegrityError`, and full "
                "validation (`full_clean()`) reports it as a non-field error with the code given, unless a field it reads "
                "already has an error of its own:",
                *db_rules,
            ]
        if check_rules:
            parts += [
                "",
                f"Rules only full validation checks (a plain `save()` stores such a {t.child_noun} without complaint):",
                *check_rules,
            ]
        parts += [
            "",
            "Full validation reports every error it finds at once, each under its field (or as a non-field error) "
            "with its code; a valid " + t.child_noun + " passes it and saves.",
        ]
        return "\n".join(parts) + "\n"

    def tests(self, domain: Domain, node: dict[str, Any], rng: random.Random, hidden: bool) -> tuple[str, list]:
        t, c, rules = domain.template, node["constants"], node["options"]["rules"]
        p = t.parent.lower()
        v = Values(rng, hidden)
        names = v.words(NAMES, 2)
        codes = v.words(CODES, 4)
        capacity = v.token_int(20, 59, {12, 30, 40, 50})
        mid = v.token_int(100, 140) if "range" not in rules or c["high"] > 140 else 100
        high = c.get("high")
        cases: list[tuple[str, dict, list[dict]]] = []

        def case(parent: str | None = "big", **kw: Any) -> dict:
            base = {"parent": parent, "code": codes[0], "qty": mid, "status": t.statuses[0]}
            base.update(kw)
            base["capacity"] = BIG_CAPACITY if base["parent"] == "big" else capacity
            return base

        cases.append(("a_valid_child_passes_validation_and_saves", case(), []))
        cases.append(("an_unknown_status_lands_on_the_status_field", case(status="lostx"), []))
        cases.append(("a_code_longer_than_twelve_lands_on_the_code_field", case(code="abcdefghijklm"), []))
        if "range" in rules:
            cases.append(("a_zero_quantity_is_refused", case(qty=0), []))
            cases.append(("a_quantity_past_the_bound_is_refused", case(qty=high + 1), []))
            cases.append(("the_lowest_quantity_is_accepted", case(qty=1), []))
            cases.append(("the_bound_itself_is_accepted", case(qty=high), []))
        if "unique" in rules:
            first = {"parent": "big", "code": codes[1], "status": t.statuses[0]}
            cases.append(("a_repeated_code_in_one_parent_is_refused", case(code=codes[1]), [first]))
            cases.append(("the_same_code_in_another_parent_is_accepted", case(parent="small", code=codes[1], qty=1), [first]))
            if c.get("among"):
                gone = {"parent": "big", "code": codes[2], "status": t.statuses[2]}
                cases.append(("a_code_repeated_after_a_child_of_another_status_is_accepted", case(code=codes[2]), [gone]))
                cases.append(("a_child_of_another_status_never_conflicts", case(code=codes[1], status=t.statuses[2]), [first]))
                second = {"parent": "big", "code": codes[3], "status": t.statuses[1]}
                cases.append(("the_second_counted_status_conflicts_too", case(code=codes[3]), [second]))
            else:
                gone = {"parent": "big", "code": codes[2], "status": t.statuses[2]}
                cases.append(("a_repeated_code_conflicts_whatever_the_status", case(code=codes[2]), [gone]))
        if "lowercase" in rules:
            cases.append(("a_code_with_capitals_lands_on_the_code_field", case(code=codes[3].capitalize()), []))
            cases.append(("a_code_with_digits_lands_on_the_code_field", case(code=codes[3][:3] + "7"), []))
        if "capacity" in rules:
            cases.append(("a_quantity_over_the_capacity_is_a_non_field_error", case(parent="small", qty=f"{capacity} + 1"), []))
            cases.append(("a_quantity_equal_to_the_capacity_is_accepted", case(parent="small", qty=capacity), []))
        lines = test_module_head(
            [
                "import pytest",
                "from django.core.exceptions import NON_FIELD_ERRORS, ValidationError",
                "from django.db import IntegrityError, transaction",
            ],
            [f"from {domain.app}.models import {t.child}, {t.parent}"],
        ) + [
            f'    big = {t.parent}.objects.create(name="{names[0]}", {t.capacity}={BIG_CAPACITY})',
            f'    small = {t.parent}.objects.create(name="{names[1]}", {t.capacity}={capacity})',
            '    return {"big": big, "small": small}',
            "",
            "",
            "def codes(exc):",
            "    return {key: sorted(e.code for e in errors) for key, errors in exc.value.error_dict.items()}",
            "",
            "",
            "def test_the_model_passes_the_system_checks():",
            f"    assert {t.child}.check() == []",
            "",
            "",
            "def test_a_new_child_has_the_first_status_and_is_reached_from_its_parent(world):",
            f'    child = {t.child}.objects.create({p}=world["big"], {t.code}="{codes[0]}", {t.qty}=1)',
            f'    assert child.status == "{t.statuses[0]}"',
            f'    assert list(world["big"].{t.children}.values_list("{t.code}", flat=True)) == ["{codes[0]}"]',
            "",
            "",
            "def test_deleting_the_parent_deletes_its_children(world):",
            f'    {t.child}.objects.create({p}=world["big"], {t.code}="{codes[0]}", {t.qty}=1)',
            '    world["big"].delete()',
            f"    assert {t.child}.objects.count() == 0",
        ]
        for name, cs, existing in cases:
            qty_value = cs["qty"]
            qty_num = capacity + 1 if isinstance(qty_value, str) else qty_value
            errors, refused = cs_oracle(node, t, {**cs, "qty": qty_num}, existing)
            lines += ["", "", f"def test_{name}(world):"]
            for e in existing:
                lines.append(_create_child(t, f'world["{e["parent"]}"]', e["code"], mid + 3, e["status"]))
            owner = f'world["{cs["parent"]}"]'
            lines.append(
                f'    child = {t.child}({p}={owner}, {t.code}="{cs["code"]}", {t.qty}={qty_value}, status="{cs["status"]}")'
            )
            if errors:
                want = (
                    "{"
                    + ", ".join(f"{'NON_FIELD_ERRORS' if k == NON_FIELD else repr(k)}: {v!r}" for k, v in sorted(errors.items()))
                    + "}"
                )
                lines += [
                    "    with pytest.raises(ValidationError) as exc:",
                    "        child.full_clean()",
                    f"    assert codes(exc) == {want}",
                ]
            else:
                lines.append("    child.full_clean()")
            stated = {cs_codes(t, node)[r] for r in ("lowercase", "capacity") if r in rules}
            if refused:
                lines += ["    with pytest.raises(IntegrityError), transaction.atomic():", "        child.save()"]
            elif {code for found in errors.values() for code in found} <= stated:
                # a valid child, or one only full validation refuses: a plain save stores it (the spec says so)
                lines += ["    child.save()", f"    assert {t.child}.objects.filter(pk=child.pk).count() == 1"]
        if "capacity" in rules:
            lines += [
                "",
                "",
                "def test_a_child_without_a_parent_reports_only_the_missing_parent():",
                f'    child = {t.child}({t.code}="{codes[0]}", {t.qty}=1)',
                "    with pytest.raises(ValidationError) as exc:",
                "        child.full_clean()",
                f'    assert sorted(exc.value.error_dict) == ["{p}"]',
            ]
        return "\n".join(lines) + "\n", v.vary


# -- kind: view ----------------------------------------------------------------------------------


def view_oracle(node: dict[str, Any], parent: dict | None, children: list[dict], query: dict[str, str]) -> tuple[int, Any]:
    """The status and JSON body of GET on one parent's children with `query` (a missing parent: None)."""
    o = node["options"]
    if parent is None or (o["hide_off"] and not parent["flag"]):
        return 404, {"error": "not found"}
    rows = [ch for ch in children if ch["parent"] == parent["name"]]
    if "status" in query and "status" in o["filters"]:
        if query["status"] not in node["constants"]["statuses"]:
            return 400, {"error": "bad query"}
        rows = [ch for ch in rows if ch["status"] == query["status"]]
    if "min" in query and "min" in o["filters"]:
        raw = query["min"]
        if not (raw and all(ch in "0123456789" for ch in raw)):
            return 400, {"error": "bad query"}
        rows = [ch for ch in rows if ch["qty"] >= int(raw)]
    rows = sorted(rows, key=lambda ch: ch["code"]) if o["order"] == "code" else sorted(rows, key=lambda ch: -ch["qty"])
    return 200, {"name": parent["name"], "count": len(rows), "items": rows}


class ViewKind:
    kind = "view"
    category = "views"

    def draw(self, domain: Domain, rng: random.Random) -> dict[str, Any]:
        t = domain.template
        filters = [f for f in ("status", "min") if rng.random() < 0.7] or [rng.choice(["status", "min"])]
        return {
            "kind": self.kind,
            "options": {"filters": filters, "hide_off": rng.random() < 0.5, "order": rng.choice(["code", "qty"])},
            "constants": {"statuses": list(t.statuses), "view": f"{t.parent.lower()}_{t.children}"},
        }

    def deliverables(self, domain: Domain, node: dict[str, Any]) -> list[str]:
        return [f"{domain.app}/views.py", f"{domain.app}/urls.py"]

    def tree(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        t = domain.template
        return {
            f"{domain.app}/models.py": models_file(t),
            f"{domain.app}/views.py": (
                f'"""The JSON view of a {t.parent_noun}\'s {t.child_noun}s: write it here (see the task)."""\n'
            ),
            f"{domain.app}/urls.py": (
                f'"""The URLs of the {domain.app} app: route the view here (see the task)."""\n\nurlpatterns = []\n'
            ),
            "project/urls.py": (
                f'from django.urls import include, path\n\nurlpatterns = [\n    path("", include("{domain.app}.urls")),\n]\n'
            ),
        }

    def reference(self, domain: Domain, node: dict[str, Any], junk: bool = False) -> dict[str, str]:
        t, o, c = domain.template, node["options"], node["constants"]
        p = t.parent.lower()
        cond = f", {t.flag}=True" if o["hide_off"] else ""
        order = f'"{t.code}"' if o["order"] == "code" else f'"-{t.qty}"'
        filters = ""
        if "status" in o["filters"]:
            filters += """
    if "status" in request.GET:
        status = request.GET["status"]
        if status not in STATUSES:
            return JsonResponse(BAD_QUERY, status=400)
        items = items.filter(status=status)"""
        if "min" in o["filters"]:
            filters += f"""
    if "min_{t.qty}" in request.GET:
        raw = request.GET["min_{t.qty}"]
        if not DIGITS.fullmatch(raw):
            return JsonResponse(BAD_QUERY, status=400)
        items = items.filter({t.qty}__gte=int(raw))"""
        if junk:
            filters = ""
            find = f"    {p} = {t.parent}.objects.get(pk=pk)\n"
        else:
            find = (
                f"    {p} = {t.parent}.objects.filter(pk=pk{cond}).first()\n"
                f"    if {p} is None:\n        return JsonResponse(NOT_FOUND, status=404)\n"
            )
        view = f'''"""The JSON view of a {t.parent_noun}'s {t.child_noun}s."""

import re

from django.http import JsonResponse
from django.views.decorators.http import require_GET

from {domain.app}.models import {t.parent}

STATUSES = {tuple(c["statuses"])!r}
DIGITS = re.compile(r"[0-9]+")
NOT_FOUND = {{"error": "not found"}}
BAD_QUERY = {{"error": "bad query"}}


@require_GET
def {c["view"]}(request, pk):
{find}    items = {p}.{t.children}.order_by({order}){filters}
    rows = [{{"{t.code}": i.{t.code}, "{t.qty}": i.{t.qty}, "status": i.status}} for i in items]
    return JsonResponse({{"{t.parent_noun}": {p}.name, "count": len(rows), "{t.children}": rows}})
'''
        urls = f"""from django.urls import path

from {domain.app} import views

urlpatterns = [
    path("api/{t.parents}/<int:pk>/{t.children}/", views.{c["view"]}),
]
"""
        return {f"{domain.app}/views.py": view, f"{domain.app}/urls.py": urls}

    def junk(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, junk=True)

    def spec(self, domain: Domain, node: dict[str, Any]) -> str:
        t, o = domain.template, node["options"]
        url = f"/api/{t.parents}/<id>/{t.children}/"
        order = f"ordered by `{t.code}` (ascending)" if o["order"] == "code" else f"ordered by `{t.qty}`, largest first"
        lines = [
            f"`{domain.app}/models.py` gives `{t.parent}` (a {t.parent_noun}: `name`, `{t.flag}`, `{t.capacity}`) and "
            f"`{t.child}` (a {t.child_noun} of one {t.parent_noun}, reached from it as `{t.children}`: `{t.code}`, "
            f"`{t.qty}`, `status`). Write `{domain.app}/views.py` and `{domain.app}/urls.py` (the project includes the "
            "app's URLs at the root URL) so that the project answers:",
            "",
            f"`GET {url}`, where `<id>` is the {t.parent_noun}'s id (digits only; any other segment matches no URL "
            "and gets 404), with status 200 and the JSON object",
            f'`{{"{t.parent_noun}": <its name>, "count": <number of items>, "{t.children}": [<items>]}}`, where each '
            f'item is `{{"{t.code}": ..., "{t.qty}": ..., "status": ...}}` for one {t.child_noun} of that '
            f"{t.parent_noun}, {order}.",
            "",
        ]
        if "status" in o["filters"]:
            lines.append(
                f"- `?status=<s>` keeps only the {t.child_noun}s with that status; a value that is not one of "
                f'{statuses_english(t.statuses)} (exactly) gets status 400 and `{{"error": "bad query"}}`.'
            )
        if "min" in o["filters"]:
            lines.append(
                f"- `?min_{t.qty}=<n>` keeps only the {t.child_noun}s whose `{t.qty}` is at least `n` (`n` itself "
                f'included); a value that is not made of the digits 0-9 only gets status 400 and `{{"error": "bad query"}}`.'
            )
        if len(o["filters"]) == 2:
            lines.append("- Both together keep the items that meet both.")
        missing = f"An id of no {t.parent_noun}"
        if o["hide_off"]:
            missing += f", or of a {t.parent_noun} whose `{t.flag}` is false,"
        lines += [
            "",
            f'{missing} gets status 404 and `{{"error": "not found"}}`. Any method other than GET (POST, PUT, '
            "DELETE, ...) gets status 405.",
        ]
        return "\n".join(lines) + "\n"

    def tests(self, domain: Domain, node: dict[str, Any], rng: random.Random, hidden: bool) -> tuple[str, list]:
        t, o = domain.template, node["options"]
        v = Values(rng, hidden)
        names = v.words(NAMES, 3)
        codes = v.words(CODES, 5)
        qtys = v.ints(5)
        perm = rng.sample(range(5), 5)
        statuses = t.statuses
        parents = [
            {"name": names[0], "flag": True},
            {"name": names[1], "flag": True},
            {"name": names[2], "flag": False},
        ]
        main, bare, off = parents
        children = [
            {"parent": main["name"], "code": codes[perm[0]], "qty": qtys[0], "status": statuses[0]},
            {"parent": main["name"], "code": codes[perm[1]], "qty": qtys[1], "status": statuses[1]},
            {"parent": main["name"], "code": codes[perm[2]], "qty": qtys[2], "status": statuses[0]},
            {"parent": main["name"], "code": codes[perm[3]], "qty": qtys[3], "status": statuses[2]},
            {"parent": off["name"], "code": codes[perm[4]], "qty": qtys[4], "status": statuses[1]},
        ]
        pvar = {p["name"]: f"p{i}" for i, p in enumerate(parents)}
        lines = test_module_head(["import pytest"], [f"from {domain.app}.models import {t.child}, {t.parent}"])
        for p in parents:
            lines.append(create_parent(t, pvar[p["name"]], p["name"], p["flag"]))
        for ch in children:
            lines.append(_create_child(t, pvar[ch["parent"]], ch["code"], ch["qty"], ch["status"]))
        lines.append("    return {" + ", ".join(f'"{p["name"]}": {pvar[p["name"]]}' for p in parents) + "}")
        lines += [
            "",
            "",
            "def url(obj):",
            f'    return f"/api/{t.parents}/{{obj.pk}}/{t.children}/"',
        ]

        def body(status: int, data: Any) -> str:
            if status != 200:
                return repr(data)
            items = ", ".join(
                f'{{"{t.code}": "{i["code"]}", "{t.qty}": {i["qty"]}, "status": "{i["status"]}"}}' for i in data["items"]
            )
            return f'{{"{t.parent_noun}": "{data["name"]}", "count": {data["count"]}, "{t.children}": [{items}]}}'

        def check(test: str, parent: dict, query: dict[str, str], qs: str = "") -> None:
            status, data = view_oracle(node, parent, children, query)
            lines.extend(
                [
                    "",
                    "",
                    f"def test_{test}(client, world):",
                    f'    response = client.get(url(world["{parent["name"]}"]){qs})',
                    f"    assert response.status_code == {status}",
                    f"    assert response.json() == {body(status, data)}",
                ]
            )

        check("the_items_of_a_parent_come_in_order", main, {})
        check("a_parent_without_children_gives_an_empty_list", bare, {})
        check("a_flagged_off_parent", off, {})
        if "status" in o["filters"]:
            check("a_status_filter_keeps_that_status", main, {"status": statuses[0]}, f' + "?status={statuses[0]}"')
            check("another_status_filter", main, {"status": statuses[2]}, f' + "?status={statuses[2]}"')
            check(
                "an_unknown_status_is_a_bad_query", main, {"status": statuses[0].upper()}, f' + "?status={statuses[0].upper()}"'
            )
        if "min" in o["filters"]:
            b = qtys[2]
            check("a_minimum_keeps_its_boundary", main, {"min": str(b)}, f' + f"?min_{t.qty}={{{b}}}"')
            check("a_minimum_past_every_item", main, {"min": str(qtys[4])}, f' + f"?min_{t.qty}={{{qtys[4]}}}"')
            check("a_minimum_that_is_not_digits_is_a_bad_query", main, {"min": "-3"}, f' + "?min_{t.qty}=-3"')
        if len(o["filters"]) == 2:
            q = {"status": statuses[0], "min": str(qtys[1])}
            check("both_filters_combine", main, q, f' + f"?status={statuses[0]}&min_{t.qty}={{{qtys[1]}}}"')
        lines += [
            "",
            "",
            "def test_a_missing_parent_is_not_found(client, world):",
            "    missing = max(p.pk for p in world.values()) + 1000",
            f'    response = client.get(f"/api/{t.parents}/{{missing}}/{t.children}/")',
            "    assert response.status_code == 404",
            '    assert response.json() == {"error": "not found"}',
            "",
            "",
            "def test_a_segment_that_is_not_an_id_matches_no_url(client, world):",
            f'    assert client.get("/api/{t.parents}/first/{t.children}/").status_code == 404',
            "",
            "",
            "def test_other_methods_are_not_allowed(client, world):",
            f'    target = url(world["{main["name"]}"])',
            "    assert client.post(target).status_code == 405",
            "    assert client.delete(target).status_code == 405",
            f"    assert {t.child}.objects.count() == {len(children)}",
        ]
        return "\n".join(lines) + "\n", v.vary


# -- kind: budget --------------------------------------------------------------------------------

BUDGET_QUERIES = 2
BUDGET_TEST = "test_the_report_stays_within_the_query_budget"
MANY_PARENTS = 9


def budget_oracle(node: dict[str, Any], parents: list[dict], children: list[dict]) -> list[dict]:
    """The report: one entry per parent (only flagged ones when `only_flagged`), by name; its children's codes
    in ascending order; with `total`, the terms of the quantity over its children whose status is exactly the
    counted one (a test writes their sum)."""
    o, c = node["options"], node["constants"]
    out = []
    for p in sorted(parents, key=lambda p: p["name"]):
        if o["only_flagged"] and not p["flag"]:
            continue
        mine = [ch for ch in children if ch["parent"] == p["name"]]
        entry: dict[str, Any] = {"name": p["name"], "codes": sorted(ch["code"] for ch in mine)}
        if o["total"]:
            entry["total"] = sorted(ch["qty"] for ch in mine if ch["status"] == c["counted"])
        out.append(entry)
    return out


class BudgetKind:
    """A report under a query budget; `naive` is right and over the budget (drawn only when asked for)."""

    kind = "budget"
    category = "query-budget"

    def draw(self, domain: Domain, rng: random.Random) -> dict[str, Any]:
        t = domain.template
        options = {"total": rng.random() < 0.6, "only_flagged": rng.random() < 0.5}
        return {
            "kind": self.kind,
            "options": options,
            "constants": {"counted": rng.choice(t.statuses), "function": f"{t.parent.lower()}_report"},
        }

    def deliverables(self, domain: Domain, node: dict[str, Any]) -> list[str]:
        return [f"{domain.app}/reports.py"]

    def budget_tests(self, test_file: str) -> list[str]:
        return [f"{test_file}::{BUDGET_TEST}"]

    def tree(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        t, fn = domain.template, node["constants"]["function"]
        return {
            f"{domain.app}/models.py": models_file(t),
            f"{domain.app}/reports.py": f'"""The {t.parent_noun} report: write {fn}() here (see the task)."""\n',
        }

    def reference(self, domain: Domain, node: dict[str, Any], naive: bool = False, junk: bool = False) -> dict[str, str]:
        t, o, c = domain.template, node["options"], node["constants"]
        p = t.parent.lower()
        total_key = f"{c['counted']}_{t.qty}"
        where = f".filter({t.flag}=True)" if o["only_flagged"] else ".all()"
        if naive:
            total = ""
            if o["total"]:
                total = (
                    f'\n        row["{total_key}"] = sum(i.{t.qty} for i in {p}.{t.children}.all() '
                    f'if i.status == "{c["counted"]}")'
                )
            body = (
                "    out = []\n"
                f'    for {p} in {t.parent}.objects{where}.order_by("name"):\n'
                f'        row = {{"name": {p}.name, "{t.children}": '
                f'[i.{t.code} for i in {p}.{t.children}.order_by("{t.code}")]}}{total}\n'
                "        out.append(row)\n"
                "    return out\n"
            )
            imports = f"from {domain.app}.models import {t.parent}\n"
        else:
            annotate = ""
            if o["total"]:
                inner = f'Sum("{t.children}__{t.qty}", filter=Q({t.children}__status="{c["counted"]}"))'
                annotate = f".annotate(total={inner if junk else f'Coalesce({inner}, Value(0))'})"
            order = f'"-{t.code}"' if junk else f'"{t.code}"'
            total = f', "{total_key}": {p}.total' if o["total"] else ""
            body = (
                f'    {t.children} = Prefetch("{t.children}", queryset={t.child}.objects.order_by({order}))\n'
                f'    rows = {t.parent}.objects{where}{annotate}.prefetch_related({t.children}).order_by("name")\n'
                "    return [\n"
                f'        {{"name": {p}.name, "{t.children}": [i.{t.code} for i in {p}.{t.children}.all()]{total}}}\n'
                f"        for {p} in rows\n"
                "    ]\n"
            )
            names = ["Prefetch"] + (["Q", "Sum", "Value"] if o["total"] else [])
            imports = f"from django.db.models import {', '.join(sorted(names))}\n"
            if o["total"]:
                imports += "from django.db.models.functions import Coalesce\n"
            imports += f"\nfrom {domain.app}.models import {t.child}, {t.parent}\n"
        text = f'"""The {t.parent_noun} report."""\n\n{imports}\n\ndef {c["function"]}():\n{body}'
        return {f"{domain.app}/reports.py": text}

    def naive(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, naive=True)

    def junk(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, junk=True)

    def spec(self, domain: Domain, node: dict[str, Any]) -> str:
        t, o, c = domain.template, node["options"], node["constants"]
        total_key = f"{c['counted']}_{t.qty}"
        if o["only_flagged"]:
            which = f"every {t.parent_noun} whose `{t.flag}` is true"
        else:
            which = f"every {t.parent_noun}, whatever its `{t.flag}`"
        lines = [
            f"`{domain.app}/models.py` gives `{t.parent}` (a {t.parent_noun}: `name`, `{t.flag}`, `{t.capacity}`) and "
            f"`{t.child}` (a {t.child_noun} of one {t.parent_noun}, reached from it as `{t.children}`: `{t.code}`, "
            f"`{t.qty}`, `status`).",
            "",
            f"Write `{c['function']}()` in `{domain.app}/reports.py`. It takes no argument and returns a list with one "
            f"dict for {which}, ordered by name, including those without any {t.child_noun}:",
            "",
            f'- `"name"`: the {t.parent_noun}\'s name;',
            f'- `"{t.children}"`: the `{t.code}` of each of its {t.child_noun}s (of every status), in ascending order;',
        ]
        if o["total"]:
            lines.append(
                f'- `"{total_key}"`: the total `{t.qty}` of its {t.child_noun}s whose status is exactly '
                f'`"{c["counted"]}"` (letter case matters), the integer 0 when there are none (never `None`).'
            )
        lines += [
            "",
            f"The whole report is read in at most {BUDGET_QUERIES} database queries, however many {t.parent_noun}s "
            f"and {t.child_noun}s there are: a report that asks each {t.parent_noun} for its {t.child_noun}s one by "
            "one gives the right answer and fails.",
        ]
        return "\n".join(lines) + "\n"

    def tests(self, domain: Domain, node: dict[str, Any], rng: random.Random, hidden: bool) -> tuple[str, list]:
        t, o, c = domain.template, node["options"], node["constants"]
        total_key = f"{c['counted']}_{t.qty}"
        v = Values(rng, hidden)
        names = v.words(NAMES, 4)
        codes = v.words(CODES, 7)
        qtys = v.ints(6)
        others = [s for s in t.statuses if s != c["counted"]]
        flags = [True, True, True, False]
        rng.shuffle(flags)
        parents = [{"name": n, "flag": f} for n, f in zip(names, flags, strict=True)]
        empty = rng.choice([p for p in parents if p["flag"]])
        full = [p for p in parents if p is not empty]
        perm = rng.sample(range(6), 6)
        children = []
        for k in range(6):
            owner = full[k % len(full)]
            status = c["counted"] if k % 3 != 2 else others[k % 2]
            children.append({"parent": owner["name"], "code": codes[perm[k]], "qty": qtys[k], "status": status})
        # a status in other letter case is not the counted one
        children.append({"parent": full[0]["name"], "code": codes[6], "qty": qtys[0], "status": c["counted"].upper()})
        truth = budget_oracle(node, parents, children)
        pvar = {p["name"]: f"p{i}" for i, p in enumerate(parents)}

        def entry(e: dict) -> str:
            text = f'{{"name": "{e["name"]}", "{t.children}": {e["codes"]!r}'
            if "total" in e:
                text += f', "{total_key}": {_sum_expr(e["total"])}'
            return text + "}"

        expected = "[" + ", ".join(entry(e) for e in truth) + "]"
        fn = c["function"]
        lines = test_module_head(
            ["import pytest"],
            [f"from {domain.app}.models import {t.child}, {t.parent}", f"from {domain.app}.reports import {fn}"],
        )
        for p in parents:
            lines.append(create_parent(t, pvar[p["name"]], p["name"], p["flag"]))
        for ch in children:
            lines.append(_create_child(t, pvar[ch["parent"]], ch["code"], ch["qty"], ch["status"]))
        lines.append("    return {" + ", ".join(f'"{p["name"]}": {pvar[p["name"]]}' for p in parents) + "}")
        many_total = f', "{total_key}": 0' if o["total"] else ""
        lines += [
            "",
            "",
            "def test_the_report_lists_each_row_with_its_children(world):",
            f"    assert {fn}() == {expected}",
            "",
            "",
            "def test_no_rows_give_an_empty_report():",
            f"    assert {fn}() == []",
            "",
            "",
            f"def {BUDGET_TEST}(world, django_assert_max_num_queries):",
            f"    for i in range({MANY_PARENTS}):",
            f'        extra = {t.parent}.objects.create(name=f"zz{{i}}")',
            f'        {t.child}.objects.create({t.parent.lower()}=extra, {t.code}="aa", {t.qty}=1, status="{others[0]}")',
            f"    with django_assert_max_num_queries({BUDGET_QUERIES}):",
            f"        report = {fn}()",
            f'    last = next(row for row in report if row["name"] == "zz{MANY_PARENTS - 1}")',
            f'    assert last == {{"name": "zz{MANY_PARENTS - 1}", "{t.children}": ["aa"]{many_total}}}',
        ]
        return "\n".join(lines) + "\n", v.vary


KINDS: dict[str, Any] = {
    k.kind: k for k in (QuerysetKind(), ConstraintsKind(), ViewKind(), BudgetKind(), FormKind(), CommandKind())
}
