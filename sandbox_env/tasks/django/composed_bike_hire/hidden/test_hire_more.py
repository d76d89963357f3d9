import datetime

import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from hire.forms import HireForm
from hire.models import Bike, Hire

pytestmark = pytest.mark.django_db

DAWN = datetime.datetime(2034, 2, 9, 6, 15, tzinfo=datetime.timezone.utc)


def later(minutes):
    return DAWN + datetime.timedelta(minutes=minutes)


def errors_of(form):
    return {field: [e["code"] for e in found] for field, found in form.errors.get_json_data().items()}


@pytest.fixture
def depot():
    bikes = [
        Bike.objects.create(tag="Z-10", kind="ebike"),
        Bike.objects.create(tag="A-10", kind="city"),
        Bike.objects.create(tag="M-10", kind="cargo", in_repair=True),
        Bike.objects.create(tag="M-11", kind="cargo"),
    ]
    Hire.objects.create(bike=bikes[0], rider="Petra", started=later(0), returned=later(20))
    Hire.objects.create(bike=bikes[0], rider="Ugo", started=later(30), returned=later(40))
    Hire.objects.create(bike=bikes[0], rider="Petra", started=later(45), returned=later(70))
    Hire.objects.create(bike=bikes[2], rider="Ugo", started=later(10), returned=later(15))
    Hire.objects.create(bike=bikes[3], rider="Wen", started=later(50))
    return bikes


def test_only_returned_hires_leave_a_bike_available(depot):
    assert sorted(Bike.objects.available().values_list("tag", flat=True)) == ["A-10", "Z-10"]
    Hire.objects.filter(rider="Wen").update(returned=later(99))
    assert sorted(Bike.objects.available().values_list("tag", flat=True)) == ["A-10", "M-11", "Z-10"]


def test_a_bike_in_repair_is_never_available_even_with_no_open_hire(depot):
    assert not Bike.objects.available().filter(tag="M-10").exists()
    Bike.objects.filter(tag="M-10").update(in_repair=False)
    assert Bike.objects.available().filter(tag="M-10").exists()


def test_stats_on_every_bike_and_after_filters(depot):
    stats = {b.tag: (b.hire_count, b.last_started) for b in Bike.objects.with_hire_stats()}
    assert stats == {"Z-10": (3, later(45)), "A-10": (0, None), "M-10": (1, later(10)), "M-11": (1, later(50))}
    chained = Bike.objects.filter(kind="ebike").with_hire_stats().available().get()
    assert (chained.tag, chained.hire_count) == ("Z-10", 3)
    assert Bike.objects.available().with_hire_stats().filter(hire_count=0).get().tag == "A-10"


def test_the_list_orders_by_tag_and_counts_all_hires(client, depot):
    assert client.get("/bikes/").json() == {
        "bikes": [{"tag": "A-10", "kind": "city", "hires": 0}, {"tag": "Z-10", "kind": "ebike", "hires": 3}]
    }
    assert client.get("/bikes/?kind=cargo").json() == {"bikes": []}
    assert client.get("/bikes/?kind=boat").json() == {"bikes": []}


def test_a_bike_out_or_in_repair_is_refused_by_the_form_and_the_view(client, depot):
    assert errors_of(HireForm({"bike": "m-11", "rider": "Nadia"})) == {"bike": ["unavailable"]}
    assert errors_of(HireForm({"bike": "M-10", "rider": "Nadia"})) == {"bike": ["unavailable"]}
    response = client.post("/hires/", {"bike": "m-10", "rider": "Nadia"})
    assert response.status_code == 400
    assert response.json() == {"errors": {"bike": ["unavailable"]}}
    assert client.post("/hires/", {"bike": "Q-1", "rider": "wen"}).json() == {
        "errors": {"bike": ["unknown_bike"], "rider": ["rider_busy"]}
    }
    assert Hire.objects.count() == 5


