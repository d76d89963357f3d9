import datetime

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from cargo.forms import BookingForm
from cargo.models import Booking, Sailing

pytestmark = pytest.mark.django_db

MORNING = datetime.datetime(2032, 8, 14, 7, 30, tzinfo=datetime.timezone.utc)


def sailing(code, lane_metres=24, minutes=0):
    return Sailing.objects.create(code=code, departs=MORNING + datetime.timedelta(minutes=minutes), lane_metres=lane_metres)


def booked(s):
    return Sailing.objects.values_list("booked_metres", flat=True).get(pk=s.pk)


def cleaned_plate(data):
    form = BookingForm(data)
    assert form.is_valid(), form.errors
    return form.cleaned_data["plate"]


def codes(form):
    return {field: [e["code"] for e in found] for field, found in form.errors.get_json_data().items()}


@pytest.fixture
def pair():
    return sailing("ISLAY-1", lane_metres=24), sailing("ISLAY-2", lane_metres=20, minutes=90)


def test_a_booking_moved_between_sailings_moves_its_metres_for_the_form(pair):
    first, second = pair
    coach = Booking.objects.create(sailing=first, plate="COACH7", length=15)
    Booking.objects.create(sailing=second, plate="VAN3", length=4)
    assert codes(BookingForm({"sailing": first.pk, "plate": "TRAILER", "length": "10"})) == {"length": ["deck_full"]}
    coach.sailing = second
    coach.save()
    assert (booked(first), booked(second)) == (0, 19)
    assert BookingForm({"sailing": first.pk, "plate": "TRAILER", "length": "10"}).is_valid()
    assert codes(BookingForm({"sailing": second.pk, "plate": "TRAILER", "length": "2"})) == {"length": ["deck_full"]}
    assert codes(BookingForm({"sailing": second.pk, "plate": "TRAILER", "length": "1"})) == {"length": ["min_value"]}


def test_a_shorter_booking_saved_again_frees_metres_once(pair):
    first, _ = pair
    truck = Booking.objects.create(sailing=first, plate="TRK88", length=14)
    truck.length = 11
    truck.save()
    truck.save()
    assert booked(first) == 11
    fresh = Booking.objects.get(pk=truck.pk)
    fresh.plate = "TRK89"
    fresh.save()
    assert booked(first) == 11


def test_a_queryset_delete_frees_the_deck_for_the_view(client, pair):
    first, second = pair
    for n, length in enumerate((5, 6, 7)):
        Booking.objects.create(sailing=first, plate=f"CAR{n}", length=length)
    Booking.objects.create(sailing=second, plate="CAR9", length=3)
    assert client.post("/sailings/ISLAY-1/book/", {"plate": "bus 4", "length": "8"}).status_code == 400
    Booking.objects.filter(sailing=first, length__gte=6).delete()
    assert (booked(first), booked(second)) == (5, 3)
    response = client.post("/sailings/ISLAY-1/book/", {"plate": "bus 4", "length": "8"})
    assert response.status_code == 201
    assert response.json()["plate"] == "BUS4" and response.json()["free_metres"] == 11


def test_the_board_shows_the_counter_after_views_and_plain_code(client, pair):
    first, second = pair
    made = client.post("/sailings/ISLAY-2/book/", {"plate": "q 7", "length": "9"}).json()
    Booking.objects.create(sailing=first, plate="M1", length=2)
    Booking.objects.create(sailing=second, plate="B2", length=3)
    board = client.get("/board/").json()["sailings"]
    assert board == [
        {"code": "ISLAY-1", "free_metres": 22, "plates": ["M1"]},
        {"code": "ISLAY-2", "free_metres": 8, "plates": ["B2", "Q7"]},
    ]
    client.post(f"/bookings/{made['id']}/cancel/")
    assert client.get("/board/").json()["sailings"][1] == {"code": "ISLAY-2", "free_metres": 17, "plates": ["B2"]}


def test_the_board_orders_by_departure_then_code(client):
    sailing("RONA", minutes=30)
    sailing("MULL", minutes=30)
    sailing("SKYE", minutes=-30)
    assert [row["code"] for row in client.get("/board/").json()["sailings"]] == ["SKYE", "MULL", "RONA"]


