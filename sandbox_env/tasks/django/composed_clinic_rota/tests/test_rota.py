import datetime

import pytest
from django.db import connection, transaction
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from rota import notifications
from rota.models import Doctor, Shift
from rota.services import RotaError, assign, assign_week, rota_report

pytestmark = pytest.mark.django_db

MONDAY = datetime.date(2031, 3, 3)


def day(n):
    return MONDAY + datetime.timedelta(days=n)


@pytest.fixture(autouse=True)
def outbox():
    notifications.OUTBOX.clear()
    yield notifications.OUTBOX
    notifications.OUTBOX.clear()


@pytest.fixture
def staff():
    return (
        Doctor.objects.create(name="Okafor", max_hours=20),
        Doctor.objects.create(name="Lindqvist", max_hours=30),
    )


def hours_of(doctor):
    return Doctor.objects.values_list("rostered_hours", flat=True).get(pk=doctor.pk)


def refused(call, *args):
    with pytest.raises(RotaError) as info:
        call(*args)
    return info.value.code


def test_assign_creates_the_shift_and_counts_its_hours(staff, django_capture_on_commit_callbacks):
    okafor, _ = staff
    with django_capture_on_commit_callbacks(execute=True):
        shift = assign(okafor.pk, day(0), 8, "A&E")
    assert isinstance(shift, Shift)
    assert (shift.doctor_id, shift.day, shift.hours, shift.ward) == (okafor.pk, day(0), 8, "A&E")
    assert hours_of(okafor) == 8
    assert notifications.OUTBOX == ["Okafor works A&E on 2031-03-03"]


def test_plain_orm_shifts_keep_the_counter(staff):
    okafor, _ = staff
    first = Shift.objects.create(doctor=okafor, day=day(1), hours=6, ward="Maternity")
    Shift.objects.create(doctor=okafor, day=day(2), hours=5, ward="Maternity")
    first.ward = "Theatre"
    first.save()
    assert hours_of(okafor) == 11
    first.delete()
    assert hours_of(okafor) == 5


def test_hours_must_be_one_to_twelve(staff):
    okafor, _ = staff
    assert refused(assign, okafor.pk, day(0), 0, "A&E") == "bad_hours"
    assert refused(assign, okafor.pk, day(0), 13, "A&E") == "bad_hours"
    assign(okafor.pk, day(0), 12, "A&E")
    assign(okafor.pk, day(1), 1, "A&E")
    assert hours_of(okafor) == 13


def test_unknown_doctor(staff):
    assert refused(assign, 9999, day(0), 4, "A&E") == "unknown_doctor"


def test_the_hours_rule_reads_shifts_made_by_any_code(staff):
    okafor, _ = staff
    Shift.objects.create(doctor=okafor, day=day(0), hours=12, ward="ICU")
    assert refused(assign, okafor.pk, day(1), 9, "ICU") == "over_hours"
    assign(okafor.pk, day(1), 8, "ICU")
    assert hours_of(okafor) == 20


def test_a_second_shift_on_one_day_is_refused_and_the_transaction_goes_on(staff):
    okafor, lindqvist = staff
    assign(okafor.pk, day(3), 4, "ICU")
    assert refused(assign, okafor.pk, day(3), 2, "Theatre") == "double_booked"
    assert Shift.objects.filter(doctor=okafor).count() == 1
    assert hours_of(okafor) == 4
    assign(lindqvist.pk, day(3), 2, "Theatre")
    assert hours_of(lindqvist) == 2


def test_a_refused_week_leaves_nothing(staff, django_capture_on_commit_callbacks):
    okafor, lindqvist = staff
    with django_capture_on_commit_callbacks(execute=True):
        code = refused(assign_week, [(lindqvist.pk, day(0), 10, "ICU"), (okafor.pk, day(0), 12, "ICU"),
                                     (okafor.pk, day(1), 9, "ICU")])
    assert code == "over_hours"
    assert Shift.objects.count() == 0
    assert (hours_of(okafor), hours_of(lindqvist)) == (0, 0)
    assert notifications.OUTBOX == []


def test_a_week_is_assigned_in_order_and_messages_wait_for_the_commit(staff, django_capture_on_commit_callbacks):
    okafor, lindqvist = staff
    with django_capture_on_commit_callbacks(execute=True):
        shifts = assign_week([(okafor.pk, day(0), 10, "ICU"), (lindqvist.pk, day(0), 7, "Ward 3"),
                              (okafor.pk, day(1), 10, "ICU")])
        assert notifications.OUTBOX == []
    assert [(s.doctor_id, s.day, s.hours) for s in shifts] == [(okafor.pk, day(0), 10), (lindqvist.pk, day(0), 7),
                                                               (okafor.pk, day(1), 10)]
    assert (hours_of(okafor), hours_of(lindqvist)) == (20, 7)
    assert notifications.OUTBOX == ["Okafor works ICU on 2031-03-03", "Lindqvist works Ward 3 on 2031-03-03",
                                    "Okafor works ICU on 2031-03-04"]


def test_a_shift_rolled_back_by_the_caller_sends_nothing(staff, django_capture_on_commit_callbacks):
    okafor, _ = staff
    with django_capture_on_commit_callbacks(execute=True):
        with pytest.raises(ZeroDivisionError):
            with transaction.atomic():
                assign(okafor.pk, day(5), 6, "ICU")
                1 / 0
    assert Shift.objects.count() == 0
    assert hours_of(okafor) == 0
    assert notifications.OUTBOX == []


def test_the_report(staff):
    okafor, lindqvist = staff
    Doctor.objects.create(name="Abara", max_hours=12)
    assign(okafor.pk, day(0), 8, "ICU")
    assign(okafor.pk, day(4), 4, "ICU")
    assign(lindqvist.pk, day(2), 10, "ICU")
    assert rota_report() == [
        {"doctor": "Abara", "rostered_hours": 0, "free_hours": 12, "shifts": 0, "last_day": None},
        {"doctor": "Lindqvist", "rostered_hours": 10, "free_hours": 20, "shifts": 1, "last_day": day(2)},
        {"doctor": "Okafor", "rostered_hours": 12, "free_hours": 8, "shifts": 2, "last_day": day(4)},
    ]


def make_doctors(count, shifts_each=3, prefix="dr"):
    for i in range(count):
        doctor = Doctor.objects.create(name=f"{prefix} {i:03d}")
        for j in range(shifts_each):
            Shift.objects.create(doctor=doctor, day=day(j), hours=2 + j, ward="ICU")


def test_the_report_is_one_query(django_assert_num_queries):
    make_doctors(8)
    with django_assert_num_queries(1):
        rows = rota_report()
    assert len(rows) == 8
    assert rows[0] == {"doctor": "dr 000", "rostered_hours": 9, "free_hours": 31, "shifts": 3, "last_day": day(2)}


class TestReportBudget(TestCase):
    def test_one_query_for_many_doctors(self):
        make_doctors(20, shifts_each=2)
        with self.assertNumQueries(1):
            rows = rota_report()
        self.assertEqual(len(rows), 20)
        self.assertEqual(rows[19]["rostered_hours"], 5)
