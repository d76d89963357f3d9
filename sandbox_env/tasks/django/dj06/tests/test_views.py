import datetime

import pytest

from notes.models import Note

pytestmark = pytest.mark.django_db

BASE = datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)


def note(n, title=None, published=True):
    return Note.objects.create(title=title or f"Note {n}", slug=f"note-{n}", body=f"body {n}",
                               published=published, created=BASE + datetime.timedelta(days=n))


@pytest.fixture
def seven():
    notes = [note(n, title="Django tips" if n in (2, 5) else None) for n in range(1, 8)]
    note(99, title="Hidden django draft", published=False)
    return notes


def titles(response):
    return [n.title for n in response.context["notes"]]


def test_list_shows_published_newest_first_three_a_page(client, seven):
    response = client.get("/notes/")
    assert response.status_code == 200
    assert titles(response) == ["Note 7", "Note 6", "Django tips"]
    assert response.context["is_paginated"] is True
    assert response.context["page_obj"].paginator.count == 7
    assert "notes/note_list.html" in [t.name for t in response.templates]


def test_later_pages_and_last(client, seven):
    assert titles(client.get("/notes/?page=2")) == ["Note 4", "Note 3", "Django tips"]
    assert titles(client.get("/notes/?page=3")) == ["Note 1"]
    assert titles(client.get("/notes/?page=last")) == ["Note 1"]


def test_page_past_the_end_is_404(client, seven):
    assert client.get("/notes/?page=4").status_code == 404


def test_search_is_case_insensitive_and_in_context(client, seven):
    response = client.get("/notes/?q=DJANGO")
    assert titles(response) == ["Django tips", "Django tips"]
    assert response.context["query"] == "DJANGO"
    assert response.context["is_paginated"] is False
    assert client.get("/notes/").context["query"] == ""


def test_empty_list_renders(client):
    response = client.get("/notes/")
    assert response.status_code == 200
    assert b"No notes." in response.content


def test_detail_of_published_note(client, seven):
    response = client.get("/notes/note-3/")
    assert response.status_code == 200
    assert response.context["note"].title == "Note 3"
    assert b"<h1>Note 3</h1>" in response.content


def test_unpublished_and_unknown_notes_are_404(client, seven):
    assert client.get("/notes/note-99/").status_code == 404
    assert client.get("/notes/no-such-note/").status_code == 404


def test_detail_refuses_other_methods_with_allow_header(client, seven):
    for method in (client.post, client.put, client.delete):
        response = method("/notes/note-3/")
        assert response.status_code == 405
        assert sorted(m.strip() for m in response["Allow"].split(",")) == ["GET", "HEAD", "OPTIONS"]
    assert client.head("/notes/note-3/").status_code == 200


def test_create_form_has_exactly_the_four_fields(client):
    response = client.get("/notes/new/")
    assert response.status_code == 200
    assert list(response.context["form"].fields) == ["title", "slug", "body", "published"]


def test_valid_create_redirects_to_the_new_note(client):
    response = client.post("/notes/new/", {"title": "Fresh", "slug": "fresh", "body": "hi", "published": "on"})
    assert response.status_code == 302
    assert response["Location"] == "/notes/fresh/"
    created = Note.objects.get(slug="fresh")
    assert created.published is True
    assert client.get("/notes/fresh/").status_code == 200


def test_invalid_create_shows_errors(client, seven):
    response = client.post("/notes/new/", {"title": "", "slug": "note-1", "body": ""})
    assert response.status_code == 200
    errors = response.context["form"].errors
    assert set(errors) == {"title", "slug"}
    assert Note.objects.count() == 8


def test_update_edits_unpublished_and_redirects_to_list(client, seven):
    response = client.post("/notes/note-99/edit/", {"title": "Now public", "slug": "note-99", "body": "x",
                                                    "published": "on"})
    assert response.status_code == 302
    assert response["Location"] == "/notes/"
    assert Note.objects.get(slug="note-99").title == "Now public"
    assert client.get("/notes/note-99/").status_code == 200
