import pytest

from shop.models import Order, Product

pytestmark = pytest.mark.django_db


def test_only_the_exact_status_paid_counts_as_paid():
    lamp = Product.objects.create(name="lamp", price="20.00")
    Order.objects.create(product=lamp, quantity=202, status="paid")
    Order.objects.create(product=lamp, quantity=205, status="PAID")
    row = Product.objects.with_paid_stats().get(pk=lamp.pk)
    assert (row.paid_orders, row.paid_units) == (1, 202)
