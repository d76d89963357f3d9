from library.models import Author


def author_report():
    # two queries, but counts unpublished books and orders them by title only
    report = []
    for author in Author.objects.order_by("name").prefetch_related("books"):
        books = sorted(author.books.all(), key=lambda b: b.title)
        report.append({
            "author": author.name,
            "books": [b.title for b in books],
            "total_pages": sum(b.pages for b in books),
            "latest_year": max((b.year for b in books), default=0),
        })
    return report
