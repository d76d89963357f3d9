from django.db.models import F
from django.db.models.signals import post_save
from django.dispatch import receiver

from cargo.models import Booking, Sailing


@receiver(post_save, sender=Booking, dispatch_uid="cargo.booking_created")
def count_created(sender, instance, created, **kwargs):
    if created:
        Sailing.objects.filter(pk=instance.sailing_id).update(booked_metres=F("booked_metres") + instance.length)
