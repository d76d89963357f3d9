from django.db import models
from django.db.models import Q


class Doctor(models.Model):
    name = models.CharField(max_length=50, unique=True)
    max_hours = models.PositiveIntegerField(default=40)
    # the hours of all the doctor's shifts, kept by rota/hours.py
    rostered_hours = models.PositiveIntegerField(default=0)

    def __str__(self):
        return self.name


class Shift(models.Model):
    doctor = models.ForeignKey(Doctor, related_name="shifts", on_delete=models.CASCADE)
    day = models.DateField()
    hours = models.PositiveIntegerField()
    ward = models.CharField(max_length=30)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["doctor", "day"], name="one_shift_per_doctor_and_day"),
            models.CheckConstraint(condition=Q(hours__gte=1, hours__lte=12), name="shift_hours_1_to_12"),
        ]
