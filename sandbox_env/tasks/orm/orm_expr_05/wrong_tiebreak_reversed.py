qs = Book.objects.filter(sale_price__isnull=False).annotate(m=F("price") - F("sale_price")).order_by("-m", "-title")[:5]
result = [(b.title, format(b.m, ".2f")) for b in qs]
