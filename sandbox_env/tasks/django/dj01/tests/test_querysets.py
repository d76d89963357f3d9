import pytest

from shop.models import Order, Product
from shop.querysets import ProductQuerySet

pytestmark = pytest.mark.django_db


@pytest.fixture
def catalog():
    lamp = Product.objects.create(name="lamp", price="20.00")
    desk = Product.objects.create(name="desk", price="150.00")
    chair = Product.objects.create(name="chair", price="45.00")
    retired = Product.objects.create(name="retired", price="5.00", is_active=False)
    Order.objects.create(product=lamp, quantity=2, status="paid")
    Order.objects.create(product=lamp, quantity=3, status="paid")
    Order.objects.create(product=lamp, quantity=7, status="pending")
    Order.objects.create(product=desk, quantity=1, status="refunded")
    Order.objects.create(product=desk, quantity=4, status="paid")
    Order.objects.create(product=retired, quantity=9, status="paid")
    return {"lamp": lamp, "desk": desk, "chair": chair, "retired": retired}


def stats(qs):
    return {p.name: (p.paid_orders, p.paid_units) for p in qs}


def test_manager_hands_out_the_custom_queryset():
    assert isinstance(Product.objects.all(), ProductQuerySet)
    assert isinstance(Product.objects.active(), ProductQuerySet)
    assert isinstance(Product.objects.with_paid_stats(), ProductQuerySet)


def test_active_excludes_inactive_products(catalog):
    assert sorted(p.name for p in Product.objects.active()) == ["chair", "desk", "lamp"]


def test_paid_stats_count_only_paid_orders(catalog):
    got = stats(Product.objects.with_paid_stats())
    assert got["lamp"] == (2, 5)
    assert got["desk"] == (1, 4)
    assert got["retired"] == (1, 9)


def test_products_without_paid_orders_are_kept_with_zero(catalog):
    got = stats(Product.objects.with_paid_stats())
    assert set(got) == {"lamp", "desk", "chair", "retired"}
    assert got["chair"] == (0, 0)


def test_zero_units_is_an_integer_not_none(catalog):
    chair = Product.objects.with_paid_stats().get(name="chair")
    assert chair.paid_units == 0
    assert chair.paid_units is not None


def test_each_product_appears_once(catalog):
    for _ in range(5):
        Order.objects.create(product=catalog["lamp"], status="pending")
    names = [p.name for p in Product.objects.with_paid_stats()]
    assert sorted(names) == ["chair", "desk", "lamp", "retired"]


def test_chains_in_either_order(catalog):
    first = stats(Product.objects.active().with_paid_stats())
    second = stats(Product.objects.with_paid_stats().active())
    assert first == second == {"lamp": (2, 5), "desk": (1, 4), "chair": (0, 0)}


def test_filter_and_order_on_annotations_after_chaining(catalog):
    qs = Product.objects.with_paid_stats().filter(paid_orders__gte=1).active().order_by("-paid_units")
    assert [(p.name, p.paid_units) for p in qs] == [("lamp", 5), ("desk", 4)]
    qs = Product.objects.active().filter(price__lt=100).with_paid_stats().order_by("name")
    assert [(p.name, p.paid_orders) for p in qs] == [("chair", 0), ("lamp", 2)]


def test_stats_follow_new_orders(catalog):
    Order.objects.create(product=catalog["chair"], quantity=6, status="paid")
    assert stats(Product.objects.active().with_paid_stats())["chair"] == (1, 6)


def test_report_is_one_query(catalog, django_assert_num_queries):
    with django_assert_num_queries(1):
        rows = stats(Product.objects.active().with_paid_stats())
    assert len(rows) == 3
