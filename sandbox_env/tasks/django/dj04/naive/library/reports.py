from library.models import Author


def author_report():
    report = []
    for author in Author.objects.order_by("name"):
        books = list(author.books.filter(is_published=True).order_by("year", "title"))
        report.append({
            "author": author.name,
            "books": [b.title for b in books],
            "total_pages": sum(b.pages for b in books),
            "latest_year": max((b.year for b in books), default=None),
        })
    return report
