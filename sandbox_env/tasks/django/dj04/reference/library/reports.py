from django.db.models import Prefetch

from library.models import Author, Book


def author_report():
    published = Book.objects.filter(is_published=True).order_by("year", "title")
    authors = Author.objects.order_by("name").prefetch_related(
        Prefetch("books", queryset=published, to_attr="published_books")
    )
    report = []
    for author in authors:
        books = author.published_books
        report.append({
            "author": author.name,
            "books": [b.title for b in books],
            "total_pages": sum(b.pages for b in books),
            "latest_year": max((b.year for b in books), default=None),
        })
    return report
