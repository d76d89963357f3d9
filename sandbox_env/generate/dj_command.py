"""Feature kind `command` of the django task generator: a management command over one parent's children.

The deliverable is `<app>/management/commands/<name>.py` (the packages around it are given), run as
`python manage.py <name> PARENT [--status S] [--min N] [--dry-run]`. It works on the children of
the parent named PARENT whose status is one of two (`pool`; the third status is never touched),
narrowed by the options, and either marks each of them with the third status (`mark_<children>`)
or deletes them (`purge_<children>`). What it draws (options, the task's structure):
- `action`: `mark` or `delete`;
- `filters`: one or both of `status` (`--status S`, S one of the pool's two statuses, any other
  value refused as an argument the command does not accept) and `min` (`--min N`: the quantity at
  least N; N in a drawn inclusive range, else a refusal with a stated message);
- `dry_run`: a `--dry-run` flag that prints what a run would and changes nothing;
- `refuse_off`: a parent whose flag is false is refused (else it is handled like any other);
- `order`: the lines in order of code, or of quantity (largest first, ties by code).
Its constants: the command's name, the pool and the third status, the line format (one of
FORMATS), the range of `--min`. Output: a line per child worked on in the stated format, then a
summary line (`<n> marked <status>` / `<n> deleted`, `would be` under a dry run). Refusals (no
parent of that name, a flagged-off parent, `--min` out of range) raise `CommandError` with a
stated message before anything is printed or changed.

Tests call `call_command(name, *args, stdout=buffer)` and compare the output's lines and the
child rows after (code and status, in insertion order); a refusal is checked as the exception,
its message, nothing printed, nothing changed; one test runs the command as `manage.py` does
(`execute_from_command_line`) and checks the exit status is not zero and the message is on the
error output. Every expected value comes from `command_oracle`, plain Python over the rows a
test inserts and the call, never from running the reference.

Decisions:
- Hidden data is drawn per grading (`[[vary]]`, families/django_vary.py): names and codes keep
  their first letter (the order by code holds), quantities lie in disjoint ascending bands (the
  order by quantity and the `--min` boundary hold). A quantity inside an expected output line is
  written as an f-string of the token (`f"amber {1023}"`), which the host folds into a plain
  literal after the draw, so the expected line never reaches the grading process. `--min` is
  passed as an int literal (`call_command` turns every argument into text), the same token as the
  boundary row's quantity, so the boundary moves with the draw.
- The test rows make every rule tell: a child of another parent and one of the third status that
  must stay untouched, a child at the `--min` boundary and one below it, two children of equal
  quantity inserted against code order (a missing tiebreak shows), a parent with nothing to work
  on (the summary alone), a flagged-off parent.
- The summary line counts children, never totals quantities: a total of drawn tokens inside a
  text could not be folded into a literal on the host.
- The exit status is checked in the grading process (`execute_from_command_line` raising
  `SystemExit`), not in a subprocess: the test database lives in memory, and the process is the
  one whose verdict the canaries and observations already protect (threat model: the submission
  shares that process, as every django task's does).
- The spec states arguments, output lines, changes and refusal messages as behaviour, never the
  technique (families/django_words.py refuses the words that would name it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.generate.dj_common import Values, create_parent, draw_subset, models_file, statuses_english, test_module_head
from sandbox_env.generate.dj_domain import CODES, NAMES, Domain, Template

ACTIONS = ("mark", "delete")
FILTERS = ("status", "min")
LOWS = (0, 1)
HIGHS = (2000, 2500, 5000, 9999)  # above every quantity a hidden test draws (bands from 1000)
FORMATS = ("{code} {qty}", "{code}: {qty} {qty_noun}", "{code} ({status}, {qty})")
ARGUMENT = "an argument the command does not accept"  # refused by Django with a message of its own


def command_name(t: Template, node: dict[str, Any]) -> str:
    verb = "mark" if node["options"]["action"] == "mark" else "purge"
    return f"{verb}_{t.children}"


def line_of(node: dict[str, Any], t: Template, row: dict[str, Any], qty: str | None = None) -> str:
    """A child's output line in the drawn format (`qty`: the text put for the quantity, its value when None)."""
    fmt = FORMATS[node["constants"]["format"]]
    shown = str(row["qty"]) if qty is None else qty
    return fmt.format(code=row["code"], qty=shown, status=row["status"], qty_noun=t.qty_noun)


