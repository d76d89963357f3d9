import datetime

import pytest
from django.db import connection, transaction
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from rota import notifications
from rota.models import Doctor, Shift
from rota.services import RotaError, assign, assign_week, rota_report

pytestmark = pytest.mark.django_db

START = datetime.date(2033, 11, 21)


def on(n):
    return START + datetime.timedelta(days=n)


@pytest.fixture(autouse=True)
def sent():
    notifications.OUTBOX.clear()
    yield notifications.OUTBOX
    notifications.OUTBOX.clear()


@pytest.fixture
def team():
    return (
        Doctor.objects.create(name="Moreau", max_hours=16),
        Doctor.objects.create(name="Haddad", max_hours=24),
        Doctor.objects.create(name="Quist", max_hours=9),
    )


def rostered(doctor):
    return Doctor.objects.values_list("rostered_hours", flat=True).get(pk=doctor.pk)


def code_of(call, *args):
    with pytest.raises(RotaError) as info:
        call(*args)
    return info.value.code


def test_rules_are_checked_hours_first_then_doctor_then_limit_then_day(team):
    moreau, _, quist = team
    assign(quist.pk, on(0), 9, "Renal")
    assert code_of(assign, 4242, on(0), 13, "Renal") == "bad_hours"
    assert code_of(assign, 4242, on(0), 3, "Renal") == "unknown_doctor"
    assert code_of(assign, quist.pk, on(0), 1, "Renal") == "over_hours"
    assign(moreau.pk, on(0), 3, "Renal")
    assert code_of(assign, moreau.pk, on(0), 3, "Renal") == "double_booked"
    assert isinstance(RotaError("x"), Exception) and RotaError("over_hours").code == "over_hours"


def test_the_limit_is_reached_exactly_and_not_passed(team):
    _, _, quist = team
    assign(quist.pk, on(0), 5, "Oncology")
    assign(quist.pk, on(1), 4, "Oncology")
    assert rostered(quist) == 9
    assert code_of(assign, quist.pk, on(2), 1, "Oncology") == "over_hours"
    Shift.objects.get(doctor=quist, day=on(0)).delete()
    assert rostered(quist) == 4
    assign(quist.pk, on(2), 5, "Oncology")
    assert rostered(quist) == 9


def test_a_double_booking_inside_a_week_undoes_the_week_and_the_caller_goes_on(team, django_capture_on_commit_callbacks):
    moreau, haddad, _ = team
    with django_capture_on_commit_callbacks(execute=True):
        code = code_of(assign_week, [(haddad.pk, on(2), 6, "Cardio"), (moreau.pk, on(2), 2, "Cardio"),
                                     (moreau.pk, on(2), 2, "Renal")])
        assign(haddad.pk, on(5), 11, "Cardio")
    assert code == "double_booked"
    assert list(Shift.objects.values_list("doctor__name", "day", "hours")) == [("Haddad", on(5), 11)]
    assert (rostered(moreau), rostered(haddad)) == (0, 11)
    assert notifications.OUTBOX == ["Haddad works Cardio on 2033-11-26"]


def test_a_week_sees_its_own_earlier_hours(team):
    moreau, _, _ = team
    assert code_of(assign_week, [(moreau.pk, on(0), 12, "Renal"), (moreau.pk, on(1), 5, "Renal")]) == "over_hours"
    assert rostered(moreau) == 0
    shifts = assign_week([(moreau.pk, on(0), 12, "Renal"), (moreau.pk, on(1), 4, "Renal")])
    assert [s.hours for s in shifts] == [12, 4]
    assert rostered(moreau) == 16


def test_an_empty_week_is_an_empty_list(team):
    assert assign_week([]) == []
    assert Shift.objects.count() == 0


def test_a_bad_item_late_in_a_week_undoes_the_earlier_ones(team, django_capture_on_commit_callbacks):
    moreau, haddad, quist = team
    with django_capture_on_commit_callbacks(execute=True):
        assert code_of(assign_week, [(quist.pk, on(3), 2, "Gastro"), (haddad.pk, on(3), 8, "Gastro"),
                                     (moreau.pk, on(3), 0, "Gastro")]) == "bad_hours"
        assert code_of(assign_week, [(quist.pk, on(3), 2, "Gastro"), (7777, on(3), 8, "Gastro")]) == "unknown_doctor"
    assert Shift.objects.count() == 0
    assert (rostered(moreau), rostered(haddad), rostered(quist)) == (0, 0, 0)
    assert notifications.OUTBOX == []


