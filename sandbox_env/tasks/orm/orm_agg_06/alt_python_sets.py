# sets of books and authors per publisher built in Python from one values_list
from collections import defaultdict

books, authors = defaultdict(set), defaultdict(set)
for name, book_id, author_id in Book.objects.values_list("publisher__name", "id", "authors__id"):
    books[name].add(book_id)
    if author_id is not None:
        authors[name].add(author_id)
result = sorted(((n, len(books[n]), len(authors[n])) for n in books), key=lambda r: (-r[2], r[0]))
