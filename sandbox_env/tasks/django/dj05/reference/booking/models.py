from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import F, Q


class Room(models.Model):
    name = models.CharField(max_length=50, unique=True)
    capacity = models.PositiveIntegerField()

    def __str__(self):
        return self.name


class Reservation(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        CANCELLED = "cancelled"

    room = models.ForeignKey(Room, on_delete=models.CASCADE, related_name="reservations")
    guest_email = models.EmailField()
    start = models.DateField()
    end = models.DateField()
    party_size = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.ACTIVE)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(end__gt=F("start")),
                name="reservation_end_after_start",
                violation_error_code="end_not_after_start",
                violation_error_message="A reservation must end after it starts.",
            ),
            models.CheckConstraint(
                condition=Q(party_size__gte=1),
                name="reservation_party_size_positive",
                violation_error_code="party_size_positive",
                violation_error_message="A party has at least one guest.",
            ),
            models.UniqueConstraint(
                fields=["room", "start"],
                condition=Q(status="active"),
                name="one_active_reservation_per_room_and_start",
                violation_error_code="room_taken",
                violation_error_message="The room is already reserved from that date.",
            ),
        ]

    def clean(self):
        super().clean()
        if self.room_id is not None and self.party_size is not None and self.party_size > self.room.capacity:
            raise ValidationError(
                {"party_size": ValidationError("The party does not fit in the room.", code="over_capacity")}
            )
