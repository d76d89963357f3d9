"""The hours recomputed from the doctor's shifts; the message queued with the transaction's own hook."""

from functools import partial

from django.db import transaction
from django.db.models import Sum
from django.db.models.signals import post_delete, post_save

from rota.models import Doctor, Shift
from rota.notifications import notify


def recount(doctor_id):
    total = Shift.objects.filter(doctor_id=doctor_id).aggregate(total=Sum("hours"))["total"]
    Doctor.objects.filter(pk=doctor_id).update(rostered_hours=total or 0)


def on_saved(sender, instance, created, **kwargs):
    if created:
        recount(instance.doctor_id)
        name = Doctor.objects.values_list("name", flat=True).get(pk=instance.doctor_id)
        transaction.on_commit(partial(notify, "%s works %s on %s" % (name, instance.ward, instance.day.isoformat())))


def on_deleted(sender, instance, **kwargs):
    recount(instance.doctor_id)


post_save.connect(on_saved, sender=Shift, dispatch_uid="rota.hours.saved")
post_delete.connect(on_deleted, sender=Shift, dispatch_uid="rota.hours.deleted")
