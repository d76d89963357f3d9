"""Every rule checked before anything is written; the week runs under one decorated transaction."""

from django.db import transaction
from django.db.models import Count, Max, OuterRef, Subquery

from rota.models import Doctor, Shift


class RotaError(Exception):
    @property
    def code(self):
        return self.args[0]


def assign(doctor_id, day, hours, ward):
    if hours < 1 or hours > 12:
        raise RotaError("bad_hours")
    try:
        doctor = Doctor.objects.get(pk=doctor_id)
    except Doctor.DoesNotExist:
        raise RotaError("unknown_doctor") from None
    if hours > doctor.max_hours - doctor.rostered_hours:
        raise RotaError("over_hours")
    if Shift.objects.filter(doctor_id=doctor_id, day=day).exists():
        raise RotaError("double_booked")
    return Shift.objects.create(doctor=doctor, day=day, hours=hours, ward=ward)


@transaction.atomic
def assign_week(items):
    shifts = []
    for doctor_id, day, hours, ward in items:
        shifts.append(assign(doctor_id, day, hours, ward))
    return shifts


def rota_report():
    last = Shift.objects.filter(doctor=OuterRef("pk")).order_by("-day").values("day")[:1]
    rows = (
        Doctor.objects.order_by("name")
        .annotate(n=Count("shifts"), last_day=Subquery(last))
        .values_list("name", "rostered_hours", "max_hours", "n", "last_day")
    )
    return [
        {"doctor": name, "rostered_hours": r, "free_hours": m - r, "shifts": n, "last_day": last_day}
        for name, r, m, n, last_day in rows
    ]
