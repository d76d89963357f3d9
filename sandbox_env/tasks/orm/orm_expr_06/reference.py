qs = Sale.objects.filter(unit_price__gt=F("book__price")).select_related("book", "store").order_by("sold_on", "id")
result = [(s.sold_on.isoformat(), s.book.title, s.store.name, s.quantity, format(s.unit_price, ".2f")) for s in qs]
