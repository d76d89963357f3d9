import pytest
from django.urls import NoReverseMatch, Resolver404, resolve, reverse

from catalog import views
from catalog.models import Article


@pytest.fixture
def article(db):
    return Article.objects.create(slug="hello-world", title="Hello, world")


def test_year_resolves_to_the_year_archive_with_an_int():
    match = resolve("/articles/2024/")
    assert match.func is views.year_archive
    assert match.url_name == "year-archive"
    assert match.namespace == "catalog"
    assert match.kwargs == {"year": 2024}
    assert type(match.kwargs["year"]) is int


def test_year_archive_responds(client):
    response = client.get("/articles/2024/")
    assert response.status_code == 200
    assert response.json() == {"view": "year", "year": 2024}


def test_month_archive_gets_int_month(client):
    response = client.get("/articles/2024/03/")
    assert response.status_code == 200
    assert response.json() == {"view": "month", "year": 2024, "month": 3}


@pytest.mark.parametrize("path", ["/articles/2024/13/", "/articles/2024/00/", "/articles/2024/3/"])
def test_impossible_or_malformed_months_are_404(client, path):
    assert client.get(path).status_code == 404


def test_month_thirteen_does_not_resolve():
    with pytest.raises(Resolver404):
        resolve("/articles/2024/13/")


def test_short_number_is_an_article_slug(db, client):
    match = resolve("/articles/24/")
    assert match.url_name == "article-detail"
    assert match.kwargs == {"slug": "24"}
    assert client.get("/articles/24/").status_code == 404


def test_five_digit_year_is_a_slug_not_a_year():
    match = resolve("/articles/20245/")
    assert match.url_name == "article-detail"


def test_article_detail_and_missing_article(client, article):
    response = client.get("/articles/hello-world/")
    assert response.status_code == 200
    assert response.json() == {"view": "detail", "slug": "hello-world", "title": "Hello, world"}
    assert client.get("/articles/no-such-article/").status_code == 404


def test_reverse_pads_year_and_month():
    assert reverse("catalog:month-archive", kwargs={"year": 2024, "month": 3}) == "/articles/2024/03/"
    assert reverse("catalog:year-archive", kwargs={"year": 987}) == "/articles/0987/"
    assert reverse("catalog:year-archive", args=[1999]) == "/articles/1999/"


def test_reverse_refuses_impossible_values():
    with pytest.raises(NoReverseMatch):
        reverse("catalog:month-archive", kwargs={"year": 2024, "month": 13})
    with pytest.raises(NoReverseMatch):
        reverse("catalog:year-archive", kwargs={"year": 12345})


def test_names_live_in_the_catalog_namespace():
    with pytest.raises(NoReverseMatch):
        reverse("year-archive", kwargs={"year": 2024})
    assert reverse("catalog:article-detail", kwargs={"slug": "hello-world"}) == "/articles/hello-world/"


def test_short_link_redirects_permanently(client, article):
    response = client.get(f"/a/{article.pk}/")
    assert response.status_code == 301
    assert response["Location"] == "/articles/hello-world/"
    assert client.get(f"/a/{article.pk + 1000}/").status_code == 404
    assert client.get("/a/abc/").status_code == 404


def test_doc_pages_take_nested_paths(client):
    response = client.get("/docs/guide/intro/")
    assert response.status_code == 200
    assert response.json() == {"view": "doc", "page": "guide/intro"}
    assert reverse("catalog:doc-page", kwargs={"page": "a/b/c"}) == "/docs/a/b/c/"
