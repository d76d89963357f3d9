import pytest
from django.urls import NoReverseMatch, Resolver404, resolve, reverse

from catalog import views
from catalog.converters import FourDigitYearConverter, MonthConverter
from catalog.models import Article


@pytest.fixture
def piece(db):
    return Article.objects.create(slug="spring-notes", title="Spring notes")


def test_year_converter_alone():
    conv = FourDigitYearConverter()
    assert conv.to_python("0042") == 42
    assert conv.to_url(42) == "0042"
    assert conv.to_url(2031) == f"{2031}"


def test_month_converter_alone():
    conv = MonthConverter()
    assert conv.to_python("09") == 9
    assert conv.to_url(11) == "11"
    with pytest.raises(ValueError):
        conv.to_python("00")


def test_year_archive_of_another_year(client):
    match = resolve(f"/articles/{1987}/")
    assert (match.url_name, match.kwargs) == ("year-archive", {"year": 1987})
    assert client.get(f"/articles/{1987}/").json() == {"view": "year", "year": 1987}


def test_month_archive_resolves_with_ints():
    match = resolve(f"/articles/{2031}/12/")
    assert match.func is views.month_archive
    assert match.kwargs == {"year": 2031, "month": 12}
    assert [type(v) for v in match.kwargs.values()] == [int, int]


def test_month_archive_answers_for_january(client):
    response = client.get(f"/articles/{1999}/01/")
    assert response.status_code == 200
    assert response.json() == {"view": "month", "year": 1999, "month": 1}


@pytest.mark.parametrize("path", [f"/articles/{2031}/14/", f"/articles/{2031}/99/", f"/articles/{2031}/007/"])
def test_other_impossible_months_are_not_found(client, path):
    assert client.get(path).status_code == 404


def test_three_digit_and_short_segments_are_slugs(db, client):
    assert resolve("/articles/999/").kwargs == {"slug": "999"}
    assert resolve("/articles/7/").url_name == "article-detail"
    assert client.get("/articles/999/").status_code == 404


def test_slug_article_is_served(client, piece):
    response = client.get("/articles/spring-notes/")
    assert response.status_code == 200
    assert response.json() == {"view": "detail", "slug": "spring-notes", "title": "Spring notes"}


def test_reverse_pads_small_years_and_months():
    assert reverse("catalog:year-archive", kwargs={"year": 5}) == "/articles/0005/"
    assert reverse("catalog:month-archive", args=[1066, 10]) == f"/articles/{1066}/10/"
    assert reverse("catalog:month-archive", kwargs={"year": 31, "month": 1}) == f"/articles/{31:04d}/01/"


def test_reverse_refuses_month_zero_and_negative_year():
    with pytest.raises(NoReverseMatch):
        reverse("catalog:month-archive", kwargs={"year": 2031, "month": 0})
    with pytest.raises(NoReverseMatch):
        reverse("catalog:year-archive", kwargs={"year": -1})
    assert reverse("catalog:year-archive", kwargs={"year": 9999}) == "/articles/9999/"


def test_every_name_is_namespaced():
    assert reverse("catalog:article-short", kwargs={"pk": 7}) == "/a/7/"
    assert reverse("catalog:doc-page", kwargs={"page": "faq"}) == "/docs/faq/"
    with pytest.raises(NoReverseMatch):
        reverse("doc-page", kwargs={"page": "faq"})


def test_short_link_points_at_the_article(client, piece):
    response = client.get(f"/a/{piece.pk}/")
    assert response.status_code == 301
    assert response["Location"] == "/articles/spring-notes/"


def test_doc_paths_keep_their_slashes(client):
    match = resolve("/docs/api/v2/models/")
    assert match.url_name == "doc-page"
    assert match.kwargs == {"page": "api/v2/models"}
    assert client.get("/docs/api/v2/models/").json() == {"view": "doc", "page": "api/v2/models"}


def test_unknown_prefix_does_not_resolve():
    with pytest.raises(Resolver404):
        resolve(f"/archive/{2031}/")
    assert resolve("/docs/x/").namespace == "catalog"
