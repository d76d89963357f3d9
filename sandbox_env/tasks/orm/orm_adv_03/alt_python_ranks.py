# dense ranks computed in Python, not with a window function
from itertools import groupby

books = Book.objects.filter(genre__isnull=False).select_related("genre").order_by("genre__name", "-price", "title")
result = []
for genre, group in groupby(books, key=lambda b: b.genre.name):
    rank, last = 0, None
    for b in group:
        if b.price != last:
            rank, last = rank + 1, b.price
        if rank <= 2:
            result.append((genre, rank, b.title, format(b.price, ".2f")))
