import datetime

import pytest
from django.test import TestCase

from blog.models import Comment, Post
from blog.reports import post_activity

pytestmark = pytest.mark.django_db

T0 = datetime.datetime(2030, 3, 1, 12, 0, tzinfo=datetime.timezone.utc)


def at(minutes):
    return T0 + datetime.timedelta(minutes=minutes)


def make_posts(count, comments_each):
    for i in range(count):
        post = Post.objects.create(title=f"post {i}", created=at(i))
        for j in range(comments_each):
            Comment.objects.create(post=post, author=f"reader {j}", created=at(100 + j), approved=j % 3 != 2)


@pytest.fixture
def blog():
    hello = Post.objects.create(title="Hello", created=at(0))
    news = Post.objects.create(title="News", created=at(10))
    quiet = Post.objects.create(title="Quiet", created=at(5))
    hidden = Post.objects.create(title="Only hidden", created=at(7))
    Comment.objects.create(post=hello, author="amy", created=at(1))
    Comment.objects.create(post=hello, author="zoe", created=at(30))
    Comment.objects.create(post=hello, author="spam", created=at(40), approved=False)
    Comment.objects.create(post=news, author="bob", created=at(12))
    Comment.objects.create(post=news, author="cy", created=at(12))
    Comment.objects.create(post=hidden, author="troll", created=at(8), approved=False)
    return {"hello": hello, "news": news, "quiet": quiet, "hidden": hidden}


def by_title():
    return {row["title"]: row for row in post_activity()}


def test_rows_newest_post_first(blog):
    assert [row["title"] for row in post_activity()] == ["News", "Only hidden", "Quiet", "Hello"]


def test_same_moment_posts_higher_pk_first(blog):
    twin = Post.objects.create(title="Twin", created=at(10))
    assert [row["title"] for row in post_activity()][:2] == ["Twin", "News"]
    assert twin.pk > blog["news"].pk


def test_rows_have_exactly_the_four_keys(blog):
    for row in post_activity():
        assert set(row) == {"title", "approved_comments", "latest_commenter", "latest_comment_at"}


def test_counts_only_approved_comments(blog):
    rows = by_title()
    assert rows["Hello"]["approved_comments"] == 2
    assert rows["News"]["approved_comments"] == 2
    assert rows["Quiet"]["approved_comments"] == 0
    assert rows["Only hidden"]["approved_comments"] == 0


def test_latest_approved_commenter_ignores_unapproved(blog):
    row = by_title()["Hello"]
    assert row["latest_commenter"] == "zoe"
    assert row["latest_comment_at"] == at(30)


def test_same_moment_comments_higher_pk_wins(blog):
    assert by_title()["News"]["latest_commenter"] == "cy"


def test_posts_without_approved_comments_have_none(blog):
    rows = by_title()
    for title in ("Quiet", "Only hidden"):
        assert rows[title]["latest_commenter"] is None
        assert rows[title]["latest_comment_at"] is None


def test_report_follows_new_comments(blog):
    Comment.objects.create(post=blog["quiet"], author="new", created=at(50))
    row = by_title()["Quiet"]
    assert (row["approved_comments"], row["latest_commenter"], row["latest_comment_at"]) == (1, "new", at(50))


def test_empty_blog_gives_empty_report():
    assert post_activity() == []


def test_report_is_a_single_query(django_assert_num_queries):
    make_posts(10, comments_each=5)
    with django_assert_num_queries(1):
        rows = post_activity()
    assert len(rows) == 10
    assert rows[0]["approved_comments"] == 4
    assert rows[0]["latest_commenter"] == "reader 4"


class TestSingleQuery(TestCase):
    def test_single_query_for_many_posts(self):
        make_posts(30, comments_each=2)
        with self.assertNumQueries(1):
            rows = post_activity()
        self.assertEqual(len(rows), 30)
