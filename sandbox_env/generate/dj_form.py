"""Feature kind `form` of the django task generator: a form over the child model, its rules and where each error lands.

The deliverable is a form class (`<Child>Form` in `<app>/forms.py`) over the domain's child model
with the fields parent, code, quantity and status, in that order. What it draws (options, the
task's structure):
- `field_rules`: one to three of a field's own rules, each reported on that field under a stated
  code: `flag` (a parent whose flag is false is refused on the parent field), `letters` (the
  normalised code holds letters a-z only), `bound` (the quantity lies in a drawn inclusive range);
- `capped`: how many statuses (one or two, drawn) the cross-field rule applies to: under those
  statuses the quantity is at most the chosen parent's capacity, else a non-field error (`__all__`)
  under a stated code; it is checked only when parent, quantity and status each passed their own
  rules.
Every task also normalises the code (surrounding whitespace stripped, then lower-cased), which
`cleaned_data` and the saved row show. Tests read `is_valid()`, `form.errors.as_data()` codes per
field, `cleaned_data` and what `save()` stores; expected values come from `form_oracle`, plain
Python over the submitted data and the parents, never from running the reference.

Decisions:
- Lower case, never upper: a hidden test's code words are `[[vary]]` tokens, replaced in string
  constants by whole lowercase words. The test builds its input from the token (`"amber".upper()`)
  and expects the token itself (`"amber"`), a literal the host keeps and rewrites with the draw; an
  upper-cased expected value would be no literal of the token.
- Values a hidden test draws stay inside bands that keep every outcome: the capacity in (20, 40),
  the valid quantity in (5, 17), the bound's low end at most 4 and its high end at least 50, so a
  quantity over the capacity is still inside the bound.
- The spec states rules as behaviour (which field an error belongs to, its code, the normalised
  value), never the technique (families/django_words.py refuses the words that would name it).
- The quantity is the model's positive whole number: Django reports a negative one under its own
  code `min_value` before any rule of the form runs, so the drawn bound's code covers only numbers
  of zero or more. The spec says exactly that and the oracle follows it (the tests send no negative
  quantity: the bound's low end is at least 1, so the number just below it is 0 or more).
- This module imports nothing of generate/dj_features.py: the helpers every kind shares live in
  generate/dj_common.py, so registering the kind there is one import with no cycle.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from sandbox_env.generate.dj_common import (
    NON_FIELD,
    Values,
    create_parent,
    draw_subset,
    models_file,
    statuses_english,
    test_module_head,
)
from sandbox_env.generate.dj_domain import CODES, NAMES, Domain, Template

# -- kind: form ----------------------------------------------------------------------------------

FIELD_RULES = ("flag", "letters", "bound")
CODE_MAX = 12  # the model's max_length of the code
CAPACITY_BAND = (20, 40)  # the capacity a test draws (exclusive ends)
QTY_BAND = (5, 17)  # a quantity under every capacity and inside every bound
LOWS = (1, 2, 3, 4)
HIGHS = tuple(range(50, 100, 5))
NEGATIVE = "min_value"  # Django's code for a negative number in the model's positive whole-number field
GHOST = "ghost"  # a case's parent that is no row: the test sends an id no parent has


def form_codes(t: Template) -> dict[str, str]:
    """The error code of each rule, made of the domain's words."""
    return {
        "flag": f"{t.parent.lower()}_{t.flag_off.replace(' ', '_')}",
        "letters": f"{t.code}_not_letters",
        "bound": f"{t.qty}_out_of_range",
        "cross": f"over_{t.capacity}",
    }


def form_names(t: Template) -> dict[str, Any]:
    return {"class": f"{t.child}Form", "fields": [t.parent.lower(), t.code, t.qty, "status"]}


def _is_whole_number(value: int | str) -> bool:
    return type(value) is int or (isinstance(value, str) and value.strip().lstrip("+-").isdigit())


def _parent_error(node: dict[str, Any], t: Template, sent: str | None, owner: dict | None) -> str | None:
    """The parent field's own rules: sent, an id of a parent, and (with `flag`) a flagged-on one."""
    if sent is None:
        return "required"
    if owner is None:
        return "invalid_choice"
    if "flag" in node["options"]["field_rules"] and not owner["flag"]:
        return form_codes(t)["flag"]
    return None


