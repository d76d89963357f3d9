from django.db import IntegrityError, transaction

from rota.models import Doctor, Shift


class RotaError(Exception):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def assign(doctor_id, day, hours, ward):
    if not 1 <= hours <= 12:
        raise RotaError("bad_hours")
    doctor = Doctor.objects.filter(pk=doctor_id).first()
    if doctor is None:
        raise RotaError("unknown_doctor")
    if doctor.rostered_hours + hours > doctor.max_hours:
        raise RotaError("over_hours")
    try:
        with transaction.atomic():
            return Shift.objects.create(doctor=doctor, day=day, hours=hours, ward=ward)
    except IntegrityError:
        raise RotaError("double_booked") from None


def assign_week(items):
    with transaction.atomic():
        return [assign(*item) for item in items]


def rota_report():
    report = []
    for d in Doctor.objects.order_by("name"):
        days = list(d.shifts.values_list("day", flat=True))
        report.append({
            "doctor": d.name,
            "rostered_hours": d.rostered_hours,
            "free_hours": d.max_hours - d.rostered_hours,
            "shifts": len(days),
            "last_day": max(days, default=None),
        })
    return report
