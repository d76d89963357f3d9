from django.db.models import F
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import Signal
from django.utils.text import slugify

from inventory.models import Product, StockMovement

stock_low = Signal()


def product_slug(sender, instance, **kwargs):
    if instance.slug:
        return
    instance.slug = slugify(instance.name)


def movement_saved(sender, instance, created, raw=False, **kwargs):
    if raw or not created:
        return
    Product.objects.filter(pk=instance.product_id).update(stock=F("stock") + instance.delta)
    product = Product.objects.get(pk=instance.product_id)
    before = product.stock - instance.delta
    if product.stock < product.low_stock_threshold <= before:
        stock_low.send(sender=Product, product=product, stock=product.stock)


def movement_deleted(sender, instance, **kwargs):
    Product.objects.filter(pk=instance.product_id).update(stock=F("stock") - instance.delta)


pre_save.connect(product_slug, sender=Product, dispatch_uid="inventory.signals.product_slug")
post_save.connect(movement_saved, sender=StockMovement, dispatch_uid="inventory.signals.movement_saved")
post_delete.connect(movement_deleted, sender=StockMovement, dispatch_uid="inventory.signals.movement_deleted")
