import pytest

from inventory import signals
from inventory.models import Product, StockMovement

pytestmark = pytest.mark.django_db


@pytest.fixture
def alerts():
    received = []

    def listener(sender, product, stock, **kwargs):
        received.append((product.pk, stock))

    signals.stock_low.connect(listener)
    yield received
    signals.stock_low.disconnect(listener)


def test_a_stock_exactly_at_the_threshold_that_drops_below_it_sends_stock_low(alerts):
    gadget = Product.objects.create(name="Gadget", stock=5, low_stock_threshold=5)
    StockMovement.objects.create(product=gadget, delta=-1)
    assert alerts == [(gadget.pk, 4)]


def test_a_drop_that_lands_exactly_on_the_threshold_sends_nothing(alerts):
    gadget = Product.objects.create(name="Gadget", stock=6, low_stock_threshold=5)
    StockMovement.objects.create(product=gadget, delta=-1)
    assert alerts == []
