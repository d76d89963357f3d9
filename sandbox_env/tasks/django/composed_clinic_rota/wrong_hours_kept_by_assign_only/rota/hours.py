from django.db import transaction
from django.db.models.signals import post_save
from django.dispatch import receiver

from rota import notifications
from rota.models import Shift


@receiver(post_save, sender=Shift, dispatch_uid="rota.shift_created")
def shift_created(sender, instance, created, **kwargs):
    if not created:
        return
    message = f"{instance.doctor.name} works {instance.ward} on {instance.day.isoformat()}"
    transaction.on_commit(lambda: notifications.notify(message))
