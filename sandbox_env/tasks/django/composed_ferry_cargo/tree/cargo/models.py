from django.db import models


class Sailing(models.Model):
    code = models.CharField(max_length=20, unique=True)
    departs = models.DateTimeField()
    lane_metres = models.PositiveIntegerField()
    # the lane metres its bookings take, kept by cargo/counters.py
    booked_metres = models.PositiveIntegerField(default=0)

    def __str__(self):
        return self.code


class Booking(models.Model):
    sailing = models.ForeignKey(Sailing, related_name="bookings", on_delete=models.CASCADE)
    plate = models.CharField(max_length=10)
    length = models.PositiveIntegerField()

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["sailing", "plate"],
                name="one_booking_per_plate_and_sailing",
                violation_error_code="plate_booked",
                violation_error_message="This vehicle is already booked on this sailing.",
            ),
        ]

    def __str__(self):
        return f"{self.plate} on {self.sailing_id}"
