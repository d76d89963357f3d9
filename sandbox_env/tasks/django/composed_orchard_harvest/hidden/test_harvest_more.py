import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext
from django.urls import NoReverseMatch, resolve, reverse

from orchard.models import Orchard, Picking

pytestmark = pytest.mark.django_db


@pytest.fixture
def estate():
    russet = Orchard.objects.create(slug="russet-row", name="Russet Row")
    gala = Orchard.objects.create(slug="gala-field", name="Gala Field")
    Picking.objects.create(orchard=russet, year=2035, week=40, picker="Yusuf", crates=4)
    Picking.objects.create(orchard=russet, year=2035, week=41, picker="Ana", crates=6)
    Picking.objects.create(orchard=russet, year=2035, week=41, picker="Zed", crates=2)
    Picking.objects.create(orchard=gala, year=2035, week=41, picker="Ana", crates=11)
    Picking.objects.create(orchard=gala, year=2034, week=41, picker="Old", crates=30)
    Picking.objects.create(orchard=gala, year=2035, week=3, picker="Ana", crates=1)
    return russet, gala


def test_reverse_pads_and_refuses_and_resolve_gives_integers():
    assert reverse("harvest:week", kwargs={"year": 2035, "week": 3}) == "/harvest/2035/w03/"
    assert reverse("harvest:week", args=[2035, 41]) == "/harvest/2035/w41/"
    assert reverse("harvest:week", kwargs={"year": 2035, "week": 53}) == "/harvest/2035/w53/"
    assert reverse("harvest:week", kwargs={"year": 2035, "week": 1}) == "/harvest/2035/w01/"
    for week in (-1, 0, 54, 99):
        with pytest.raises(NoReverseMatch):
            reverse("harvest:week", kwargs={"year": 2035, "week": week})
    assert resolve("/harvest/2035/w41/").kwargs == {"year": 2035, "week": 41}
    assert reverse("harvest:orchard", kwargs={"slug": "gala-field"}) == "/orchards/gala-field/"


def test_only_weeks_01_to_53_are_pages(client, estate):
    assert client.get("/harvest/2035/w53/").status_code == 200
    assert client.get("/harvest/2035/w01/").status_code == 200
    for path in ("/harvest/2035/w60/", "/harvest/2035/w00/", "/harvest/2035/w3/", "/harvest/2035/wab/"):
        assert client.get(path).status_code == 404


def test_one_week_one_year_only(client, estate):
    body = client.get("/harvest/2035/w41/").json()
    assert body["orchards"] == [
        {"orchard": "Gala Field", "crates": 11, "pickers": ["Ana"]},
        {"orchard": "Russet Row", "crates": 8, "pickers": ["Ana", "Zed"]},
    ]
    assert (body["year"], body["week"], body["previous"], body["next"]) == (
        2035, 41, "/harvest/2035/w40/", "/harvest/2035/w42/")


def test_a_week_without_pickings_lists_every_orchard_empty(client, estate):
    body = client.get("/harvest/2036/w41/").json()
    assert body["orchards"] == [
        {"orchard": "Gala Field", "crates": 0, "pickers": []},
        {"orchard": "Russet Row", "crates": 0, "pickers": []},
    ]


def test_the_first_week_has_no_previous_and_the_last_no_next(client, estate):
    assert client.get("/harvest/2035/w01/").json()["previous"] is None
    assert client.get("/harvest/2035/w53/").json()["next"] is None
    assert client.get("/harvest/2035/w53/").json()["previous"] == "/harvest/2035/w52/"
    assert client.get("/harvest/2035/w01/").json()["next"] == "/harvest/2035/w02/"
    assert client.get("/harvest/2035/w02/").json()["previous"] == "/harvest/2035/w01/"


def test_orchard_weeks_are_padded_ordered_and_once_each(client, estate):
    assert client.get("/orchards/gala-field/").json() == {
        "name": "Gala Field",
        "weeks": ["/harvest/2034/w41/", "/harvest/2035/w03/", "/harvest/2035/w41/"],
    }
    assert client.get("/orchards/russet-row/").json()["weeks"] == ["/harvest/2035/w40/", "/harvest/2035/w41/"]


def test_every_orchard_link_resolves_to_its_week(client, estate):
    for link in client.get("/orchards/gala-field/").json()["weeks"]:
        match = resolve(link)
        assert match.view_name == "harvest:week"
        assert client.get(link).status_code == 200


def test_an_unknown_orchard_is_a_404_and_only_get_is_answered(client, estate):
    assert client.get("/orchards/pear-tree/").status_code == 404
    assert client.put("/harvest/2035/w41/").status_code == 405
    assert client.delete("/orchards/gala-field/").status_code == 405


def plant(count, pickings_each=2, prefix="grove"):
    for i in range(count):
        orchard = Orchard.objects.create(slug=f"{prefix}-{i:02d}", name=f"{prefix} {i:02d}")
        for j in range(pickings_each):
            Picking.objects.create(orchard=orchard, year=2035, week=7, picker=f"q{j}", crates=2 * j + 1)
        Picking.objects.create(orchard=orchard, year=2035, week=8, picker="late", crates=50)


def test_a_big_estate_in_at_most_two_queries(client, django_assert_max_num_queries):
    plant(10, pickings_each=4)
    with django_assert_max_num_queries(2):
        body = client.get("/harvest/2035/w07/").json()
    assert len(body["orchards"]) == 10
    assert body["orchards"][9] == {"orchard": "grove 09", "crates": 16, "pickers": ["q0", "q1", "q2", "q3"]}


class TestEstateFlat(TestCase):
    def count(self):
        with CaptureQueriesContext(connection) as ctx:
            self.client.get("/harvest/2035/w07/")
        return len(ctx.captured_queries)

    def test_more_orchards_cost_no_more_queries(self):
        plant(3)
        few = self.count()
        plant(25, pickings_each=3, prefix="copse")
        self.assertLessEqual(few, 2)
        self.assertEqual(self.count(), few)
