from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce

from blog.models import Comment, Post


def post_activity():
    approved = Comment.objects.filter(post_id=OuterRef("id"), approved=True)
    count = approved.order_by().values("post_id").annotate(n=Count("id")).values("n")
    newest = approved.order_by("-created", "-id")
    rows = (
        Post.objects.order_by("-created", "-id")
        .annotate(
            approved_comments=Coalesce(Subquery(count, output_field=IntegerField()), 0),
            latest_commenter=Subquery(newest.values("author")[:1]),
            latest_comment_at=Subquery(newest.values("created")[:1]),
        )
        .values("title", "approved_comments", "latest_commenter", "latest_comment_at")
    )
    return list(rows)
