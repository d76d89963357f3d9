import datetime

import pytest
from django.test import TestCase

from blog.models import Comment, Post
from blog.reports import post_activity

pytestmark = pytest.mark.django_db

NOON = datetime.datetime(2031, 11, 5, 12, 0, tzinfo=datetime.timezone.utc)


def t(minutes):
    return NOON + datetime.timedelta(minutes=minutes)


def seed(posts, comments_each, offset=0):
    for i in range(posts):
        post = Post.objects.create(title=f"entry {offset + i}", created=t(offset + i))
        for j in range(comments_each):
            Comment.objects.create(post=post, author=f"user {j}", created=t(500 + j), approved=j % 2 == 0)


@pytest.fixture
def feed():
    old = Post.objects.create(title="old", created=t(-60))
    new = Post.objects.create(title="new", created=t(60))
    mid = Post.objects.create(title="mid", created=t(0))
    Comment.objects.create(post=old, author="ann", created=t(-50))
    Comment.objects.create(post=old, author="ben", created=t(-10))
    Comment.objects.create(post=old, author="cal", created=t(90), approved=False)
    Comment.objects.create(post=new, author="dee", created=t(61), approved=False)
    Comment.objects.create(post=mid, author="eve", created=t(5))
    Comment.objects.create(post=mid, author="fox", created=t(5))
    Comment.objects.create(post=mid, author="gil", created=t(2))
    return {"old": old, "new": new, "mid": mid}


def titled():
    return {row["title"]: row for row in post_activity()}


def test_newest_post_first(feed):
    assert [row["title"] for row in post_activity()] == ["new", "mid", "old"]


def test_equal_created_posts_put_the_higher_pk_first(feed):
    Post.objects.create(title="late twin", created=t(0))
    assert [row["title"] for row in post_activity()] == ["new", "late twin", "mid", "old"]


def test_rows_are_exactly_four_keys(feed):
    assert sorted(post_activity()[0]) == ["approved_comments", "latest_comment_at", "latest_commenter", "title"]


def test_approved_counts(feed):
    rows = titled()
    assert (rows["old"]["approved_comments"], rows["new"]["approved_comments"], rows["mid"]["approved_comments"]) \
        == (2, 0, 3)


def test_newer_unapproved_comment_is_ignored(feed):
    row = titled()["old"]
    assert row["latest_commenter"] == "ben"
    assert row["latest_comment_at"] == t(-10)


def test_tie_on_created_goes_to_the_higher_pk(feed):
    row = titled()["mid"]
    assert (row["latest_commenter"], row["latest_comment_at"]) == ("fox", t(5))


def test_only_unapproved_comments_give_none(feed):
    row = titled()["new"]
    assert (row["latest_commenter"], row["latest_comment_at"], row["approved_comments"]) == (None, None, 0)


def test_latest_comment_time_is_an_aware_datetime(feed):
    stamp = titled()["mid"]["latest_comment_at"]
    assert stamp.utcoffset() == datetime.timedelta(0)
    assert stamp.isoformat() == f"{2031}-11-05T12:05:00+00:00"


def test_approving_a_comment_updates_the_report(feed):
    Comment.objects.filter(author="dee").update(approved=True)
    row = titled()["new"]
    assert (row["approved_comments"], row["latest_commenter"]) == (1, "dee")


def test_no_posts_no_rows():
    assert post_activity() == []


def test_many_posts_one_query(django_assert_num_queries):
    seed(12, comments_each=4)
    with django_assert_num_queries(1):
        rows = post_activity()
    assert len(rows) == 12
    assert (rows[0]["title"], rows[0]["approved_comments"], rows[0]["latest_commenter"]) == ("entry 11", 2, "user 2")


class TestOneQueryMorePosts(TestCase):
    def test_one_query_for_forty_posts(self):
        seed(40, comments_each=3)
        with self.assertNumQueries(1):
            rows = post_activity()
        self.assertEqual(len(rows), 40)
        self.assertEqual(rows[-1]["approved_comments"], 2)
