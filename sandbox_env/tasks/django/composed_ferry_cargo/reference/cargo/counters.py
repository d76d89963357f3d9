from django.db.models import F
from django.db.models.signals import post_delete, post_save, pre_save
from django.dispatch import receiver

from cargo.models import Booking, Sailing


def _add(sailing_id, metres):
    Sailing.objects.filter(pk=sailing_id).update(booked_metres=F("booked_metres") + metres)


@receiver(pre_save, sender=Booking, dispatch_uid="cargo.booking_before_save")
def remember_stored(sender, instance, **kwargs):
    instance._stored = None
    if instance.pk is not None:
        instance._stored = Booking.objects.filter(pk=instance.pk).values_list("sailing_id", "length").first()


@receiver(post_save, sender=Booking, dispatch_uid="cargo.booking_saved")
def count_saved(sender, instance, **kwargs):
    stored = getattr(instance, "_stored", None)
    if stored:
        _add(stored[0], -stored[1])
    _add(instance.sailing_id, instance.length)


@receiver(post_delete, sender=Booking, dispatch_uid="cargo.booking_deleted")
def count_deleted(sender, instance, **kwargs):
    _add(instance.sailing_id, -instance.length)
