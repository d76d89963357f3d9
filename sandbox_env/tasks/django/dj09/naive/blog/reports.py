from blog.models import Post


def post_activity():
    rows = []
    for post in Post.objects.order_by("-created", "-pk"):
        approved = post.comments.filter(approved=True)
        newest = approved.order_by("-created", "-pk").first()
        rows.append({
            "title": post.title,
            "approved_comments": approved.count(),
            "latest_commenter": newest.author if newest else None,
            "latest_comment_at": newest.created if newest else None,
        })
    return rows
