# Q objects and a sort in Python instead of order_by
books = Book.objects.filter(Q(published__gte=date(2019, 1, 1)) & Q(price__lt=Decimal("20")))
rows = sorted(books, key=lambda b: (b.published, b.title))
result = [(b.title, b.published.isoformat(), format(b.price, ".2f")) for b in rows]
