from django.db.models import F
from django.db.models.signals import post_delete, post_save
from django.dispatch import receiver

from rota import notifications
from rota.models import Doctor, Shift


def _add(doctor_id, hours):
    Doctor.objects.filter(pk=doctor_id).update(rostered_hours=F("rostered_hours") + hours)


@receiver(post_save, sender=Shift, dispatch_uid="rota.shift_created")
def shift_created(sender, instance, created, **kwargs):
    if not created:
        return
    _add(instance.doctor_id, instance.hours)
    message = f"{instance.doctor.name} works {instance.ward} on {instance.day.isoformat()}"
    notifications.notify(message)  # sent at once, whatever becomes of the transaction


@receiver(post_delete, sender=Shift, dispatch_uid="rota.shift_deleted")
def shift_deleted(sender, instance, **kwargs):
    _add(instance.doctor_id, -instance.hours)
