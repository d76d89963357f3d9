import datetime

import pytest
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, transaction

from booking.models import Reservation, Room

pytestmark = pytest.mark.django_db

START = datetime.date(2031, 8, 10)
END = datetime.date(2031, 8, 12)


@pytest.fixture
def suite():
    return Room.objects.create(name="orchid 7", capacity=6)


def booking(room, **changes):
    values = {"room": room, "guest_email": "visitor@example.org", "start": START, "end": END, "party_size": 3}
    values.update(changes)
    return Reservation(**values)


def codes_of(excinfo):
    return {name: sorted(e.code for e in errs) for name, errs in excinfo.value.error_dict.items()}


def test_default_status_and_reverse_relation(suite):
    first = booking(suite)
    first.full_clean()
    first.save()
    assert Reservation.objects.get(pk=first.pk).status == "active"
    assert list(suite.reservations.values_list("guest_email", flat=True)) == ["visitor@example.org"]


def test_end_equal_to_start_is_refused_by_full_clean(suite):
    with pytest.raises(ValidationError) as excinfo:
        booking(suite, end=START).full_clean()
    assert codes_of(excinfo) == {NON_FIELD_ERRORS: ["end_not_after_start"]}


def test_end_before_start_is_refused_by_the_database(suite):
    with pytest.raises(IntegrityError), transaction.atomic():
        booking(suite, end=datetime.date(2031, 8, 1)).save()
    assert Reservation.objects.count() == 0


def test_zero_party_is_refused_by_the_database(suite):
    with pytest.raises(IntegrityError), transaction.atomic():
        booking(suite, party_size=0).save()
    assert Reservation.objects.filter(room=suite).count() == 0


def test_party_of_exactly_the_capacity_is_fine(suite):
    full = booking(suite, party_size=6)
    full.full_clean()
    full.save()
    assert Reservation.objects.get().party_size == 6


def test_party_over_capacity_is_a_party_size_error(suite):
    with pytest.raises(ValidationError) as excinfo:
        booking(suite, party_size=6 + 1).full_clean()
    assert codes_of(excinfo) == {"party_size": ["over_capacity"]}


def test_same_start_in_the_same_room_conflicts(suite):
    booking(suite, end=datetime.date(2031, 8, 20)).save()
    with pytest.raises(ValidationError) as excinfo:
        booking(suite, guest_email="late@example.org").full_clean()
    assert codes_of(excinfo) == {NON_FIELD_ERRORS: ["room_taken"]}


def test_the_database_refuses_a_second_active_booking(suite):
    booking(suite).save()
    with pytest.raises(IntegrityError), transaction.atomic():
        booking(suite, party_size=1).save()
    assert Reservation.objects.count() == 1


def test_a_cancelled_and_an_active_booking_coexist(suite):
    booking(suite, status="cancelled").save()
    active = booking(suite)
    active.full_clean()
    active.save()
    assert sorted(suite.reservations.values_list("status", flat=True)) == ["active", "cancelled"]


def test_cancelling_frees_the_start_date(suite):
    first = booking(suite)
    first.save()
    first.status = "cancelled"
    first.save()
    second = booking(suite, guest_email="next@example.org")
    second.full_clean()
    second.save()
    assert Reservation.objects.filter(status="active").count() == 1


def test_bad_email_and_status_without_a_room():
    loose = Reservation(guest_email="nope", start=START, end=END, party_size=2, status="maybe")
    with pytest.raises(ValidationError) as excinfo:
        loose.full_clean()
    codes = codes_of(excinfo)
    assert codes["guest_email"] == ["invalid"]
    assert codes["status"] == ["invalid_choice"]
    assert codes["room"] in (["null"], ["blank"])


def test_two_rooms_cannot_share_a_name(suite):
    with pytest.raises(IntegrityError), transaction.atomic():
        Room.objects.create(name="orchid 7", capacity=1)
    assert Room.objects.count() == 1


def test_constraints_are_check_and_unique_constraints():
    kinds = {c.name: type(c).__name__ for c in Reservation._meta.constraints}
    assert kinds == {
        "reservation_end_after_start": "CheckConstraint",
        "reservation_party_size_positive": "CheckConstraint",
        "one_active_reservation_per_room_and_start": "UniqueConstraint",
    }


def test_status_choices_are_active_and_cancelled():
    field = Reservation._meta.get_field("status")
    assert sorted(value for value, _ in field.choices) == ["active", "cancelled"]
    assert field.max_length == 10
