"""One generated django task from a seed and an index: the draw, its renderings, and the host screen.

`candidate(seed, index)` is a pure function: the same seed and index give the same task. It
draws a feature kind (round robin over the grammar's `KIND_ORDERS`, so every kind gets its share), the kind's node
(options, then constants), a domain from the pool of the task's split, and renders the project
tree with stubs, the reference deliverables, a plausible wrong answer (`junk`), the spec and
the tests (visible and hidden, each over its own drawn rows; the hidden ones declare `[[vary]]`
tokens, so every grading draws their data again).

Decisions:
- Signature: `django:<kind>:<options as canonical JSON>` (the feature tree without constants,
  domain and rows). One task so far holds one feature; the signature format takes a list later.
- Split (as the orm generator's, generate/store.py `split_of`): one signature in five is
  `eval`; an eval task's domain seed is a multiple of 5 and a train task's never is, so eval
  holds out whole signatures and domain seeds.
- Task id: `dj_<kind>_<12 hex of sha256(template, node)>`: stable, and two draws of one
  structure with the same constants and domain template are one task (the later is dropped).
- Difficulty from the structural score (`measures["score"]`: the options a kind's rules add,
  written per kind in `score_of`): easy up to 2, medium 3 to 4, hard from 5.
- Grammars (GRAMMARS; `candidate(seed, index, only, grammar)`): a stored line keeps drawing under the
  grammar it was drawn with, so a kind added later changes no stored (seed, index). Grammar 1 takes
  kinds in turn from ("queryset", "constraints", "view") on the streams `dj-node:{seed}:{index}`,
  ...; its lines carry no `grammar` (dj_store.grammar_of reads them as 1). Grammar 2 adds `form` to
  the turn and draws every stream under a `g2:` prefix (`dj-node:g2:{seed}:{index}`, ...), so its
  candidates are new draws, not grammar-1 tasks met again; its records carry `"grammar": 2`. Grammar 3
  adds `command` to the turn, on streams prefixed `g3:`, its records carrying `"grammar": 3`. `only`
  draws one kind of the grammar's (`GRAMMAR_KINDS`) from a stream of its own, prefixed the same way.
- The screen refuses, before any container: a spec or title using a word of
  families/django_words.py; a file that does not compile; a task the django family does not
  compile (fewer hidden than visible tests, a `[[vary]]` token that is no literal of the hidden
  tests or that the spec states); a reference equal to its stub; a junk answer equal to the reference.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from typing import Any

from sandbox_env.families.django_words import API_WORDS
from sandbox_env.generate.dj_domain import Domain, draw_domain
from sandbox_env.generate.dj_features import KINDS
from sandbox_env.generate.dj_store import compile_generated_django
from sandbox_env.generate.store import split_of

GRAMMARS = (1, 2, 3)
GRAMMAR = GRAMMARS[-1]  # what new generation draws
KIND_ORDERS = {
    1: ("queryset", "constraints", "view"),
    2: ("queryset", "constraints", "view", "form"),
    3: ("queryset", "constraints", "view", "form", "command"),
}
GRAMMAR_KINDS = {
    1: ("queryset", "constraints", "view", "budget"),
    2: ("queryset", "constraints", "view", "budget", "form"),
    3: ("queryset", "constraints", "view", "budget", "form", "command"),
}
KIND_ORDER = KIND_ORDERS[GRAMMAR]
SEED_SHARE = 5
TEST_FILE = "test_{kind}.py"

SETTINGS = """from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
SECRET_KEY = "websandbox-task-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost"]
INSTALLED_APPS = [
    "{app}",
]
MIDDLEWARE = []
ROOT_URLCONF = "project.urls"
DATABASES = {{"default": {{"ENGINE": "django.db.backends.sqlite3", "NAME": BASE_DIR / "db.sqlite3"}}}}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"
"""
PYTEST_INI = """[pytest]
DJANGO_SETTINGS_MODULE = project.settings
django_find_project = false
pythonpath = .
testpaths = tests
addopts = --no-migrations -p no:cacheprovider
"""
MANAGE = """#!/usr/bin/env python
import os
import sys

