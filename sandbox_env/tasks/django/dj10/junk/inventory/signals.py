from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import Signal, receiver
from django.utils.text import slugify

from inventory.models import Product, StockMovement

stock_low = Signal()


@receiver(pre_save, sender=Product)
def fill_slug(sender, instance, **kwargs):
    instance.slug = slugify(instance.name)


@receiver(post_save, sender=StockMovement)
def apply_movement(sender, instance, **kwargs):
    # works on the instance it holds (stale), on every save, and signals whenever below the threshold
    product = instance.product
    product.stock += instance.delta
    product.save()
    if product.stock < product.low_stock_threshold:
        stock_low.send(sender=Product, product=product, stock=product.stock)


@receiver(post_delete, sender=StockMovement)
def revert_movement(sender, instance, **kwargs):
    product = instance.product
    product.stock -= instance.delta
    product.save()
