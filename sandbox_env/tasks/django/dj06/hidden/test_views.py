import datetime

import pytest

from notes.models import Note

pytestmark = pytest.mark.django_db

DAY0 = datetime.datetime(2031, 6, 1, 9, 0, tzinfo=datetime.timezone.utc)


def make(n, title, published=True):
    return Note.objects.create(title=title, slug=f"entry-{n}", body=f"text {n}", published=published,
                               created=DAY0 + datetime.timedelta(hours=n))


@pytest.fixture
def five():
    titles = ["alpha", "beta Python", "gamma", "delta python", "epsilon"]
    notes = [make(n, t) for n, t in enumerate(titles, start=1)]
    make(50, "draft python", published=False)
    make(51, "secret", published=False)
    return notes


def listed(response):
    return [note.title for note in response.context["notes"]]


def test_first_page_is_the_three_newest(client, five):
    response = client.get("/notes/")
    assert listed(response) == ["epsilon", "delta python", "gamma"]
    assert response.context["page_obj"].number == 1
    assert response.context["page_obj"].paginator.num_pages == 2


def test_second_and_last_page(client, five):
    assert listed(client.get("/notes/?page=2")) == ["beta Python", "alpha"]
    assert listed(client.get("/notes/?page=last")) == ["beta Python", "alpha"]


def test_pages_past_the_end_and_bad_numbers_are_404(client, five):
    assert client.get("/notes/?page=3").status_code == 404
    assert client.get("/notes/?page=zero").status_code == 404


def test_search_ignores_case_and_drafts(client, five):
    response = client.get("/notes/?q=python")
    assert listed(response) == ["delta python", "beta Python"]
    assert response.context["query"] == "python"


def test_search_reads_the_title_only_not_the_body(client, five):
    Note.objects.create(title="Zebra", slug="entry-60", body="all about python", published=True,
                        created=DAY0 + datetime.timedelta(hours=60))
    response = client.get("/notes/?q=python")
    assert listed(response) == ["delta python", "beta Python"]


def test_search_with_no_match_renders_the_empty_list(client, five):
    response = client.get("/notes/?q=zeta")
    assert response.status_code == 200
    assert listed(response) == []
    assert b"No notes." in response.content


def test_only_drafts_means_an_empty_list(client):
    make(1, "hidden", published=False)
    response = client.get("/notes/")
    assert listed(response) == []
    assert response.context["is_paginated"] is False


def test_detail_shows_the_note(client, five):
    response = client.get("/notes/entry-2/")
    assert response.status_code == 200
    assert response.context["note"].slug == "entry-2"
    assert "<h1>beta Python</h1>" in response.content.decode()
    assert "notes/note_detail.html" in [t.name for t in response.templates]


def test_draft_detail_is_404(client, five):
    assert client.get("/notes/entry-50/").status_code == 404
    assert client.get("/notes/entry-51/").status_code == 404


def test_patch_on_detail_is_405_with_the_allowed_methods(client, five):
    response = client.patch("/notes/entry-1/")
    assert response.status_code == 405
    assert sorted(m.strip() for m in response["Allow"].split(",")) == ["GET", "HEAD", "OPTIONS"]
    assert client.options("/notes/entry-1/").status_code == 200


def test_create_form_renders_with_four_fields(client):
    response = client.get("/notes/new/")
    assert sorted(response.context["form"].fields) == ["body", "published", "slug", "title"]
    assert "notes/note_form.html" in [t.name for t in response.templates]


def test_creating_a_draft_redirects_to_its_detail_url(client):
    response = client.post("/notes/new/", {"title": "quiet", "slug": "quiet", "body": "shh"})
    assert response.status_code == 302
    assert response["Location"] == "/notes/quiet/"
    assert Note.objects.get(slug="quiet").published is False


def test_duplicate_slug_is_an_error_on_slug(client, five):
    response = client.post("/notes/new/", {"title": "Copy", "slug": "entry-1", "body": ""})
    assert response.status_code == 200
    assert list(response.context["form"].errors) == ["slug"]
    assert Note.objects.count() == 7


def test_update_of_a_published_note_redirects_to_the_list(client, five):
    response = client.post("/notes/entry-3/edit/", {"title": "gamma 2", "slug": "entry-3", "body": "new"})
    assert response.status_code == 302
    assert response["Location"] == "/notes/"
    assert Note.objects.get(slug="entry-3").title == "gamma 2"
    assert Note.objects.get(slug="entry-3").published is False
