from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q

STATUS_CHOICES = [("active", "Active"), ("cancelled", "Cancelled")]


class Room(models.Model):
    name = models.CharField(max_length=50, unique=True)
    capacity = models.PositiveIntegerField()


class Reservation(models.Model):
    room = models.ForeignKey("Room", models.CASCADE, related_name="reservations")
    guest_email = models.EmailField()
    start = models.DateField()
    end = models.DateField()
    party_size = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=STATUS_CHOICES, default="active")

    class Meta:
        constraints = (
            models.CheckConstraint(
                condition=Q(start__lt=F("end")),
                name="reservation_end_after_start",
                violation_error_code="end_not_after_start",
            ),
            models.CheckConstraint(
                condition=Q(party_size__gt=0),
                name="reservation_party_size_positive",
                violation_error_code="party_size_positive",
            ),
            models.UniqueConstraint(
                fields=("room", "start"),
                condition=Q(status="active"),
                name="one_active_reservation_per_room_and_start",
                violation_error_code="room_taken",
            ),
        )

    def clean(self):
        if self.room_id is None or self.party_size is None:
            return
        capacity = Room.objects.values_list("capacity", flat=True).get(pk=self.room_id)
        if self.party_size > capacity:
            raise ValidationError({"party_size": [ValidationError("Too many guests.", code="over_capacity")]})
