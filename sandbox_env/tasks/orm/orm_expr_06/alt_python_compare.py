# the price comparison done in Python over the joined rows
sales = Sale.objects.select_related("book", "store").order_by("sold_on", "id")
result = [
    (s.sold_on.isoformat(), s.book.title, s.store.name, s.quantity, format(s.unit_price, ".2f"))
    for s in sales
    if s.unit_price > s.book.price
]
