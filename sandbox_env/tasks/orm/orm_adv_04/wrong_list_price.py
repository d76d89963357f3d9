qs = Book.objects.filter(publisher__name__in=["Quarto Verde", "Lagos Lighthouse"]).order_by("price", "title")
result = [(b.title, format(b.price, ".2f")) for b in qs]