def test_the_length_bounds_are_inclusive(pair):
    _, second = pair
    assert BookingForm({"sailing": second.pk, "plate": "LONG18", "length": "18"}).is_valid()
    assert BookingForm({"sailing": second.pk, "plate": "SHORT2", "length": "2"}).is_valid()
    big = sailing("BIG", lane_metres=500)
    assert codes(BookingForm({"sailing": big.pk, "plate": "LONG19", "length": "19"})) == {"length": ["max_value"]}
    assert codes(BookingForm({"sailing": big.pk, "plate": "TINY", "length": "1"})) == {"length": ["min_value"]}
    assert codes(BookingForm({"sailing": big.pk, "plate": "ZERO", "length": "0"})) == {"length": ["min_value"]}


def test_plates_of_two_and_eight_characters_pass_and_others_do_not(pair):
    first, _ = pair
    assert cleaned_plate({"sailing": first.pk, "plate": "x 9", "length": "3"}) == "X9"
    assert cleaned_plate({"sailing": first.pk, "plate": "ab cd ef 12", "length": "3"}) == "ABCDEF12"
    assert codes(BookingForm({"sailing": first.pk, "plate": "ab cd ef 123", "length": "3"})) == {"plate": ["bad_plate"]}
    assert codes(BookingForm({"sailing": first.pk, "plate": " 7 ", "length": "3"})) == {"plate": ["bad_plate"]}
    assert codes(BookingForm({"sailing": first.pk, "plate": "ÄB12", "length": "3"})) == {"plate": ["bad_plate"]}
    assert codes(BookingForm({"sailing": first.pk, "plate": "AB_12", "length": "3"})) == {"plate": ["bad_plate"]}


def test_a_plate_booked_on_another_sailing_is_free_here(client, pair):
    first, second = pair
    Booking.objects.create(sailing=second, plate="DUP1", length=3)
    assert client.post("/sailings/ISLAY-1/book/", {"plate": "dup1", "length": "3"}).status_code == 201
    again = client.post("/sailings/ISLAY-1/book/", {"plate": "DU P1", "length": "30"})
    assert again.status_code == 400
    assert again.json() == {"errors": {"length": ["max_value"], "__all__": ["plate_booked"]}}
    assert (booked(first), booked(second)) == (3, 3)


def test_a_full_sailing_refuses_and_stores_nothing(client):
    sailing("SMALL", lane_metres=10)
    assert client.post("/sailings/SMALL/book/", {"plate": "CAR1", "length": "10"}).json()["free_metres"] == 0
    refused = client.post("/sailings/SMALL/book/", {"plate": "CAR2", "length": "2"})
    assert refused.status_code == 400
    assert refused.json() == {"errors": {"length": ["deck_full"]}}
    assert list(Booking.objects.values_list("plate", flat=True)) == ["CAR1"]


def test_cancel_answers_the_sailing_and_refuses_get(client, pair):
    first, _ = pair
    booking = Booking.objects.create(sailing=first, plate="GONE1", length=9)
    assert client.get(f"/bookings/{booking.pk}/cancel/").status_code == 405
    assert booked(first) == 9
    response = client.post(f"/bookings/{booking.pk}/cancel/")
    assert response.json() == {"code": "ISLAY-1", "free_metres": 24}
    assert client.post(f"/bookings/{booking.pk}/cancel/").status_code == 404


def make_sailings(count, bookings_each=2, prefix="H"):
    for i in range(count):
        s = sailing(f"{prefix}{i:02d}", lane_metres=60, minutes=i)
        for j in range(bookings_each):
            Booking.objects.create(sailing=s, plate=f"R{j}{i}", length=3 + j)


def test_a_busy_board_in_at_most_two_queries(client, django_assert_max_num_queries):
    make_sailings(10, bookings_each=5)
    with django_assert_max_num_queries(2):
        rows = client.get("/board/").json()["sailings"]
    assert len(rows) == 10
    assert rows[9] == {"code": "H09", "free_metres": 35, "plates": ["R09", "R19", "R29", "R39", "R49"]}


class TestBoardStaysFlat(TestCase):
    def queries(self):
        with CaptureQueriesContext(connection) as ctx:
            self.client.get("/board/")
        return len(ctx.captured_queries)

    def test_more_sailings_and_bookings_cost_no_more_queries(self):
        make_sailings(3)
        few = self.queries()
        make_sailings(20, bookings_each=4, prefix="K")
        self.assertLessEqual(few, 2)
        self.assertEqual(self.queries(), few)