def _code_error(node: dict[str, Any], t: Template, code: str) -> str | None:
    """The code field's own rules, on the stripped text: present, at most 12 characters, (with `letters`) a-z
    only once lower-cased."""
    if not code:
        return "required"
    if len(code) > CODE_MAX:
        return "max_length"
    normalised = code.lower()
    if "letters" in node["options"]["field_rules"] and not (normalised.isascii() and normalised.isalpha()):
        return form_codes(t)["letters"]
    return None


def _qty_error(node: dict[str, Any], t: Template, qty: int | str) -> str | None:
    """The quantity field's own rules: a whole number, of zero or more (the model's own rule, reported by Django
    before any rule of the form), (with `bound`) from `low` to `high`, both included."""
    if not _is_whole_number(qty):
        return "invalid"
    if int(qty) < 0:
        return NEGATIVE
    c = node["constants"]
    if "bound" in node["options"]["field_rules"] and not c["low"] <= int(qty) <= c["high"]:
        return form_codes(t)["bound"]
    return None


def form_oracle(node: dict[str, Any], t: Template, case: dict[str, Any], parents: dict[str, dict]) -> tuple[dict, dict]:
    """What the form gives for one submission: (field -> sorted error codes, cleaned values when valid else {}).

    `case` holds the submitted parent (a key of `parents`; another key for an id of no parent; None
    when not sent), code, quantity (an int, or text that may not be a number) and status; `parents`
    maps a key to its `flag` and `capacity`. Each field's own rules first, each error on its field;
    the status is exactly one of three. Then the cross-field rule, on `__all__`, only when parent,
    quantity and status each passed their own: a status among `capped` and a quantity above the
    parent's capacity.
    """
    p = t.parent.lower()
    owner = parents.get(case["parent"]) if case["parent"] is not None else None
    code = case["code"].strip()
    found = {
        p: _parent_error(node, t, case["parent"], owner),
        t.code: _code_error(node, t, code),
        t.qty: _qty_error(node, t, case["qty"]),
        "status": None if case["status"] in t.statuses else "invalid_choice",
    }
    errors = {name: [error] for name, error in found.items() if error is not None}
    cleaned = {p: case["parent"], t.code: code.lower(), t.qty: case["qty"], "status": case["status"]}
    cleaned = {name: value for name, value in cleaned.items() if name not in errors}
    if {p, t.qty, "status"} <= set(cleaned) and cleaned["status"] in node["constants"]["capped"]:
        if int(cleaned[t.qty]) > owner["capacity"]:
            errors[NON_FIELD] = [form_codes(t)["cross"]]
    if errors:
        return errors, {}
    return errors, {**cleaned, t.qty: int(cleaned[t.qty])}


@dataclass(frozen=True)
class Case:
    """One submission of a test: the values the oracle reads and the Python source the test writes for them."""

    name: str
    parent: str | None
    code: str
    qty: int | str
    status: str
    code_src: str = ""
    qty_src: str = ""


