from django.db import models
from django.db.models import Q
from django.utils import timezone

from hire.querysets import BikeQuerySet


class Bike(models.Model):
    KINDS = [("city", "city"), ("cargo", "cargo"), ("ebike", "ebike")]

    tag = models.CharField(max_length=10, unique=True)  # stored in capitals, e.g. "C-07"
    kind = models.CharField(max_length=10, choices=KINDS)
    in_repair = models.BooleanField(default=False)

    objects = BikeQuerySet.as_manager()

    def __str__(self):
        return self.tag


class Hire(models.Model):
    bike = models.ForeignKey(Bike, related_name="hires", on_delete=models.CASCADE)
    rider = models.CharField(max_length=40)
    started = models.DateTimeField(default=timezone.now)
    returned = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["bike"], condition=Q(returned__isnull=True), name="one_open_hire_per_bike"),
        ]
