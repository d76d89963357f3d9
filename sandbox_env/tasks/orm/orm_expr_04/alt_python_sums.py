# summed in Python over the sales' values
units, revenue, books = 0, Decimal("0"), set()
for quantity, unit_price, book_id in Sale.objects.values_list("quantity", "unit_price", "book_id"):
    units += quantity
    revenue += quantity * unit_price
    books.add(book_id)
result = [(units, format(revenue, ".2f"), len(books))]
