"""What every feature kind of the django task generator shares: drawn values, the given models and small renderers.

`Values` draws a value plainly for a visible test and as a `[[vary]]` token for a hidden one
(families/django_vary.py); `parent_model`, `child_model` and `models_file` render the domain's given
models; `statuses_english` and `create_parent` render a spec's list of statuses and a test's fixture
row. The kinds (generate/dj_features.py, generate/dj_form.py) import these; this module imports no kind.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from sandbox_env.generate.dj_domain import Template, words

NON_FIELD = "__all__"


@dataclass
class Values:
    rng: random.Random
    hidden: bool
    vary: list[dict[str, Any]] = field(default_factory=list)
    _band: int = 0

    def ints(self, n: int, lo: int = 2, hi: int = 98) -> list[int]:
        """n distinct ascending whole numbers; hidden: each a token drawn per grading inside its own band."""
        if not self.hidden:
            return sorted(self.rng.sample(range(lo, hi + 1), n))
        out = []
        for _ in range(n):
            base = 1000 + 100 * self._band
            self._band += 1
            value = self.rng.randint(base + 10, base + 50)
            self.vary.append({"token": value, "range": [base, base + 60]})
            out.append(value)
        return out

    def token_int(self, lo: int, hi: int, avoid: set[int] = frozenset()) -> int:
        """One whole number in [lo, hi]; hidden: a token drawn per grading in that range."""
        value = self.rng.choice([v for v in range(lo + 1, hi) if v not in avoid])
        if self.hidden:
            self.vary.append({"token": value, "range": [lo, hi]})
        return value

    def words(self, pool: tuple[str, ...], n: int, avoid: set[str] = frozenset()) -> list[str]:
        got = words(self.rng, pool, n, set(avoid))
        if self.hidden:
            self.vary += [{"token": w, "keep": 1} for w in got]
        return got


def parent_model(t: Template, manager: str = "") -> str:
    line = f"\n    objects = {manager}.as_manager()\n" if manager else ""
    return f"""class {t.parent}(models.Model):
    name = models.CharField(max_length=60, unique=True)
    {t.flag} = models.BooleanField(default=True)
    {t.capacity} = models.PositiveIntegerField(default=10)
{line}
    def __str__(self):
        return self.name
"""


def child_model(t: Template) -> str:
    choices = "\n".join(f'        {s.upper()} = "{s}"' for s in t.statuses)
    return f'''class {t.child}(models.Model):
    class Status(models.TextChoices):
{choices}

    {t.parent.lower()} = models.ForeignKey({t.parent}, on_delete=models.CASCADE, related_name="{t.children}")
    {t.code} = models.CharField(max_length=12)
    {t.qty} = models.PositiveIntegerField(default=1)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.{t.statuses[0].upper()})
'''


def models_file(t: Template, manager: str = "", manager_module: str = "") -> str:
    head = "from django.db import models\n"
    if manager:
        head += f"\nfrom {t.key}.{manager_module} import {manager}\n"
    return f"{head}\n\n{parent_model(t, manager)}\n\n{child_model(t)}"


def statuses_english(statuses: tuple[str, ...] | list[str]) -> str:
    quoted = [f'`"{s}"`' for s in statuses]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def create_parent(t: Template, var: str, name: str, flag: bool = True, capacity: int | None = None) -> str:
    extra = "" if flag else f", {t.flag}=False"
    extra += "" if capacity is None else f", {t.capacity}={capacity}"
    return f'    {var} = {t.parent}.objects.create(name="{name}"{extra})'


def draw_subset(rng: random.Random, pool: tuple[str, ...], chance: float, at_least: int = 1) -> list[str]:
    """Each of `pool` kept with `chance`, in pool order, drawn again until at least `at_least` are kept."""
    while True:
        kept = [item for item in pool if rng.random() < chance]
        if len(kept) >= at_least:
            return kept


def test_module_head(imports: list[str], app_imports: list[str]) -> list[str]:
    """The lines every generated test module opens with: its imports, the app's, the database mark and the
    start of the `world` fixture (whose body the kind writes)."""
    return [*imports, "", *app_imports, "", "pytestmark = pytest.mark.django_db", "", "", "@pytest.fixture", "def world():"]