if __name__ == "__main__":
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "project.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)
"""
TITLES = {
    "queryset": "A chainable {parent} queryset with figures over its {children}",
    "constraints": "The {child} model: what the database refuses and where each error lands",
    "view": "A JSON view of a {parent_noun}'s {children} with filters and status codes",
    "budget": "A {parent_noun} report over its {children} under a query budget",
    "form": "A {child} form: each field's own rules, a rule across fields, and where each error lands",
    "command": "A management command over a {parent_noun}'s {children}: its arguments, output, changes and refusals",
}


class ScreenError(ValueError):
    pass


def common_tree(domain: Domain) -> dict[str, str]:
    return {
        "manage.py": MANAGE,
        "pytest.ini": PYTEST_INI,
        "project/__init__.py": "",
        "project/settings.py": SETTINGS.format(app=domain.app),
        "project/urls.py": "urlpatterns = []\n",
        f"{domain.app}/__init__.py": "",
    }


def signature_of(node: dict[str, Any]) -> str:
    return f"django:{node['kind']}:{json.dumps(node['options'], sort_keys=True)}"


def score_of(node: dict[str, Any]) -> int:
    """The structural score: queryset, one per figure plus one for two statuses; constraints, one per rule plus
    one for a unique rule among some statuses; view, one per filter, one for hiding flagged-off parents, one for
    the order by quantity; budget, two plus one for the total and one for keeping flagged parents only; form, its
    kind's `score` (one per field rule, one for the cross-field rule, one more when it covers two statuses);
    command, its kind's `score` (one for the parent's refusal, one per filter, one each for a dry run, a refused
    flagged-off parent and the order by quantity)."""
    o = node["options"]
    if node["kind"] == "queryset":
        return len(o["aggs"]) + (o["statuses"] == 2)
    if node["kind"] == "constraints":
        return len(o["rules"]) + (o.get("unique_among") == "some")
    if node["kind"] == "budget":
        return 2 + o["total"] + o["only_flagged"]
    if node["kind"] in ("form", "command"):
        return KINDS[node["kind"]].score(node)
    return len(o["filters"]) + o["hide_off"] + (o["order"] == "qty")


def difficulty_of(score: int) -> str:
    return "easy" if score <= 2 else "medium" if score <= 4 else "hard"


def domain_seed_for(split: str, rng: random.Random) -> int:
    """A domain seed of the split's pool: eval seeds are multiples of SEED_SHARE, train seeds never are."""
    base = SEED_SHARE * rng.randrange(1, 200000)
    return base if split == "eval" else base + rng.randrange(1, SEED_SHARE)


def _stream(seed: int, index: int, only: str | None, grammar: int) -> str:
    """What every random stream of a candidate is named after: grammar 1 as it always was, a later one prefixed."""
    prefix = "" if grammar == 1 else f"g{grammar}:"
    return f"{prefix}{seed}:{index}" + (f":{only}" if only else "")