class FormKind:
    kind = "form"
    category = "forms"

    def draw(self, domain: Domain, rng: random.Random) -> dict[str, Any]:
        """Options first, from the rng alone (the split is decided from them), then the constants."""
        t = domain.template
        field_rules = draw_subset(rng, FIELD_RULES, 0.5)
        capped_count = rng.choice([1, 2])
        capped = [t.statuses[i] for i in sorted(rng.sample(range(3), capped_count))]
        constants: dict[str, Any] = {"capped": capped}
        if "bound" in field_rules:
            constants["low"], constants["high"] = rng.choice(LOWS), rng.choice(HIGHS)
        return {
            "kind": self.kind,
            "options": {"field_rules": field_rules, "capped": capped_count},
            "constants": constants,
        }

    def score(self, node: dict[str, Any]) -> int:
        """One per field rule, one for the cross-field rule, one more when it covers two statuses."""
        o = node["options"]
        return len(o["field_rules"]) + 1 + (o["capped"] == 2)

    def deliverables(self, domain: Domain, node: dict[str, Any]) -> list[str]:
        return [f"{domain.app}/forms.py"]

    def tree(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        t, n = domain.template, form_names(domain.template)
        return {
            f"{domain.app}/models.py": models_file(t),
            f"{domain.app}/forms.py": f'"""The form of a {t.child_noun}: write {n["class"]} here (see the task)."""\n',
        }

    # -- the reference ---------------------------------------------------------------------------

    def _field_methods(self, t: Template, node: dict[str, Any]) -> str:
        rules, codes, p = node["options"]["field_rules"], form_codes(t), t.parent.lower()
        out = ""
        if "flag" in rules:
            out += f'''
    def clean_{p}(self):
        {p} = self.cleaned_data["{p}"]
        if not {p}.{t.flag}:
            raise ValidationError("This {t.parent_noun} is {t.flag_off}.", code="{codes["flag"]}")
        return {p}
'''
        letters = ""
        if "letters" in rules:
            letters = f'''        if not LETTERS.fullmatch({t.code}):
            raise ValidationError("Letters a-z only.", code="{codes["letters"]}")
'''
        out += f'''
    def clean_{t.code}(self):
        # the field has already stripped the surrounding whitespace
        {t.code} = self.cleaned_data["{t.code}"].lower()
{letters}        return {t.code}
'''
        if "bound" in rules:
            out += f'''
    def clean_{t.qty}(self):
        {t.qty} = self.cleaned_data["{t.qty}"]
        if {t.qty} < LOWEST or {t.qty} > HIGHEST:
            raise ValidationError("Out of range.", code="{codes["bound"]}")
        return {t.qty}
'''
        return out

    def _cross_method(self, t: Template) -> str:
        p, code = t.parent.lower(), form_codes(t)["cross"]
        return f'''
    def clean(self):
        cleaned = super().clean()
        {p} = cleaned.get("{p}")
        {t.qty} = cleaned.get("{t.qty}")
        status = cleaned.get("status")
        if {p} is not None and {t.qty} is not None and status in CAPPED and {t.qty} > {p}.{t.capacity}:
            raise ValidationError("More {t.qty_noun} than the {t.parent_noun} allows.", code="{code}")
        return cleaned
'''

    def reference(self, domain: Domain, node: dict[str, Any], junk: bool = False) -> dict[str, str]:
        """The form a careful person writes; `junk`: the same form without any rule or normalisation."""
        t, c, n = domain.template, node["constants"], form_names(domain.template)
        rules = node["options"]["field_rules"]
        head = "import re\n\n" if "letters" in rules and not junk else ""
        head += "from django import forms\n"
        head += "" if junk else "from django.core.exceptions import ValidationError\n"
        head += f"\nfrom {domain.app}.models import {t.child}\n"
        consts = []
        if not junk:
            if "letters" in rules:
                consts.append('LETTERS = re.compile(r"[a-z]+")')
            if "bound" in rules:
                consts += [f"LOWEST = {c['low']}", f"HIGHEST = {c['high']}"]
            consts.append(f"CAPPED = {tuple(c['capped'])!r}")
        body = "" if junk else self._field_methods(t, node) + self._cross_method(t)
        text = f'''"""The form of a {t.child_noun}."""

{head}{chr(10) + chr(10).join(consts) + chr(10) if consts else ""}

class {n["class"]}(forms.ModelForm):
    class Meta:
        model = {t.child}
        fields = {n["fields"]!r}
{body}'''
        return {f"{domain.app}/forms.py": text}

    def junk(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, junk=True)

    # -- the spec --------------------------------------------------------------------------------

    def _field_lines(self, t: Template, node: dict[str, Any]) -> list[str]:
        rules, c, codes, p = node["options"]["field_rules"], node["constants"], form_codes(t), t.parent.lower()
        parent = (
            f'- `{p}`: the id of a {t.parent_noun} (an id of no {t.parent_noun} is reported with the code `"invalid_choice"`)'
        )
        if "flag" in rules:
            parent += f'; a {t.parent_noun} whose `{t.flag}` is false is refused with the code `"{codes["flag"]}"`'
        code = (
            f"- `{t.code}`: text. Surrounding whitespace is stripped and the rest is lower-cased: that normalised text "
            f'is the cleaned value (`cleaned_data["{t.code}"]`) and what is stored. Nothing left after stripping '
            f'is reported with the code `"required"`, more than {CODE_MAX} characters after stripping with the code '
            '`"max_length"`'
        )
        if "letters" in rules:
            code += f'; once normalised it holds the letters `a`-`z` only, otherwise the code is `"{codes["letters"]}"`'
        qty = (
            f"- `{t.qty}`: a whole number of zero or more (text that is not one is reported with the code "
            f'`"invalid"`, a negative number with the code `"{NEGATIVE}"`)'
        )
        if "bound" in rules:
            qty += (
                f"; a number of zero or more must also lie from {c['low']} to {c['high']}, both included, otherwise "
                f'the code is `"{codes["bound"]}"`'
            )
        status = (
            f"- `status`: exactly one of {statuses_english(t.statuses)} (any other value, another letter case "
            'included, is reported with the code `"invalid_choice"`).'
        )
        return [parent + ".", code + ".", qty + ".", status]

    def spec(self, domain: Domain, node: dict[str, Any]) -> str:
        t, c, n = domain.template, node["constants"], form_names(domain.template)
        p, codes = t.parent.lower(), form_codes(t)
        fields = ", ".join(f"`{f}`" for f in n["fields"])
        capped = statuses_english(c["capped"])
        lines = [
            f"`{domain.app}/models.py` gives `{t.parent}` (a {t.parent_noun}: `name`, `{t.flag}`, `{t.capacity}`) and "
            f"`{t.child}` (a {t.child_noun} of one {t.parent_noun}: `{p}`, `{t.code}`, `{t.qty}`, `status`).",
            "",
            f"Write `{n['class']}` in `{domain.app}/forms.py`: a Django form for entering a {t.child_noun}, built on "
            f"the `{t.child}` model, whose `save()` on valid data stores that {t.child_noun} and returns it. Its fields "
            f"are {fields}, in this order, every one required.",
            "",
            f"`is_valid()` tells whether the data passes every rule below. `errors.as_data()` maps each field name to "
            f'that field\'s errors, and `"{NON_FIELD}"` to the errors of the form as a whole (non-field errors); every '
            "error carries the code given here, and the form reports every error it finds at once.",
            "",
            "Each field's own rules; an error of these lands on its field, never on the form as a whole:",
            *self._field_lines(t, node),
            "",
            f"A rule across fields: when the status is {capped}, `{t.qty}` is at most the `{t.capacity}` of the chosen "
            f"{t.parent_noun} (equal is fine); otherwise the error lands on the form as a whole (under "
            f'`"{NON_FIELD}"`, on no field) with the code `"{codes["cross"]}"`. Under any other status `{t.qty}` may '
            f"exceed the `{t.capacity}`. The rule is checked only when `{p}`, `{t.qty}` and `status` each passed their "
            "own rules: when one of them failed, the form reports that field's error and not this one, and never "
            "fails with an exception.",
            "",
            f"A valid form's `save()` stores one {t.child_noun} with the cleaned values (the normalised `{t.code}`).",
        ]
        return "\n".join(lines) + "\n"

    # -- the tests -------------------------------------------------------------------------------

    def _cases(self, t: Template, node: dict[str, Any], codes: list[str], qty: int, capacity: int) -> list[Case]:
        """The submissions a test file sends: every rule's both sides, its boundary and where its error lands."""
        rules, c = node["options"]["field_rules"], node["constants"]
        capped = c["capped"]
        free = next(s for s in t.statuses if s not in capped)
        over, over_src = capacity + 1, f"{capacity} + 1"

        def case(name: str, parent: str | None = "main", code: str | None = None, **kw: Any) -> Case:
            word = codes[0] if code is None else code
            base = {"qty": qty, "status": capped[0], "code_src": f'"{word}"', "qty_src": str(kw.get("qty", qty))}
            return Case(name, parent, word, **{**base, **kw})

        cases = [
            case(
                "a_valid_form_strips_and_lower_cases_the_code_and_saves_it",
                code=f"  {codes[0].upper()} ",
                code_src=f'"  " + "{codes[0]}".upper() + " "',
            ),
            case("an_unknown_status_lands_on_the_status_field_only", status=capped[0].upper(), qty=over, qty_src=over_src),
            case("a_code_longer_than_the_limit_lands_on_the_code_field", code="abcdefghijklm"),
            case("a_code_padded_to_the_limit_is_stripped_first", code="  abcdefghijkl  "),
            case("a_blank_code_is_required", code="   "),
            case("a_quantity_that_is_no_number_lands_on_its_field_only", qty="lots", qty_src='"lots"'),
            case("a_missing_parent_lands_on_its_field_only", parent=None, qty=over, qty_src=over_src),
            case("an_id_of_no_parent_lands_on_its_field", parent=GHOST),
            case("a_flagged_off_parent", parent="off"),
        ]
        if "letters" in rules:
            cases.append(case("a_code_with_a_digit_lands_on_the_code_field", code=codes[1][:3].upper() + "7"))
            cases.append(case("a_code_with_a_dash_lands_on_the_code_field", code=codes[1][:2] + "-" + codes[1][2:4]))
        if "bound" in rules:
            low, high = c["low"], c["high"]
            cases.append(case("the_lowest_quantity_is_accepted", qty=low))
            cases.append(case("a_quantity_below_the_range_lands_on_its_field", qty=low - 1))
            cases.append(case("the_highest_quantity_is_accepted", qty=high, status=free))
            cases.append(case("a_quantity_past_the_range_lands_on_its_field_only", qty=high + 1))
        for s in capped:
            cases.append(case(f"over_the_capacity_when_{s}_is_a_form_error", qty=over, qty_src=over_src, status=s))
        cases.append(case("a_quantity_equal_to_the_capacity_is_accepted", qty=capacity, status=capped[-1]))
        cases.append(case(f"over_the_capacity_when_{free}_is_accepted", qty=over, qty_src=over_src, status=free))
        bad_code = codes[2][:3] + "7" if "letters" in rules else "abcdefghijklm"
        cases.append(case("a_field_error_and_a_form_error_come_together", code=bad_code, qty=over, qty_src=over_src))
        return cases

    def tests(self, domain: Domain, node: dict[str, Any], rng: random.Random, hidden: bool) -> tuple[str, list]:
        t, n = domain.template, form_names(domain.template)
        v = Values(rng, hidden)
        names = v.words(NAMES, 2)
        codes = v.words(CODES, 3)
        capacity = v.token_int(*CAPACITY_BAND)
        qty = v.token_int(*QTY_BAND, avoid={CODE_MAX})  # the spec states the code's limit: no token may equal it
        parents = {"main": {"flag": True, "capacity": capacity}, "off": {"flag": False, "capacity": capacity}}
        app = [f"from {domain.app}.forms import {n['class']}", f"from {domain.app}.models import {t.child}, {t.parent}"]
        lines = test_module_head(["import pytest"], app) + [
            create_parent(t, "main", names[0], True, capacity),
            create_parent(t, "off", names[1], False, capacity),
            '    return {"main": main, "off": off}',
            "",
            "",
            "def codes(form):",
            "    return {name: sorted(e.code for e in errors) for name, errors in form.errors.as_data().items()}",
            "",
            "",
            "def test_the_form_has_its_fields_in_order():",
            f"    assert list({n['class']}().fields) == {n['fields']!r}",
        ]
        for case in self._cases(t, node, codes, qty, capacity):
            lines += self._test(t, n, node, case, parents)
        return "\n".join(lines) + "\n", v.vary

    def _test(self, t: Template, n: dict[str, Any], node: dict[str, Any], case: Case, parents: dict) -> list[str]:
        """One test: submit the case, then compare validity, error codes and, when valid, cleaned and stored values."""
        p = t.parent.lower()
        sent = {"parent": case.parent, "code": case.code, "qty": case.qty, "status": case.status}
        errors, cleaned = form_oracle(node, t, sent, parents)
        if case.parent is None:
            data = []
        elif case.parent == GHOST:
            data = [f'"{p}": world["main"].pk + world["off"].pk + 1000']
        else:
            data = [f'"{p}": world["{case.parent}"].pk']
        data += [f'"{t.code}": {case.code_src}', f'"{t.qty}": {case.qty_src}', f'"status": "{case.status}"']
        out = [
            "",
            "",
            f"def test_{case.name}(world):",
            f"    form = {n['class']}(data={{{', '.join(data)}}})",
        ]
        if errors:
            want = "{" + ", ".join(f"{k!r}: {v!r}" for k, v in sorted(errors.items())) + "}"
            return out + ["    assert not form.is_valid()", f"    assert codes(form) == {want}"]
        stored = f'(world["{cleaned[p]}"].pk, {cleaned[t.code]!r}, {case.qty_src}, "{cleaned["status"]}")'
        return out + [
            "    assert form.is_valid()",
            "    assert codes(form) == {}",
            f'    assert form.cleaned_data["{t.code}"] == {cleaned[t.code]!r}',
            "    row = form.save()",
            "    row.refresh_from_db()",
            f"    assert (row.{p}_id, row.{t.code}, row.{t.qty}, row.status) == {stored}",
            f"    assert {t.child}.objects.count() == 1",
        ]
