qs = Book.objects.filter(sale_price__lt=F("price") * Decimal("0.78")).order_by("title")
result = [(b.title, format(b.price, ".2f"), format(b.sale_price, ".2f")) for b in qs]
