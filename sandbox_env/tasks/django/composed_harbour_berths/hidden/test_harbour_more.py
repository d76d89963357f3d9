import re

import pytest

from harbour.models import Berth, Mooring

pytestmark = pytest.mark.django_db

TRACE = re.compile(r"[a-f0-9]{32}")


@pytest.fixture
def quay():
    return (
        Berth.objects.create(code="C03", max_length=18),
        Berth.objects.create(code="D40", max_length=55),
    )


def moor(client, code, vessel, length, arrives, leaves, headers=None):
    data = {"vessel": vessel, "length": str(length), "arrives": arrives, "leaves": leaves}
    return client.post(f"/berths/{code}/moor/", data, headers=headers or {})


def test_a_stay_inside_another_and_one_around_it_are_both_taken(client, quay):
    assert moor(client, "D40", "Orca", 50, "2032-03-10", "2032-03-20").status_code == 201
    inside = moor(client, "D40", "Skua", 20, "2032-03-12", "2032-03-13")
    around = moor(client, "D40", "Skua", 20, "2032-03-01", "2032-03-25")
    assert (inside.status_code, inside.json()["error"]) == (409, "berth_taken")
    assert (around.status_code, around.json()["error"]) == (409, "berth_taken")
    assert moor(client, "C03", "Skua", 18, "2032-03-12", "2032-03-13").status_code == 201


def test_stays_that_touch_on_one_day_share_the_berth(client, quay):
    assert moor(client, "C03", "Auk", 10, "2032-05-02", "2032-05-04").status_code == 201
    assert moor(client, "C03", "Eider", 10, "2032-05-04", "2032-05-09").status_code == 201
    assert moor(client, "C03", "Smew", 10, "2032-04-28", "2032-05-02").status_code == 201
    assert moor(client, "C03", "Teal", 10, "2032-05-08", "2032-05-10").json()["error"] == "berth_taken"
    assert moor(client, "C03", "Teal", 10, "2032-05-01", "2032-05-03").json()["error"] == "berth_taken"


def test_the_checks_come_in_order(client, quay):
    assert moor(client, "C03", "Orca", 19, "2032-06-01", "2032-06-03").json()["error"] == "too_long"
    assert moor(client, "C03", "Auk", 18, "2032-06-01", "2032-06-03").status_code == 201
    assert moor(client, "C03", "Orca", 30, "2032-06-02", "2032-06-04").json()["error"] == "too_long"
    assert moor(client, "C03", "Skua", 9, "2032-06-02", "2032-06-04").json()["error"] == "berth_taken"
    assert moor(client, "C03", "Skua", 9, "2032-06-09", "2032-06-08").json()["error"] == "bad_dates"
    assert moor(client, "C03", "Skua", 9, "2032-06-09", "soon").json()["error"] == "bad_request"


def test_bad_dates_leave_the_database_usable(client, quay):
    _, d40 = quay
    refused = moor(client, "D40", "Gull", 8, "2032-07-10", "2032-07-01")
    assert (refused.status_code, refused.json()["error"]) == (400, "bad_dates")
    assert refused.json()["detail"] != ""
    assert list(d40.moorings.values_list("vessel", flat=True)) == []
    assert moor(client, "D40", "Gull", 8, "2032-07-01", "2032-07-10").status_code == 201
    assert list(d40.moorings.values_list("vessel", flat=True)) == ["Gull"]


def test_every_refusal_has_the_same_shape_and_a_trace(client, quay):
    moor(client, "D40", "Orca", 50, "2032-03-10", "2032-03-20")
    refusals = [
        moor(client, "C03", "Orca", 50, "2032-03-10", "2032-03-20"),
        moor(client, "D40", "Orca", 50, "2032-03-11", "2032-03-12"),
        moor(client, "D40", "Tern", 5, "2032-04-02", "2032-04-01"),
        client.post("/berths/D40/moor/", {"vessel": "Tern"}),
    ]
    assert [r.status_code for r in refusals] == [400, 409, 400, 400]
    assert [r.json()["error"] for r in refusals] == ["too_long", "berth_taken", "bad_dates", "bad_request"]
    assert all(sorted(r.json()) == ["detail", "error"] for r in refusals)
    assert all(r["Content-Type"] == "application/json" for r in refusals)
    assert all(TRACE.fullmatch(r["X-Trace-ID"]) for r in refusals)
    assert len({r["X-Trace-ID"] for r in refusals}) == 4


def test_a_given_trace_reaches_errors_404s_and_405s(client, quay):
    given = "fedcba9876543210fedcba9876543210"
    headers = {"X-Trace-ID": given}
    assert moor(client, "C03", "Orca", 99, "2032-03-10", "2032-03-20", headers=headers)["X-Trace-ID"] == given
    assert client.get("/berths/Q00/", headers=headers)["X-Trace-ID"] == given
    assert client.put("/berths/C03/", headers=headers)["X-Trace-ID"] == given
    assert client.get("/moorings/777/", headers=headers)["X-Trace-ID"] == given


def test_only_32_lowercase_hex_digits_make_a_trace(client, quay):
    for bad in ("FEDCBA9876543210FEDCBA9876543210", "fedcba9876543210fedcba987654321", "g" * 32, ""):
        got = client.get("/berths/C03/", headers={"X-Trace-ID": bad})["X-Trace-ID"]
        assert got != bad and TRACE.fullmatch(got)


def test_a_berth_code_in_any_case_and_its_moorings(client, quay):
    c03, _ = quay
    moor(client, "c03", "Wren", 7, "2032-09-05", "2032-09-06")
    moor(client, "C03", "Dove", 7, "2032-09-01", "2032-09-03")
    moor(client, "C03", "Rook", 7, "2032-09-03", "2032-09-05")
    body = client.get("/berths/c03/").json()
    assert body["code"] == "C03" and body["max_length"] == 18
    assert [m["vessel"] for m in body["moorings"]] == ["Dove", "Rook", "Wren"]
    assert body["moorings"][0]["berth"] == "C03" and body["moorings"][0]["leaves"] == "2032-09-03"


def test_a_mooring_by_id_and_unknown_ones(client, quay):
    made = moor(client, "D40", "Heron", 40, "2032-10-01", "2032-10-11")
    assert made.status_code == 201
    assert client.get(f"/moorings/{made.json()['id']}/").json() == {
        "id": made.json()["id"], "berth": "D40", "vessel": "Heron", "arrives": "2032-10-01", "leaves": "2032-10-11"}
    assert client.get("/moorings/98765/").status_code == 404
    assert client.post(f"/moorings/{made.json()['id']}/").status_code == 405
    assert moor(client, "X00", "Heron", 4, "2032-10-01", "2032-10-02").status_code == 404


def test_a_vessel_as_long_as_the_berth_fits_even_at_zero(client, quay):
    Mooring.objects.create(berth=quay[0], vessel="Ghost", length=5, arrives="2032-01-01", leaves="2032-01-02")
    Berth.objects.filter(pk=quay[0].pk).update(max_length=0)
    ok = moor(client, "C03", "Gull", 0, "2032-02-01", "2032-02-02")
    assert ok.status_code == 201
