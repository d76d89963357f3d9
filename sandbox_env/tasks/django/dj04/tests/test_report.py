import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from library.models import Author, Book
from library.reports import author_report

pytestmark = pytest.mark.django_db


def make_authors(count, books_each=3, prefix="author"):
    for i in range(count):
        author = Author.objects.create(name=f"{prefix} {i:03d}")
        for j in range(books_each):
            Book.objects.create(author=author, title=f"book {i}-{j}", year=1990 + j, pages=100 + j,
                                is_published=j != 1)


@pytest.fixture
def shelf():
    ursula = Author.objects.create(name="Ursula")
    isaac = Author.objects.create(name="Isaac")
    nobody = Author.objects.create(name="Nobody")
    drafts = Author.objects.create(name="Drafts Only")
    Book.objects.create(author=ursula, title="The Dispossessed", year=1974, pages=387)
    Book.objects.create(author=ursula, title="A Wizard of Earthsea", year=1968, pages=183)
    Book.objects.create(author=ursula, title="The Lathe of Heaven", year=1971, pages=184)
    Book.objects.create(author=ursula, title="Unfinished", year=1999, pages=50, is_published=False)
    Book.objects.create(author=isaac, title="Foundation", year=1951, pages=255)
    Book.objects.create(author=isaac, title="I, Robot", year=1950, pages=253)
    Book.objects.create(author=isaac, title="Pebble in the Sky", year=1950, pages=223)
    Book.objects.create(author=drafts, title="Draft", year=2020, pages=10, is_published=False)
    return {"ursula": ursula, "isaac": isaac, "nobody": nobody, "drafts": drafts}


def test_one_row_per_author_ordered_by_name(shelf):
    assert [row["author"] for row in author_report()] == ["Drafts Only", "Isaac", "Nobody", "Ursula"]


def test_rows_have_exactly_the_four_keys(shelf):
    for row in author_report():
        assert set(row) == {"author", "books", "total_pages", "latest_year"}


def test_books_are_published_ones_by_year_then_title(shelf):
    rows = {row["author"]: row for row in author_report()}
    assert rows["Ursula"]["books"] == ["A Wizard of Earthsea", "The Lathe of Heaven", "The Dispossessed"]
    assert rows["Isaac"]["books"] == ["I, Robot", "Pebble in the Sky", "Foundation"]


def test_totals_and_latest_year(shelf):
    rows = {row["author"]: row for row in author_report()}
    assert rows["Ursula"]["total_pages"] == 387 + 183 + 184
    assert rows["Ursula"]["latest_year"] == 1974
    assert rows["Isaac"]["total_pages"] == 255 + 253 + 223
    assert rows["Isaac"]["latest_year"] == 1951


def test_authors_without_published_books_are_kept_empty(shelf):
    rows = {row["author"]: row for row in author_report()}
    for name in ("Nobody", "Drafts Only"):
        assert rows[name]["books"] == []
        assert rows[name]["total_pages"] == 0
        assert rows[name]["latest_year"] is None


def test_report_reflects_new_books(shelf):
    Book.objects.create(author=shelf["nobody"], title="Debut", year=2001, pages=300)
    rows = {row["author"]: row for row in author_report()}
    assert rows["Nobody"] == {"author": "Nobody", "books": ["Debut"], "total_pages": 300, "latest_year": 2001}


def test_empty_library_gives_empty_report():
    assert author_report() == []


def test_report_runs_in_at_most_two_queries(django_assert_max_num_queries):
    make_authors(12, books_each=4)
    with django_assert_max_num_queries(2):
        rows = author_report()
    assert len(rows) == 12
    assert rows[0]["books"] == ["book 0-0", "book 0-2", "book 0-3"]


class TestQueryGrowth(TestCase):
    def count_queries(self):
        with CaptureQueriesContext(connection) as ctx:
            author_report()
        return len(ctx.captured_queries)

    def test_query_count_does_not_grow_with_authors(self):
        make_authors(2)
        few = self.count_queries()
        make_authors(25, prefix="more")
        many = self.count_queries()
        self.assertLessEqual(few, 2)
        self.assertEqual(few, many)
