import pytest
from django.dispatch import Signal

from inventory import signals
from inventory.models import Product, StockMovement

pytestmark = pytest.mark.django_db


@pytest.fixture
def gadget():
    return Product.objects.create(name="steel Gadget Pro", stock=20, low_stock_threshold=8)


@pytest.fixture
def low():
    got = []

    def receiver(sender, product, stock, **kwargs):
        got.append((sender.__name__, product.name, product.stock, stock))

    signals.stock_low.connect(receiver)
    yield got
    signals.stock_low.disconnect(receiver)


def current(product):
    return Product.objects.values_list("stock", flat=True).get(pk=product.pk)


def test_slug_is_made_from_the_name(gadget):
    assert Product.objects.get(pk=gadget.pk).slug == "steel-gadget-pro"


def test_given_slug_survives_a_rename():
    item = Product.objects.create(name="plain Name", slug="keep-me")
    item.name = "Other Name"
    item.save()
    assert Product.objects.get(pk=item.pk).slug == "keep-me"


def test_clearing_the_slug_makes_a_new_one(gadget):
    gadget.slug = ""
    gadget.name = "copper Gadget"
    gadget.save()
    assert Product.objects.get(pk=gadget.pk).slug == "copper-gadget"


def test_negative_and_positive_movements_add_up(gadget):
    for delta in (-3, 10, -7):
        StockMovement.objects.create(product=gadget, delta=delta)
    assert current(gadget) == 20


def test_movement_through_a_stale_instance_keeps_other_changes(gadget):
    stale = Product.objects.get(pk=gadget.pk)
    Product.objects.filter(pk=gadget.pk).update(stock=100)
    StockMovement.objects.create(product=stale, delta=-1)
    assert current(gadget) == 100 - 1


def test_editing_a_movement_does_not_apply_it_twice(gadget):
    move = StockMovement.objects.create(product=gadget, delta=-2)
    move.delta = -2
    move.note = "checked"
    move.save()
    move.save()
    assert current(gadget) == 18


def test_deleting_movements_in_bulk_reverts_each(gadget):
    StockMovement.objects.create(product=gadget, delta=4)
    StockMovement.objects.create(product=gadget, delta=6)
    StockMovement.objects.all().delete()
    assert current(gadget) == 20


def test_raw_save_changes_no_stock(gadget):
    StockMovement(product=gadget, delta=-15).save_base(raw=True)
    assert current(gadget) == 20


def test_crossing_sends_the_new_stock_once(gadget, low):
    StockMovement.objects.create(product=gadget, delta=-12)
    assert low == []
    StockMovement.objects.create(product=gadget, delta=-1)
    assert low == [("Product", "steel Gadget Pro", 7, 7)]


def test_one_big_drop_sends_once(gadget, low):
    StockMovement.objects.create(product=gadget, delta=-25)
    StockMovement.objects.create(product=gadget, delta=-1)
    assert low == [("Product", "steel Gadget Pro", -5, -5)]


def test_landing_on_the_threshold_sends_nothing(gadget, low):
    StockMovement.objects.create(product=gadget, delta=-12)
    assert current(gadget) == 8
    StockMovement.objects.create(product=gadget, delta=5)
    assert low == []


def test_rising_and_falling_again_sends_again(gadget, low):
    StockMovement.objects.create(product=gadget, delta=-13)
    StockMovement.objects.create(product=gadget, delta=13)
    StockMovement.objects.create(product=gadget, delta=-15)
    assert [entry[3] for entry in low] == [7, 5]


def test_stock_low_is_a_signal_sent_with_product_as_sender(gadget, low):
    assert isinstance(signals.stock_low, Signal)
    StockMovement.objects.create(product=gadget, delta=-20)
    assert low == [("Product", "steel Gadget Pro", 0, 0)]