def summary_of(node: dict[str, Any], n: int, dry: bool) -> str:
    c = node["constants"]
    done = f"marked {c['other']}" if node["options"]["action"] == "mark" else "deleted"
    return f"{n} would be {done}" if dry else f"{n} {done}"


# -- the oracle ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Call:
    """One run of the command: the parent's name as given, and the options (None: not given)."""

    parent: str
    status: str | None = None
    minimum: int | None = None
    dry: bool = False


@dataclass
class Outcome:
    refusal: str | None  # the message of the CommandError (ARGUMENT: Django's own), None when it ran
    listed: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    after: list[dict[str, Any]] = field(default_factory=list)

    def lines(self, node: dict[str, Any], t: Template) -> list[str]:
        return [] if self.refusal else [line_of(node, t, r) for r in self.listed] + [self.summary]


def _refusal(node: dict[str, Any], t: Template, parents: dict[str, bool], call: Call) -> str | None:
    o, c = node["options"], node["constants"]
    if call.status is not None and ("status" not in o["filters"] or call.status not in c["pool"]):
        return ARGUMENT
    if call.parent not in parents:
        return f'no {t.parent_noun} named "{call.parent}"'
    if o["refuse_off"] and not parents[call.parent]:
        return f'{t.parent_noun} "{call.parent}" is {t.flag_off}'
    if call.minimum is not None and not c["low"] <= call.minimum <= c["high"]:
        return f"--min must be from {c['low']} to {c['high']}"
    return None


def command_oracle(
    node: dict[str, Any], t: Template, parents: dict[str, bool], rows: list[dict[str, Any]], call: Call
) -> Outcome:
    """What one run gives: its refusal, or the children it works on (in order), its summary and the rows after.

    `parents` maps a parent's name to its flag; `rows` are the children in insertion order, each
    `{"parent": name, "code", "qty", "status"}`. Matched: the parent's children whose status is in the
    pool, of `--status` when given, with a quantity of at least `--min` when given.
    """
    refusal = _refusal(node, t, parents, call)
    if refusal is not None:
        return Outcome(refusal, after=list(rows))
    c = node["constants"]
    matched = [
        r
        for r in rows
        if r["parent"] == call.parent
        and r["status"] in c["pool"]
        and call.status in (None, r["status"])
        and (call.minimum is None or r["qty"] >= call.minimum)
    ]
    key = (lambda r: r["code"]) if node["options"]["order"] == "code" else (lambda r: (-r["qty"], r["code"]))
    listed = sorted(matched, key=key)
    return Outcome(None, listed, summary_of(node, len(listed), call.dry), _after(node, rows, matched, call.dry))


def _after(node: dict[str, Any], rows: list[dict], matched: list[dict], dry: bool) -> list[dict[str, Any]]:
    if dry:
        return list(rows)
    worked = {id(r) for r in matched}
    if node["options"]["action"] == "delete":
        return [r for r in rows if id(r) not in worked]
    return [{**r, "status": node["constants"]["other"]} if id(r) in worked else r for r in rows]


# -- the kind ------------------------------------------------------------------------------------


