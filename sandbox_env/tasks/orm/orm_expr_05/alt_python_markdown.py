# the markdown computed and sorted in Python, in exact Decimal arithmetic
marked = [(t, p - s) for t, p, s in Book.objects.filter(sale_price__isnull=False).values_list("title", "price", "sale_price")]
marked.sort(key=lambda r: (-r[1], r[0]))
result = [(t, format(m, ".2f")) for t, m in marked[:5]]
