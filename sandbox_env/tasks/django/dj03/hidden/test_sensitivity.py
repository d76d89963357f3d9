import pytest
from django.urls import NoReverseMatch, resolve, reverse


@pytest.mark.parametrize("year, text", [(0, "0000"), (987, "0987"), (9999, "9999")])
def test_every_year_from_0_to_9999_reverses_zero_padded(year, text):
    assert reverse("catalog:year-archive", kwargs={"year": year}) == f"/articles/{text}/"


@pytest.mark.parametrize("year", [-1, 10000])
def test_a_year_outside_0_to_9999_does_not_reverse(year):
    with pytest.raises(NoReverseMatch):
        reverse("catalog:year-archive", kwargs={"year": year})


@pytest.mark.parametrize("month", [1, 12])
def test_the_first_and_last_months_resolve(client, month):
    match = resolve(f"/articles/{2026}/{month:02d}/")
    assert match.url_name == "month-archive" and match.kwargs == {"year": 2026, "month": month}
    assert client.get(f"/articles/{2026}/{month:02d}/").json() == {"view": "month", "year": 2026, "month": month}


@pytest.mark.parametrize("month", [1, 12])
def test_the_first_and_last_months_reverse(month):
    assert reverse("catalog:month-archive", kwargs={"year": 2026, "month": month}) == f"/articles/{2026}/{month:02d}/"


@pytest.mark.parametrize("month", [0, 13])
def test_months_outside_1_to_12_do_not_reverse(month):
    with pytest.raises(NoReverseMatch):
        reverse("catalog:month-archive", kwargs={"year": 2026, "month": month})