def test_messages_are_sent_only_when_the_outer_transaction_commits(team, django_capture_on_commit_callbacks):
    moreau, haddad, _ = team
    with django_capture_on_commit_callbacks(execute=True):
        with transaction.atomic():
            assign(moreau.pk, on(1), 7, "Stroke")
            with transaction.atomic():
                Shift.objects.create(doctor=haddad, day=on(1), hours=3, ward="Stroke")
            assert notifications.OUTBOX == []
        assert notifications.OUTBOX == []
    assert notifications.OUTBOX == ["Moreau works Stroke on 2033-11-22", "Haddad works Stroke on 2033-11-22"]


def test_plain_code_rolled_back_keeps_no_hours_and_no_message(team, django_capture_on_commit_callbacks):
    _, haddad, _ = team
    with django_capture_on_commit_callbacks(execute=True):
        try:
            with transaction.atomic():
                Shift.objects.create(doctor=haddad, day=on(4), hours=9, ward="Stroke")
                raise RuntimeError("the rota changed its mind")
        except RuntimeError:
            pass
    assert rostered(haddad) == 0
    assert notifications.OUTBOX == []


def test_saving_a_shift_again_counts_and_sends_once(team, django_capture_on_commit_callbacks):
    moreau, _, _ = team
    with django_capture_on_commit_callbacks(execute=True):
        shift = Shift.objects.create(doctor=moreau, day=on(6), hours=5, ward="Burns")
        shift.save()
        Shift.objects.get(pk=shift.pk).save()
    assert rostered(moreau) == 5
    assert notifications.OUTBOX == ["Moreau works Burns on 2033-11-27"]


def test_deleting_shifts_in_bulk_lowers_each_doctor(team):
    moreau, haddad, _ = team
    for n in range(3):
        Shift.objects.create(doctor=moreau, day=on(n), hours=3 + n, ward="Renal")
        Shift.objects.create(doctor=haddad, day=on(n), hours=1 + n, ward="Renal")
    Shift.objects.filter(day__gte=on(1)).delete()
    assert (rostered(moreau), rostered(haddad)) == (3, 1)
    moreau.delete()
    assert rostered(haddad) == 1


def test_the_report_after_changes(team):
    moreau, haddad, quist = team
    assign_week([(haddad.pk, on(9), 6, "Renal"), (haddad.pk, on(3), 2, "Renal"), (quist.pk, on(1), 9, "Renal")])
    Shift.objects.create(doctor=moreau, day=on(2), hours=4, ward="Renal").delete()
    assert rota_report() == [
        {"doctor": "Haddad", "rostered_hours": 8, "free_hours": 16, "shifts": 2, "last_day": on(9)},
        {"doctor": "Moreau", "rostered_hours": 0, "free_hours": 16, "shifts": 0, "last_day": None},
        {"doctor": "Quist", "rostered_hours": 9, "free_hours": 0, "shifts": 1, "last_day": on(1)},
    ]


def test_an_empty_clinic_reports_nothing():
    assert rota_report() == []


def staff_many(count, shifts_each=2, prefix="locum"):
    for i in range(count):
        doctor = Doctor.objects.create(name=f"{prefix} {i:02d}", max_hours=50)
        for j in range(shifts_each):
            Shift.objects.create(doctor=doctor, day=on(2 * j), hours=1 + i % 5, ward="Renal")


def test_many_doctors_in_one_query(django_assert_num_queries):
    staff_many(12, shifts_each=3)
    with django_assert_num_queries(1):
        rows = rota_report()
    assert rows[11] == {"doctor": "locum 11", "rostered_hours": 6, "free_hours": 44, "shifts": 3, "last_day": on(4)}


class TestReportFlat(TestCase):
    def count(self):
        with CaptureQueriesContext(connection) as ctx:
            rota_report()
        return len(ctx.captured_queries)

    def test_the_query_count_stays_one(self):
        staff_many(2)
        self.assertEqual(self.count(), 1)
        staff_many(25, shifts_each=4, prefix="agency")
        self.assertEqual(self.count(), 1)
