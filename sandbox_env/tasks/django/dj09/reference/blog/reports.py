from django.db.models import Count, OuterRef, Q, Subquery

from blog.models import Comment, Post


def post_activity():
    newest = Comment.objects.filter(post=OuterRef("pk"), approved=True).order_by("-created", "-pk")
    posts = Post.objects.annotate(
        approved_comments=Count("comments", filter=Q(comments__approved=True)),
        latest_commenter=Subquery(newest.values("author")[:1]),
        latest_comment_at=Subquery(newest.values("created")[:1]),
    ).order_by("-created", "-pk")
    return [
        {
            "title": p.title,
            "approved_comments": p.approved_comments,
            "latest_commenter": p.latest_commenter,
            "latest_comment_at": p.latest_comment_at,
        }
        for p in posts
    ]
