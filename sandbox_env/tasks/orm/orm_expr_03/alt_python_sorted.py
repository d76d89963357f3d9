# sorted in Python over every book
books = sorted(Book.objects.values_list("title", "price"), key=lambda r: (-r[1], r[0]))
result = [(title, format(price, ".2f")) for title, price in books[:5]]
