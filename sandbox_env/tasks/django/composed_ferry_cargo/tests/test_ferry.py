import datetime

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from cargo.forms import BookingForm
from cargo.models import Booking, Sailing

pytestmark = pytest.mark.django_db

NOON = datetime.datetime(2031, 5, 1, 12, 0, tzinfo=datetime.timezone.utc)


def sailing(code, lane_metres=40, hours=0):
    return Sailing.objects.create(code=code, departs=NOON + datetime.timedelta(hours=hours), lane_metres=lane_metres)


def booked(s):
    return Sailing.objects.values_list("booked_metres", flat=True).get(pk=s.pk)


def codes(form):
    return {field: [e["code"] for e in found] for field, found in form.errors.get_json_data().items()}


@pytest.fixture
def dawn():
    return sailing("DAWN", lane_metres=30)


def test_plain_orm_changes_keep_the_counter(dawn):
    van = Booking.objects.create(sailing=dawn, plate="VAN1", length=6)
    Booking.objects.create(sailing=dawn, plate="BUS1", length=12)
    assert booked(dawn) == 18
    van.length = 9
    van.save()
    assert booked(dawn) == 21
    van.delete()
    assert booked(dawn) == 12


def test_the_form_normalises_the_plate_and_saves(dawn):
    form = BookingForm({"sailing": dawn.pk, "plate": " ab 12 c ", "length": "7"})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["plate"] == "AB12C"
    booking = form.save()
    assert (booking.plate, booking.length, booking.sailing_id) == ("AB12C", 7, dawn.pk)
    assert booked(dawn) == 7


def test_plate_and_length_rules(dawn):
    assert codes(BookingForm({"sailing": dawn.pk, "plate": "A", "length": "1"})) == {
        "plate": ["bad_plate"],
        "length": ["min_value"],
    }
    assert codes(BookingForm({"sailing": dawn.pk, "plate": "AB-12", "length": "19"})) == {
        "plate": ["bad_plate"],
        "length": ["max_value"],
    }
    assert BookingForm({"sailing": dawn.pk, "plate": "ab", "length": "18"}).is_valid()
    assert BookingForm({"sailing": dawn.pk, "plate": "abcd 1234", "length": "2"}).is_valid()


def test_a_booking_exactly_as_long_as_the_free_metres_fits(dawn):
    Booking.objects.create(sailing=dawn, plate="TRUCK1", length=18)
    assert BookingForm({"sailing": dawn.pk, "plate": "VAN2", "length": "12"}).is_valid()
    assert codes(BookingForm({"sailing": dawn.pk, "plate": "VAN2", "length": "13"})) == {"length": ["deck_full"]}


def test_a_booking_made_outside_the_form_fills_the_deck_for_the_form(dawn):
    Booking.objects.create(sailing=dawn, plate="LORRY1", length=16)
    Booking.objects.create(sailing=dawn, plate="LORRY2", length=10)
    assert codes(BookingForm({"sailing": dawn.pk, "plate": "CAR1", "length": "5"})) == {"length": ["deck_full"]}
    assert BookingForm({"sailing": dawn.pk, "plate": "CAR1", "length": "4"}).is_valid()


def test_a_plate_written_otherwise_is_the_same_plate(client, dawn):
    Booking.objects.create(sailing=dawn, plate="KX55AB", length=5)
    form = BookingForm({"sailing": dawn.pk, "plate": "kx55 ab", "length": "5"})
    assert codes(form) == {"__all__": ["plate_booked"]}
    response = client.post("/sailings/DAWN/book/", {"plate": " Kx 55 aB", "length": "5"})
    assert response.status_code == 400
    assert response.json() == {"errors": {"__all__": ["plate_booked"]}}
    assert Booking.objects.count() == 1


def test_booking_through_the_view(client, dawn):
    response = client.post("/sailings/DAWN/book/", {"plate": "mv 01", "length": "16"})
    assert response.status_code == 201
    booking = Booking.objects.get()
    assert response.json() == {"id": booking.pk, "plate": "MV01", "free_metres": 14}
    refused = client.post("/sailings/DAWN/book/", {"plate": "mv02", "length": "15"})
    assert refused.status_code == 400
    assert refused.json() == {"errors": {"length": ["deck_full"]}}
    assert client.post("/sailings/DAWN/book/", {"length": "x"}).json() == {
        "errors": {"plate": ["required"], "length": ["invalid"]}
    }
    assert Booking.objects.count() == 1


def test_cancelling_frees_the_deck_for_the_next_booking(client, dawn):
    first = client.post("/sailings/DAWN/book/", {"plate": "HGV1", "length": "18"}).json()
    assert client.post("/sailings/DAWN/book/", {"plate": "HGV2", "length": "14"}).status_code == 400
    response = client.post(f"/bookings/{first['id']}/cancel/")
    assert response.status_code == 200
    assert response.json() == {"code": "DAWN", "free_metres": 30}
    assert client.post("/sailings/DAWN/book/", {"plate": "HGV2", "length": "14"}).json()["free_metres"] == 16


def test_the_board_lists_sailings_with_free_metres_and_sorted_plates(client, dawn):
    late = sailing("LATE", lane_metres=50, hours=6)
    sailing("ALSO", lane_metres=20, hours=6)
    Booking.objects.create(sailing=late, plate="ZZ9", length=10)
    Booking.objects.create(sailing=late, plate="AA1", length=3)
    response = client.get("/board/")
    assert response.status_code == 200
    assert response.json() == {
        "sailings": [
            {"code": "DAWN", "free_metres": 30, "plates": []},
            {"code": "ALSO", "free_metres": 20, "plates": []},
            {"code": "LATE", "free_metres": 37, "plates": ["AA1", "ZZ9"]},
        ]
    }


def test_unknown_codes_and_wrong_methods(client, dawn):
    assert client.post("/sailings/NOPE/book/", {"plate": "AB1", "length": "5"}).status_code == 404
    assert client.post("/bookings/999/cancel/").status_code == 404
    assert client.get("/sailings/DAWN/book/").status_code == 405
    assert client.post("/board/").status_code == 405


def make_sailings(count, bookings_each=3, prefix="S"):
    for i in range(count):
        s = sailing(f"{prefix}{i:03d}", lane_metres=100, hours=i)
        for j in range(bookings_each):
            Booking.objects.create(sailing=s, plate=f"P{i}X{j}", length=2 + j)


def test_the_board_runs_in_at_most_two_queries(client, django_assert_max_num_queries):
    make_sailings(8, bookings_each=4)
    with django_assert_max_num_queries(2):
        rows = client.get("/board/").json()["sailings"]
    assert len(rows) == 8
    assert rows[0] == {"code": "S000", "free_metres": 86, "plates": ["P0X0", "P0X1", "P0X2", "P0X3"]}


class TestBoardBudget(TestCase):
    def count_queries(self):
        with CaptureQueriesContext(connection) as ctx:
            self.client.get("/board/")
        return len(ctx.captured_queries)

    def test_the_board_query_count_does_not_grow_with_sailings(self):
        make_sailings(2)
        few = self.count_queries()
        make_sailings(15, prefix="T")
        many = self.count_queries()
        self.assertLessEqual(few, 2)
        self.assertEqual(few, many)