def test_returning_through_the_view_frees_bike_and_rider(client, depot):
    open_hire = Hire.objects.get(rider="Wen")
    assert errors_of(HireForm({"bike": "A-10", "rider": "WEN"})) == {"rider": ["rider_busy"]}
    assert client.post(f"/hires/{open_hire.pk}/return/").json() == {"bike": "M-11", "available": True}
    made = client.post("/hires/", {"bike": "m-11", "rider": "WEN"})
    assert made.status_code == 201
    assert made.json()["bike"] == "M-11" and made.json()["rider"] == "WEN"
    assert [b["tag"] for b in client.get("/bikes/?kind=cargo").json()["bikes"]] == []


def test_a_rider_whose_hires_are_all_returned_can_hire(depot):
    form = HireForm({"bike": "a-10", "rider": "petra"})
    assert form.is_valid(), form.errors
    hire = form.save()
    assert Hire.objects.get(pk=hire.pk).rider == "petra"
    assert Hire.objects.get(pk=hire.pk).bike.tag == "A-10"
    assert errors_of(HireForm({"bike": "Z-10", "rider": " PETRA "})) == {"rider": ["rider_busy"]}


def test_rider_names_are_trimmed_and_inner_spaces_collapsed(depot):
    form = HireForm({"bike": "Z-10", "rider": "\tJo  Ann\n Lee "})
    assert form.is_valid(), form.errors
    assert form.cleaned_data["rider"] == "Jo Ann Lee"
    assert errors_of(HireForm({"bike": "Z-10", "rider": "   "})) == {"rider": ["required"]}
    assert errors_of(HireForm({"bike": "Z-10", "rider": "r" * 45})) == {"rider": ["max_length"]}


def test_return_answers_for_the_bike_and_refuses_a_second_return(client, depot):
    hire = Hire.objects.create(bike=Bike.objects.get(tag="A-10"), rider="Kit", started=later(80))
    assert client.get("/bikes/").json()["bikes"] == [{"tag": "Z-10", "kind": "ebike", "hires": 3}]
    assert client.post(f"/hires/{hire.pk}/return/").json() == {"bike": "A-10", "available": True}
    second = client.post(f"/hires/{hire.pk}/return/")
    assert (second.status_code, second.json()) == (409, {"error": "already_returned"})
    assert client.get("/bikes/").json()["bikes"][0] == {"tag": "A-10", "kind": "city", "hires": 1}


def test_methods_and_unknown_hires(client, depot):
    assert client.post("/hires/12345/return/").status_code == 404
    assert client.put("/hires/").status_code == 405
    assert client.delete("/bikes/").status_code == 405


def fill(count, hires_each=2, prefix="F"):
    for i in range(count):
        bike = Bike.objects.create(tag=f"{prefix}{i:03d}", kind="cargo" if i % 2 else "city")
        for j in range(hires_each):
            Hire.objects.create(bike=bike, rider=f"p{i}{j}", started=later(j), returned=later(j + 5))
        if i % 3 == 0:
            Hire.objects.create(bike=bike, rider=f"open{i}", started=later(99))


def test_a_big_depot_lists_in_one_query(client, django_assert_num_queries):
    fill(12, hires_each=3)
    with django_assert_num_queries(1):
        rows = client.get("/bikes/").json()["bikes"]
    assert [r["tag"] for r in rows] == ["F001", "F002", "F004", "F005", "F007", "F008", "F010", "F011"]
    assert rows[0] == {"tag": "F001", "kind": "cargo", "hires": 3}


class TestDepotFlat(TestCase):
    def count(self, url):
        with CaptureQueriesContext(connection) as ctx:
            self.client.get(url)
        return len(ctx.captured_queries)

    def test_the_query_count_stays_one(self):
        fill(3)
        self.assertEqual(self.count("/bikes/"), 1)
        fill(24, hires_each=4, prefix="G")
        self.assertEqual(self.count("/bikes/?kind=cargo"), 1)
