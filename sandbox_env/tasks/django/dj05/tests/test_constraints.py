import datetime

import pytest
from django.core.exceptions import NON_FIELD_ERRORS, ValidationError
from django.db import IntegrityError, transaction

from booking.models import Reservation, Room

pytestmark = pytest.mark.django_db

D1 = datetime.date(2030, 5, 1)
D2 = datetime.date(2030, 5, 3)


@pytest.fixture
def room():
    return Room.objects.create(name="Blue", capacity=4)


def reservation(room, **overrides):
    fields = {"room": room, "guest_email": "guest@example.com", "start": D1, "end": D2, "party_size": 2}
    fields.update(overrides)
    return Reservation(**fields)


def error_codes(exc):
    return {field: sorted(e.code for e in errors) for field, errors in exc.value.error_dict.items()}


def test_valid_reservation_cleans_and_saves(room):
    r = reservation(room)
    r.full_clean()
    r.save()
    assert r.status == "active"
    assert room.reservations.get() == r


def test_end_not_after_start_is_a_non_field_error(room):
    with pytest.raises(ValidationError) as exc:
        reservation(room, end=D1).full_clean()
    assert error_codes(exc) == {NON_FIELD_ERRORS: ["end_not_after_start"]}


def test_database_refuses_end_before_start(room):
    with pytest.raises(IntegrityError), transaction.atomic():
        reservation(room, start=D2, end=D1).save()


def test_empty_party_is_refused_by_clean_and_database(room):
    with pytest.raises(ValidationError) as exc:
        reservation(room, party_size=0).full_clean()
    assert error_codes(exc) == {NON_FIELD_ERRORS: ["party_size_positive"]}
    with pytest.raises(IntegrityError), transaction.atomic():
        reservation(room, party_size=0).save()


def test_over_capacity_lands_on_party_size(room):
    with pytest.raises(ValidationError) as exc:
        reservation(room, party_size=5).full_clean()
    assert error_codes(exc) == {"party_size": ["over_capacity"]}


def test_second_active_reservation_is_refused(room):
    reservation(room).save()
    with pytest.raises(ValidationError) as exc:
        reservation(room, guest_email="other@example.com").full_clean()
    assert error_codes(exc) == {NON_FIELD_ERRORS: ["room_taken"]}
    with pytest.raises(IntegrityError), transaction.atomic():
        reservation(room, guest_email="other@example.com").save()


def test_cancelled_reservations_never_conflict(room):
    reservation(room, status="cancelled").save()
    reservation(room, status="cancelled").save()
    r = reservation(room)
    r.full_clean()
    r.save()
    assert room.reservations.count() == 3


def test_other_rooms_and_dates_do_not_conflict(room):
    reservation(room).save()
    other = Room.objects.create(name="Green", capacity=2)
    reservation(other).full_clean()
    reservation(room, start=D2, end=datetime.date(2030, 5, 9)).full_clean()


def test_saved_reservation_does_not_conflict_with_itself(room):
    r = reservation(room)
    r.save()
    r.party_size = 3
    r.full_clean()
    r.save()


def test_missing_room_is_a_field_error_without_crash():
    r = Reservation(guest_email="guest@example.com", start=D1, end=D2, party_size=2)
    with pytest.raises(ValidationError) as exc:
        r.full_clean()
    assert error_codes(exc)["room"] in (["null"], ["blank"])


def test_plain_field_errors_are_reported_per_field(room):
    with pytest.raises(ValidationError) as exc:
        reservation(room, guest_email="not-an-email", status="pending").full_clean()
    codes = error_codes(exc)
    assert codes["guest_email"] == ["invalid"]
    assert codes["status"] == ["invalid_choice"]


def test_room_names_are_unique(room):
    with pytest.raises(ValidationError) as exc:
        Room(name="Blue", capacity=2).full_clean()
    assert error_codes(exc) == {"name": ["unique"]}


def test_constraints_are_declared_by_name():
    names = {c.name for c in Reservation._meta.constraints}
    assert names == {
        "reservation_end_after_start",
        "reservation_party_size_positive",
        "one_active_reservation_per_room_and_start",
    }
