import pytest
from django.db import connection
from django.test import TestCase
from django.test.utils import CaptureQueriesContext

from library.models import Author, Book
from library.reports import author_report

pytestmark = pytest.mark.django_db


def fill(count, per_author=2, start=0):
    for i in range(start, start + count):
        writer = Author.objects.create(name=f"writer {i:03d}")
        for j in range(per_author):
            Book.objects.create(author=writer, title=f"vol {i}.{j}", year=2000 + (j % 3), pages=10 * (j + 1),
                                is_published=j % 4 != 3)


@pytest.fixture
def shelves():
    mary = Author.objects.create(name="mary")
    bram = Author.objects.create(name="bram")
    arthur = Author.objects.create(name="arthur")
    zelda = Author.objects.create(name="zelda")
    Book.objects.create(author=mary, title="frankenstein", year=1818, pages=280)
    Book.objects.create(author=mary, title="the last man", year=1826, pages=479)
    Book.objects.create(author=mary, title="mathilda", year=1959, pages=111, is_published=False)
    Book.objects.create(author=bram, title="dracula", year=1897, pages=418)
    Book.objects.create(author=bram, title="dracula's guest", year=1914, pages=200, is_published=False)
    Book.objects.create(author=arthur, title="study", year=1887, pages=108)
    Book.objects.create(author=arthur, title="sign", year=1890, pages=122)
    Book.objects.create(author=arthur, title="hound", year=1902, pages=256)
    Book.objects.create(author=arthur, title="alpha", year=1890, pages=90)
    return {"mary": mary, "bram": bram, "arthur": arthur, "zelda": zelda}


def report_by_name():
    return {row["author"]: row for row in author_report()}


def test_authors_come_in_name_order(shelves):
    assert [row["author"] for row in author_report()] == ["arthur", "bram", "mary", "zelda"]


def test_every_row_has_the_four_keys_and_nothing_else(shelves):
    keys = {frozenset(row) for row in author_report()}
    assert keys == {frozenset({"author", "books", "total_pages", "latest_year"})}


def test_same_year_books_are_ordered_by_title(shelves):
    assert report_by_name()["arthur"]["books"] == ["study", "alpha", "sign", "hound"]


def test_unpublished_books_count_nowhere(shelves):
    rows = report_by_name()
    assert rows["mary"] == {"author": "mary", "books": ["frankenstein", "the last man"], "total_pages": 280 + 479,
                            "latest_year": 1826}
    assert rows["bram"] == {"author": "bram", "books": ["dracula"], "total_pages": 418, "latest_year": 1897}


def test_author_without_books_has_empty_values(shelves):
    assert report_by_name()["zelda"] == {"author": "zelda", "books": [], "total_pages": 0, "latest_year": None}


def test_totals_add_up_all_published_pages(shelves):
    assert report_by_name()["arthur"]["total_pages"] == 108 + 122 + 256 + 90
    assert report_by_name()["arthur"]["latest_year"] == 1902


def test_publishing_a_draft_changes_the_report(shelves):
    Book.objects.filter(title="mathilda").update(is_published=True)
    row = report_by_name()["mary"]
    assert (row["books"], row["total_pages"], row["latest_year"]) == (
        ["frankenstein", "the last man", "mathilda"], 280 + 479 + 111, 1959)


def test_only_drafts_means_no_books():
    ghost = Author.objects.create(name="ghost")
    Book.objects.create(author=ghost, title="Draft A", year=2001, pages=5, is_published=False)
    assert author_report() == [{"author": "ghost", "books": [], "total_pages": 0, "latest_year": None}]


def test_many_authors_in_at_most_two_queries(django_assert_max_num_queries):
    fill(15, per_author=5)
    with django_assert_max_num_queries(2):
        rows = author_report()
    assert len(rows) == 15
    assert rows[3]["books"] == ["vol 3.0", "vol 3.1", "vol 3.4", "vol 3.2"]
    assert rows[3]["total_pages"] == 110


class TestBudgetWithMoreData(TestCase):
    def queries_for_report(self):
        with CaptureQueriesContext(connection) as ctx:
            rows = author_report()
        return len(ctx.captured_queries), rows

    def test_query_count_stays_flat(self):
        fill(3)
        few, _ = self.queries_for_report()
        fill(30, start=3)
        many, rows = self.queries_for_report()
        self.assertLessEqual(many, 2)
        self.assertEqual(few, many)
        self.assertEqual(len(rows), 33)
