"""Mutation operators on small sources: what each makes, names and determinism (no Docker)."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox_env.generate import store
from sandbox_env.verify.mutants import (
    DJANGO_OPERATORS,
    FASTAPI_OPERATORS,
    ORM_OPERATORS,
    ORM_STATED_RULE_OPERATORS,
    Context,
    _swap_ranks,
    generate,
    nullable_names_of,
    related_names_of,
)
from sandbox_env.verify.sensitivity import Outcome, TaskSensitivity, declared_equivalents, sensitivity_line, settle

ROOT = Path(__file__).resolve().parents[1]
MODELS_PY = ROOT / "sandbox_env" / "runtime" / "container" / "orm_fixture" / "shop" / "models.py"


def details(source: str, operators, ctx: Context | None = None) -> list[str]:
    return [m.name.split(" ", 1)[1] for m in generate(source, operators, ctx)]


def test_lookups_flip_at_their_boundary_and_exact_names_become_iexact():
    found = details('qs = Book.objects.filter(price__gte=5, title="X", genre__isnull=True, pages__lt=3)', ORM_OPERATORS)
    assert "price__gte->price__gt" in found
    assert "title->title__iexact" in found
    assert "genre__isnull=True->False" in found
    assert "pages__lt->pages__lte" in found


def test_each_order_key_flips_and_each_tiebreak_is_dropped():
    found = details('qs = Book.objects.order_by("-price", "title")', ORM_OPERATORS)
    assert found == ["key 1 '-price'->'price'", "key 2 'title'->'-title'", "drop tiebreak 'title'"]


def test_window_ranks_aggregates_distinct_and_coalesce_are_swapped_or_dropped():
    src = (
        'qs = Book.objects.annotate(r=Window(DenseRank(), order_by=F("price").desc()), '
        's=Coalesce(Sum("pages"), 0), c=Count("authors", distinct=True)).distinct()[:5]'
    )
    found = details(src, ORM_OPERATORS)
    for want in (
        "DenseRank->Rank",
        "DenseRank->RowNumber",
        "Sum->Avg",
        "Sum->Max",
        "Sum->Min",
        "distinct=True->False",
        "drop .distinct()",
        "order_by F('price').desc()->F('price').asc()",
        "upper :5->:4",
        "upper :5->:6",
        "lower :5->1:5",
    ):
        assert want in found, want
    assert any(d.startswith("Coalesce(...)->Sum(") for d in found)


ROW_NUMBER_WINDOW = 'Window(RowNumber(), partition_by=F("genre__name"), order_by=[F("price").desc(), F("title").asc()])'


def test_a_row_number_closed_by_a_tiebreak_becomes_a_rank_that_also_drops_the_tiebreak():
    src = (
        f"qs = Book.objects.annotate(p={ROW_NUMBER_WINDOW}, "
        'r=Window(RowNumber(), order_by=F("price").desc()), d=Window(DenseRank(), order_by=F("price").desc()))'
    )
    found = {m.name.split(" ", 1)[1]: m.source for m in generate(src, ORM_OPERATORS)}
    swaps = [d for d in found if d.startswith(("RowNumber", "Rank", "DenseRank"))]
    assert swaps == [
        "RowNumber->DenseRank, drop tiebreak F('title').asc()",
        "RowNumber->Rank, drop tiebreak F('title').asc()",
        "RowNumber->DenseRank",  # a window with no tiebreak keeps the bare swap
        "RowNumber->Rank",
        "DenseRank->Rank",
        "DenseRank->RowNumber",
    ]
    rank = found["RowNumber->Rank, drop tiebreak F('title').asc()"]
    assert "p=Window(Rank(), partition_by=F('genre__name'), order_by=[F('price').desc()])" in rank
    assert "r=Window(RowNumber(), order_by=F('price').desc())" in rank  # one edit per mutant
    assert "drop tiebreak F('title').asc()" in found  # the order operator's own edit of the window stays


def _stored_orm_references() -> list[str]:
    hand = [p.read_text() for p in sorted((ROOT / "sandbox_env" / "tasks" / "orm").glob("*/reference.py"))]
    return hand + [r["reference"] for r in store.read()]


def test_every_stored_reference_without_a_row_number_keeps_the_bare_rank_swaps_mutants():
    """Only a tiebroken row number's mutants differ from the bare swap's (names and sources alike)."""
    ctx = Context(related_names_of(MODELS_PY.read_text()))
    bare = {**ORM_OPERATORS, "rank": _swap_ranks}
    for src in _stored_orm_references()[::3]:
        now, before = generate(src, ORM_OPERATORS, ctx), generate(src, bare, ctx)
        if "RowNumber()" in src:
            assert any(m.name.endswith("drop tiebreak F('title').asc()") and m.operator == "rank" for m in now)
        else:
            assert [(m.name, m.source) for m in now] == [(m.name, m.source) for m in before]


def test_q_operators_flip_and_a_filter_over_one_multi_valued_relation_splits():
    multi = related_names_of(MODELS_PY.read_text())
    assert {"books", "authors", "sales", "reviews"} <= multi
    found = details(
        "qs = Book.objects.filter(reviews__rating=5, reviews__verified=False) | Q(a=1) & Q(b=2)", ORM_OPERATORS, Context(multi)
    )
    assert "split filter on reviews (reviews__rating first)" in found
    assert "&->|" in found
    single = details("qs = Book.objects.filter(genre__name='x', publisher__name='y')", ORM_OPERATORS, Context(multi))
    assert not any(d.startswith("split") for d in single)


def schema() -> Context:
    models = MODELS_PY.read_text()
    return Context(related_names_of(models), nullable_names_of(models))


def test_the_schemas_nullable_fields_are_read_from_the_models():
    assert {"genre", "sale_price", "birth_date", "founded", "mentor"} <= nullable_names_of(MODELS_PY.read_text())
    assert "title" not in nullable_names_of(MODELS_PY.read_text())


def test_a_negated_condition_over_a_missing_value_is_made_to_drop_the_rows_that_have_none():
    found = details('qs = Book.objects.exclude(genre__name="Fantasy")', ORM_STATED_RULE_OPERATORS, schema())
    assert found == ["drop rows with no genre"]
    vacuous = generate("qs = Author.objects.exclude(books__price__lt=10)", ORM_STATED_RULE_OPERATORS, schema())
    assert [m.source for m in vacuous] == ["qs = Author.objects.exclude(books=None).exclude(books__price__lt=10)"]
    assert not details('qs = Book.objects.exclude(title="X")', ORM_STATED_RULE_OPERATORS, schema())


def test_a_condition_that_leaves_out_missing_values_is_dropped_and_a_lone_one_takes_its_call():
    found = generate(
        "qs = Book.objects.filter(genre__isnull=False).filter(pages__lt=3, sale_price__isnull=False)",
        ORM_STATED_RULE_OPERATORS,
        schema(),
    )
    assert [m.source for m in found] == [
        "qs = Book.objects.filter(genre__isnull=False).filter(pages__lt=3)",
        "qs = Book.objects.filter(pages__lt=3, sale_price__isnull=False)",
    ]
    assert details("qs = Book.objects.exclude(genre=None)", ORM_STATED_RULE_OPERATORS, schema()) == ["keep rows with genre=None"]


def test_a_group_key_that_can_be_missing_loses_its_none_group_unless_a_filter_already_requires_it():
    found = generate('qs = Book.objects.values("genre__name").annotate(n=Count("id"))', ORM_STATED_RULE_OPERATORS, schema())
    assert [m.source for m in found] == ["qs = Book.objects.exclude(genre=None).values('genre__name').annotate(n=Count('id'))"]
    required = 'qs = Book.objects.filter(genre__name__in=["a"])\nrows = qs.values_list("genre__name", "title")'
    assert not [m for m in generate(required, ORM_STATED_RULE_OPERATORS, schema()) if m.operator == "none_group"]
    assert not details('qs = Book.objects.values("title")', ORM_STATED_RULE_OPERATORS, schema())


def test_an_aggregate_that_can_be_over_nothing_is_read_as_zero_and_one_over_a_groups_own_rows_is_not():
    found = details(
        'qs = Genre.objects.annotate(a=Avg("books__reviews__rating"), s=Sum("books__pages"))', ORM_STATED_RULE_OPERATORS, schema()
    )
    assert found == ["Avg(...)->Coalesce(Avg(...), 0.0)", "Sum(...)->Coalesce(Sum(...), 0)"]
    conditional = details('qs = Store.objects.annotate(u=Sum("quantity", filter=Q(x=1)))', ORM_STATED_RULE_OPERATORS, schema())
    assert conditional == ["Sum(...)->Coalesce(Sum(...), 0)"]
    assert not details('qs = Sale.objects.values("store").annotate(u=Sum("quantity"))', ORM_STATED_RULE_OPERATORS, schema())
    assert not details('qs = Genre.objects.annotate(a=Coalesce(Avg("books__pages"), 0.0))', ORM_STATED_RULE_OPERATORS, schema())


def test_a_value_that_may_be_missing_is_taken_to_meet_a_condition_it_cannot_meet():
    found = generate('qs = Book.objects.filter(sale_price__lt=F("price"), title="x")', ORM_STATED_RULE_OPERATORS, schema())
    assert [m.source for m in found] == ["qs = Book.objects.filter(Q(sale_price__lt=F('price')) | Q(sale_price=None), title='x')"]


def test_a_range_with_its_ends_loses_each_end_and_both():
    found = details("qs = Book.objects.filter(pages__range=(300, 400))", ORM_STATED_RULE_OPERATORS, schema())
    assert found == [
        "pages__range without its both ends",
        "pages__range without its low end",
        "pages__range without its high end",
    ]
    exclusive = generate("qs = Book.objects.filter(pages__range=(300, 400))", ORM_STATED_RULE_OPERATORS, schema())[0]
    assert exclusive.source == "qs = Book.objects.filter(pages__gt=300, pages__lt=400)"


def test_a_match_in_any_letter_case_is_made_in_one_case_by_a_regular_expression():
    found = generate('qs = Book.objects.filter(title__icontains="a.b", name__iexact="x")', ORM_STATED_RULE_OPERATORS, schema())
    assert [m.source for m in found] == [
        "qs = Book.objects.filter(title__regex='a\\\\.b', name__iexact='x')",
        "qs = Book.objects.filter(title__icontains='a.b', name__regex='^x$')",
    ]


def test_fastapi_operators_change_status_constraints_defaults_names_and_dependencies():
    src = """
