from django.core.exceptions import ValidationError
from django.db import models


class Room(models.Model):
    name = models.CharField(max_length=50, unique=True)
    capacity = models.PositiveIntegerField()


class Reservation(models.Model):
    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="reservations")
    guest_email = models.EmailField()
    start = models.DateField()
    end = models.DateField()
    party_size = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=[("active", "active"), ("cancelled", "cancelled")],
                              default="active")

    def clean(self):
        # the rules live only in Python: the database accepts anything, and a missing room crashes
        if self.end <= self.start:
            raise ValidationError("end before start", code="end_not_after_start")
        if self.party_size > self.room.capacity:
            raise ValidationError("too many", code="over_capacity")
