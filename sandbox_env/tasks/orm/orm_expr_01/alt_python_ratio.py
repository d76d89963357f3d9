# the discount tested in Python, in exact Decimal arithmetic
books = Book.objects.exclude(sale_price=None).order_by("title").values_list("title", "price", "sale_price")
result = [(t, format(p, ".2f"), format(s, ".2f")) for t, p, s in books if s < p * Decimal("0.78")]
