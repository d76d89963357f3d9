import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, resolve, reverse

from orchard.models import Orchard, Picking

pytestmark = pytest.mark.django_db


@pytest.fixture
def farm():
    bramley = Orchard.objects.create(slug="bramley-hill", name="Bramley Hill")
    cox = Orchard.objects.create(slug="cox-end", name="Cox End")
    Orchard.objects.create(slug="quiet", name="Quiet Acre")
    Picking.objects.create(orchard=bramley, year=2031, week=9, picker="Ona", crates=12)
    Picking.objects.create(orchard=bramley, year=2031, week=9, picker="Bex", crates=5)
    Picking.objects.create(orchard=bramley, year=2031, week=9, picker="Ona", crates=3)
    Picking.objects.create(orchard=cox, year=2031, week=9, picker="Dai", crates=7)
    Picking.objects.create(orchard=cox, year=2031, week=10, picker="Dai", crates=9)
    Picking.objects.create(orchard=bramley, year=2030, week=52, picker="Ona", crates=1)
    return bramley, cox


def test_weeks_are_two_digits_in_urls_and_integers_in_views():
    assert reverse("harvest:week", kwargs={"year": 2031, "week": 9}) == "/harvest/2031/w09/"
    match = resolve("/harvest/2031/w09/")
    assert match.view_name == "harvest:week"
    assert match.kwargs == {"year": 2031, "week": 9}
    assert resolve("/harvest/2031/w53/").kwargs["week"] == 53
    assert resolve("/harvest/2031/w01/").kwargs["week"] == 1


def test_weeks_outside_1_to_53_have_no_url(client):
    for path in ("/harvest/2031/w00/", "/harvest/2031/w54/", "/harvest/2031/w9/", "/harvest/2031/w009/"):
        assert client.get(path).status_code == 404
    for week in (0, 54):
        with pytest.raises(NoReverseMatch):
            reverse("harvest:week", kwargs={"year": 2031, "week": week})


def test_the_week_report(client, farm):
    response = client.get("/harvest/2031/w09/")
    assert response.status_code == 200
    assert response.json() == {
        "year": 2031,
        "week": 9,
        "orchards": [
            {"orchard": "Bramley Hill", "crates": 20, "pickers": ["Bex", "Ona"]},
            {"orchard": "Cox End", "crates": 7, "pickers": ["Dai"]},
            {"orchard": "Quiet Acre", "crates": 0, "pickers": []},
        ],
        "previous": "/harvest/2031/w08/",
        "next": "/harvest/2031/w10/",
    }


def test_links_stop_at_the_first_and_last_week(client, farm):
    first = client.get("/harvest/2031/w01/").json()
    assert (first["previous"], first["next"]) == (None, "/harvest/2031/w02/")
    last = client.get("/harvest/2031/w53/").json()
    assert (last["previous"], last["next"]) == ("/harvest/2031/w52/", None)
    assert client.get("/harvest/2031/w02/").json()["previous"] == "/harvest/2031/w01/"
    assert client.get("/harvest/2031/w52/").json()["next"] == "/harvest/2031/w53/"


def test_an_orchard_links_its_weeks(client, farm):
    response = client.get("/orchards/bramley-hill/")
    assert response.status_code == 200
    assert response.json() == {"name": "Bramley Hill", "weeks": ["/harvest/2030/w52/", "/harvest/2031/w09/"]}
    assert client.get("/orchards/quiet/").json() == {"name": "Quiet Acre", "weeks": []}


def test_following_a_link_gives_that_week(client, farm):
    link = client.get("/orchards/cox-end/").json()["weeks"][-1]
    assert link == "/harvest/2031/w10/"
    assert client.get(link).json()["orchards"][1] == {"orchard": "Cox End", "crates": 9, "pickers": ["Dai"]}


def test_unknown_orchards_and_methods(client, farm):
    assert client.get("/orchards/nowhere/").status_code == 404
    assert client.post("/harvest/2031/w09/").status_code == 405
    assert client.post("/orchards/cox-end/").status_code == 405


def make_farms(count, pickings_each=3, prefix="farm"):
    for i in range(count):
        orchard = Orchard.objects.create(slug=f"{prefix}-{i:03d}", name=f"{prefix} {i:03d}")
        for j in range(pickings_each):
            Picking.objects.create(orchard=orchard, year=2031, week=20, picker=f"p{j}", crates=1 + j)


def test_the_week_report_runs_in_at_most_two_queries(client, django_assert_max_num_queries):
    make_farms(8)
    with django_assert_max_num_queries(2):
        body = client.get("/harvest/2031/w20/").json()
    assert body["orchards"][0] == {"orchard": "farm 000", "crates": 6, "pickers": ["p0", "p1", "p2"]}


class TestReportBudget(TestCase):
    def queries(self):
        with CaptureQueriesContext(connection) as ctx:
            self.client.get("/harvest/2031/w20/")
        return len(ctx.captured_queries)

    def test_query_count_does_not_grow_with_orchards(self):
        make_farms(2)
        few = self.queries()
        make_farms(20, prefix="more")
        self.assertLessEqual(few, 2)
        self.assertEqual(self.queries(), few)
