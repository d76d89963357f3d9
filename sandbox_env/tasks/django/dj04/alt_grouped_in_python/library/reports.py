from collections import defaultdict

from library.models import Author, Book


def author_report():
    """Two queries whatever the data: the authors, then every published book, grouped here."""
    books = defaultdict(list)
    published = Book.objects.filter(is_published=True).order_by("year", "title")
    for author_id, title, pages, year in published.values_list("author_id", "title", "pages", "year"):
        books[author_id].append((title, pages, year))
    report = []
    for author_id, name in Author.objects.order_by("name").values_list("pk", "name"):
        own = books.get(author_id, [])
        report.append({
            "author": name,
            "books": [title for title, _, _ in own],
            "total_pages": sum(pages for _, pages, _ in own),
            "latest_year": own[-1][2] if own else None,
        })
    return report
