from django.db.models import F
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import Signal, receiver
from django.utils.text import slugify

from inventory.models import Product, StockMovement

stock_low = Signal()


@receiver(pre_save, sender=Product, dispatch_uid="inventory.product_slug")
def fill_slug(sender, instance, **kwargs):
    if not instance.slug:
        instance.slug = slugify(instance.name)


def _add_stock(product_id, delta):
    before = Product.objects.values_list("stock", flat=True).get(pk=product_id)
    Product.objects.filter(pk=product_id).update(stock=F("stock") + delta)
    product = Product.objects.get(pk=product_id)
    return before, product


@receiver(post_save, sender=StockMovement, dispatch_uid="inventory.movement_created")
def apply_movement(sender, instance, created, raw=False, **kwargs):
    if not created or raw:
        return
    before, product = _add_stock(instance.product_id, instance.delta)
    if before >= product.low_stock_threshold > product.stock:
        stock_low.send(sender=Product, product=product, stock=product.stock)


@receiver(post_delete, sender=StockMovement, dispatch_uid="inventory.movement_deleted")
def revert_movement(sender, instance, **kwargs):
    Product.objects.filter(pk=instance.product_id).update(stock=F("stock") - instance.delta)