class CommandKind:
    kind = "command"
    category = "commands"

    def draw(self, domain: Domain, rng: random.Random) -> dict[str, Any]:
        """Options first, from the rng alone (the split is decided from them), then the constants."""
        t = domain.template
        options = {
            "action": rng.choice(ACTIONS),
            "filters": draw_subset(rng, FILTERS, 0.6),
            "dry_run": rng.random() < 0.6,
            "refuse_off": rng.random() < 0.5,
            "order": rng.choice(["code", "qty"]),
        }
        other = rng.randrange(3)
        constants: dict[str, Any] = {
            "pool": [s for i, s in enumerate(t.statuses) if i != other],
            "other": t.statuses[other],
            "format": rng.randrange(len(FORMATS)),
        }
        if "min" in options["filters"]:
            constants["low"], constants["high"] = rng.choice(LOWS), rng.choice(HIGHS)
        node = {"kind": self.kind, "options": options, "constants": constants}
        constants["name"] = command_name(t, node)
        return node

    def score(self, node: dict[str, Any]) -> int:
        """One for the parent's refusal, one per filter, one each for a dry run, a flagged-off refusal, the order by
        quantity with its tiebreak."""
        o = node["options"]
        return 1 + len(o["filters"]) + o["dry_run"] + o["refuse_off"] + (o["order"] == "qty")

    def path(self, domain: Domain, node: dict[str, Any]) -> str:
        return f"{domain.app}/management/commands/{node['constants']['name']}.py"

    def deliverables(self, domain: Domain, node: dict[str, Any]) -> list[str]:
        return [self.path(domain, node)]

    def tree(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        t, name = domain.template, node["constants"]["name"]
        stub = f'"""The `{name}` command over a {t.parent_noun}\'s {t.children}: write it here (see the task)."""\n'
        return {
            f"{domain.app}/models.py": models_file(t),
            f"{domain.app}/management/__init__.py": "",
            f"{domain.app}/management/commands/__init__.py": "",
            self.path(domain, node): stub,
        }

    # -- the reference ---------------------------------------------------------------------------

    def reference(self, domain: Domain, node: dict[str, Any], junk: bool = False) -> dict[str, str]:
        """The command a careful person writes; `junk`: one that takes the same arguments and ignores every rule."""
        t, c = domain.template, node["constants"]
        text = f'''"""The `{c["name"]}` command."""

from django.core.management.base import BaseCommand, CommandError

from {domain.app}.models import {t.child}, {t.parent}
{_constants(node, junk)}

class Command(BaseCommand):
    help = "{_help(t, node)}"

    def add_arguments(self, parser):
{_arguments(t, node)}
    def handle(self, *args, **options):
{_handle_junk(t, node) if junk else _handle(t, node)}{"" if junk else _find(t, node)}'''
        return {self.path(domain, node): text.rstrip() + "\n"}

    def junk(self, domain: Domain, node: dict[str, Any]) -> dict[str, str]:
        return self.reference(domain, node, junk=True)

    # -- the spec --------------------------------------------------------------------------------

    def spec(self, domain: Domain, node: dict[str, Any]) -> str:
        t, c = domain.template, node["constants"]
        lines = [
            f"`{domain.app}/models.py` gives `{t.parent}` (a {t.parent_noun}: `name`, unique; `{t.flag}`; "
            f"`{t.capacity}`) and `{t.child}` (a {t.child_noun} of one {t.parent_noun}: `{t.parent.lower()}`, "
            f"`{t.code}`, `{t.qty}`, and `status`, one of {statuses_english(t.statuses)}).",
            "",
            f"Write the management command `{c['name']}` in `{self.path(domain, node)}` (the packages around it are "
            f"given), run as `python manage.py {c['name']} {_usage(t, node)}`:",
            *_argument_lines(t, node),
            "",
            *_work_lines(t, node),
            "",
            *_output_lines(t, node),
            "",
            *_refusal_lines(t, node),
        ]
        return "\n".join(lines) + "\n"

    # -- the tests -------------------------------------------------------------------------------

    def tests(self, domain: Domain, node: dict[str, Any], rng: random.Random, hidden: bool) -> tuple[str, list]:
        t = domain.template
        v = Values(rng, hidden)
        world = _world(t, node, v)
        lines = _test_head(domain, node, world)
        for name, call, manage in _runs(t, node, world):
            outcome = command_oracle(node, t, world.flags, world.rows, call)
            lines += _test(t, node, world, name, call, outcome, manage, hidden)
        return "\n".join(lines) + "\n", v.vary


# -- the reference's parts -------------------------------------------------------------------------


def _help(t: Template, node: dict[str, Any]) -> str:
    c = node["constants"]
    done = f"Mark as {c['other']}" if node["options"]["action"] == "mark" else "Delete"
    return f"{done} the {' or '.join(c['pool'])} {t.children} of a {t.parent_noun}."


def _constants(node: dict[str, Any], junk: bool) -> str:
    o, c = node["options"], node["constants"]
    out = ["POOL = (" + ", ".join(f'"{s}"' for s in c["pool"]) + ")"]
    if "min" in o["filters"] and not junk:
        out += [f"LOWEST = {c['low']}", f"HIGHEST = {c['high']}"]
    return "\n" + "\n".join(out) + "\n"


def _arguments(t: Template, node: dict[str, Any]) -> str:
    o = node["options"]
    out = [f'parser.add_argument("{t.parent.lower()}")']
    if "status" in o["filters"]:
        out.append('parser.add_argument("--status", choices=POOL)')
    if "min" in o["filters"]:
        out.append('parser.add_argument("--min", type=int)')
    if o["dry_run"]:
        out.append('parser.add_argument("--dry-run", action="store_true")')
    return "".join(f"        {line}\n" for line in out)


def _line_fstring(t: Template, node: dict[str, Any]) -> str:
    fields = {"code": "{row." + t.code + "}", "status": "{row.status}", "qty": "{row." + t.qty + "}"}
    return 'f"' + FORMATS[node["constants"]["format"]].format(**fields, qty_noun=t.qty_noun) + '"'


def _change(t: Template, node: dict[str, Any]) -> tuple[str, str]:
    """(the statement that changes the rows, the summary's f-string)."""
    o, c = node["options"], node["constants"]
    rows = f"{t.child}.objects.filter(pk__in=[row.pk for row in rows])"
    if o["action"] == "mark":
        change, done = f'{rows}.update(status="{c["other"]}")', f"marked {c['other']}"
    else:
        change, done = f"{rows}.delete()", "deleted"
    if not o["dry_run"]:
        return f"        {change}\n", f'f"{{len(rows)}} {done}"'
    verb = f'"would be {done}" if options["dry_run"] else "{done}"'
    return f'        if not options["dry_run"]:\n            {change}\n        done = {verb}\n', 'f"{len(rows)} {done}"'


def _handle(t: Template, node: dict[str, Any]) -> str:
    o, p = node["options"], t.parent.lower()
    order = f'"{t.code}"' if o["order"] == "code" else f'"-{t.qty}", "{t.code}"'
    out = f'        {p} = self.find(options["{p}"])\n'
    if "min" in o["filters"]:
        out += """        minimum = options["min"]
        if minimum is not None and (minimum < LOWEST or minimum > HIGHEST):
            raise CommandError(f"--min must be from {LOWEST} to {HIGHEST}")
"""
    out += f"        rows = {t.child}.objects.filter({p}={p}, status__in=POOL)\n"
    if "status" in o["filters"]:
        out += '        if options["status"] is not None:\n            rows = rows.filter(status=options["status"])\n'
    if "min" in o["filters"]:
        out += f"        if minimum is not None:\n            rows = rows.filter({t.qty}__gte=minimum)\n"
    change, summary = _change(t, node)
    return out + (
        f"        rows = list(rows.order_by({order}))\n"
        f"        for row in rows:\n            self.stdout.write({_line_fstring(t, node)})\n"
        f"{change}        self.stdout.write({summary})\n"
    )


def _handle_junk(t: Template, node: dict[str, Any]) -> str:
    p, c = t.parent.lower(), node["constants"]
    change = f'update(status="{c["other"]}")' if node["options"]["action"] == "mark" else "delete()"
    done = f"marked {c['other']}" if node["options"]["action"] == "mark" else "deleted"
    return (
        f'        {p} = {t.parent}.objects.get(name=options["{p}"])\n'
        f'        rows = list({t.child}.objects.filter({p}={p}).order_by("{t.code}"))\n'
        f"        for row in rows:\n            self.stdout.write({_line_fstring(t, node)})\n"
        f"        {t.child}.objects.filter({p}={p}).{change}\n"
        f'        self.stdout.write(f"{{len(rows)}} {done}")\n'
    )


def _find(t: Template, node: dict[str, Any]) -> str:
    p = t.parent.lower()
    off = ""
    if node["options"]["refuse_off"]:
        off = f"""        if not {p}.{t.flag}:
            raise CommandError(f'{t.parent_noun} "{{name}}" is {t.flag_off}')
"""
    return f"""
    def find(self, name):
        {p} = {t.parent}.objects.filter(name=name).first()
        if {p} is None:
            raise CommandError(f'no {t.parent_noun} named "{{name}}"')
{off}        return {p}
"""


# -- the spec's parts ------------------------------------------------------------------------------


def _usage(t: Template, node: dict[str, Any]) -> str:
    o = node["options"]
    parts = [t.parent.upper()]
    parts += ["[--status STATUS]"] if "status" in o["filters"] else []
    parts += ["[--min N]"] if "min" in o["filters"] else []
    parts += ["[--dry-run]"] if o["dry_run"] else []
    return " ".join(parts)


def _argument_lines(t: Template, node: dict[str, Any]) -> list[str]:
    o, c = node["options"], node["constants"]
    out = [f"- `{t.parent.upper()}` (required): the `name` of a {t.parent_noun}."]
    if "status" in o["filters"]:
        out.append(
            f"- `--status STATUS`: only {t.children} whose `status` is STATUS, which must be "
            f"{statuses_english(c['pool'])}: any other value (another letter case included) is refused as an argument "
            "the command does not accept, with `CommandError`, before anything is printed or changed."
        )
    if "min" in o["filters"]:
        out.append(
            f"- `--min N`: only {t.children} whose `{t.qty}` is at least N (N itself included). N is a whole number "
            f"from {c['low']} to {c['high']}, both included; any other number is refused (below)."
        )
    if o["dry_run"]:
        out.append(
            "- `--dry-run`: print exactly what the same run without it would print, except its last line (below), "
            "and change nothing."
        )
    return out


def _work_lines(t: Template, node: dict[str, Any]) -> list[str]:
    o, c = node["options"], node["constants"]
    pool, other = statuses_english(c["pool"]), f'`"{c["other"]}"`'
    what = (
        f"marks each of them {other} (its `status` becomes {other}; nothing else of it changes)"
        if o["action"] == "mark"
        else "deletes each of them"
    )
    off = (
        f"A {t.parent_noun} whose `{t.flag}` is false is refused (below)."
        if o["refuse_off"]
        else f"A {t.parent_noun} whose `{t.flag}` is false is handled like any other."
    )
    return [
        f"The command works on the {t.children} of that {t.parent_noun} whose `status` is {pool} (never a "
        f"{t.child_noun} of another {t.parent_noun}, never a {other} one), narrowed by the options given, and {what}. "
        f"No other row changes. {off}"
    ]


def _order_english(t: Template, node: dict[str, Any]) -> str:
    if node["options"]["order"] == "code":
        return f"in order of `{t.code}` (A to Z)"
    return f"in order of `{t.qty}`, largest first, equal `{t.qty}` in order of `{t.code}` (A to Z)"


def _output_lines(t: Template, node: dict[str, Any]) -> list[str]:
    c, o = node["constants"], node["options"]
    fields = {"code": f"<{t.code}>", "qty": f"<{t.qty}>", "status": "<status>", "qty_noun": t.qty_noun}
    fmt = FORMATS[c["format"]].format(**fields)
    dry = f"; under `--dry-run` it reads exactly `{summary_of(node, 0, True).replace('0', '<n>', 1)}`" if o["dry_run"] else ""
    return [
        f'It prints on the command\'s own output (`self.stdout`: what `call_command("{c["name"]}", ..., '
        "stdout=buffer)` captures), one line each and nothing else:",
        f"- a line for each {t.child_noun} it works on, {_order_english(t, node)}, exactly `{fmt}` (its values before the run);",
        f"- then one last line, exactly `{summary_of(node, 0, False).replace('0', '<n>', 1)}`, where `<n>` is how many "
        f"{t.children} it worked on (`{summary_of(node, 0, False)}` when none){dry}.",
    ]


def _refusal_lines(t: Template, node: dict[str, Any]) -> list[str]:
    o, c = node["options"], node["constants"]
    out = [
        "Refusals: the command raises `CommandError` (`django.core.management.CommandError`; run through "
        "`manage.py`, it exits with a non-zero status and the message on its error output) with exactly the "
        "message given, before it prints or changes anything:",
        f'- no {t.parent_noun} has that name: `no {t.parent_noun} named "<name>"` (the name as given);',
    ]
    if o["refuse_off"]:
        out.append(f'- the {t.parent_noun}\'s `{t.flag}` is false: `{t.parent_noun} "<name>" is {t.flag_off}`;')
    if "min" in o["filters"]:
        out.append(f"- `--min` outside {c['low']} to {c['high']}: `--min must be from {c['low']} to {c['high']}`.")
    out[-1] = out[-1][:-1] + "."
    return out


# -- the tests' parts ------------------------------------------------------------------------------


@dataclass
class World:
    """A test module's rows: parents by role (main, second, off, spare; ghost is no parent), children in order."""

    names: dict[str, str]
    flags: dict[str, bool]
    rows: list[dict[str, Any]]
    qtys: list[int]


def _world(t: Template, node: dict[str, Any], v: Values) -> World:
    """Every rule tells on these rows (module docstring): codes c0 < ... < c8, quantities q0 < q1 < q2 < q3."""
    roles = ("main", "second", "off", "spare", "ghost")
    names = dict(zip(roles, v.words(NAMES, 5), strict=True))
    c = v.words(CODES, 9)
    q = v.ints(4)
    (p0, p1), other = node["constants"]["pool"], node["constants"]["other"]
    layout = [
        ("main", c[3], q[1], p0),  # at the --min boundary
        ("main", c[1], q[0], p1),  # below it
        ("main", c[5], q[3], p1),
        ("main", c[0], q[2], other),  # never worked on
        ("main", c[2], q[1], p1),  # ties the first on quantity, inserted against code order
        ("main", c[4], q[0], p0),
        ("second", c[6], q[2], p0),
        ("off", c[7], q[3], p0),
        ("spare", c[8], q[0], other),
    ]
    rows = [{"parent": names[r], "code": code, "qty": qty, "status": s} for r, code, qty, s in layout]
    flags = {names[r]: r != "off" for r in roles[:4]}
    return World(names, flags, rows, q)


def _runs(t: Template, node: dict[str, Any], w: World) -> list[tuple[str, Call, bool]]:
    """(test name, call, through manage.py) for every test of the module."""
    o, c, n = node["options"], node["constants"], w.names
    verb = "marks" if o["action"] == "mark" else "deletes"
    off = t.flag_off.replace(" ", "_")
    runs = [
        (f"it_lists_and_{verb}_the_{t.children}_of_one_{t.parent_noun}", Call(n["main"]), False),
        (f"a_{t.parent_noun}_with_nothing_to_work_on_prints_only_the_last_line", Call(n["spare"]), False),
        (f"an_unknown_{t.parent_noun}_is_refused_and_nothing_changes", Call(n["ghost"]), False),
        ("a_refusal_exits_with_a_non_zero_status_from_manage_py", Call(n["ghost"]), True),
        (
            f"a_{t.parent_noun}_that_is_{off}_is_{'refused' if o['refuse_off'] else 'handled_like_any_other'}",
            Call(n["off"]),
            False,
        ),
    ]
    if "status" in o["filters"]:
        runs.append((f"status_{c['pool'][1]}_narrows_the_{t.children}", Call(n["main"], status=c["pool"][1]), False))
        runs.append((f"status_{c['other']}_is_refused", Call(n["main"], status=c["other"]), False))
    if "min" in o["filters"]:
        runs += _min_runs(node, w)
    if o["filters"] == list(FILTERS):
        runs.append(("status_and_min_together", Call(n["main"], status=c["pool"][1], minimum=w.qtys[1]), False))
    if o["dry_run"]:
        runs.append(("a_dry_run_prints_the_same_rows_and_changes_nothing", Call(n["main"], dry=True), False))
    return runs


def _min_runs(node: dict[str, Any], w: World) -> list[tuple[str, Call, bool]]:
    c, main = node["constants"], w.names["main"]
    return [
        ("the_minimum_keeps_the_rows_at_it", Call(main, minimum=w.qtys[1]), False),
        ("the_lowest_minimum_is_accepted", Call(main, minimum=c["low"]), False),
        ("below_the_lowest_minimum_is_refused", Call(main, minimum=c["low"] - 1), False),
        ("the_highest_minimum_is_accepted", Call(main, minimum=c["high"]), False),
        ("past_the_highest_minimum_is_refused", Call(main, minimum=c["high"] + 1), False),
    ]


def _test_head(domain: Domain, node: dict[str, Any], w: World) -> list[str]:
    t = domain.template
    imports = [
        "import io",
        "",
        "import pytest",
        "from django.core.management import CommandError, call_command, execute_from_command_line",
    ]
    lines = test_module_head(imports, [f"from {domain.app}.models import {t.child}, {t.parent}"])
    for role in ("main", "second", "off", "spare"):
        lines.append(create_parent(t, role, w.names[role], role != "off"))
    var = {w.names[r]: r for r in ("main", "second", "off", "spare")}
    for r in w.rows:
        lines.append(
            f'    {t.child}.objects.create({t.parent.lower()}={var[r["parent"]]}, {t.code}="{r["code"]}", '
            f'{t.qty}={r["qty"]}, status="{r["status"]}")'
        )
    return lines + [
        "",
        "",
        "def rows():",
        f'    return list({t.child}.objects.order_by("pk").values_list("{t.code}", "status"))',
    ]


def _args_src(node: dict[str, Any], call: Call) -> str:
    args = [f'"{node["constants"]["name"]}"', f'"{call.parent}"']
    args += ['"--status"', f'"{call.status}"'] if call.status is not None else []
    args += ['"--min"', str(call.minimum)] if call.minimum is not None else []
    args += ['"--dry-run"'] if call.dry else []
    return ", ".join(args)


def _line_src(node: dict[str, Any], t: Template, row: dict[str, Any], hidden: bool) -> str:
    """An expected line as the test writes it: hidden, an f-string of the quantity's token (folded after the draw)."""
    if hidden:
        return 'f"' + line_of(node, t, row, "{" + str(row["qty"]) + "}") + '"'
    return '"' + line_of(node, t, row) + '"'


def _rows_src(rows: list[dict[str, Any]]) -> str:
    return "[" + ", ".join(f'("{r["code"]}", "{r["status"]}")' for r in rows) + "]"


def _test(t: Template, node: dict, w: World, name: str, call: Call, out: Outcome, manage: bool, hidden: bool) -> list[str]:
    """One test: run the command, then compare its output lines (or its refusal) and the rows after."""
    head = ["", "", f"def test_{name}(world{', capsys' if manage else ''}):"]
    if manage:
        return head + [
            "    with pytest.raises(SystemExit) as ended:",
            f'        execute_from_command_line(["manage.py", {_args_src(node, call)}])',
            "    assert ended.value.code not in (0, None)",
            f"    assert {out.refusal!r} in capsys.readouterr().err",
            f"    assert rows() == {_rows_src(out.after)}",
        ]
    head.append("    out = io.StringIO()")
    if out.refusal is None:
        expected = [_line_src(node, t, r, hidden) for r in out.listed] + [repr(out.summary)]
        return head + [
            f"    call_command({_args_src(node, call)}, stdout=out)",
            f"    assert out.getvalue().splitlines() == [{', '.join(expected)}]",
            f"    assert rows() == {_rows_src(out.after)}",
        ]
    check = [] if out.refusal == ARGUMENT else [f"    assert str(refused.value) == {out.refusal!r}"]
    return head + [
        "    with pytest.raises(CommandError) as refused:",
        f"        call_command({_args_src(node, call)}, stdout=out)",
        *check,
        '    assert out.getvalue() == ""',
        f"    assert rows() == {_rows_src(out.after)}",
    ]