@app.post("/items", status_code=201, response_model=Item, response_model_exclude_unset=True,
          dependencies=[Depends(check)])
def create(q: Annotated[str, Query(max_length=5)], x_token: Annotated[str, Header()], limit: int = 10,
           user=Depends(current)):
    if not q:
        raise HTTPException(status_code=404, headers={"X-Error": "no"})
    response.set_cookie(key="session", value="1")
    return {}
"""
    found = details(src, FASTAPI_OPERATORS)
    for want in (
        "status_code 201->200",
        "status_code 404->400",
        "drop max_length=5",
        "drop response_model",
        "response_model_exclude_unset->response_model_exclude_none",
        "default limit=10->11",
        "header x_token read as 'x-token-x'",
        "header name 'X-Error'->'X-Error-x'",
        "cookie name 'session'->'session_x'",
        "drop dependency Depends(check)",
        "Depends(current) does nothing",
    ):
        assert want in found, want


def test_fastapi_operators_flip_comparison_boundaries_and_turn_none_tests_into_truth_tests():
    src = """
def buy(quantity: int, tax: float | None = None, last: int | None = None):
    if quantity > STOCK:
        raise HTTPException(status_code=409)
    start = 0 if last is None else last + 1
    if tax is not None:
        return {"with_tax": quantity + tax}