def candidate(seed: int, index: int, only: str | None = None, grammar: int = GRAMMAR) -> dict[str, Any]:
    """The stored record of one drawn task (not yet verified).

    Kinds come in turn (the grammar's KIND_ORDERS); `only` draws one kind from a stream of its own (the
    record keeps it as `only`, so `candidate(seed, index, only)` redraws it). A record drawn under a
    grammar after the first keeps it as `grammar` (module docstring).
    """
    if not isinstance(seed, int) or seed < 0:
        raise ValueError(f"a seed is a whole number of zero or more, got {seed!r}")
    if grammar not in GRAMMARS:
        raise ValueError(f"no django grammar {grammar!r}; known: {', '.join(map(str, GRAMMARS))}")
    if only is not None and only not in GRAMMAR_KINDS[grammar]:
        raise ValueError(f"unknown feature kind {only!r} in grammar {grammar}; known: {', '.join(GRAMMAR_KINDS[grammar])}")
    order = KIND_ORDERS[grammar]
    kind = KINDS[only or order[index % len(order)]]
    stream = _stream(seed, index, only, grammar)
    node_seed = f"dj-node:{stream}"
    probe = kind.draw(draw_domain(0), random.Random(node_seed))  # the options: no domain enters them
    signature = signature_of(probe)
    split = split_of(signature)
    domain_seed = domain_seed_for(split, random.Random(f"dj-domain-pick:{stream}"))
    domain = draw_domain(domain_seed)
    node = kind.draw(domain, random.Random(node_seed))
    assert node["options"] == probe["options"], "a kind's options must not depend on the domain"
    t = domain.template
    tree = {**common_tree(domain), **kind.tree(domain, node)}
    visible, _ = kind.tests(domain, node, random.Random(f"dj-tests:{stream}:visible"), False)
    hidden, vary = kind.tests(domain, node, random.Random(f"dj-tests:{stream}:hidden"), True)
    vary = [d for d in vary if re.search(rf"(?<![A-Za-z0-9_]){d['token']}(?![A-Za-z0-9_])", hidden)]  # drawn, unused
    name = TEST_FILE.format(kind=node["kind"])
    key = json.dumps({"template": t.key, "node": node}, sort_keys=True)
    task_id = f"dj_{node['kind']}_{hashlib.sha256(key.encode()).hexdigest()[:12]}"
    score = score_of(node)
    title = TITLES[node["kind"]].format(parent=t.parent, children=t.children, child=t.child, parent_noun=t.parent_noun)
    record = {
        "task_id": task_id,
        "title": title,
        "spec": kind.spec(domain, node),
        "category": kind.category,
        "difficulty": difficulty_of(score),
        "deliverables": kind.deliverables(domain, node),
        "tree": tree,
        "tests": {name: visible},
        "hidden": {name: hidden},
        "reference": kind.reference(domain, node),
        "junk": kind.junk(domain, node),
        "vary": vary,
        "node": node,
        "template": t.key,
        "signature": signature,
        "split": split,
        "seed": seed,
        "index": index,
        "only": only,
        "domain_seed": domain_seed,
        "measures": {"features": [node["kind"]], "feature_count": 1, "score": score, "domain": t.key},
    }
    if grammar > 1:
        record["grammar"] = grammar
    if hasattr(kind, "naive"):  # a query budget: right but over budget is a control that must fail
        record["naive"] = kind.naive(domain, node)
        record["budget_tests"] = kind.budget_tests(name)
        record["hidden_budget_tests"] = kind.budget_tests(name)
    return record


def screen(record: dict[str, Any]) -> None:
    """Raise ScreenError when the host can already tell the candidate is unfit (module docstring)."""
    for where in ("title", "spec"):
        found = API_WORDS.findall(record[where])
        if found:
            raise ScreenError(f"{record['task_id']}: the {where} names the technique: {sorted(set(found))}")
    for group in ("tree", "tests", "hidden", "reference", "junk", "naive"):
        for path, text in record.get(group, {}).items():
            if not path.endswith(".py"):
                continue
            try:
                compile(text, f"{group}/{path}", "exec")
            except SyntaxError as exc:
                raise ScreenError(f"{record['task_id']}: {group}/{path} does not compile: {exc}") from exc
    for path in record["deliverables"]:
        if record["reference"][path] == record["tree"][path]:
            raise ScreenError(f"{record['task_id']}: the reference of {path} is its stub")
    if record["junk"] == record["reference"]:
        raise ScreenError(f"{record['task_id']}: the junk answer is the reference (the drawn rules leave nothing out)")
    try:
        compile_generated_django(record)
    except ValueError as exc:
        raise ScreenError(f"{record['task_id']}: {exc}") from exc
