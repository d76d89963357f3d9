import pytest

from shop.models import Order, Product
from shop.querysets import ProductQuerySet

pytestmark = pytest.mark.django_db


@pytest.fixture
def store():
    kettle = Product.objects.create(name="kettle", price="35.00")
    mug = Product.objects.create(name="mug", price="8.50")
    teapot = Product.objects.create(name="teapot", price="60.00", is_active=False)
    tray = Product.objects.create(name="tray", price="12.00")
    Order.objects.create(product=kettle, quantity=101, status="paid")
    Order.objects.create(product=kettle, quantity=106, status="paid")
    Order.objects.create(product=kettle, quantity=102, status="paid")
    Order.objects.create(product=kettle, quantity=110, status="refunded")
    Order.objects.create(product=mug, quantity=104, status="pending")
    Order.objects.create(product=mug, quantity=103, status="refunded")
    Order.objects.create(product=teapot, quantity=105, status="paid")
    Order.objects.create(product=teapot, quantity=107, status="pending")
    return {"kettle": kettle, "mug": mug, "teapot": teapot, "tray": tray}


def rows(qs):
    return {p.name: (p.paid_orders, p.paid_units) for p in qs}


def test_methods_return_the_custom_queryset_after_filtering():
    assert type(Product.objects.filter(price__gt=1).active()) is ProductQuerySet
    assert type(Product.objects.order_by("name").with_paid_stats()) is ProductQuerySet
    assert type(Product.objects.with_paid_stats().active().order_by("-paid_units")) is ProductQuerySet


def test_active_keeps_only_active_products(store):
    assert sorted(Product.objects.active().values_list("name", flat=True)) == ["kettle", "mug", "tray"]


def test_only_paid_orders_are_counted_and_summed(store):
    got = rows(Product.objects.with_paid_stats())
    assert got["kettle"] == (3, 101 + 106 + 102)
    assert got["teapot"] == (1, 105)


def test_orders_of_other_statuses_only_give_zero(store):
    got = rows(Product.objects.with_paid_stats())
    assert got["mug"] == (0, 0)
    assert got["tray"] == (0, 0)


def test_zero_paid_units_is_the_integer_zero(store):
    values = list(Product.objects.with_paid_stats().order_by("name").values_list("paid_units", flat=True))
    assert values == [101 + 106 + 102, 0, 105, 0]
    assert all(type(v) is int for v in values)


def test_many_orders_do_not_duplicate_products(store):
    for quantity in (121, 122, 123):
        Order.objects.create(product=store["tray"], quantity=quantity, status="paid")
    names = [p.name for p in Product.objects.active().with_paid_stats()]
    assert sorted(names) == ["kettle", "mug", "tray"]
    assert rows(Product.objects.with_paid_stats())["tray"] == (3, 121 + 122 + 123)


def test_either_order_of_chaining_gives_the_same_rows(store):
    one = rows(Product.objects.with_paid_stats().active())
    two = rows(Product.objects.active().with_paid_stats())
    assert one == two
    assert one == {"kettle": (3, 101 + 106 + 102), "mug": (0, 0), "tray": (0, 0)}


def test_ordering_and_filtering_on_the_annotations(store):
    Order.objects.create(product=store["mug"], quantity=520, status="paid")
    qs = Product.objects.active().with_paid_stats().order_by("-paid_units", "name")
    assert [(p.name, p.paid_units) for p in qs] == [("mug", 520), ("kettle", 101 + 106 + 102), ("tray", 0)]
    qs = Product.objects.with_paid_stats().filter(paid_orders__gte=2)
    assert [p.name for p in qs] == ["kettle"]


def test_paid_orders_follow_status_changes(store):
    Order.objects.filter(product=store["mug"], status="pending").update(status="paid")
    assert rows(Product.objects.active().with_paid_stats())["mug"] == (1, 104)


def test_annotations_and_a_filter_run_in_one_query(store, django_assert_num_queries):
    with django_assert_num_queries(1):
        got = rows(Product.objects.with_paid_stats().filter(price__lt=50).active())
    assert got == {"kettle": (3, 101 + 106 + 102), "mug": (0, 0), "tray": (0, 0)}


def test_empty_catalog_gives_an_empty_queryset():
    assert list(Product.objects.active().with_paid_stats()) == []
    assert Product.objects.with_paid_stats().count() == 0