"""
    found = details(src, FASTAPI_OPERATORS)
    for want in ("Gt->GtE", "is None->not", "is not None->truth test"):
        assert want in found, want
    mutant = next(m for m in generate(src, FASTAPI_OPERATORS) if m.name.endswith("is not None->truth test"))
    assert "if tax:" in mutant.source


def test_fastapi_operators_negate_tests_swap_arithmetic_and_drop_raises_guards_and_aliases():
    src = """
@app.get("/models/{name}")
def get_model(name: Kind, q: Annotated[str | None, Query(alias="item-query")] = None):
    if name is Kind.a:
        return {"n": 2 * COUNT}
    if name not in KNOWN:
        raise HTTPException(status_code=404)
    return {"label": "x" + "y"}
"""
    found = details(src, FASTAPI_OPERATORS)
    for want in ("Is->IsNot", "NotIn->In", "Mult->Add", "drop alias='item-query'", "drop if name is Kind.a: return"):
        assert want in found, want
    assert any(d.startswith("drop raise HTTPException") for d in found)
    assert not any(d == "Add->Sub" for d in found), "text concatenation is not arithmetic"


def test_fastapi_operators_swap_only_routes_that_can_match_the_same_request():
    src = """
@app.get("/users/me")
def me():
    return 1

@app.get("/users/{user_id}")
def user(user_id: int):
    return user_id

@app.get("/files/{path:path}")
def files(path: str):
    return path

