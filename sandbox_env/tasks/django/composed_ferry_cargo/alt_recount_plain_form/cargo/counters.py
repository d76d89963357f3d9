"""The counter recomputed from the bookings themselves for every sailing a change touches."""

from django.db.models import Sum
from django.db.models.signals import post_delete, post_save, pre_save

from cargo.models import Booking, Sailing


def recount(*sailing_ids):
    for sailing_id in {s for s in sailing_ids if s is not None}:
        total = Booking.objects.filter(sailing_id=sailing_id).aggregate(total=Sum("length"))["total"] or 0
        Sailing.objects.filter(pk=sailing_id).update(booked_metres=total)


def note_previous_sailing(sender, instance, **kwargs):
    previous = Booking.objects.filter(pk=instance.pk).values_list("sailing_id", flat=True) if instance.pk else []
    instance._previous_sailing = next(iter(previous), None)


def after_save(sender, instance, **kwargs):
    recount(instance.sailing_id, getattr(instance, "_previous_sailing", None))


def after_delete(sender, instance, **kwargs):
    recount(instance.sailing_id)


pre_save.connect(note_previous_sailing, sender=Booking, dispatch_uid="cargo.counters.previous")
post_save.connect(after_save, sender=Booking, dispatch_uid="cargo.counters.saved")
post_delete.connect(after_delete, sender=Booking, dispatch_uid="cargo.counters.deleted")
