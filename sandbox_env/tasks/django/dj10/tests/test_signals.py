import pytest
from django.dispatch import Signal

from inventory import signals
from inventory.models import Product, StockMovement

pytestmark = pytest.mark.django_db


@pytest.fixture
def widget():
    return Product.objects.create(name="Blue Widget", stock=10, low_stock_threshold=5)


@pytest.fixture
def alerts():
    received = []

    def listener(sender, product, stock, **kwargs):
        received.append((sender, product.pk, product.stock, stock))

    signals.stock_low.connect(listener)
    yield received
    signals.stock_low.disconnect(listener)


def stock(product):
    return Product.objects.get(pk=product.pk).stock


def test_stock_low_is_a_signal():
    assert isinstance(signals.stock_low, Signal)


def test_empty_slug_is_filled_and_given_slug_kept(widget):
    assert Product.objects.get(pk=widget.pk).slug == "blue-widget"
    other = Product.objects.create(name="Red Widget", slug="custom")
    assert Product.objects.get(pk=other.pk).slug == "custom"


def test_movements_change_stock(widget):
    StockMovement.objects.create(product=widget, delta=7)
    StockMovement.objects.create(product=widget, delta=-3)
    assert stock(widget) == 14


def test_stale_product_instances_do_not_lose_updates(widget):
    first = Product.objects.get(pk=widget.pk)
    second = Product.objects.get(pk=widget.pk)
    StockMovement.objects.create(product=first, delta=5)
    StockMovement.objects.create(product=second, delta=5)
    assert stock(widget) == 20


def test_saving_a_movement_again_changes_nothing(widget):
    movement = StockMovement.objects.create(product=widget, delta=4)
    movement.note = "recounted"
    movement.save()
    assert stock(widget) == 14


def test_deleting_a_movement_reverts_it(widget):
    movement = StockMovement.objects.create(product=widget, delta=-6)
    assert stock(widget) == 4
    movement.delete()
    assert stock(widget) == 10


def test_raw_saves_are_ignored(widget):
    StockMovement(product=widget, delta=50).save_base(raw=True)
    assert StockMovement.objects.count() == 1
    assert stock(widget) == 10


def test_stock_low_is_sent_when_crossing_the_threshold(widget, alerts):
    StockMovement.objects.create(product=widget, delta=-4)
    assert alerts == []
    StockMovement.objects.create(product=widget, delta=-2)
    assert alerts == [(Product, widget.pk, 4, 4)]


def test_stock_low_is_not_repeated_below_the_threshold(widget, alerts):
    StockMovement.objects.create(product=widget, delta=-6)
    StockMovement.objects.create(product=widget, delta=-1)
    StockMovement.objects.create(product=widget, delta=1)
    assert alerts == [(Product, widget.pk, 4, 4)]
    StockMovement.objects.create(product=widget, delta=10)
    StockMovement.objects.create(product=widget, delta=-12)
    assert alerts == [(Product, widget.pk, 4, 4), (Product, widget.pk, 2, 2)]


def test_exactly_at_threshold_is_not_low(widget, alerts):
    StockMovement.objects.create(product=widget, delta=-5)
    assert stock(widget) == 5
    assert alerts == []



def test_receivers_are_connected_once(widget, alerts):
    import inventory.signals  # noqa: F401 - a second import must not connect anything again

    StockMovement.objects.create(product=widget, delta=3)
    assert stock(widget) == 13
    StockMovement.objects.create(product=widget, delta=-9)
    assert alerts == [(Product, widget.pk, 4, 4)]