@app.get("/")
def root():
    return 0

@app.get("/{item_id}")
def item(item_id: int):
    return item_id
"""
    found = details(src, FASTAPI_OPERATORS)
    assert "/users/{user_id} declared before /users/me" in found
    assert "/{item_id} declared before /" not in found, "a parameter never matches an empty segment"
    assert not any("/files/" in d and "declared before" in d for d in found)
    assert "path /files/{path:path}->/files/{path}" in found
    swapped = next(m for m in generate(src, FASTAPI_OPERATORS) if "declared before" in m.name)
    assert swapped.source.index("/users/{user_id}") < swapped.source.index("/users/me")


def test_fastapi_operators_drop_teardown_mounts_and_app_hooks():
    src = """
@asynccontextmanager
async def lifespan(app):
    STATE["on"] = True
    yield
    STATE.clear()

def get_db():
    try:
        yield "db"
    finally:
        LOG.append("close")

class Holder:
    def __init__(self, q):
        self.q = q

app.mount("/sub", sub)
app.openapi = custom_openapi
"""
    found = details(src, FASTAPI_OPERATORS)
    for want in ("drop the statements after yield", "drop finally around yield", "drop app.mount('/sub', sub)"):
        assert want in found, want
    assert "drop app.openapi = custom_openapi" in found
    assert not any("self.q" in d for d in found), "an object's own attributes are not app hooks"


def test_django_operators_drop_field_options_raises_atomic_and_receivers():
    src = """
class Member(models.Model):
    username = models.CharField(max_length=30, unique=True)
    class Meta:
        constraints = [models.UniqueConstraint(fields=["a"], name="uniq_a")]

@receiver(post_save, sender=Member)
def on_save(sender, **kw):
    if kw["created"] and sender.count > 3:
        raise ValueError("x")

def move():
    with transaction.atomic():
        do()
"""
    found = details(src, DJANGO_OPERATORS)
    for want in (
        "CharField drop max_length=30",
        "CharField drop unique=True",
        "drop constraint uniq_a",
        "drop @receiver on on_save",
        "Gt->GtE",
        "drop raise ValueError('x')",
        "drop with transaction.atomic()",
    ):
        assert want in found, want


def test_generation_is_deterministic_and_names_are_unique_and_every_mutant_compiles():
    src = (ROOT / "sandbox_env" / "tasks" / "orm" / "orm_adv_03" / "reference.py").read_text()
    first, second = generate(src, ORM_OPERATORS), generate(src, ORM_OPERATORS)
    assert [m.name for m in first] == [m.name for m in second] and first
    assert len({m.name for m in first}) == len(first)
    for m in first:
        compile(m.source, m.name, "exec")
        assert m.source != src


@pytest.mark.parametrize("family", ["orm", "fastapi", "django"])
def test_every_declared_equivalent_has_a_reason(family):
    for folder in sorted((ROOT / "sandbox_env" / "tasks" / family).iterdir()):
        if (folder / "task.toml").is_file():
            assert all(reason for reason in declared_equivalents(folder).values()), folder.name


def test_a_stale_declaration_and_an_undeclared_survivor_both_fail(tmp_path):
    folder = tmp_path / "t1"
    folder.mkdir()
    (folder / "task.toml").write_text(
        '[[equivalent_mutants]]\nname = "a"\nreason = "same on SQLite"\n[[equivalent_mutants]]\nname = "gone"\nreason = "r"\n'
    )
    muts = generate("qs = X.objects.filter(a__gt=1, b__lt=2)", ORM_OPERATORS)
    res = TaskSensitivity("t1", "orm", [Outcome(muts[0], False, ""), Outcome(muts[1], False, "")])
    res.outcomes[0].mutant = type(muts[0])("a", "lookup", muts[0].source)
    settle(res, folder)
    assert res.equivalent == 1 and len(res.survivors) == 1
    assert any("gone" in p for p in res.problems) and not res.ok
    assert sensitivity_line({"orm": [res]}) == "sensitivity: orm 0.0% (0/1)"


def test_one_mutant_of_each_operator_is_the_first_of_each_in_order():
    from sandbox_env.verify.mutants import Mutant, one_per_operator

    ms = [Mutant("a1", "a", ""), Mutant("b1", "b", ""), Mutant("a2", "a", ""), Mutant("c1", "c", ""), Mutant("b2", "b", "")]
    assert [m.name for m in one_per_operator(ms)] == ["a1", "b1", "c1"]
    assert one_per_operator([]) == []
