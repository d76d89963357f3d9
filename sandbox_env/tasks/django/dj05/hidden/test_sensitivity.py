import datetime

import pytest
from django.core.exceptions import ValidationError

from booking.models import Reservation, Room

pytestmark = pytest.mark.django_db

D1 = datetime.date(2030, 5, 1)
D2 = datetime.date(2030, 5, 3)


@pytest.fixture
def room():
    return Room.objects.create(name="blue", capacity=4)


def reservation(room, **overrides):
    fields = {"room": room, "guest_email": "guest@example.com", "start": D1, "end": D2, "party_size": 2}
    fields.update(overrides)
    return Reservation(**fields)


def test_a_room_name_of_50_characters_is_valid_and_51_is_too_long():
    Room(name="n" * 50, capacity=2).full_clean()
    with pytest.raises(ValidationError) as caught:
        Room(name="n" * 51, capacity=2).full_clean()
    assert [e.code for e in caught.value.error_dict["name"]] == ["max_length"]


def test_status_is_a_char_field_of_max_length_10():
    assert Reservation._meta.get_field("status").max_length == 10


def test_a_party_of_exactly_one_is_allowed_by_the_database_and_full_clean(room):
    one = reservation(room, party_size=1)
    one.full_clean()
    one.save()
    assert Reservation.objects.get(pk=one.pk).party_size == 1


def test_only_the_exact_status_active_takes_part_in_the_unique_constraint(room):
    reservation(room, status="ACTIVE").save()
    reservation(room, status="ACTIVE").save()
    reservation(room).save()
    assert Reservation.objects.filter(room=room, start=D1).count() == 3
