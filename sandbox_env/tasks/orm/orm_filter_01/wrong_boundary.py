qs = Book.objects.filter(published__gte=date(2019, 1, 1), price__lte=Decimal("20.00")).order_by("published", "title")
result = [(b.title, b.published.isoformat(), format(b.price, ".2f")) for b in qs]
