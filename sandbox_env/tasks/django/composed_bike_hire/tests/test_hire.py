import datetime

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from hire.forms import HireForm
from hire.models import Bike, Hire
from hire.querysets import BikeQuerySet

pytestmark = pytest.mark.django_db

T0 = datetime.datetime(2031, 6, 1, 9, 0, tzinfo=datetime.timezone.utc)


def at(minutes):
    return T0 + datetime.timedelta(minutes=minutes)


def codes(form):
    return {field: [e["code"] for e in found] for field, found in form.errors.get_json_data().items()}


@pytest.fixture
def fleet():
    bikes = {
        "free": Bike.objects.create(tag="C-01", kind="city"),
        "out": Bike.objects.create(tag="C-02", kind="city"),
        "repair": Bike.objects.create(tag="E-01", kind="ebike", in_repair=True),
        "back": Bike.objects.create(tag="K-01", kind="cargo"),
    }
    Hire.objects.create(bike=bikes["out"], rider="Ines", started=at(0))
    Hire.objects.create(bike=bikes["back"], rider="Theo", started=at(5), returned=at(50))
    Hire.objects.create(bike=bikes["back"], rider="Ines", started=at(60), returned=at(90))
    return bikes


def test_available_bikes_are_neither_out_nor_in_repair(fleet):
    assert isinstance(Bike.objects.all(), BikeQuerySet)
    assert sorted(Bike.objects.available().values_list("tag", flat=True)) == ["C-01", "K-01"]


def test_stats_count_every_hire_and_chain_both_ways(fleet):
    one = {b.tag: (b.hire_count, b.last_started) for b in Bike.objects.available().with_hire_stats()}
    two = {b.tag: (b.hire_count, b.last_started) for b in Bike.objects.with_hire_stats().available()}
    assert one == two == {"C-01": (0, None), "K-01": (2, at(60))}
    assert [b.tag for b in Bike.objects.with_hire_stats().filter(hire_count__gte=1).order_by("-hire_count")] == [
        "K-01",
        "C-02",
    ]


def test_the_form_takes_an_available_bike_by_tag_in_any_case(fleet):
    form = HireForm({"bike": "k-01", "rider": "  Mara   Oduya "})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["bike"] == fleet["back"]
    assert form.cleaned_data["rider"] == "Mara Oduya"
    hire = form.save()
    assert (hire.bike_id, hire.rider, hire.returned) == (fleet["back"].pk, "Mara Oduya", None)


def test_the_form_refuses_bikes_that_are_not_available(fleet):
    assert codes(HireForm({"bike": "C-02", "rider": "Sol"})) == {"bike": ["unavailable"]}
    assert codes(HireForm({"bike": "e-01", "rider": "Sol"})) == {"bike": ["unavailable"]}
    assert codes(HireForm({"bike": "X-99", "rider": "Sol"})) == {"bike": ["unknown_bike"]}
    assert codes(HireForm({"bike": "", "rider": ""})) == {"bike": ["required"], "rider": ["required"]}


def test_a_rider_with_a_bike_out_is_busy_whatever_the_case(fleet):
    assert codes(HireForm({"bike": "C-01", "rider": "ines"})) == {"rider": ["rider_busy"]}
    assert HireForm({"bike": "C-01", "rider": "Theo"}).is_valid()
    assert codes(HireForm({"bike": "C-01", "rider": "x" * 41})) == {"rider": ["max_length"]}
    assert HireForm({"bike": "C-01", "rider": "y" * 40}).is_valid()


def test_a_returned_bike_is_available_again_for_the_form_and_the_list(client, fleet):
    hire = Hire.objects.get(rider="Ines", returned__isnull=True)
    assert codes(HireForm({"bike": "C-02", "rider": "Sol"})) == {"bike": ["unavailable"]}
    response = client.post(f"/hires/{hire.pk}/return/")
    assert response.status_code == 200
    assert response.json() == {"bike": "C-02", "available": True}
    assert HireForm({"bike": "C-02", "rider": "Sol"}).is_valid()
    assert [b["tag"] for b in client.get("/bikes/").json()["bikes"]] == ["C-01", "C-02", "K-01"]


def test_starting_a_hire_takes_the_bike_off_the_list(client, fleet):
    response = client.post("/hires/", {"bike": "c-01", "rider": " Ada  Byron"})
    assert response.status_code == 201
    hire = Hire.objects.get(rider="Ada Byron")
    assert response.json() == {"id": hire.pk, "bike": "C-01", "rider": "Ada Byron"}
    assert client.get("/bikes/").json() == {"bikes": [{"tag": "K-01", "kind": "cargo", "hires": 2}]}
    again = client.post("/hires/", {"bike": "C-01", "rider": "Bo"})
    assert again.status_code == 400
    assert again.json() == {"errors": {"bike": ["unavailable"]}}
    assert Hire.objects.filter(bike=fleet["free"]).count() == 1


def test_the_list_filters_by_kind(client, fleet):
    Bike.objects.create(tag="K-02", kind="cargo")
    assert client.get("/bikes/?kind=cargo").json() == {
        "bikes": [{"tag": "K-01", "kind": "cargo", "hires": 2}, {"tag": "K-02", "kind": "cargo", "hires": 0}]
    }
    assert client.get("/bikes/?kind=ebike").json() == {"bikes": []}


def test_returning_twice_or_a_bike_in_repair(client, fleet):
    done = Hire.objects.filter(rider="Theo").get()
    assert client.post(f"/hires/{done.pk}/return/").status_code == 409
    assert client.post(f"/hires/{done.pk}/return/").json() == {"error": "already_returned"}
    broken = Hire.objects.create(bike=Bike.objects.create(tag="E-02", kind="ebike"), rider="Ro", started=at(1))
    Bike.objects.filter(tag="E-02").update(in_repair=True)
    assert client.post(f"/hires/{broken.pk}/return/").json() == {"bike": "E-02", "available": False}
    assert Hire.objects.get(pk=broken.pk).returned is not None


def test_unknown_ids_and_methods(client, fleet):
    assert client.post("/hires/9999/return/").status_code == 404
    assert client.get("/hires/").status_code == 405
    assert client.post("/bikes/").status_code == 405
    assert client.get(f"/hires/{Hire.objects.first().pk}/return/").status_code == 405


def make_bikes(count, hires_each=2, prefix="B"):
    for i in range(count):
        bike = Bike.objects.create(tag=f"{prefix}-{i:03d}", kind="city")
        for j in range(hires_each):
            Hire.objects.create(bike=bike, rider=f"r{i}-{j}", started=at(j), returned=at(j + 30))


def test_the_list_is_one_query(client, django_assert_num_queries):
    make_bikes(8, hires_each=3)
    with django_assert_num_queries(1):
        rows = client.get("/bikes/").json()["bikes"]
    assert len(rows) == 8
    assert rows[0] == {"tag": "B-000", "kind": "city", "hires": 3}


class TestListBudget(TestCase):
    def test_one_query_for_many_bikes(self):
        make_bikes(20)
        with CaptureQueriesContext(connection) as ctx:
            rows = self.client.get("/bikes/?kind=city").json()["bikes"]
        self.assertEqual(len(ctx.captured_queries), 1)
        self.assertEqual(len(rows), 20)
