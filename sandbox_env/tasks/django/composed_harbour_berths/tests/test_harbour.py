import re

import pytest

from harbour.models import Berth, Mooring

pytestmark = pytest.mark.django_db

HEX32 = re.compile(r"[a-f0-9]{32}")


@pytest.fixture
def berths():
    return Berth.objects.create(code="A07", max_length=30), Berth.objects.create(code="B12", max_length=12)


def moor(client, code, vessel, length, arrives, leaves, headers=None):
    data = {"vessel": vessel, "length": str(length), "arrives": arrives, "leaves": leaves}
    return client.post(f"/berths/{code}/moor/", data, headers=headers or {})


def test_mooring_a_vessel(client, berths):
    response = moor(client, "A07", "Selkie", 24, "2031-07-01", "2031-07-04")
    assert response.status_code == 201
    mooring = Mooring.objects.get()
    assert response.json() == {"id": mooring.pk, "berth": "A07", "vessel": "Selkie", "arrives": "2031-07-01",
                               "leaves": "2031-07-04"}
    assert HEX32.fullmatch(response["X-Trace-ID"])


def test_a_vessel_exactly_as_long_as_the_berth_fits_and_a_longer_one_does_not(client, berths):
    assert moor(client, "b12", "Puffin", 12, "2031-07-01", "2031-07-02").status_code == 201
    refused = moor(client, "B12", "Gannet", 13, "2031-08-01", "2031-08-02")
    assert refused.status_code == 400
    assert refused.json()["error"] == "too_long"
    assert refused.json()["detail"]
    assert HEX32.fullmatch(refused["X-Trace-ID"])


def test_overlapping_stays_are_refused_with_409_and_back_to_back_ones_fit(client, berths):
    assert moor(client, "A07", "Selkie", 20, "2031-07-01", "2031-07-05").status_code == 201
    taken = moor(client, "A07", "Kelpie", 20, "2031-07-04", "2031-07-06")
    assert taken.status_code == 409
    assert taken.json()["error"] == "berth_taken"
    assert moor(client, "A07", "Kelpie", 20, "2031-07-05", "2031-07-06").status_code == 201
    assert moor(client, "A07", "Merrow", 20, "2031-06-28", "2031-07-01").status_code == 201
    assert moor(client, "B12", "Merrow", 10, "2031-07-02", "2031-07-03").status_code == 201
    assert Mooring.objects.count() == 4


def test_leaving_before_arriving_is_refused_and_the_site_goes_on(client, berths):
    refused = moor(client, "A07", "Selkie", 20, "2031-07-05", "2031-07-05")
    assert refused.status_code == 400
    assert refused.json()["error"] == "bad_dates"
    assert Mooring.objects.count() == 0
    assert moor(client, "A07", "Selkie", 20, "2031-07-05", "2031-07-06").status_code == 201
    assert Mooring.objects.count() == 1


def test_bad_requests(client, berths):
    for data in ({"vessel": "", "length": "9", "arrives": "2031-07-01", "leaves": "2031-07-02"},
                 {"vessel": "Tern", "length": "nine", "arrives": "2031-07-01", "leaves": "2031-07-02"},
                 {"vessel": "Tern", "length": "9", "arrives": "1 July", "leaves": "2031-07-02"}):
        response = client.post("/berths/A07/moor/", data)
        assert response.status_code == 400
        assert response.json()["error"] == "bad_request"
    assert Mooring.objects.count() == 0


def test_a_valid_trace_id_is_kept_and_an_invalid_one_replaced(client, berths):
    given = "0123456789abcdef0123456789abcdef"
    assert client.get("/berths/A07/", headers={"X-Trace-ID": given})["X-Trace-ID"] == given
    replaced = client.get("/berths/A07/", headers={"X-Trace-ID": "not-a-trace"})["X-Trace-ID"]
    assert HEX32.fullmatch(replaced) and replaced != "not-a-trace"
    error = moor(client, "B12", "Gannet", 99, "2031-08-01", "2031-08-02", headers={"X-Trace-ID": given})
    assert error["X-Trace-ID"] == given


def test_the_berth_lists_its_moorings_by_arrival(client, berths):
    a07, _ = berths
    Mooring.objects.create(berth=a07, vessel="Late", length=5, arrives="2031-09-01", leaves="2031-09-02")
    Mooring.objects.create(berth=a07, vessel="Early", length=5, arrives="2031-08-01", leaves="2031-08-03")
    body = client.get("/berths/a07/").json()
    assert body["code"] == "A07" and body["max_length"] == 30
    assert [(m["vessel"], m["arrives"], m["leaves"]) for m in body["moorings"]] == [
        ("Early", "2031-08-01", "2031-08-03"),
        ("Late", "2031-09-01", "2031-09-02"),
    ]


def test_unknown_things_are_404s_with_a_trace_and_wrong_methods_405s(client, berths):
    missing = client.get("/berths/Z99/")
    assert missing.status_code == 404
    assert HEX32.fullmatch(missing["X-Trace-ID"])
    assert moor(client, "Z99", "Tern", 5, "2031-07-01", "2031-07-02").status_code == 404
    assert client.get("/moorings/4040/").status_code == 404
    assert client.get("/berths/A07/moor/").status_code == 405
    assert client.post("/berths/A07/").status_code == 405
    assert HEX32.fullmatch(client.post("/berths/A07/")["X-Trace-ID"])


def test_a_mooring_by_id(client, berths):
    made = moor(client, "A07", "Selkie", 24, "2031-07-01", "2031-07-04").json()
    response = client.get(f"/moorings/{made['id']}/")
    assert response.status_code == 200
    assert response.json() == made
